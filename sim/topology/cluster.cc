// cluster.cc: ProcessTopology's Redis Cluster: forming it from its started servers, following its
// failovers, and its own faults (a manual CLUSTER FAILOVER, a slot migration).
//
// The cluster is formed as `redis-cli --cluster create` forms one, with the CLUSTER commands
// themselves (so that the slots can be placed): each primary gets a contiguous share of the
// 16384 slots and a config epoch of its own, every node MEETs the first (naming its bus port,
// which is not the default port + 10000: an ephemeral port + 10000 may be taken or past 65535),
// each replica REPLICATEs its primary, and the topology waits until every node says
// cluster_state:ok and every primary's replicas acknowledge a write (WAIT). The shares start at
// the slot of the run's lock key, so the first primary, p1, serves the lock: a scenario's steps
// can name the lock's primary (p1) and its replica (r1) whatever the run's key prefix.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <span>

#include "sim/core/clock.h"
#include "sim/core/error.h"
#include "sim/proxy/tcp_relay.h"
#include "sim/redis/connection.h"
#include "sim/redis/key_slot.h"
#include "sim/topology/poll.h"
#include "sim/topology/topology.h"

namespace locksim {
namespace {

using namespace std::chrono_literals;

// admin: a short-lived connection for one of the topology's own looks or steps.
ConnectionOptions admin_options() { return ConnectionOptions{1000ms, 1000ms}; }

// share: primary `p` of `n`'s slots: [first, first + count), starting at the anchor slot and
// wrapping past 16383.
struct Share {
  int first = 0;
  int count = 0;
};
Share share_of(int p, int n, int anchor) {
  const int size = kClusterSlots / n;
  return Share{(anchor + p * size) % kClusterSlots, p == n - 1 ? kClusterSlots - p * size : size};
}

bool in_share(const Share& share, int slot) {
  return (slot - share.first + kClusterSlots) % kClusterSlots < share.count;
}

// cluster_ok: the node says cluster_state:ok.
bool cluster_ok(Connection& node) {
  const RedisResult info = node.command({"CLUSTER", "INFO"});
  return info.ok() && info_field(info.reply.str, "cluster_state") == "ok";
}

// role_of: "master", "slave", or "" if the node does not answer.
std::string role_of(Connection& node) {
  const RedisResult role = node.command({"ROLE"});
  if (!role.ok() || role.reply.elements.empty()) return "";
  return role.reply.elements[0].str;
}

// slot_port: the port of the node `node` names for `slot` in its CLUSTER SLOTS, or 0.
int slot_port(Connection& node, int slot) {
  const RedisResult slots = node.command({"CLUSTER", "SLOTS"});
  if (!slots.ok()) return 0;
  for (const Reply& range : slots.reply.elements) {
    if (range.elements.size() < 3 || range.elements[2].elements.size() < 2) continue;
    if (slot >= range.elements[0].integer && slot <= range.elements[1].integer) {
      return static_cast<int>(range.elements[2].elements[1].integer);
    }
  }
  return 0;
}

}  // namespace

void ProcessTopology::start_bus_relays() {
  partition_cuts_.resize(spec_.servers.size());
  for (std::size_t i = 0; i < spec_.servers.size(); ++i) {
    // A bus message's header: "RCmb", its length (4 bytes), its version (2), then the sender's
    // client port (2, big-endian), which names the sender among the topology's servers.
    // Nowhere until form_cluster knows the node's bus port (port 1 refuses).
    Endpoint nowhere;
    nowhere.port = 1;
    bus_relays_.push_back(TcpRelay::start_identifying(
        nowhere, 12, [this](std::span<const unsigned char> header) -> int {
          if (header[0] != 'R' || header[1] != 'C' || header[2] != 'm' || header[3] != 'b') {
            return -1;
          }
          const int port = header[10] << 8 | header[11];
          std::lock_guard<std::mutex> lock(mutex_);
          for (std::size_t server = 0; server < endpoints_.size(); ++server) {
            if (endpoints_[server].port == port) return static_cast<int>(server);
          }
          return -1;
        }));
  }
}

void ProcessTopology::form_cluster(std::string_view anchor_key) {
  const ClusterSpec& shape = *spec_.cluster;
  anchor_slot_ = key_slot(anchor_key);
  const std::size_t count = servers_.size();
  for (std::size_t i = 0; i < count; ++i) {
    Endpoint bus;
    bus.port = servers_[i].cluster_port();
    bus_relays_[i]->set_upstream(bus);
  }
  std::vector<std::unique_ptr<HiredisConnection>> nodes;
  for (std::size_t i = 0; i < count; ++i) {
    nodes.push_back(std::make_unique<HiredisConnection>(endpoint(i), ConnectionOptions{}));
    const RedisResult id = nodes[i]->command({"CLUSTER", "MYID"});
    if (!id.ok()) {
      throw EnvironmentError("server " + name(i) + " is not a cluster node: " + id.describe());
    }
    node_ids_.push_back(id.reply.str);
  }
  const auto must = [this](std::size_t server, const RedisResult& result, const std::string& what) {
    if (!result.ok()) {
      throw EnvironmentError("forming the cluster: " + what + " on " + name(server) +
                             " failed: " + result.describe());
    }
  };
  for (int p = 0; p < shape.primaries; ++p) {
    const Share share = share_of(p, shape.primaries, anchor_slot_);
    std::vector<std::string> args = {"CLUSTER", "ADDSLOTSRANGE"};
    const int end = share.first + share.count;
    args.push_back(std::to_string(share.first));
    args.push_back(std::to_string(std::min<int>(end, kClusterSlots) - 1));
    if (end > kClusterSlots) {
      args.push_back("0");
      args.push_back(std::to_string(end - kClusterSlots - 1));
    }
    const auto index = static_cast<std::size_t>(p);
    must(index, nodes[index]->command(args), "CLUSTER ADDSLOTSRANGE");
    // Distinct epochs from the start, as redis-cli gives them: no epoch collision to resolve.
    must(index, nodes[index]->command({"CLUSTER", "SET-CONFIG-EPOCH", std::to_string(p + 1)}),
         "CLUSTER SET-CONFIG-EPOCH");
  }
  for (std::size_t i = 1; i < count; ++i) {
    must(i,
         nodes[i]->command({"CLUSTER", "MEET", "127.0.0.1", std::to_string(endpoint(0).port),
                            std::to_string(bus_relays_[0]->port())}),
         "CLUSTER MEET");
  }
  const bool met = poll_until(20s, [&] {
    for (auto& node : nodes) {
      const RedisResult known = node->command({"CLUSTER", "NODES"});
      if (!known.ok()) return false;
      std::size_t lines = 0;
      for (std::size_t at = 0; (at = known.reply.str.find('\n', at)) != std::string::npos; ++at) {
        ++lines;
      }
      if (lines != count || known.reply.str.find("handshake") != std::string::npos ||
          known.reply.str.find("noaddr") != std::string::npos) {
        return false;
      }
    }
    return true;
  });
  if (!met) throw EnvironmentError("the cluster's nodes did not all meet within 20 s");
  for (std::size_t i = 0; i < count; ++i) {
    if (spec_.servers[i].replica_of.empty()) continue;
    const std::size_t primary = spec_.server_index(spec_.servers[i].replica_of);
    RedisResult replicated;
    poll_until(10s, [&] {
      replicated = nodes[i]->command({"CLUSTER", "REPLICATE", node_ids_[primary]});
      return replicated.ok();
    });
    must(i, replicated, "CLUSTER REPLICATE " + spec_.servers[i].replica_of);
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (!poll_until(20s, [&] { return cluster_ok(*nodes[i]); })) {
      throw EnvironmentError("server " + name(i) + " did not report cluster_state:ok within 20 s");
    }
  }
  // Every node knows every replica as its primary's (gossip carries REPLICATE to the others
  // within a few pings): a primary that does not yet refuses the replica its vote, and a manual
  // failover or an election right after the start would time out.
  for (std::size_t i = 0; i < count; ++i) {
    const bool agreed = poll_until(20s, [&] {
      const RedisResult known = nodes[i]->command({"CLUSTER", "NODES"});
      if (!known.ok()) return false;
      for (std::size_t r = 0; r < count; ++r) {
        if (spec_.servers[r].replica_of.empty()) continue;
        const std::string& primary = node_ids_[spec_.server_index(spec_.servers[r].replica_of)];
        const std::size_t line = known.reply.str.find(node_ids_[r]);
        if (line == std::string::npos) return false;
        const std::size_t end = known.reply.str.find('\n', line);
        const std::string text = known.reply.str.substr(line, end - line);
        if (text.find("slave") == std::string::npos || text.find(primary) == std::string::npos) {
          return false;
        }
      }
      return true;
    });
    if (!agreed) {
      throw EnvironmentError("server " + name(i) +
                             " did not learn every replica's primary within 20 s");
    }
  }
  for (int p = 0; p < shape.primaries && shape.replicas_per_primary > 0; ++p) {
    // A key of the primary's share, for WAIT: Redis 7.0 sends a new replica writes only after
    // its first REPLCONF ACK, and a WAIT before that answers 0.
    const Share share = share_of(p, shape.primaries, anchor_slot_);
    std::string probe;
    for (int tag = 0; probe.empty(); ++tag) {
      const std::string key = "locksim:topology-probe:{" + std::to_string(tag) + "}";
      if (in_share(share, key_slot(key))) probe = key;
    }
    const auto index = static_cast<std::size_t>(p);
    const bool acknowledged = poll_until(10s, [&] {
      const RedisResult set = nodes[index]->command({"SET", probe, "1", "PX", "1000"});
      if (!set.ok()) return false;
      const RedisResult acks =
          nodes[index]->command({"WAIT", std::to_string(shape.replicas_per_primary), "100"});
      return acks.ok() && acks.reply.integer >= shape.replicas_per_primary;
    });
    if (!acknowledged) {
      throw EnvironmentError("the replicas of " + name(index) + " did not sync within 10 s");
    }
  }
}

std::optional<std::size_t> ProcessTopology::cluster_owner(std::string& why) const {
  why = "no live node answered";
  for (std::size_t i = 0; i < servers_.size(); ++i) {
    if (!expected_up(i)) continue;
    HiredisConnection node(endpoint(i), admin_options());
    const int port = slot_port(node, anchor_slot_);
    if (port == 0) continue;
    for (std::size_t owner = 0; owner < servers_.size(); ++owner) {
      if (endpoint(owner).port != port || !expected_up(owner)) continue;
      // The owner's own word: it serves the slot, as a primary whose cluster is ok.
      HiredisConnection candidate(endpoint(owner), admin_options());
      if (slot_port(candidate, anchor_slot_) == port && role_of(candidate) == "master" &&
          cluster_ok(candidate)) {
        return owner;
      }
      why = name(owner) + " is named for the lock's slot but does not serve it yet";
    }
  }
  return std::nullopt;
}

bool ProcessTopology::serves_lock(std::size_t server) const {
  if (!spec_.cluster) return primary() == server;
  if (!expected_up(server)) return false;
  HiredisConnection node(endpoint(server), admin_options());
  return slot_port(node, anchor_slot_) == endpoint(server).port && role_of(node) == "master" &&
         cluster_ok(node);
}

std::string ProcessTopology::await_cluster_failover(std::int64_t max_ms,
                                                    const std::function<bool()>& stop) {
  const Clock& clock = real_clock();
  const Nanos deadline = clock.now_ns() + ms_to_ns(max_ms);
  std::string last = "no answer yet";
  while (clock.now_ns() < deadline && !stop()) {
    const std::optional<std::size_t> owner = cluster_owner(last);
    if (owner && *owner != primary()) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        primary_ = *owner;
      }
      generation_ += 1;
      return "";
    }
    if (owner) last = "the cluster still names " + name(*owner) + " for the lock's slot";
    clock.sleep_for(ms_to_ns(50));
  }
  return "no failover within " + std::to_string(max_ms) + " ms (" + last + ")";
}

