#include "sim/topology/topology.h"

#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <exception>
#include <future>

#include "sim/core/clock.h"
#include "sim/core/error.h"
#include "sim/proxy/tcp_relay.h"
#include "sim/redis/connection.h"
#include "sim/topology/poll.h"

namespace locksim {
namespace {

using namespace std::chrono_literals;

constexpr const char* kSentinelMaster = "locksim";

// replicas_acknowledge: whether `primary` gets an acknowledgement from a replica for a write
// within 10 s. "master_link_status:up" is not enough: Redis 7.0 sends a new replica writes
// only after its first REPLCONF ACK, up to a second later, and a WAIT before that answers 0.
bool replicas_acknowledge(const Endpoint& primary) {
  HiredisConnection connection(primary, ConnectionOptions{});
  return poll_until(10s, [&connection] {
    const RedisResult set =
        connection.command({"SET", "locksim:topology-probe", "1", "PX", "1000"});
    if (!set.ok()) return false;
    const RedisResult acks = connection.command({"WAIT", "1", "100"});
    return acks.ok() && acks.reply.type == Reply::Type::kInteger && acks.reply.integer >= 1;
  });
}

// in_sync: whether the replica at `replica` reports its link to its primary up within 10 s.
bool in_sync(Connection& replica) {
  return poll_until(10s, [&replica] {
    const RedisResult info = replica.command({"INFO", "replication"});
    return info.ok() && info_field(info.reply.str, "master_link_status") == "up";
  });
}

}  // namespace

Persistence persistence_of(const std::string& word) {
  if (word == "aof_always") return Persistence::kAofAlways;
  if (word == "aof_everysec") return Persistence::kAofEverySec;
  return Persistence::kNone;
}

ProcessTopology::ProcessTopology(const TopologySpec& spec)
    : Topology(spec),
      down_(spec.servers.size(), false),
      paused_(spec.servers.size(), false),
      clock_offsets_(spec.servers.size(), 0),
      pids_(spec.servers.size(), -1),
      died_(spec.servers.size(), false) {
  keeper_ = std::thread([this] { keeper_loop(); });
}

void ProcessTopology::keeper_loop() {
  std::unique_lock<std::mutex> lock(keeper_mutex_);
  while (true) {
    keeper_changed_.wait(lock, [this] { return keeper_stop_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, nothing left
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();
    lock.lock();
  }
}

void ProcessTopology::on_keeper(const std::function<void()>& job) {
  std::promise<void> done;
  std::future<void> finished = done.get_future();
  {
    std::lock_guard<std::mutex> lock(keeper_mutex_);
    jobs_.push_back([&job, &done] {
      try {
        job();
        done.set_value();
      } catch (...) {
        done.set_exception(std::current_exception());
      }
    });
  }
  keeper_changed_.notify_all();
  finished.get();
}

RedisServerOptions ProcessTopology::options_of(std::size_t server) const {
  RedisServerOptions options;
  options.persistence = persistence_of(spec_.servers[server].persistence);
  if (spec_.clock_shift) {
    options.clock_shift_library = clock_shift_library_path();
    if (options.clock_shift_library.empty()) {
      throw EnvironmentError(
          "liblocksim_clockshift.so (built beside the locksim executable) was not found; a "
          "clock_jump needs it (set LOCKSIM_CLOCK_SHIFT_LIBRARY to its path)");
    }
  }
  if (spec_.cluster) {
    // A cluster's replicas are made with CLUSTER REPLICATE once the cluster is formed.
    options.cluster_enabled = true;
    options.cluster_node_timeout_ms = spec_.cluster->node_timeout_ms;
    options.cluster_announce_bus_port = bus_relays_[server]->port();
    return options;
  }
  if (!spec_.servers[server].replica_of.empty()) {
    const std::size_t primary = spec_.server_index(spec_.servers[server].replica_of);
    Endpoint relay;
    relay.host = "127.0.0.1";
    relay.port = relays_[server]->port();
    (void)primary;
    options.replica_of = relay;
  }
  return options;
}

std::unique_ptr<Topology> Topology::start(const TopologySpec& spec, std::string_view anchor_key) {
  std::unique_ptr<ProcessTopology> topology(new ProcessTopology(spec));
  ProcessTopology& t = *topology;
  t.relays_.resize(spec.servers.size());
  if (spec.cluster) t.start_bus_relays();
  t.on_keeper([&t, &spec] {
    // Primaries first, so a replica's relay has somewhere to go.
    t.servers_.reserve(spec.servers.size());
    std::vector<std::optional<RedisServer>> started(spec.servers.size());
    for (std::size_t i = 0; i < spec.servers.size(); ++i) {
      if (spec.servers[i].replica_of.empty() || spec.cluster) {
        started[i] = RedisServer::start(t.options_of(i));
      }
    }
    for (std::size_t i = 0; i < spec.servers.size(); ++i) {
      if (spec.servers[i].replica_of.empty() || spec.cluster) continue;
      const std::size_t primary = spec.server_index(spec.servers[i].replica_of);
      t.relays_[i] = TcpRelay::start(started[primary]->endpoint());
      started[i] = RedisServer::start(t.options_of(i));
    }
    for (auto& server : started) t.servers_.push_back(std::move(*server));
  });
  t.version_ = t.servers_.front().version();
  {
    std::lock_guard<std::mutex> lock(t.mutex_);
    for (const RedisServer& server : t.servers_) {
      t.endpoints_.push_back(server.endpoint());
      t.pids_[t.endpoints_.size() - 1] = server.pid();
    }
  }
  if (spec.cluster) {
    t.form_cluster(anchor_key);
    return topology;
  }
  for (std::size_t i = 0; i < spec.servers.size(); ++i) {
    if (spec.servers[i].replica_of.empty()) continue;
    HiredisConnection replica(t.endpoint(i), ConnectionOptions{});
    const bool synced = in_sync(replica);
    if (!synced ||
        !replicas_acknowledge(t.endpoint(spec.server_index(spec.servers[i].replica_of)))) {
      throw EnvironmentError("replica " + spec.servers[i].name + " did not sync with " +
                             spec.servers[i].replica_of + " within 10 s");
    }
  }
  if (spec.sentinel) {
    const Endpoint primary = t.endpoint(0);
    RedisServerOptions options;
    options.executable = "redis-sentinel";
    options.sentinel_config = {
        "sentinel monitor " + std::string(kSentinelMaster) + " 127.0.0.1 " +
            std::to_string(primary.port) + " 1",
        "sentinel down-after-milliseconds " + std::string(kSentinelMaster) + " 1000",
        "sentinel failover-timeout " + std::string(kSentinelMaster) + " 10000",
        "sentinel parallel-syncs " + std::string(kSentinelMaster) + " 1"};
    t.on_keeper([&t, &options] { t.sentinel_ = RedisServer::start(options); });
    {
      std::lock_guard<std::mutex> lock(t.mutex_);
      t.sentinel_pid_ = t.sentinel_->pid();
    }
    HiredisConnection sentinel(t.sentinel_->endpoint(), ConnectionOptions{});
    const bool sees_replica = poll_until(15s, [&sentinel] {
      const RedisResult replicas = sentinel.command({"SENTINEL", "REPLICAS", kSentinelMaster});
      return replicas.ok() && !replicas.reply.elements.empty();
    });
    if (!sees_replica) {
      throw EnvironmentError("redis-sentinel did not discover the replica within 15 s");
    }
  }
  return topology;
}

ProcessTopology::~ProcessTopology() {
  try {
    on_keeper([this] {
      // The run's servers are thrown away: SIGKILL at once (no graceful shutdown, no AOF
      // rewrite to wait for), then the directories are removed.
      if (sentinel_) {
        sentinel_->kill();
        sentinel_->stop();
      }
      for (RedisServer& server : servers_) {
        server.kill();
        server.stop();
      }
    });
  } catch (...) {
    // Stopping is best effort; the servers die with the keeper thread anyway (PDEATHSIG).
  }
  relays_.clear();
  bus_relays_.clear();
  {
    std::lock_guard<std::mutex> lock(keeper_mutex_);
    keeper_stop_ = true;
  }
  keeper_changed_.notify_all();
  keeper_.join();
}

Endpoint ProcessTopology::endpoint(std::size_t server) const { return endpoints_[server]; }

std::vector<Endpoint> ProcessTopology::endpoints() const { return endpoints_; }

std::vector<pid_t> ProcessTopology::pids() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<pid_t> all;
  for (const pid_t pid : pids_) {
    if (pid > 0) all.push_back(pid);
  }
  if (sentinel_pid_ > 0) all.push_back(sentinel_pid_);
  return all;
}

namespace {

// death_of: how child `pid` ended, or "" while it runs. Leaves it waitable (WNOWAIT): its owner
// reaps it.
std::string death_of(pid_t pid, const std::string& program) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    return errno == ECHILD ? program + ", pid " + std::to_string(pid) + ", is gone" : "";
  }
  if (info.si_pid != pid) return "";  // still running
  const std::string who = program + ", pid " + std::to_string(pid) + ",";
  switch (info.si_code) {
    case CLD_EXITED:
      return who + " exited with status " + std::to_string(info.si_status);
    case CLD_KILLED:
    case CLD_DUMPED: {
      const char* name = ::sigabbrev_np(info.si_status);
      return who +
             (info.si_code == CLD_DUMPED ? " dumped core on signal " : " was killed by signal ") +
             std::to_string(info.si_status) +
             (name != nullptr ? " (SIG" + std::string(name) + ")" : std::string());
    }
    default:
      return who + " ended";
  }
}

}  // namespace

