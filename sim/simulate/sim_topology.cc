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
// A cluster replica's link is cut this long after the step starts (drawn): the real cut's round
// trips took 0.3 to 1.1 ms here.
constexpr Nanos kClusterCutMinNs = 200'000;
constexpr Nanos kClusterCutMaxNs = 1'000'000;

}  // namespace

std::string SimTopology::refusal(const TopologySpec& spec) {
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

SimTopology::SimTopology(const TopologySpec& spec, Simulation& simulation, SimRuntime& runtime,
                         std::string_view anchor_key, const ModelOptions& options)
    : Topology(spec), simulation_(simulation) {
  LOCKSIM_ASSERT(refusal(spec).empty());
  for (std::size_t i = 0; i < spec.servers.size(); ++i) {
    servers_.push_back(std::make_unique<ModelServer>(options));
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
  if (spec.cluster) form_cluster(anchor_key);
}

SimTopology::~SimTopology() {
  // The links go before the servers they join.
  replications_.clear();
}

void SimTopology::start() {
  started_ = true;
  for (std::size_t i = 0; i < replications_.size(); ++i) {
    simulation_.spawn([this, i] { replicate(i); });
  }
  if (cluster()) simulation_.spawn([this] { cluster_tick(); });
}

void SimTopology::link(std::size_t primary, std::size_t replica) {
  for (Replication& r : replications_) {
    if (r.replica == replica && r.link) r.link.reset();  // detached: its fiber idles
  }
  for (std::size_t i = 0; i < replications_.size(); ++i) {
    Replication& r = replications_[i];
    if (r.replica != replica) continue;
    r.primary = primary;
    r.link = std::make_unique<ReplicationLink>(*servers_[primary], *servers_[replica]);
    return;
  }
  Replication r;
  r.primary = primary;
  r.replica = replica;
  r.link = std::make_unique<ReplicationLink>(*servers_[primary], *servers_[replica]);
  replications_.push_back(std::move(r));
  const std::size_t index = replications_.size() - 1;
  if (started_) simulation_.spawn([this, index] { replicate(index); });
}

void SimTopology::replicate(std::size_t index) {
  while (!stopped_) {
    simulation_.sleep_until(simulation_.now() +
                            simulation_.rng().uniform(kReplicationMinNs, kReplicationMaxNs));
    Replication& r = replications_[index];
    if (r.link && r.link->attached() && flowing(r)) r.link->deliver();
  }
}

bool SimTopology::flowing(const Replication& r) const {
  const SimServerHost& from = *hosts_[r.primary];
  const SimServerHost& to = *hosts_[r.replica];
  if (!nodes_.empty() && (nodes_[r.primary].isolated || nodes_[r.replica].isolated)) return false;
  return !r.cut && !from.down && !from.paused && !to.down && !to.paused;
}

SimTopology::Replication* SimTopology::replication_of(std::size_t replica) {
  for (Replication& r : replications_) {
    if (r.replica == replica && r.link && r.link->attached()) return &r;
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
    if (r.primary == server && r.link) r.link->drop_pending();
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
  if (cluster()) {
    // It comes back with its cluster configuration (nodes.conf), learns what changed while it
    // was away (a former primary whose slots were taken over turns replica), and, a primary
    // still, waits out CLUSTER_WRITABLE_DELAY (2 s) before it says the cluster is ok; the
    // caller waits until it does, as ProcessTopology's restart does.
    if (config_.nodes[server].primary < 0) {
      nodes_[server].writable_at = simulation_.now() + ms_to_ns(2000);
    }
    publish();
    simulation_.sleep_until(nodes_[server].writable_at);
    publish();
  } else if (!independent() && server != primary_ && spec_.servers[server].replica_of.empty() &&
             replication_of(server) == nullptr) {
    // A former primary that comes back after a promotion rejoins as a replica of the new primary.
    link(primary_, server);
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
  if (cluster()) {
    // A cluster replica's link is cut by a refused masterauth and CLIENT KILL (two round trips),
    // then seen down (INFO): what its primary writes meanwhile still reaches it.
    simulation_.sleep_until(simulation_.now() +
                            simulation_.rng().uniform(kClusterCutMinNs, kClusterCutMaxNs));
    r = replication_of(replica);
    if (r == nullptr) return name(replica) + " is not a replica";
    r->cut = true;
    simulation_.sleep_until(simulation_.now() +
                            simulation_.rng().uniform(kClusterCutMinNs / 2, kClusterCutMaxNs / 2));
    return "";
  }
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
  if (cluster()) return "a cluster's replica is promoted by its cluster (use cluster_failover)";
  if (replication_of(replica) == nullptr) return name(replica) + " is not a replica";
  servers_[replica]->promote();
  primary_ = replica;
  generation_ += 1;
  return "";
}

std::string SimTopology::await_failover(std::int64_t max_ms, const std::function<bool()>& stop) {
  if (!cluster()) return "the simulator has no Sentinel";
  // As ProcessTopology's: until a node other than the clients' primary serves the lock's slot.
  const Nanos deadline = simulation_.now() + ms_to_ns(max_ms);
  while (simulation_.now() < deadline && !stop()) {
    const int owner = config_.slots[anchor_slot_];
    if (owner >= 0 && static_cast<std::size_t>(owner) != primary_ &&
        serves_lock(static_cast<std::size_t>(owner))) {
      primary_ = static_cast<std::size_t>(owner);
      generation_ += 1;
      return "";
    }
    simulation_.sleep_until(simulation_.now() + ms_to_ns(10));
  }
  return "no failover within " + std::to_string(max_ms) + " ms";
}

}  // namespace locksim
