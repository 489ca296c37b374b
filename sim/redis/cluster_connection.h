// cluster_connection.h: ClusterConnection, the slot-aware client of a Redis Cluster, as one
// Connection: every command goes to the primary that serves its key's slot (key_slot.h), by a
// slot map read with CLUSTER SLOTS, and follows the cluster's redirections.
//
// Written by hand (docs/design.md): hiredis has no cluster support and Debian packages no C
// cluster client. What it does is what the cluster specification asks of a client and what the
// common clients (ioredis, redis-py, Jedis) do:
//   - a command with keys is sent to the node the map names for its first key's slot (a command
//     whose keys hash to several slots is sent there too, and the server answers CROSSSLOT, as a
//     real cluster does: the client does not refuse it itself);
//   - a command without a key (WAIT, MULTI, EXEC, SCRIPT, PING) goes to the node of the previous
//     command, so WAIT counts the replicas of the primary that took the write before it;
//   - `MOVED <slot> <host>:<port>`: the slot has a new owner: the map's entry is changed, the
//     command is sent there, and the whole map is read again before the next command;
//   - `ASK <slot> <host>:<port>`: the slot is being migrated and the key is not on the old owner:
//     ASKING, then the command, on the new owner, this once (the map keeps the old owner);
//   - a node that refuses the connection (it is dead: the command did not run), or answers
//     CLUSTERDOWN (it has lost its cluster, as a primary cut off from the majority does, or one
//     restarted within its writable delay: the command did not run): the map is read again, from
//     the other nodes first, and the command sent to the new owner, if the slot has one; else it
//     is returned refused (RedisErrorKind::kRefused, with the node's words), as by a server that
//     is down: the cluster is unavailable, the command was not wrong; so is `TRYAGAIN` (a
//     multi-key command while its slot migrates, some of its keys moved: it cannot run until the
//     migration ends; ioredis and redis-py retry it after a pause, here the call ends refused);
//   - a node that does not answer, or closes (the command may have run): the error is returned
//     and the connection is broken() until reconnect(), which reads the map again, as a single
//     server's connection is after an I/O error. A command is never sent twice when it may have
//     run.
// At most kMaxRedirections redirections per command (a slot moving back and forth); then the last
// redirection's error is returned. Each redirection is reported to the observer (on_redirect), so
// that a client records it in its history.
//
//   ClusterConnection c(seeds, [](const Endpoint& e) { return std::make_unique<...>(e, opts); });
//   c.on_redirect([&](const Redirection& r) { log(describe(r)); });
//   RedisResult r = c.command({"SET", "lock", token, "NX", "PX", "10000"});
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/redis/connection.h"
#include "sim/redis/endpoint.h"

namespace locksim {

// Redirection: one MOVED or ASK answer a command was given, and followed.
struct Redirection {
  enum class Kind : std::uint8_t { kMoved, kAsk };
  Kind kind = Kind::kMoved;
  std::uint16_t slot = 0;
  Endpoint from = {};  // the node that answered with the redirection
  Endpoint to = {};    // where it sent the command
};

// describe: "MOVED slot 5798 from 127.0.0.1:40001 to 127.0.0.1:40002".
std::string describe(const Redirection& redirection);

// command_key: the key a command is routed by (its first key), or nullopt for a command without
// a key. EVAL, EVALSHA and FCALL name their keys after numkeys; the commands that take none are
// listed; every other command's first argument is its key.
std::optional<std::string_view> command_key(std::span<const std::string_view> args);

// parse_redirection: the slot and node of "MOVED 3999 127.0.0.1:6381" or "ASK ...", or nullopt.
std::optional<Redirection> parse_redirection(std::string_view error_message);

class ClusterConnection final : public Connection {
 public:
  // NodeDial: opens a connection to one node (with the caller's timeouts and credentials).
  using NodeDial = std::function<std::unique_ptr<Connection>(const Endpoint&)>;
  static constexpr int kMaxRedirections = 5;

  // seeds: the nodes the slot map may be read from, in order (any node of the cluster will do).
  // The map is read at once; if no seed answers, the connection is broken() with why.
  ClusterConnection(std::vector<Endpoint> seeds, NodeDial dial);

  // on_redirect: called for each redirection followed, on the calling thread.
  void on_redirect(std::function<void(const Redirection&)> observer) {
    observer_ = std::move(observer);
  }

  using Connection::command;
  RedisResult command(std::span<const std::string_view> args) override;
  // next_message: on the node of the last command (SUBSCRIBE has no key).
  std::optional<RedisResult> next_message(std::int64_t timeout_ns) override;
  bool broken() const override { return broken_; }
  const RedisResult& last_error() const override { return last_error_; }
  // reconnect: reads the slot map again (broken node connections are dialled again when next
  // used); the outcome of reading it.
  RedisResult reconnect() override;
  void close() override;
  // endpoint: the node of the last command (the first seed before any).
  const Endpoint& endpoint() const override;
  std::uint64_t round_trips() const override { return round_trips_; }

  // owner: the node the map names for `slot`, if any (what the next command with a key of the
  // slot is sent to).
  std::optional<Endpoint> owner(std::uint16_t slot) const;
  // redirections: how many MOVED and ASK answers were followed so far.
  std::uint64_t redirections() const { return redirections_; }

 private:
  struct Node {
    Endpoint endpoint;
    std::unique_ptr<Connection> connection;  // null until first used
  };
  // refresh: reads CLUSTER SLOTS from a node that answers (the known nodes, then the seeds, and
  // node `last` after all of them: the node that just failed us); the map is left as it was if
  // none did.
  RedisResult refresh(int last = -1);
  // node_index: the index of `endpoint` in nodes_ (added if new).
  int node_index(const std::string& host, int port);
  // connection: node `index`'s connection, dialled again if it is missing or broken.
  Connection& connection(int index);
  RedisResult fail(RedisResult result);

  std::vector<Endpoint> seeds_;
  NodeDial dial_;
  std::function<void(const Redirection&)> observer_;
  std::vector<Node> nodes_;
  std::vector<std::int16_t> slots_;  // by slot: an index into nodes_, or -1
  bool map_stale_ = true;
  int last_ = -1;  // the node of the last command
  bool broken_ = false;
  RedisResult last_error_;
  std::uint64_t round_trips_ = 0;
  std::uint64_t redirections_ = 0;
};

}  // namespace locksim
