#include "sim/redis/cluster_connection.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <utility>

#include "sim/redis/key_slot.h"

namespace locksim {
namespace {

bool same_word(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return (x | 0x20) == (y | 0x20);
         });
}

// kKeyless: the commands locksim's clients and checks send that name no key (a PUBLISH names a
// channel, which a cluster carries to every node).
constexpr std::array<std::string_view, 26> kKeyless = {
    "PING",       "INFO",    "WAIT",     "MULTI",  "EXEC",     "DISCARD",   "SCRIPT",
    "CLIENT",     "CONFIG",  "CLUSTER",  "ASKING", "READONLY", "SUBSCRIBE", "UNSUBSCRIBE",
    "PSUBSCRIBE", "PUBLISH", "TIME",     "DBSIZE", "FLUSHALL", "FLUSHDB",   "ECHO",
    "HELLO",      "DEBUG",   "FUNCTION", "ACL",    "COMMAND"};

std::optional<std::int64_t> to_integer(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string address(const Endpoint& endpoint) {
  return endpoint.host + ":" + std::to_string(endpoint.port);
}

}  // namespace

std::string describe(const Redirection& redirection) {
  return std::string(redirection.kind == Redirection::Kind::kMoved ? "MOVED" : "ASK") + " slot " +
         std::to_string(redirection.slot) + " from " + address(redirection.from) + " to " +
         address(redirection.to);
}

std::optional<std::string_view> command_key(std::span<const std::string_view> args) {
  if (args.size() < 2) return std::nullopt;
  const std::string_view name = args[0];
  for (std::string_view keyless : kKeyless) {
    if (same_word(name, keyless)) return std::nullopt;
  }
  if (same_word(name, "EVAL") || same_word(name, "EVALSHA") || same_word(name, "EVAL_RO") ||
      same_word(name, "EVALSHA_RO") || same_word(name, "FCALL") || same_word(name, "FCALL_RO")) {
    if (args.size() < 4) return std::nullopt;
    const std::optional<std::int64_t> keys = to_integer(args[2]);
    if (!keys || *keys <= 0) return std::nullopt;
    return args[3];
  }
  return args[1];
}

std::optional<Redirection> parse_redirection(std::string_view message) {
  Redirection redirection;
  if (message.starts_with("MOVED ")) {
    redirection.kind = Redirection::Kind::kMoved;
    message.remove_prefix(6);
  } else if (message.starts_with("ASK ")) {
    redirection.kind = Redirection::Kind::kAsk;
    message.remove_prefix(4);
  } else {
    return std::nullopt;
  }
  const std::size_t space = message.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const std::optional<std::int64_t> slot = to_integer(message.substr(0, space));
  const std::string_view node = message.substr(space + 1);
  const std::size_t colon = node.rfind(':');
  if (!slot || *slot < 0 || *slot >= kClusterSlots || colon == std::string_view::npos) {
    return std::nullopt;
  }
  const std::optional<std::int64_t> port = to_integer(node.substr(colon + 1));
  if (!port || *port <= 0 || *port > 65535) return std::nullopt;
  redirection.slot = static_cast<std::uint16_t>(*slot);
  redirection.to.host = std::string(node.substr(0, colon));
  redirection.to.port = static_cast<int>(*port);
  return redirection;
}

ClusterConnection::ClusterConnection(std::vector<Endpoint> seeds, NodeDial dial)
    : seeds_(std::move(seeds)), dial_(std::move(dial)), slots_(kClusterSlots, -1) {
  for (const Endpoint& seed : seeds_) node_index(seed.host, seed.port);
  const RedisResult read = refresh();
  if (!read.ok()) fail(read);
}

int ClusterConnection::node_index(const std::string& host, int port) {
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].endpoint.port == port && nodes_[i].endpoint.host == host) {
      return static_cast<int>(i);
    }
  }
  // A node learnt from the cluster logs in as the seeds do.
  Endpoint endpoint = seeds_.empty() ? Endpoint{} : seeds_.front();
  endpoint.host = host.empty() ? endpoint.host : host;
  endpoint.port = port;
  nodes_.push_back(Node{std::move(endpoint), nullptr});
  return static_cast<int>(nodes_.size() - 1);
}

Connection& ClusterConnection::connection(int index) {
  Node& node = nodes_[static_cast<std::size_t>(index)];
  if (!node.connection) {
    node.connection = dial_(node.endpoint);
  } else if (node.connection->broken()) {
    node.connection->reconnect();
  }
  return *node.connection;
}

RedisResult ClusterConnection::fail(RedisResult result) {
  broken_ = true;
  map_stale_ = true;
  last_error_ = result;
  return result;
}