std::vector<Topology::ProcessDeath> ProcessTopology::unplanned_deaths() {
  // Under the lock: the nemesis marks a server down before it kills it, so a death seen here
  // with the server not marked down was nobody's plan.
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<ProcessDeath> deaths;
  for (std::size_t i = 0; i < pids_.size(); ++i) {
    if (down_[i] || died_[i] || pids_[i] <= 0) continue;
    std::string how =
        death_of(pids_[i], "redis-server on 127.0.0.1:" + std::to_string(endpoints_[i].port));
    if (how.empty()) continue;
    died_[i] = true;
    deaths.push_back(ProcessDeath{spec_.servers[i].name, std::move(how)});
  }
  if (sentinel_pid_ > 0 && !sentinel_died_) {
    std::string how = death_of(sentinel_pid_, "redis-sentinel");
    if (!how.empty()) {
      sentinel_died_ = true;
      deaths.push_back(ProcessDeath{"sentinel", std::move(how)});
    }
  }
  return deaths;
}

bool Topology::independent() const {
  return !spec_.sentinel && !spec_.cluster &&
         std::none_of(spec_.servers.begin(), spec_.servers.end(),
                      [](const ServerSpec& s) { return !s.replica_of.empty(); });
}

std::size_t ProcessTopology::primary() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return primary_;
}

