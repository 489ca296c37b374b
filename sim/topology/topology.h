// topology.h: Topology, the private servers of one run: one server, a primary with a replica
// (optionally watched by a real redis-sentinel), or N independent servers for Redlock.
//
// Every server is a RedisServer (127.0.0.1, a free port, its own temporary directory, stopped on
// every exit path). A replica replicates through a TcpRelay, so that the nemesis can cut its
// replication link. Servers are started, and restarted, on a keeper thread that lives as long as
// the Topology: a server dies with the thread that started it (PR_SET_PDEATHSIG), so a restart
// from a short-lived step thread would not outlive the step.
//
// The topology knows which server clients use as the primary: the first server, until a
// replica is promoted (promote(), or Sentinel's failover seen by await_failover()).
//
//   std::unique_ptr<Topology> topology = Topology::start(*scenario.topology);  // EnvironmentError
//   topology->kill(0); topology->restart(0);
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "sim/redis/endpoint.h"
#include "sim/redis/server.h"
#include "sim/scenario/scenario.h"

namespace locksim {

class TcpRelay;

// Topology: the servers of one run, as the driver, the nemesis and the clients see them. The
// machine's is ProcessTopology (real redis-server processes, below); the simulator's is
// SimTopology (sim/simulate/sim_topology.h: model servers on virtual time).
class Topology {
 public:
  // start: a ProcessTopology: every server, in order; a replica once its primary answers, then
  // until it is in sync; Sentinel last, once it has seen the replicas. Throws EnvironmentError.
  // A cluster's servers form one Redis Cluster (sim/topology/cluster.cc) whose first primary
  // serves the slot of `anchor_key` (the run's lock key), and clients use that primary.
  static std::unique_ptr<Topology> start(const TopologySpec& spec,
                                         std::string_view anchor_key = {});
  virtual ~Topology() = default;
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  const TopologySpec& spec() const { return spec_; }
  std::size_t size() const { return spec_.servers.size(); }
  const std::string& name(std::size_t server) const { return spec_.servers[server].name; }
  // endpoint: where server `server` listens (the same port across restarts).
  virtual Endpoint endpoint(std::size_t server) const = 0;
  virtual std::vector<Endpoint> endpoints() const = 0;
  virtual const std::string& version() const = 0;
  // pids: every running server process (and Sentinel), for a second Ctrl-C. Thread-safe.
  virtual std::vector<pid_t> pids() const = 0;

  // ProcessDeath: a process of the topology that died without the nemesis killing it.
  struct ProcessDeath {
    std::string server;  // the server's name ("n2"), or "sentinel"
    std::string how;     // "redis-server pid 4242, killed by signal 9 (SIGKILL)"
  };
  // unplanned_deaths: the servers (and Sentinel) found dead since the last call that the
  // nemesis did not kill, each reported once. Thread-safe; cheap enough to call every few
  // hundred ms.
  virtual std::vector<ProcessDeath> unplanned_deaths() = 0;
  // quorum_servers: the servers a lock over several servers (Redlock) asks, the first this many:
  // every server; on a Redis Cluster its primaries (p1..pN), as a user hands Redlock "the
  // primaries of the cluster", each through a plain connection that knows nothing of slots.
  std::size_t quorum_servers() const {
    return spec_.cluster ? static_cast<std::size_t>(spec_.cluster->primaries) : size();
  }
  // independent: the servers hold no copies of each other (no replica, no Sentinel), as Redlock's
  // nodes: a lock over them is meant to survive losing some, so a run goes on after one dies.
  bool independent() const;

  // The primary clients use. Thread-safe.
  virtual std::size_t primary() const = 0;
  Endpoint primary_endpoint() const { return endpoint(primary()); }
  // primary_generation: bumped whenever a server was killed or restarted or the primary changed,
  // so that clients reconnect before their next call, as a client library does when it sees its
  // connection drop (the run is about the lock, not about how fast a client notices).
  std::uint64_t primary_generation() const { return generation_.load(); }
  // expected_up: the server runs and is not paused (a server the nemesis downed is not "lost",
  // and one that died unplanned was reported by unplanned_deaths, not to be reported again).
  virtual bool expected_up(std::size_t server) const = 0;

