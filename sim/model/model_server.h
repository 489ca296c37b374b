// model_server.h: ModelServer, an in-memory Redis 7.0 that answers the commands locks use, with
// Lua scripting, on a virtual clock; and ReplicationLink, an asynchronous replica fed when its
// host says so.
//
// The model never reads a clock: every command carries the virtual time it runs at (Nanos, as a
// Clock gives it), and the server's wall clock is `unix_epoch_base_ms + now + clock offset`.
// Keys expire on that wall clock, TIME reads it, and a script sees it frozen at its start. It is
// deterministic: the same commands at the same times give the same replies, byte for byte,
// whatever the machine. Replies and error texts are Redis 7.0.15's (docs/model.md lists where
// the model knowingly differs); a Redis command the model lacks is answered
// "ERR locksim model: unknown command 'XADD'", so a lock that needs it runs on the real server
// only. Several servers (Redlock) are several instances. Not thread-safe: one host drives it.
//
//   ModelServer server;
//   server.execute({"SET", "lock", "token", "NX", "PX", "100"}, 0);     // OK
//   server.execute({"GET", "lock"}, ms_to_ns(100));                     // "token"
//   server.execute({"GET", "lock"}, ms_to_ns(101));                     // nil: expired
//
//   ModelServer primary, replica;
//   ReplicationLink link(primary, replica);  // full sync now; then writes queue on the link
//   primary.execute({"SET", "k", "v"}, 0);
//   link.deliver();                          // the replica has k from now on
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/core/clock.h"
#include "sim/redis/connection.h"

namespace locksim {

// kModelGap: what every error the model answers for something it lacks (a command, a Lua
// library, an option) says, after "ERR ": no Redis error says it, so a run can tell the model's
// gaps from the lock's own errors (run_simulated turns one into "not runnable here").
inline constexpr std::string_view kModelGap = "locksim model:";

namespace model_detail {
struct ServerState;
}

struct ModelOptions {
  // unix_epoch_base_ms: the server's wall clock (unix ms) at virtual time 0.
  std::int64_t unix_epoch_base_ms = 1'700'000'000'000;
  // script_instruction_budget: Lua VM instructions a script may run before the model stops it
  // with an error (Redis would run it on, answering BUSY to others, until SCRIPT KILL). Counted
  // in steps of 1,000; 0 means no budget. 10^8 is about a quarter of a second of Lua on the
  // 2-core development machine; a lock's script runs a few hundred.
  std::int64_t script_instruction_budget = 100'000'000;
  // lua_memory_limit_bytes: the script engine's memory; beyond it Lua reports
  // "not enough memory" (Redis has no such limit of its own).
  std::size_t lua_memory_limit_bytes = std::size_t{256} << 20;
  // script_allocation_budget_bytes: bytes a script may allocate in all (what it freed counts
  // too) before the model stops it as it stops one over its instruction budget: the work of
  // Lua's C functions (string.rep in a loop), which no instruction count sees. 256 MiB is about
  // half a second of string.rep, near the instruction budget's time; a lock's script allocates
  // a few kilobytes. 0: no budget.
  std::size_t script_allocation_budget_bytes = std::size_t{256} << 20;
  // script_time_limit_ms: real time a script may run before the model stops it, the backstop of
  // both budgets: string.rep in a loop allocates nothing once Lua holds its strings interned (a
  // state from the thread's pool whose collector had no reason to run: the loop ran for over 14
  // minutes), and no instruction count sees the copying. Redis's lua-time-limit is 5 s too (from
  // then it answers BUSY). 0: none.
  std::int64_t script_time_limit_ms = 5000;
  // maxmemory_bytes: Redis's maxmemory with its default policy, noeviction: once the keyspace's
  // estimated size (Keyspace::used_bytes) is over it, a command that may grow memory ("denyoom":
  // SET, APPEND, RPUSH, ...) is refused with Redis's OOM error; the others run. 0: no limit.
  // 64 MiB bounds a lock that grows its keys without end to what a simulator host can hold
  // (a real server's default is no limit, up to the machine's memory).
  std::size_t maxmemory_bytes = std::size_t{64} << 20;
};

// ModelCluster: what one node of a Redis Cluster knows of its cluster (its host, SimTopology,
// keeps it): the nodes, who serves each slot, the slots this node migrates or imports, and
// whether it says the cluster is ok. A server given one answers as a cluster node of Redis
// 7.0.15 does (cluster.c getNodeByQuery, script.c scriptVerifyClusterState): a command whose
// keys hash to a slot another node serves is answered MOVED, one whose keys span slots CROSSSLOT,
// a key missing from a slot being migrated ASK (or TRYAGAIN), ASKING lets the next command reach
// a slot being imported, every keyed command is refused with CLUSTERDOWN while the cluster is
// not ok; a script may touch only local keys of one slot; and CLUSTER SLOTS, KEYSLOT, MYID,
// INFO answer from it.
struct ModelClusterNode {
  std::string host;
  int port = 0;
  std::string id;          // 40 hex digits
  int primary = -1;        // the node it replicates (an index into nodes), or -1: a primary
  bool failed = false;     // flagged FAIL: not listed as an available replica
  bool has_offset = true;  // a replica that has received something (CLUSTER SLOTS lists it)
};
struct ModelCluster {
  std::vector<ModelClusterNode> nodes;
  int myself = 0;
  // slots: by slot (16384 of them), the node that serves it, or -1.
  std::vector<std::int16_t> slots;
  // migrating, importing: this node's open slots: the slot and the node it goes to or comes from.
  std::vector<std::pair<std::uint16_t, int>> migrating;
  std::vector<std::pair<std::uint16_t, int>> importing;
  bool ok = true;  // cluster_state:ok
};

// ModelClientId: one connection's state on a ModelServer (its subscriptions and pushed
// messages). 0 is the server's anonymous client, which execute(argv, now) uses.
using ModelClientId = std::uint64_t;

class ReplicationLink;

class ModelServer {
 public:
  explicit ModelServer(ModelOptions options = {});
  ~ModelServer();  // detaches its replication links
  ModelServer(const ModelServer&) = delete;
  ModelServer& operator=(const ModelServer&) = delete;