bool ProcessTopology::expected_up(std::size_t server) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !down_[server] && !paused_[server] && !died_[server];
}

std::string ProcessTopology::kill(std::size_t server) {
  const std::lock_guard<std::mutex> fault(faults_mutex_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    down_[server] = true;
    paused_[server] = false;
  }
  on_keeper([this, server] { servers_[server].kill(); });
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pids_[server] = -1;
  }
  generation_ += 1;
  return "";
}

std::string ProcessTopology::restart(std::size_t server) {
  const std::lock_guard<std::mutex> fault(faults_mutex_);
  {
    // A restart without a kill first (or of a server that died unplanned) replaces its process.
    std::lock_guard<std::mutex> lock(mutex_);
    down_[server] = true;
  }
  pid_t pid = -1;
  try {
    on_keeper([this, server, &pid] {
      servers_[server].kill();  // reaps a process that died unplanned; no-op after a kill
      // Its clients' connections died with it: they reconnect before their next call, as on the
      // simulator (SimTopology::restart kills first), rather than send it on a closed socket and
      // end their call unanswered (a waiter polling through a restart ended its acquire unknown
      // on a real server and was granted on the simulator). Not before the kill, or a client
      // could reconnect to the old process.
      generation_ += 1;
      servers_[server].restart();
      pid = servers_[server].pid();
    });
  } catch (const std::exception& error) {
    return error.what();
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pids_[server] = pid;
    died_[server] = false;
  }
  // A cluster's node rejoins by itself (its nodes.conf), as a replica if it was failed over.
  if (spec_.cluster) {
    if (std::string error = rejoin_cluster(server); !error.empty()) return error;
  }
  // A former primary that comes back after a failover rejoins as a replica of the new primary,
  // as Sentinel would make it; returns once it is in sync.
  const std::size_t current = primary();
  if (!spec_.cluster && spec_.servers[server].replica_of.empty() && current != server &&
      !spec_.servers[current].replica_of.empty()) {
    HiredisConnection connection(endpoint(server), ConnectionOptions{});
    const RedisResult rejoined =
        connection.command({"REPLICAOF", "127.0.0.1", std::to_string(endpoint(current).port)});
    if (!rejoined.ok()) return "REPLICAOF the new primary failed: " + rejoined.describe();
    const bool synced = in_sync(connection);
    if (!synced || !replicas_acknowledge(endpoint(current))) {
      return "it did not sync with the new primary within 10 s";
    }
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    down_[server] = false;
  }
  generation_ += 1;
  return "";
}

