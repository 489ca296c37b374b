// command.h: how the model runs one command: CommandContext (what a command sees), CommandSpec
// (a row of the command table: Redis 7.0's name, arity and flags, and the model's handler) and
// the handlers, one file per family (string_commands.cc, key_commands.cc, ...).
//
// A handler reads its arguments from ctx.argv (argv[0] is the name as sent), reaches keys only
// through ctx.find() (which applies expiry as Redis does) and ctx.keys(), and records what a
// replica must replay with ctx.propagate(), with relative times made absolute as Redis 7.0
// rewrites them (SET ... PXAT, PEXPIREAT, DEL). The dispatcher has already checked the name,
// the arity, the client's state and the server's role.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/model/keyspace.h"
#include "sim/model/replies.h"

namespace locksim::model_detail {

struct ServerState;
struct ClientState;

// Effects: the write commands one client command amounts to, for the replicas (a script's are
// the commands it ran; an expired key found on the way is a DEL).
using Effects = std::vector<std::vector<std::string>>;

struct CommandContext {
  ServerState& server;
  ClientState& client;
  std::span<const std::string_view> argv;
  std::int64_t now_ms = 0;     // the server's wall clock in unix ms (frozen for a whole script)
  std::int64_t now_us = 0;     // the same in microseconds, for TIME
  bool in_script = false;      // run by redis.call / redis.pcall
  bool from_primary = false;   // a primary's write replayed on its replica: nothing expires
  Effects* effects = nullptr;  // where propagate() records; nullptr records nothing
  // A running script's state, on its EVAL's context (scriptVerifyOOM): whether the server was
  // over maxmemory when it started, whether its flags allow that, and whether it has run a write
  // (after which Redis lets it go on growing memory: it cannot stop halfway).
  bool script_oom = false;
  bool script_allow_oom = false;
  bool script_wrote = false;
  // A cluster node's: the slot of the client command's keys (-1: none), which a script's
  // undeclared keys must share unless its flags allow cross-slot keys.
  int cluster_slot = -1;
  bool script_cross_slot = false;

  Keyspace& keys();
  // find: the live entry of `key`, or nullptr. On a primary an expired entry is erased and a DEL
  // propagated; a replica hides it and keeps it; a replayed write sees every entry.
  Entry* find(std::string_view key);
  // already_expired: EXPIRE's checkAlreadyExpired: `at_ms` is not in the future and the server
  // is a primary (a replica keeps the key and waits for its primary's DEL).
  bool already_expired(std::int64_t at_ms) const;
  // propagate: records one write command for the replicas.
  void propagate(std::vector<std::string> command);
  // propagate: the same from words, built only when something records (a replica is attached):
  // a lock's SET on a server without replicas copies nothing.
  void propagate(std::initializer_list<std::string_view> command);
  // propagate_as_sent: records argv unchanged.
  void propagate_as_sent();
};

using CommandHandler = Reply (*)(CommandContext&);

enum CommandFlag : unsigned {
  kWrite = 1u << 0,          // changes data: refused on a replica, counted as a script's write
  kNoScript = 1u << 1,       // not allowed from a script
  kMayReplicate = 1u << 2,   // not a write, but refused in a read-only (no-writes) script
  kPubSubContext = 1u << 3,  // allowed while the client is subscribed (RESP2)
  kDenyOom = 1u << 4,        // may grow memory: refused over maxmemory (Redis's "denyoom")
};

struct CommandSpec {
  std::string_view name;  // Redis's name, lowercase
  int arity;              // Redis's: n exactly n arguments (name included), -n at least n
  unsigned flags;
  CommandHandler handler;  // nullptr: a Redis 7.0 command the model does not have
};

// find_command: the row of `name` (any case), or nullptr if Redis 7.0 has no such command.
const CommandSpec* find_command(std::string_view name);
// command_specs: every row, in Redis's alphabetical order.
std::span<const CommandSpec> command_specs();
// arity_ok: whether `argc` arguments (name included) fit `spec`'s arity.
bool arity_ok(const CommandSpec& spec, std::size_t argc);

// lower: ASCII lowercase (command names and options are compared case-insensitively).
std::string lower(std::string_view text);
// fold_case: ASCII case folding, as strcasecmp in the C locale that Redis runs in.
constexpr char fold_case(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}
// equals_ignoring_case: strcasecmp(a, b) == 0 for ASCII. Inline: SET's options are read with it,
// several times a command.
inline bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (fold_case(a[i]) != fold_case(b[i])) return false;
  }
  return true;
}

