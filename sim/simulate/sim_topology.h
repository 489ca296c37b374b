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
// - A Redis Cluster (sim_cluster.cc): its nodes are model servers in cluster mode
//   (ModelCluster): the slots are shared out as a real cluster's are (p1 serves the lock's
//   slot), and a tick of the cluster every 10 ms of virtual time does what the nodes' cron and
//   gossip do: a node nobody hears for cluster-node-timeout (+ 200 to 800 ms, drawn) is flagged
//   FAIL by the majority of primaries (the cluster is down while a failed primary's slots are
//   not served), its replica is elected 500 to 1000 ms later (drawn; + 1000 ms per replica
//   that received more), a node cut off from the majority for cluster-node-timeout says the
//   cluster is down, a former primary comes back as its successor's replica. CLUSTER FAILOVER
//   (default, FORCE, TAKEOVER), a slot migration and a node's partition are faults of their own.
//   docs/model.md lists where this differs from a real cluster.
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
#include <string_view>
#include <utility>
#include <vector>

#include "sim/model/model_server.h"
#include "sim/simulate/sim_runtime.h"
#include "sim/topology/topology.h"

namespace locksim {

class SimTopology final : public Topology {
 public:
  // The servers are model servers added to `runtime`, in the spec's order; each replica gets its
  // ReplicationLink (a full sync) at once.
  // A cluster's first primary serves the slot of `anchor_key` (the run's lock key). Every server
  // is made with `options` (the run's wall-clock phase).
  SimTopology(const TopologySpec& spec, Simulation& simulation, SimRuntime& runtime,
              std::string_view anchor_key = {}, const ModelOptions& options = {});
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
  bool serves_lock(std::size_t server) const override;
  std::string cluster_failover(std::size_t replica, std::string_view mode,
                               std::int64_t max_ms) override;
  std::string migrate_slot_start(std::size_t from, std::size_t to) override;
  std::string migrate_slot_finish(std::size_t from, std::size_t to) override;
  std::string isolate(std::size_t server) override;
  std::string rejoin(std::size_t server) override;

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
  // link: a new Replication of `replica` from `primary` (a full sync), with its fiber once the
  // topology has started; an earlier link of `replica` is dropped.
  void link(std::size_t primary, std::size_t replica);

  // The cluster's (sim_cluster.cc).
  struct ClusterNode {
    bool isolated = false;
    Nanos isolated_at = -1;
    Nanos minority_at = -1;        // when, isolated, it finds itself without a majority
    bool minority = false;         // it has, and says the cluster is down
    Nanos unreachable_since = -1;  // as the others see it (down, paused or cut off)
    Nanos fail_at = -1;            // when the others would flag it FAIL (drawn)
    Nanos fail_time = -1;          // when they did
    Nanos election_at = -1;        // a replica's: when it asks for votes
    Nanos link_down_since = -1;    // a replica's: since when nothing flows from its primary
    Nanos writable_at = 0;         // not ok before (a restarted or rejoined primary's delay)
    std::vector<std::pair<std::uint16_t, int>> migrating;
    std::vector<std::pair<std::uint16_t, int>> importing;
  };
  void form_cluster(std::string_view anchor_key);
  void cluster_tick();  // a fiber's body: the cluster's cron, every 10 ms
  // heard: the node answers the others (up, running, not cut off).
  bool heard(std::size_t server) const;
  // votes: the primaries serving slots that hear the cluster (and would vote); quorum: a
  // majority of the primaries serving slots.
  int votes() const;
  int quorum() const;
  bool serves_slots(std::size_t server) const;
  // changed: the configuration changed: the slot counts are counted again and every node's view
  // is out of date.
  void changed();
  // cluster_ok: whether `server` says its cluster is ok now.
  bool cluster_ok(std::size_t server) const;
  // publish: every node that hears the cluster learns its configuration (an isolated or down
  // node keeps what it knew), and each node's role is made what the configuration says.
  void publish();
  void reconcile(std::size_t server);
  // elect: `replica` takes over its primary's slots (an election won, or a manual failover).
  void elect(std::size_t replica);
  // rank: how many other replicas of its primary have received more than `replica`.
  int rank(std::size_t replica) const;

  Simulation& simulation_;
  std::vector<std::unique_ptr<ModelServer>> servers_;
  std::vector<Endpoint> endpoints_;
  std::vector<std::shared_ptr<SimServerHost>> hosts_;
  std::vector<Replication> replications_;
  std::size_t primary_ = 0;
  bool started_ = false;
  bool stopped_ = false;
  // A cluster's: its configuration as the majority knows it, and each node's own state.
  ModelCluster config_;
  std::vector<ClusterNode> nodes_;
  std::uint16_t anchor_slot_ = 0;
  Nanos node_timeout_ns_ = 0;
  std::vector<int> slot_counts_;              // by node: the slots config_ gives it
  std::uint64_t config_version_ = 0;          // bumped by changed()
  std::vector<std::uint64_t> view_versions_;  // by node: the version its view has
  std::string version_ = "locksim model of Redis 7.0";
};

}  // namespace locksim