  // execute: runs one command (argv[0] is its name, any case; binary-safe arguments) at virtual
  // time `now_ns`, as the anonymous client. A Redis error is an error reply, never an exception.
  Reply execute(std::span<const std::string_view> argv, Nanos now_ns);
  Reply execute(std::initializer_list<std::string_view> argv, Nanos now_ns) {
    return execute(std::span<const std::string_view>(argv.begin(), argv.size()), now_ns);
  }

  // Clients. A client of its own can SUBSCRIBE; the first confirmation is the reply, the rest
  // and every published message wait in its queue for next_push(). A restart disconnects every
  // client: connected() turns false and execute() on it asserts.
  ModelClientId connect();
  void disconnect(ModelClientId client);
  bool connected(ModelClientId client) const;
  Reply execute(ModelClientId client, std::span<const std::string_view> argv, Nanos now_ns);
  // next_push: the oldest message pushed to `client` not yet taken, or nullopt.
  std::optional<Reply> next_push(ModelClientId client);
  bool subscribed(ModelClientId client) const;

  // Faults.
  // restart: a restart without persistence: no keys, no scripts, no clients; math.random's
  // sequence starts over. A primary's replicas resynchronise from it (they empty too); a
  // replica resynchronises from its primary.
  void restart();
  // set_clock_offset_ms: the wall clock runs `offset_ms` ahead (negative: behind) of the
  // virtual clock from now on; keys expire by it.
  void set_clock_offset_ms(std::int64_t offset_ms);
  std::int64_t clock_offset_ms() const;
  // wall_ms: the server's wall clock (unix ms) at virtual time `now_ns`.
  std::int64_t wall_ms(Nanos now_ns) const;
  // generation: restarts so far (a connection notices a restart by it).
  std::uint64_t generation() const;

  // Replication role. A replica refuses writes (READONLY) and keeps expired keys hidden until
  // its primary's DEL; promote() makes it a writable primary and detaches it from its primary.
  bool is_replica() const;
  void promote();

  // Redis Cluster. enable_cluster: the server is a cluster node from now on (cluster_enabled
  // yes), knowing `view`; cluster(): its view, for its host to change (nullptr if it is none).
  void enable_cluster(ModelCluster view);
  ModelCluster* cluster();
  // migrate_slot_keys: MIGRATE of every live key of `slot` to `target` (a cluster's
  // migrate_slot_finish): each key with its remaining TTL (by this server's clock, from the
  // target's: DUMP and RESTORE carry a relative TTL), deleted here; replicas of both are told.
  // Returns how many keys moved.
  std::size_t migrate_slot_keys(std::uint16_t slot, ModelServer& target, Nanos now_ns);
  // keys_at: the live keys at `now_ns`, in key order (for tests and hosts; no side effects).
  std::vector<std::string> keys_at(Nanos now_ns) const;

  // first_gap: the first thing this server was asked for that the model lacks (the words after
  // kModelGap, e.g. "unknown command 'incrbyfloat'"), or "" if none so far. Noted whoever saw
  // the error: a client's reply, or a script that caught it with redis.pcall or pcall and went
  // on (its reply then carries no marker, yet the run diverged from Redis). A restart keeps it.
  const std::string& first_gap() const;

 private:
  friend class ReplicationLink;
  std::unique_ptr<model_detail::ServerState> state_;
};

// ReplicationLink: a replica fed asynchronously by its primary. Constructing it makes `replica`
// a read-only copy of `primary` (a full sync, as after REPLICAOF); from then on every write the
// primary executes (a command, or all the writes of one script) is queued here as one unit, with
// relative times made absolute as Redis 7.0 propagates them (SET ... PXAT, PEXPIREAT, DEL), until
// the host delivers it. WAIT counts the links with nothing pending. Both servers must outlive
// the link, or the link is detached when either is destroyed.
class ReplicationLink {
 public:
  ReplicationLink(ModelServer& primary, ModelServer& replica);
  ~ReplicationLink();
  ReplicationLink(const ReplicationLink&) = delete;
  ReplicationLink& operator=(const ReplicationLink&) = delete;

  // pending: units queued and not yet applied to the replica.
  std::size_t pending() const { return queue_.size(); }
  // deliver: applies up to `max_units` queued units in order; returns how many it applied.
  std::size_t deliver(std::size_t max_units = SIZE_MAX);
  // drop_pending: the queued units are lost (a broken link, a primary that died first).
  void drop_pending() { queue_.clear(); }
  // attached: both servers still exist and the replica was not promoted.
  bool attached() const { return primary_ != nullptr && replica_ != nullptr; }

 private:
  friend class ModelServer;
  void queue(std::vector<std::vector<std::string>> unit);
  void full_sync();
  void detach();

  ModelServer* primary_;
  ModelServer* replica_;
  std::deque<std::vector<std::vector<std::string>>> queue_;
};

}  // namespace locksim
