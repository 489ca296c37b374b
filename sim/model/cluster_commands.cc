// cluster_commands.cc: the model as a Redis Cluster node: the redirection of processCommand
// (cluster.c getNodeByQuery), a script's checks (script.c scriptVerifyClusterState), and the
// commands ASKING, READONLY, READWRITE and CLUSTER (SLOTS, KEYSLOT, MYID, INFO), as Redis 7.0.15
// has them. The node's view of its cluster (ModelCluster) is its host's to keep.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sim/core/assert.h"
#include "sim/model/command.h"
#include "sim/model/numbers.h"
#include "sim/model/replies.h"
#include "sim/model/server_state.h"
#include "sim/redis/key_slot.h"

namespace locksim::model_detail {
namespace {

// numkeys_at: the keys argv[first .. first + numkeys) where argv[at] is numkeys, or none if it is
// not a count of arguments there (getKeysFromCommand then finds no key, and the command's own
// handler answers the error).
void numkeys_at(std::span<const std::string_view> argv, std::size_t at, std::size_t first,
                std::vector<std::string_view>& keys) {
  if (argv.size() <= at) return;
  std::int64_t count = 0;
  if (!parse_integer(argv[at], count) || count < 0) return;
  if (static_cast<std::uint64_t>(count) > argv.size() - first) return;
  for (std::size_t i = 0; i < static_cast<std::size_t>(count); ++i) keys.push_back(argv[first + i]);
}

// command_keys: the keys of a modelled command, as its key specs in Redis 7.0's commands.c name
// them (only the commands with a handler are asked).
std::vector<std::string_view> command_keys(const CommandSpec& spec,
                                           std::span<const std::string_view> argv) {
  std::vector<std::string_view> keys;
  const std::string_view name = spec.name;
  if (name == "dbsize" || name == "echo" || name == "flushall" || name == "flushdb" ||
      name == "keys" || name == "ping" || name == "publish" || name == "script" ||
      name == "select" || name == "subscribe" || name == "time" || name == "unsubscribe" ||
      name == "wait" || name == "asking" || name == "cluster" || name == "readonly" ||
      name == "readwrite") {
    return keys;
  }
  if (name == "eval" || name == "evalsha" || name == "eval_ro" || name == "evalsha_ro") {
    numkeys_at(argv, 2, 3, keys);
  } else if (name == "zinterstore") {
    keys.push_back(argv[1]);
    numkeys_at(argv, 2, 3, keys);
  } else if (name == "del" || name == "unlink" || name == "exists" || name == "touch" ||
             name == "mget") {
    keys.assign(argv.begin() + 1, argv.end());
  } else if (name == "mset" || name == "msetnx") {
    for (std::size_t i = 1; i < argv.size(); i += 2) keys.push_back(argv[i]);
  } else if (name == "blpop") {
    keys.assign(argv.begin() + 1, argv.end() - 1);
  } else {
    keys.push_back(argv[1]);
  }
  return keys;
}

int open_slot(const std::vector<std::pair<std::uint16_t, int>>& slots, int slot) {
  for (const auto& [open, node] : slots) {
    if (open == slot) return node;
  }
  return -1;
}

std::string address(const ModelClusterNode& node) {
  return node.host + ":" + std::to_string(node.port);
}

enum class Redirect { kNone, kCrossSlot, kUnstable, kDownState, kDownUnbound, kMoved, kAsk };

struct Routed {
  Redirect code = Redirect::kNone;
  int node = -1;  // the node named (MOVED, ASK), or myself
  int slot = -1;
};

// route: getNodeByQuery over `keys` (Redis 7.0.15, cluster.c), for a client flagged ASKING or not.
Routed route(const ServerState& server, std::span<const std::string_view> keys, bool asking,
             std::int64_t now_ms) {
  const ModelCluster& cluster = *server.cluster;
  Routed routed;
  routed.node = cluster.myself;
  if (keys.empty()) return routed;
  const std::string_view first = keys.front();
  const int slot = key_slot(first);
  const int owner = cluster.slots[static_cast<std::size_t>(slot)];
  if (owner < 0) {
    routed.code = Redirect::kDownUnbound;
    return routed;
  }
  const bool migrating = owner == cluster.myself && open_slot(cluster.migrating, slot) >= 0;
  const bool importing = !migrating && open_slot(cluster.importing, slot) >= 0;
  bool multiple_keys = false;
  int missing = 0;
  int existing = 0;
  for (const std::string_view key : keys) {
    if (key != first) {
      if (key_slot(key) != slot) {
        routed.code = Redirect::kCrossSlot;
        return routed;
      }
      multiple_keys = true;
    }
    if (migrating || importing) {
      // lookupKeyReadWithFlags(LOOKUP_NOEXPIRE): an expired key is missing, and stays.
      const auto found = server.keys.entries().find(key);
      const bool live =
          found != server.keys.entries().end() && is_live(found->second.expire_at_ms, now_ms);
      ++(live ? existing : missing);
    }
  }
  if (!cluster.ok) {
    routed.code = Redirect::kDownState;  // cluster-allow-reads-when-down no (the default)
    return routed;
  }
  routed.slot = slot;
  if (migrating && missing > 0) {
    if (existing > 0) {
      routed.code = Redirect::kUnstable;
    } else {
      routed.code = Redirect::kAsk;
      routed.node = open_slot(cluster.migrating, slot);
    }
    return routed;
  }
  if (importing && asking) {
    if (multiple_keys && missing > 0) routed.code = Redirect::kUnstable;
    return routed;
  }
  if (owner != cluster.myself) {
    routed.code = Redirect::kMoved;
    routed.node = owner;
  }
  return routed;
}

// redirect_error: clusterRedirectClient's reply.
Reply redirect_error(const ModelCluster& cluster, const Routed& routed) {
  switch (routed.code) {
    case Redirect::kCrossSlot:
      return error_reply("CROSSSLOT Keys in request don't hash to the same slot");
    case Redirect::kUnstable:
      return error_reply("TRYAGAIN Multiple keys request during rehashing of slot");
    case Redirect::kDownState:
      return error_reply("CLUSTERDOWN The cluster is down");
    case Redirect::kDownUnbound:
      return error_reply("CLUSTERDOWN Hash slot not served");
    case Redirect::kMoved:
    case Redirect::kAsk:
      return error_reply(std::string(routed.code == Redirect::kAsk ? "ASK " : "MOVED ") +
                         std::to_string(routed.slot) + " " +
                         address(cluster.nodes[static_cast<std::size_t>(routed.node)]));
    case Redirect::kNone:
      break;
  }
  LOCKSIM_ASSERT(false);
  return error_reply("ERR");
}

Reply cluster_disabled() { return error_reply("ERR This instance has cluster support disabled"); }

// node_reply: addNodeToNodeReply: ip, port, id and an empty map of other endpoints.
Reply node_reply(const ModelClusterNode& node) {
  return array_reply(
      {bulk_reply(node.host), integer_reply(node.port), bulk_reply(node.id), empty_array()});
}

// cluster_slots: clusterReplyMultiBulkSlots: each run of slots with one owner, in slot order, with
// the owner and its available replicas (not failed, something received).
Reply cluster_slots(const ModelCluster& cluster) {
  std::vector<Reply> ranges;
  const std::vector<std::int16_t>& slots = cluster.slots;
  std::size_t start = 0;
  while (start < slots.size()) {
    std::size_t end = start;
    while (end + 1 < slots.size() && slots[end + 1] == slots[start]) ++end;
    if (slots[start] >= 0) {
      const auto owner = static_cast<std::size_t>(slots[start]);
      std::vector<Reply> range = {integer_reply(static_cast<std::int64_t>(start)),
                                  integer_reply(static_cast<std::int64_t>(end)),
                                  node_reply(cluster.nodes[owner])};
      for (const ModelClusterNode& node : cluster.nodes) {
        if (node.primary == static_cast<int>(owner) && !node.failed && node.has_offset) {
          range.push_back(node_reply(node));
        }
      }
      ranges.push_back(array_reply(std::move(range)));
    }
    start = end + 1;
  }
  return array_reply(std::move(ranges));
}

// cluster_info: the fields of CLUSTER INFO a client reads (Redis answers more).
Reply cluster_info(const ModelCluster& cluster) {
  int assigned = 0;
  for (const std::int16_t owner : cluster.slots) assigned += owner >= 0 ? 1 : 0;
  int size = 0;
  for (std::size_t i = 0; i < cluster.nodes.size(); ++i) {
    if (std::find(cluster.slots.begin(), cluster.slots.end(), static_cast<std::int16_t>(i)) !=
        cluster.slots.end()) {
      ++size;
    }
  }
  std::string text = std::string("cluster_enabled:1\r\ncluster_state:") +
                     (cluster.ok ? "ok" : "fail") +
                     "\r\ncluster_slots_assigned:" + std::to_string(assigned) +
                     "\r\ncluster_known_nodes:" + std::to_string(cluster.nodes.size()) +
                     "\r\ncluster_size:" + std::to_string(size) + "\r\n";
  return bulk_reply(text);
}

}  // namespace

std::optional<Reply> cluster_route(const ServerState& server, const ClientState& client,
                                   const CommandSpec& spec, std::span<const std::string_view> argv,
                                   std::int64_t now_ms, int& slot) {
  slot = -1;
  const std::vector<std::string_view> keys = command_keys(spec, argv);
  if (keys.empty()) return std::nullopt;  // processCommand skips a command without key specs
  const Routed routed = route(server, keys, client.asking || spec.name == "asking", now_ms);
  if (routed.code != Redirect::kNone) return redirect_error(*server.cluster, routed);
  slot = routed.slot;
  return std::nullopt;
}

std::optional<Reply> cluster_script_check(CommandContext& script, const CommandSpec& spec,
                                          std::span<const std::string_view> argv) {
  const ServerState& server = script.server;
  if (!server.cluster || script.from_primary) return std::nullopt;
  const std::vector<std::string_view> keys = command_keys(spec, argv);
  const Routed routed = route(server, keys, script.client.asking, script.now_ms);
  if (routed.code != Redirect::kNone || routed.node != server.cluster->myself) {
    if (routed.code == Redirect::kDownState) {
      return error_reply("ERR Script attempted to execute a command while the cluster is down");
    }
    return error_reply("ERR Script attempted to access a non local key in a cluster node");
  }
  if (routed.slot != -1 && !script.script_cross_slot) {
    if (script.cluster_slot == -1) {
      script.cluster_slot = routed.slot;
    } else if (script.cluster_slot != routed.slot) {
      return error_reply("ERR Script attempted to access keys that do not hash to the same slot");
    }
  }
  return std::nullopt;
}

std::vector<std::vector<std::string>> rebuild_commands(const std::string& key, const Entry& entry) {
  std::vector<std::vector<std::string>> commands = {{"DEL", key}};
  if (const auto* text = std::get_if<StringValue>(&entry.value)) {
    commands.push_back({"SET", key, *text});
  } else if (const auto* hash = std::get_if<HashValue>(&entry.value)) {
    std::vector<std::string> hset = {"HSET", key};
    for (const auto& [field, value] : hash->fields) {
      hset.push_back(field);
      hset.push_back(value);
    }
    commands.push_back(std::move(hset));
  } else if (const auto* list = std::get_if<ListValue>(&entry.value)) {
    std::vector<std::string> rpush = {"RPUSH", key};
    rpush.insert(rpush.end(), list->begin(), list->end());
    commands.push_back(std::move(rpush));
  } else if (const auto* zset = std::get_if<SortedSetValue>(&entry.value)) {
    std::vector<std::string> zadd = {"ZADD", key};
    for (const auto& [score, member] : zset->order) {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.17g", score);
      zadd.emplace_back(buffer);
      zadd.push_back(member);
    }
    commands.push_back(std::move(zadd));
  }
  if (entry.expire_at_ms != kNoExpiry) {
    commands.push_back({"PEXPIREAT", key, std::to_string(entry.expire_at_ms)});
  }
  return commands;
}

Reply cmd_asking(CommandContext& ctx) {
  if (!ctx.server.cluster) return cluster_disabled();
  ctx.client.asking = true;
  return ok_reply();
}

Reply cmd_readonly(CommandContext& ctx) {
  if (!ctx.server.cluster) return cluster_disabled();
  return ok_reply();  // reads from a replica are not modelled: it answers MOVED still
}

Reply cmd_readwrite(CommandContext& ctx) {
  if (!ctx.server.cluster) return cluster_disabled();
  return ok_reply();
}

Reply cmd_cluster(CommandContext& ctx) {
  if (!ctx.server.cluster) return cluster_disabled();
  const ModelCluster& cluster = *ctx.server.cluster;
  const std::string sub = lower(ctx.argv[1]);
  if (sub == "slots" && ctx.argv.size() == 2) return cluster_slots(cluster);
  if (sub == "info" && ctx.argv.size() == 2) return cluster_info(cluster);
  if (sub == "myid" && ctx.argv.size() == 2) {
    return bulk_reply(cluster.nodes[static_cast<std::size_t>(cluster.myself)].id);
  }
  if (sub == "keyslot" && ctx.argv.size() == 3) return integer_reply(key_slot(ctx.argv[2]));
  return error_reply("ERR locksim model: unknown command 'cluster|" + sub + "'");
}

}  // namespace locksim::model_detail
