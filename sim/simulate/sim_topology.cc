#include "sim/simulate/sim_topology.h"

#include <algorithm>

#include "sim/core/assert.h"

namespace locksim {
namespace {

// A replica is fed every this much virtual time (drawn each turn), as a primary's replication
// stream reaches its replica within a millisecond on one machine.
constexpr Nanos kReplicationMinNs = 100'000;
constexpr Nanos kReplicationMaxNs = 1'000'000;
// A restart takes this long (drawn), down all the while: a redis-server restarted on the
// development machine answered again after 40 to 70 ms.
constexpr Nanos kRestartMinNs = 20'000'000;
constexpr Nanos kRestartMaxNs = 80'000'000;

}  // namespace

std::string SimTopology::refusal(const TopologySpec& spec) {
  if (spec.cluster) {
    return "its topology is a Redis Cluster, whose slot map, redirections and elections the "
           "model does not have yet (docs/model.md)";
  }
  if (spec.sentinel) {
    return "its topology \"" + spec.name +
           "\" has Sentinel, whose failover the simulator does not model";
  }
  for (const ServerSpec& server : spec.servers) {
    if (server.persistence != "none") {
      return "its server " + server.name + " persists (\"" + server.persistence +
             "\"), and the model restarts only without persistence";
    }
  }
  return "";
}

SimTopology::SimTopology(const TopologySpec& spec, Simulation& simulation, SimRuntime& runtime)
    : Topology(spec), simulation_(simulation) {
  LOCKSIM_ASSERT(refusal(spec).empty());
  for (std::size_t i = 0; i < spec.servers.size(); ++i) {
    servers_.push_back(std::make_unique<ModelServer>());
    endpoints_.push_back(runtime.add_server(*servers_.back()));
    hosts_.push_back(runtime.host(endpoints_.back()));
  }
  for (std::size_t i = 0; i < spec.servers.size(); ++i) {
    if (spec.servers[i].replica_of.empty()) continue;
    Replication r;
    r.primary = spec.server_index(spec.servers[i].replica_of);
    r.replica = i;
    r.link = std::make_unique<ReplicationLink>(*servers_[r.primary], *servers_[i]);
    replications_.push_back(std::move(r));
  }
}

SimTopology::~SimTopology() {
  // The links go before the servers they join.
  replications_.clear();
}

void SimTopology::start() {
  for (std::size_t i = 0; i < replications_.size(); ++i) {
    simulation_.spawn([this, i] { replicate(i); });
  }
}

void SimTopology::replicate(std::size_t index) {
  while (!stopped_) {
    simulation_.sleep_until(simulation_.now() +
                            simulation_.rng().uniform(kReplicationMinNs, kReplicationMaxNs));
    Replication& r = replications_[index];
    if (r.link->attached() && flowing(r)) r.link->deliver();
  }
}

bool SimTopology::flowing(const Replication& r) const {
  const SimServerHost& from = *hosts_[r.primary];
  const SimServerHost& to = *hosts_[r.replica];
  return !r.cut && !from.down && !from.paused && !to.down && !to.paused;
}

SimTopology::Replication* SimTopology::replication_of(std::size_t replica) {
  for (Replication& r : replications_) {
    if (r.replica == replica && r.link->attached()) return &r;
  }
  return nullptr;
}

bool SimTopology::expected_up(std::size_t server) const {
  return !hosts_.at(server)->down && !hosts_.at(server)->paused;
}

std::string SimTopology::kill(std::size_t server) {
  SimServerHost& host = *hosts_.at(server);
  if (host.down) return name(server) + " is already down";
  host.down = true;
  host.paused = false;
  ++host.epoch;  // its connections close
  // What it had not replicated yet is lost with it.
  for (Replication& r : replications_) {
    if (r.primary == server) r.link->drop_pending();
  }
  // Commands held by a pause find it dead.
  for (auto& held : std::exchange(host.held, {})) simulation_.at(simulation_.now(), held);
  generation_ += 1;
  return "";
}

std::string SimTopology::restart(std::size_t server) {
  SimServerHost& host = *hosts_.at(server);
  if (!host.down) kill(server);
  // Down while it starts again (the caller, the nemesis, waits as it does for a real one).
  simulation_.sleep_until(simulation_.now() +
                          simulation_.rng().uniform(kRestartMinNs, kRestartMaxNs));
  // Back empty (no persistence). Its replicas resynchronise from it; a replica from its primary.
  servers_[server]->restart();
  host.down = false;
  // A former primary that comes back after a promotion rejoins as a replica of the new primary.
  if (!independent() && server != primary_ && spec_.servers[server].replica_of.empty() &&
      replication_of(server) == nullptr) {
    Replication r;
    r.primary = primary_;
    r.replica = server;
    r.link = std::make_unique<ReplicationLink>(*servers_[primary_], *servers_[server]);
    replications_.push_back(std::move(r));
    const std::size_t index = replications_.size() - 1;
    simulation_.spawn([this, index] { replicate(index); });
  }
  generation_ += 1;
  return "";
}

std::string SimTopology::pause(std::size_t server) {
  SimServerHost& host = *hosts_.at(server);
  if (host.down) return name(server) + " is down";
  host.paused = true;
  return "";
}

std::string SimTopology::resume(std::size_t server) {
  SimServerHost& host = *hosts_.at(server);
  host.paused = false;
  // What arrived meanwhile runs now, in the order it came.
  for (auto& held : std::exchange(host.held, {})) simulation_.at(simulation_.now(), held);
  return "";
}

std::string SimTopology::jump_clock(std::size_t server, std::int64_t ahead_ms) {
  ModelServer& model = *servers_.at(server);
  model.set_clock_offset_ms(model.clock_offset_ms() + ahead_ms);
  return "";
}

std::string SimTopology::cut_replication(std::size_t replica) {
  Replication* r = replication_of(replica);
  if (r == nullptr) return name(replica) + " is not a replica";
  r->cut = true;
  return "";
}

std::string SimTopology::heal_replication(std::size_t replica) {
  Replication* r = replication_of(replica);
  if (r == nullptr) return name(replica) + " is not a replica";
  r->cut = false;  // what queued meanwhile flows at the next turn (a partial resync)
  return "";
}

std::string SimTopology::promote(std::size_t replica) {
  if (replication_of(replica) == nullptr) return name(replica) + " is not a replica";
  servers_[replica]->promote();
  primary_ = replica;
  generation_ += 1;
  return "";
}

std::string SimTopology::await_failover(std::int64_t, const std::function<bool()>&) {
  return "the simulator has no Sentinel";
}

}  // namespace locksim