  // Faults (from the nemesis). Each returns "" or what went wrong, in words. The nemesis holds no
  // lock while it calls them: an implementation that several threads may fault at once
  // serializes its own faults (ProcessTopology does; SimTopology's fibers share one thread).
  virtual std::string kill(std::size_t server) = 0;
  // restart: a former primary that comes back after a failover rejoins as a replica of the new
  // primary (REPLICAOF), as Sentinel would make it, and is in sync when this returns.
  virtual std::string restart(std::size_t server) = 0;
  virtual std::string pause(std::size_t server) = 0;
  virtual std::string resume(std::size_t server) = 0;
  // jump_clock: the server's wall clock jumps `ahead_ms` further ahead of the real one.
  virtual std::string jump_clock(std::size_t server, std::int64_t ahead_ms) = 0;
  virtual std::string cut_replication(std::size_t replica) = 0;
  virtual std::string heal_replication(std::size_t replica) = 0;
  // promote: REPLICAOF NO ONE on `replica`, which becomes the primary clients use.
  virtual std::string promote(std::size_t replica) = 0;
  // await_failover: waits (at most max_ms, or until `stop` answers true) until Sentinel names a
  // new primary, which clients then use; "" when it did, else why not.
  virtual std::string await_failover(std::int64_t max_ms, const std::function<bool()>& stop) = 0;
  // sentinel_endpoint: Sentinel's, if the topology has one.
  virtual std::optional<Endpoint> sentinel_endpoint() const = 0;

  // serves_lock: whether `server` serves the lock's key as a primary now: the primary clients
  // use; on a Redis Cluster, a primary whose own slot map names it for the lock's slot and whose
  // cluster is ok (asked of the server: thread-safe, a few round trips).
  virtual bool serves_lock(std::size_t server) const { return primary() == server; }

  // A Redis Cluster's own faults; a topology that is none answers each with why not.
  // cluster: the servers form a Redis Cluster (TopologySpec::cluster).
  bool cluster() const { return spec_.cluster.has_value(); }
  // cluster_failover: CLUSTER FAILOVER [FORCE|TAKEOVER] (`mode` "", "force" or "takeover") sent
  // to `replica`, and waits (at most max_ms) until it serves its primary's slots; clients use it
  // if that primary was theirs.
  virtual std::string cluster_failover(std::size_t replica, std::string_view mode,
                                       std::int64_t max_ms) {
    (void)replica, (void)mode, (void)max_ms;
    return "the topology is not a Redis Cluster";
  }
  // migrate_slot_start: the slot of the lock key starts migrating from primary `from` to
  // primary `to` (CLUSTER SETSLOT IMPORTING on `to`, MIGRATING on `from`): keys stay on `from`,
  // a command for a key `from` does not hold is answered ASK. migrate_slot_finish: its keys are
  // moved (MIGRATE) and the slot given to `to` (SETSLOT NODE on every primary): MOVED from then.
  virtual std::string migrate_slot_start(std::size_t from, std::size_t to) {
    (void)from, (void)to;
    return "the topology is not a Redis Cluster";
  }
  virtual std::string migrate_slot_finish(std::size_t from, std::size_t to) {
    (void)from, (void)to;
    return "the topology is not a Redis Cluster";
  }
  // isolate: the server's cluster bus is cut from every other node's, both ways, and so are
  // the replication links between it and its replicas (or its primary): the rest of the cluster
  // sees it fail while clients still reach it. rejoin heals both.
  virtual std::string isolate(std::size_t server) {
    (void)server;
    return "the topology is not a Redis Cluster";
  }
  virtual std::string rejoin(std::size_t server) {
    (void)server;
    return "the topology is not a Redis Cluster";
  }

 protected:
  explicit Topology(const TopologySpec& spec) : spec_(spec) {}

  TopologySpec spec_;
  std::atomic<std::uint64_t> generation_{0};
};

// ProcessTopology: the machine's topology, of redis-server processes (see the top of this file).
class ProcessTopology final : public Topology {
 public:
  ~ProcessTopology() override;  // stops Sentinel, then every server, then the keeper thread

  Endpoint endpoint(std::size_t server) const override;
  std::vector<Endpoint> endpoints() const override;
  const std::string& version() const override { return version_; }
  std::vector<pid_t> pids() const override;
  // unplanned_deaths: looks without reaping (waitid WNOWAIT), so a later kill or restart still
  // finds its process.
  std::vector<ProcessDeath> unplanned_deaths() override;
  std::size_t primary() const override;
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
  std::optional<Endpoint> sentinel_endpoint() const override;
  std::string cluster_failover(std::size_t replica, std::string_view mode,
                               std::int64_t max_ms) override;
  std::string migrate_slot_start(std::size_t from, std::size_t to) override;
  std::string migrate_slot_finish(std::size_t from, std::size_t to) override;
  bool serves_lock(std::size_t server) const override;
  std::string isolate(std::size_t server) override;
  std::string rejoin(std::size_t server) override;

