// sim_topology.h: SimTopology, the simulator's Topology (sim/topology/topology.h): the scenario's
// servers as model servers (sim/model) on virtual time: Redlock's independent nodes, a primary
// with replicas fed asynchronously, and the nemesis's server faults on them.
//
// - kill: the server is down: its connections close, new ones are refused, its replication
//   stops (what it had not sent is lost); restart: down 20 to 80 ms of virtual time (drawn; a
//   real restart takes 40 to 70 ms here), then back up empty (no persistence), as a redis-server
//   restarted without a disk; a replica then resynchronises from its primary.
// - pause / resume: commands that reach a paused server wait, in order, and run when it resumes
//   (a SIGSTOP'd redis-server reads them from its socket after SIGCONT).
// - jump_clock: the server's wall clock runs further ahead; its keys expire by it.
// - A replica is fed by a ReplicationLink that delivers what its primary wrote every 100 µs to
//   1 ms of virtual time (drawn), unless the link is cut; heal resumes it (a partial resync);
//   promote makes the replica the primary clients use.
// What it cannot do (Sentinel's failover, persistence) is refused before the run, in words
// (simulator_refusal).
//
//   SimTopology topology(*scenario.topology, simulation, runtime);
//   topology.start();   // from a fiber: the replication fibers
//   ... run_scenario with request.topology = &topology ...
//   topology.stop();    // the replication fibers end
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/model/model_server.h"
#include "sim/simulate/sim_runtime.h"
#include "sim/topology/topology.h"

namespace locksim {

class SimTopology final : public Topology {
 public:
  // The servers are model servers added to `runtime`, in the spec's order; each replica gets its
  // ReplicationLink (a full sync) at once.
  SimTopology(const TopologySpec& spec, Simulation& simulation, SimRuntime& runtime);
  ~SimTopology() override;

  // start: from a fiber: one replication fiber per replica. stop: they end at their next turn.
  void start();
  void stop() { stopped_ = true; }

  // refusal: why the simulator cannot run `spec`, or "".
  static std::string refusal(const TopologySpec& spec);

  Endpoint endpoint(std::size_t server) const override { return endpoints_.at(server); }
  std::vector<Endpoint> endpoints() const override { return endpoints_; }
  const std::string& version() const override { return version_; }
  std::vector<pid_t> pids() const override { return {}; }
  std::vector<ProcessDeath> unplanned_deaths() override { return {}; }
  std::size_t primary() const override { return primary_; }
  bool expected_up(std::size_t server) const override;
  std::string kill(std::size_t server) override;
  std::string restart(std::size_t server) override;
  std::string pause(std::size_t server) override;
  std::string resume(std::size_t server) override;
  std::string jump_clock(std::size_t server, std::int64_t ahead_ms) override;
  std::string cut_replication(std::size_t replica) override;
  std::string heal_replication(std::size_t replica) override;
  std::string promote(std::size_t replica) override;
  std::string await_failover(std::int64_t max_ms, const std::function<bool()>& stop) override;
  std::optional<Endpoint> sentinel_endpoint() const override { return std::nullopt; }

  // model: server `server`'s model (for tests).
  ModelServer& model(std::size_t server) { return *servers_.at(server); }

 private:
  struct Replication {
    std::size_t primary = 0;
    std::size_t replica = 0;
    std::unique_ptr<ReplicationLink> link;
    bool cut = false;
  };
  Replication* replication_of(std::size_t replica);
  // flowing: the replication can deliver now (both ends up and running, the link not cut).
  bool flowing(const Replication& r) const;
  void replicate(std::size_t index);  // a replication fiber's body

  Simulation& simulation_;
  std::vector<std::unique_ptr<ModelServer>> servers_;
  std::vector<Endpoint> endpoints_;
  std::vector<std::shared_ptr<SimServerHost>> hosts_;
  std::vector<Replication> replications_;
  std::size_t primary_ = 0;
  bool stopped_ = false;
  std::string version_ = "locksim model of Redis 7.0";
};

}  // namespace locksim