std::string ProcessTopology::pause(std::size_t server) {
  const std::lock_guard<std::mutex> fault(faults_mutex_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (down_[server]) return "it is down";
    paused_[server] = true;
  }
  servers_[server].pause();
  return "";
}

std::string ProcessTopology::resume(std::size_t server) {
  const std::lock_guard<std::mutex> fault(faults_mutex_);
  servers_[server].resume();
  std::lock_guard<std::mutex> lock(mutex_);
  paused_[server] = false;
  return "";
}

std::string ProcessTopology::jump_clock(std::size_t server, std::int64_t ahead_ms) {
  const std::lock_guard<std::mutex> fault(faults_mutex_);
  std::lock_guard<std::mutex> lock(mutex_);
  clock_offsets_[server] += ahead_ms;
  return servers_[server].shift_clock(clock_offsets_[server])
             ? ""
             : "the server runs without the clock shift";
}

std::string ProcessTopology::cut_replication(std::size_t replica) {
  const std::lock_guard<std::mutex> fault(faults_mutex_);
  if (spec_.cluster) return cut_cluster_replication(replica);
  relays_[replica]->cut();
  return "";
}

std::string ProcessTopology::heal_replication(std::size_t replica) {
  const std::lock_guard<std::mutex> fault(faults_mutex_);
  if (spec_.cluster) return heal_cluster_replication(replica);
  relays_[replica]->heal();
  return "";
}

std::string ProcessTopology::promote(std::size_t replica) {
  const std::lock_guard<std::mutex> fault(faults_mutex_);
  HiredisConnection connection(endpoint(replica), ConnectionOptions{});
  const RedisResult result = connection.command({"REPLICAOF", "NO", "ONE"});
  if (!result.ok()) return "REPLICAOF NO ONE failed: " + result.describe();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    primary_ = replica;
  }
  generation_ += 1;
  return "";
}

std::optional<Endpoint> ProcessTopology::sentinel_endpoint() const {
  if (!sentinel_) return std::nullopt;
  return sentinel_->endpoint();
}

std::string ProcessTopology::await_failover(std::int64_t max_ms,
                                            const std::function<bool()>& stop) {
  if (spec_.cluster) return await_cluster_failover(max_ms, stop);
  if (!sentinel_) return "the topology has no Sentinel";
  HiredisConnection sentinel(sentinel_->endpoint(), ConnectionOptions{});
  const int old_port = primary_endpoint().port;
  const Clock& clock = real_clock();
  const Nanos deadline = clock.now_ns() + ms_to_ns(max_ms);
  std::string last = "no answer yet";
  while (clock.now_ns() < deadline && !stop()) {
    const RedisResult address =
        sentinel.command({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", kSentinelMaster});
    if (address.ok() && address.reply.elements.size() == 2) {
      const int port = std::atoi(address.reply.elements[1].str.c_str());
      if (port != old_port) {
        for (std::size_t i = 0; i < servers_.size(); ++i) {
          if (endpoint(i).port != port) continue;
          {
            std::lock_guard<std::mutex> lock(mutex_);
            primary_ = i;
          }
          generation_ += 1;
          return "";
        }
        return "Sentinel named 127.0.0.1:" + std::to_string(port) + ", not a server of the run";
      }
      last = "Sentinel still names the old primary";
    } else {
      last = address.describe();
      if (sentinel.broken()) sentinel.reconnect();
    }
    clock.sleep_for(ms_to_ns(50));
  }
  return "no failover within " + std::to_string(max_ms) + " ms (" + last + ")";
}

}  // namespace locksim