 private:
  friend class Topology;
  // The cluster's own (sim/topology/cluster.cc).
  // form_cluster: the started servers made one cluster (slots, MEET, REPLICATE), and waited on
  // until every node says the cluster is ok and every replica is in sync. EnvironmentError.
  void form_cluster(std::string_view anchor_key);
  // start_bus_relays: a relay per node, before the nodes (each announces its relay's port);
  // form_cluster points them at the nodes' buses.
  void start_bus_relays();
  // cluster_owner: the server the cluster (as the live nodes say) names for the anchor slot, or
  // nullopt; `why` says why not.
  std::optional<std::size_t> cluster_owner(std::string& why) const;
  // await_cluster_failover: waits until a server other than the primary of the moment serves
  // the anchor slot and says the cluster is ok; it becomes the primary clients use.
  std::string await_cluster_failover(std::int64_t max_ms, const std::function<bool()>& stop);
  // cut_cluster_replication, heal_cluster_replication: a cluster replica's link to its primary
  // (which goes to the primary's address from the cluster's node table, not through a relay):
  // cut by a masterauth the primary refuses and the link closed, so the replica cannot come
  // back until healed (masterauth cleared).
  std::string cut_cluster_replication(std::size_t replica);
  std::string heal_cluster_replication(std::size_t replica);
  // rejoin_cluster: after a restart: waits until the server is back in the cluster (its state
  // ok) and, if it came back as a replica, in sync.
  std::string rejoin_cluster(std::size_t server);
  explicit ProcessTopology(const TopologySpec& spec);
  // on_keeper: runs `job` on the keeper thread and waits for it; rethrows what it threw.
  void on_keeper(const std::function<void()>& job);
  void keeper_loop();
  RedisServerOptions options_of(std::size_t server) const;

  std::string version_;
  std::vector<RedisServer> servers_;               // by index; touched on the keeper thread
  // endpoints_: by index, written once by start() (a restart keeps the port), so other threads
  // read them without taking the keeper's objects.
  std::vector<Endpoint> endpoints_;
  std::vector<std::unique_ptr<TcpRelay>> relays_;  // by index; null for a primary
  std::optional<RedisServer> sentinel_;
  std::vector<std::string> node_ids_;  // a cluster's: by index, CLUSTER MYID, written by start()
  // bus_relays_: a cluster's: by index, the relay in front of each node's bus (the port it
  // announces), which tells the connecting node by its messages' header, so isolate() can
  // refuse one node's links only.
  std::vector<std::unique_ptr<TcpRelay>> bus_relays_;
  // partition_cuts_: a cluster's: by isolated server, the replicas whose links isolate() cut.
  std::vector<std::vector<std::size_t>> partition_cuts_;  // guarded by faults_mutex_
  std::uint16_t anchor_slot_ = 0;  // a cluster's: the slot of the run's lock key
  // faults_mutex_: taken by every fault for its whole length, so that faults from several
  // threads never interleave their steps on the servers (a pause between a restart's kill and
  // its start). A thread's lock: the simulator's topology (SimTopology) runs on one thread and
  // needs none; the nemesis holds no lock of its own across a fault.
  std::mutex faults_mutex_;
  mutable std::mutex mutex_;
  std::vector<bool> down_;    // guarded by mutex_: killed by the nemesis
  std::vector<bool> paused_;  // guarded by mutex_
  std::size_t primary_ = 0;   // guarded by mutex_
  std::vector<std::int64_t> clock_offsets_;  // guarded by mutex_: ms ahead, by server
  std::vector<pid_t> pids_;   // guarded by mutex_: the running process of each server, or -1
  pid_t sentinel_pid_ = -1;   // guarded by mutex_
  std::vector<bool> died_;    // guarded by mutex_: found dead by unplanned_deaths
  bool sentinel_died_ = false;  // guarded by mutex_

  std::mutex keeper_mutex_;
  std::condition_variable keeper_changed_;
  std::deque<std::function<void()>> jobs_;  // guarded by keeper_mutex_
  bool keeper_stop_ = false;                // guarded by keeper_mutex_
  std::thread keeper_;
};

// persistence_of: the RedisServer setting for a ServerSpec's word.
Persistence persistence_of(const std::string& word);

}  // namespace locksim