std::string ProcessTopology::rejoin_cluster(std::size_t server) {
  HiredisConnection node(endpoint(server), admin_options());
  const bool rejoined = poll_until(20s, [&node] {
    if (!cluster_ok(node)) return false;
    if (role_of(node) != "slave") return true;
    const RedisResult info = node.command({"INFO", "replication"});
    return info.ok() && info_field(info.reply.str, "master_link_status") == "up";
  });
  return rejoined ? "" : "it did not rejoin the cluster (and sync, as a replica) within 20 s";
}

std::string ProcessTopology::cluster_failover(std::size_t replica, std::string_view mode,
                                              std::int64_t max_ms) {
  const std::lock_guard<std::mutex> fault(faults_mutex_);
  HiredisConnection node(endpoint(replica), admin_options());
  std::vector<std::string> args = {"CLUSTER", "FAILOVER"};
  if (mode == "force") args.emplace_back("FORCE");
  if (mode == "takeover") args.emplace_back("TAKEOVER");
  // A manual failover that has not ended within Redis's own limit (CLUSTER_MF_TIMEOUT, 5 s: the
  // replica did not catch up, or its election took too long on a loaded machine) is given up by
  // the replica; an operator asks again, and so does this, until max_ms.
  const Clock& clock = real_clock();
  const Nanos deadline = clock.now_ns() + ms_to_ns(max_ms);
  bool promoted = false;
  std::string last = "no answer";
  while (!promoted && clock.now_ns() < deadline) {
    if (role_of(node) != "master") {
      const RedisResult asked = node.command(args);
      if (!asked.ok()) return "CLUSTER FAILOVER failed: " + asked.describe();
    }
    const Nanos left = std::max<Nanos>(0, deadline - clock.now_ns());
    const auto round = std::chrono::milliseconds(std::min(left, ms_to_ns(6000)) / kNanosPerMilli);
    promoted = poll_until(round, [&node] { return role_of(node) == "master" && cluster_ok(node); });
    last = role_of(node) == "master" ? "its cluster was not ok" : "it was still a replica";
  }
  if (!promoted) {
    return "it was not a primary of an ok cluster within " + std::to_string(max_ms) + " ms (" +
           last + ")";
  }
  std::string why;
  // The clients' primary moves only if the replica took over the lock's slot; they find the new
  // owner themselves (MOVED), so their connections are not replaced.
  if (poll_until(std::chrono::milliseconds(max_ms),
                 [&] { return cluster_owner(why) == replica; })) {
    std::lock_guard<std::mutex> lock(mutex_);
    primary_ = replica;
  }
  return "";
}