// Handlers (the table in command_table.cc names them).
#define LOCKSIM_MODEL_COMMAND(name) Reply cmd_##name(CommandContext& ctx);
// cluster (cluster_commands.cc)
LOCKSIM_MODEL_COMMAND(asking)
LOCKSIM_MODEL_COMMAND(cluster)
LOCKSIM_MODEL_COMMAND(readonly)
LOCKSIM_MODEL_COMMAND(readwrite)
// strings
LOCKSIM_MODEL_COMMAND(get)
LOCKSIM_MODEL_COMMAND(set)
LOCKSIM_MODEL_COMMAND(setnx)
LOCKSIM_MODEL_COMMAND(setex)
LOCKSIM_MODEL_COMMAND(psetex)
LOCKSIM_MODEL_COMMAND(getdel)
LOCKSIM_MODEL_COMMAND(getex)
LOCKSIM_MODEL_COMMAND(getset)
LOCKSIM_MODEL_COMMAND(mget)
LOCKSIM_MODEL_COMMAND(mset)
LOCKSIM_MODEL_COMMAND(msetnx)
LOCKSIM_MODEL_COMMAND(append)
LOCKSIM_MODEL_COMMAND(strlen)
LOCKSIM_MODEL_COMMAND(incr)
LOCKSIM_MODEL_COMMAND(incrby)
LOCKSIM_MODEL_COMMAND(decr)
LOCKSIM_MODEL_COMMAND(decrby)
// keys and expiry
LOCKSIM_MODEL_COMMAND(del)
LOCKSIM_MODEL_COMMAND(unlink)
LOCKSIM_MODEL_COMMAND(exists)
LOCKSIM_MODEL_COMMAND(touch)
LOCKSIM_MODEL_COMMAND(expire)
LOCKSIM_MODEL_COMMAND(pexpire)
LOCKSIM_MODEL_COMMAND(expireat)
LOCKSIM_MODEL_COMMAND(pexpireat)
LOCKSIM_MODEL_COMMAND(expiretime)
LOCKSIM_MODEL_COMMAND(pexpiretime)
LOCKSIM_MODEL_COMMAND(ttl)
LOCKSIM_MODEL_COMMAND(pttl)
LOCKSIM_MODEL_COMMAND(persist)
LOCKSIM_MODEL_COMMAND(type)
LOCKSIM_MODEL_COMMAND(keys)
LOCKSIM_MODEL_COMMAND(dbsize)
// hashes
LOCKSIM_MODEL_COMMAND(hset)
LOCKSIM_MODEL_COMMAND(hmset)
LOCKSIM_MODEL_COMMAND(hsetnx)
LOCKSIM_MODEL_COMMAND(hget)
LOCKSIM_MODEL_COMMAND(hmget)
LOCKSIM_MODEL_COMMAND(hdel)
LOCKSIM_MODEL_COMMAND(hexists)
LOCKSIM_MODEL_COMMAND(hgetall)
LOCKSIM_MODEL_COMMAND(hlen)
LOCKSIM_MODEL_COMMAND(hkeys)
LOCKSIM_MODEL_COMMAND(hvals)
LOCKSIM_MODEL_COMMAND(hincrby)
LOCKSIM_MODEL_COMMAND(hstrlen)
// lists
LOCKSIM_MODEL_COMMAND(lpush)
LOCKSIM_MODEL_COMMAND(rpush)
LOCKSIM_MODEL_COMMAND(lpop)
LOCKSIM_MODEL_COMMAND(rpop)
LOCKSIM_MODEL_COMMAND(lrem)
LOCKSIM_MODEL_COMMAND(lrange)
LOCKSIM_MODEL_COMMAND(ltrim)
LOCKSIM_MODEL_COMMAND(blpop)
LOCKSIM_MODEL_COMMAND(lindex)
LOCKSIM_MODEL_COMMAND(llen)
// sorted sets
LOCKSIM_MODEL_COMMAND(zadd)
LOCKSIM_MODEL_COMMAND(zrem)
LOCKSIM_MODEL_COMMAND(zscore)
LOCKSIM_MODEL_COMMAND(zcard)
LOCKSIM_MODEL_COMMAND(zcount)
LOCKSIM_MODEL_COMMAND(zrank)
LOCKSIM_MODEL_COMMAND(zrange)
LOCKSIM_MODEL_COMMAND(zrangebyscore)
LOCKSIM_MODEL_COMMAND(zremrangebyscore)
LOCKSIM_MODEL_COMMAND(zinterstore)
// server, pub/sub, scripting
LOCKSIM_MODEL_COMMAND(ping)
LOCKSIM_MODEL_COMMAND(echo)
LOCKSIM_MODEL_COMMAND(time)
LOCKSIM_MODEL_COMMAND(flushall)
LOCKSIM_MODEL_COMMAND(flushdb)
LOCKSIM_MODEL_COMMAND(wait)
LOCKSIM_MODEL_COMMAND(select)
LOCKSIM_MODEL_COMMAND(publish)
LOCKSIM_MODEL_COMMAND(subscribe)
LOCKSIM_MODEL_COMMAND(unsubscribe)
LOCKSIM_MODEL_COMMAND(eval)
LOCKSIM_MODEL_COMMAND(evalsha)
LOCKSIM_MODEL_COMMAND(eval_ro)
LOCKSIM_MODEL_COMMAND(evalsha_ro)
LOCKSIM_MODEL_COMMAND(script)
#undef LOCKSIM_MODEL_COMMAND

}  // namespace locksim::model_detail