RedisResult ClusterConnection::refresh(int avoid) {
  RedisResult last;
  last.error = RedisErrorKind::kRefused;
  last.message = "no node of the cluster to read its slot map from";
  // Every known node in turn, the one that failed us last (it may be dead, or cut off with a
  // map of its own).
  const std::size_t count = nodes_.size();
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t i = avoid >= 0 ? (static_cast<std::size_t>(avoid) + 1 + k) % count : k;
    Connection& node = connection(static_cast<int>(i));
    if (node.broken()) {
      last = node.last_error();
      continue;
    }
    RedisResult slots = node.command({"CLUSTER", "SLOTS"});
    ++round_trips_;
    if (!slots.ok()) {
      last = slots;
      continue;
    }
    if (slots.reply.type != Reply::Type::kArray || slots.reply.elements.empty()) {
      // A node that knows no slots (a fresh node, or one that lost its cluster) cannot say.
      last.error = RedisErrorKind::kUnexpectedReply;
      last.message = "CLUSTER SLOTS on " + address(nodes_[i].endpoint) + " named no slot";
      continue;
    }
    std::vector<std::int16_t> map(kClusterSlots, -1);
    for (const Reply& range : slots.reply.elements) {
      if (range.type != Reply::Type::kArray || range.elements.size() < 3) continue;
      const Reply& owner = range.elements[2];
      if (owner.type != Reply::Type::kArray || owner.elements.size() < 2) continue;
      const std::int64_t from = range.elements[0].integer;
      const std::int64_t to = range.elements[1].integer;
      const int index =
          node_index(owner.elements[0].str, static_cast<int>(owner.elements[1].integer));
      for (std::int64_t slot = std::max<std::int64_t>(0, from);
           slot <= std::min<std::int64_t>(kClusterSlots - 1, to); ++slot) {
        map[static_cast<std::size_t>(slot)] = static_cast<std::int16_t>(index);
      }
    }
    slots_ = std::move(map);
    map_stale_ = false;
    return RedisResult{};
  }
  return last;
}

RedisResult ClusterConnection::command(std::span<const std::string_view> args) {
  if (broken_) return last_error_;
  const std::optional<std::string_view> key = command_key(args);
  int target = last_ >= 0 ? last_ : 0;
  if (key) {
    const std::uint16_t slot = key_slot(*key);
    if (map_stale_ || slots_[slot] < 0) refresh();
    if (slots_[slot] < 0) {
      RedisResult none;
      none.error = RedisErrorKind::kRefused;
      none.message = "no node of the cluster serves slot " + std::to_string(slot);
      return none;
    }
    target = slots_[slot];
  }
  if (nodes_.empty()) {
    RedisResult none;
    none.error = RedisErrorKind::kRefused;
    none.message = "no node of the cluster to send to";
    return none;
  }
  bool asking = false;
  bool retried_refusal = false;
  RedisResult result;
  for (int hop = 0; hop <= kMaxRedirections; ++hop) {
    last_ = target;
    Connection& node = connection(target);
    if (asking) {
      RedisResult asked = node.command({"ASKING"});
      ++round_trips_;
      if (!asked.ok()) return asked.indeterminate() ? fail(asked) : asked;
    }
    result = node.command(args);
    ++round_trips_;
    const bool cluster_down =
        result.error == RedisErrorKind::kReplyError && result.message.starts_with("CLUSTERDOWN");
    if (result.error == RedisErrorKind::kRefused || cluster_down) {
      // The node is gone, or has lost its cluster, and the command did not run: its slot may
      // have a new owner already. If not, it is refused as by a server that is down (the words
      // are the node's): an unavailable cluster, not an error of the caller's command.
      if (cluster_down) result.error = RedisErrorKind::kRefused;
      map_stale_ = true;
      if (!key || retried_refusal) return result;
      retried_refusal = true;
      refresh(target);
      const std::int16_t owner = slots_[key_slot(*key)];
      if (owner < 0 || owner == target) return result;
      target = owner;
      asking = false;
      continue;
    }
    if (result.indeterminate()) return fail(result);
    if (result.error != RedisErrorKind::kReplyError) return result;
    if (result.message.starts_with("TRYAGAIN")) {
      // A multi-key command whose slot is being migrated, with some keys moved already: it did
      // not run, and can only run once the migration ends: refused, as by an unavailable server.
      result.error = RedisErrorKind::kRefused;
      return result;
    }
    std::optional<Redirection> redirection = parse_redirection(result.message);
    if (!redirection) return result;
    if (hop == kMaxRedirections) break;
    redirection->from = nodes_[static_cast<std::size_t>(target)].endpoint;
    target = node_index(redirection->to.host, redirection->to.port);
    redirection->to = nodes_[static_cast<std::size_t>(target)].endpoint;
    ++redirections_;
    if (redirection->kind == Redirection::Kind::kMoved) {
      slots_[redirection->slot] = static_cast<std::int16_t>(target);
      map_stale_ = true;  // a moved slot seldom moves alone (a failover moves a range)
      asking = false;
    } else {
      asking = true;
    }
    if (observer_) observer_(*redirection);
  }
  return result;
}

std::optional<RedisResult> ClusterConnection::next_message(std::int64_t timeout_ns) {
  if (broken_) return last_error_;
  std::optional<RedisResult> message = connection(last_ >= 0 ? last_ : 0).next_message(timeout_ns);
  if (message && message->indeterminate()) fail(*message);
  return message;
}

RedisResult ClusterConnection::reconnect() {
  const RedisResult read = refresh();
  if (read.ok()) {
    broken_ = false;
    last_error_ = RedisResult{};
  } else {
    last_error_ = read;
  }
  return read;
}

void ClusterConnection::close() {
  for (Node& node : nodes_) {
    if (node.connection) node.connection->close();
  }
  RedisResult closed;
  closed.error = RedisErrorKind::kClosed;
  closed.message = "closed";
  fail(closed);
}

const Endpoint& ClusterConnection::endpoint() const {
  return nodes_[static_cast<std::size_t>(last_ >= 0 ? last_ : 0)].endpoint;
}

std::optional<Endpoint> ClusterConnection::owner(std::uint16_t slot) const {
  const std::int16_t index = slots_.at(slot);
  if (index < 0) return std::nullopt;
  return nodes_[static_cast<std::size_t>(index)].endpoint;
}

}  // namespace locksim