std::string ProcessTopology::migrate_slot_start(std::size_t from, std::size_t to) {
  const std::lock_guard<std::mutex> fault(faults_mutex_);
  const std::string slot = std::to_string(anchor_slot_);
  HiredisConnection target(endpoint(to), admin_options());
  HiredisConnection source(endpoint(from), admin_options());
  const RedisResult importing =
      target.command({"CLUSTER", "SETSLOT", slot, "IMPORTING", node_ids_[from]});
  if (!importing.ok()) return "CLUSTER SETSLOT IMPORTING failed: " + importing.describe();
  const RedisResult migrating =
      source.command({"CLUSTER", "SETSLOT", slot, "MIGRATING", node_ids_[to]});
  if (!migrating.ok()) return "CLUSTER SETSLOT MIGRATING failed: " + migrating.describe();
  return "";
}

std::string ProcessTopology::migrate_slot_finish(std::size_t from, std::size_t to) {
  const std::lock_guard<std::mutex> fault(faults_mutex_);
  const std::string slot = std::to_string(anchor_slot_);
  HiredisConnection source(endpoint(from), ConnectionOptions{});
  // Every key of the slot, in batches, as redis-cli --cluster reshard moves them: MIGRATE keeps
  // each key's value and remaining TTL, and deletes it from the source.
  for (int round = 0; round < 1000; ++round) {
    const RedisResult keys = source.command({"CLUSTER", "GETKEYSINSLOT", slot, "100"});
    if (!keys.ok()) return "CLUSTER GETKEYSINSLOT failed: " + keys.describe();
    if (keys.reply.elements.empty()) break;
    std::vector<std::string> args = {
        "MIGRATE", "127.0.0.1", std::to_string(endpoint(to).port), "", "0", "5000", "KEYS"};
    for (const Reply& key : keys.reply.elements) args.push_back(key.str);
    const RedisResult moved = source.command(args);
    if (!moved.ok()) return "MIGRATE failed: " + moved.describe();
  }
  // The target first, then the source, then every other primary (the specification's order).
  std::vector<std::size_t> order = {to, from};
  for (std::size_t i = 0; i < servers_.size(); ++i) {
    if (i != to && i != from && spec_.servers[i].replica_of.empty() && expected_up(i)) {
      order.push_back(i);
    }
  }
  for (const std::size_t server : order) {
    HiredisConnection node(endpoint(server), admin_options());
    const RedisResult given = node.command({"CLUSTER", "SETSLOT", slot, "NODE", node_ids_[to]});
    if (!given.ok()) {
      return "CLUSTER SETSLOT NODE on " + name(server) + " failed: " + given.describe();
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  primary_ = to;
  return "";
}

// kCutMasterauth: a password the primaries have not set: AUTH with it is refused, so a replica
// cut this way fails every reconnection ("Unable to AUTH to MASTER") until it is cleared.
constexpr const char* kCutMasterauth = "locksim-replication-cut";

std::string ProcessTopology::cut_cluster_replication(std::size_t replica) {
  HiredisConnection node(endpoint(replica), admin_options());
  const RedisResult auth = node.command({"CONFIG", "SET", "masterauth", kCutMasterauth});
  if (!auth.ok()) return "CONFIG SET masterauth failed: " + auth.describe();
  const RedisResult closed = node.command({"CLIENT", "KILL", "TYPE", "master"});
  if (!closed.ok()) return "CLIENT KILL TYPE master failed: " + closed.describe();
  // Cut once the replica says its link is down: a write after this never reaches it.
  const bool down = poll_until(5s, [&node] {
    const RedisResult info = node.command({"INFO", "replication"});
    return info.ok() && info_field(info.reply.str, "master_link_status") != "up";
  });
  return down ? "" : "its link to its primary was still up 5 s after it was closed";
}

std::string ProcessTopology::heal_cluster_replication(std::size_t replica) {
  HiredisConnection node(endpoint(replica), admin_options());
  const RedisResult auth = node.command({"CONFIG", "SET", "masterauth", ""});
  return auth.ok() ? "" : "CONFIG SET masterauth failed: " + auth.describe();
}

std::string ProcessTopology::isolate(std::size_t server) {
  const std::lock_guard<std::mutex> fault(faults_mutex_);
  for (std::size_t other = 0; other < bus_relays_.size(); ++other) {
    if (other == server) continue;
    // Both ways: nothing of `server` reaches `other`'s bus, nothing of `other` reaches its.
    bus_relays_[other]->block(static_cast<int>(server));
    bus_relays_[server]->block(static_cast<int>(other));
  }
  // Its replication links too: to its replicas if it is a primary, to its primary if not.
  std::vector<std::size_t>& cuts = partition_cuts_[server];
  cuts.clear();
  HiredisConnection node(endpoint(server), admin_options());
  const RedisResult info = node.command({"INFO", "replication"});
  if (!info.ok()) return "INFO replication failed: " + info.describe();
  if (info_field(info.reply.str, "role") == "slave") {
    cuts.push_back(server);
  } else {
    for (std::size_t other = 0; other < servers_.size(); ++other) {
      const std::string port = "port=" + std::to_string(endpoint(other).port) + ",";
      if (other != server && info.reply.str.find(port) != std::string::npos) {
        cuts.push_back(other);
      }
    }
  }
  for (const std::size_t replica : cuts) {
    if (std::string error = cut_cluster_replication(replica); !error.empty()) {
      return name(replica) + "'s replication: " + error;
    }
  }
  return "";
}

std::string ProcessTopology::rejoin(std::size_t server) {
  const std::lock_guard<std::mutex> fault(faults_mutex_);
  for (std::size_t other = 0; other < bus_relays_.size(); ++other) {
    if (other == server) continue;
    bus_relays_[other]->unblock(static_cast<int>(server));
    bus_relays_[server]->unblock(static_cast<int>(other));
  }
  for (const std::size_t replica : partition_cuts_[server]) {
    if (std::string error = heal_cluster_replication(replica); !error.empty()) {
      return name(replica) + "'s replication: " + error;
    }
  }
  partition_cuts_[server].clear();
  return "";
}

}  // namespace locksim
