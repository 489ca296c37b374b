// command_table.cc: every command of Redis 7.0 (src/commands.c: name, arity, the flags the model
// needs), and the model's handler for those it has. A name in this table without a handler is
// answered "ERR locksim model: unknown command"; a name not in it, as Redis answers an unknown
// command.
#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>

#include "sim/model/command.h"

namespace locksim::model_detail {
namespace {

// In name order (as commands.c lists them); find_command looks names up through a hash table.
constexpr CommandSpec kCommands[] = {
    {"acl", -2, 0, nullptr},
    {"append", 3, kWrite | kDenyOom, cmd_append},
    {"asking", 1, 0, cmd_asking},
    {"auth", -2, kNoScript, nullptr},
    {"bgrewriteaof", 1, kNoScript, nullptr},
    {"bgsave", -1, kNoScript, nullptr},
    {"bitcount", -2, 0, nullptr},
    {"bitfield", -2, kWrite | kDenyOom, nullptr},
    {"bitfield_ro", -2, 0, nullptr},
    {"bitop", -4, kWrite | kDenyOom, nullptr},
    {"bitpos", -3, 0, nullptr},
    {"blmove", 6, kWrite | kNoScript | kDenyOom, nullptr},
    {"blmpop", -5, kWrite, nullptr},
    {"blpop", -3, kWrite | kNoScript, cmd_blpop},
    {"brpop", -3, kWrite | kNoScript, nullptr},
    {"brpoplpush", 4, kWrite | kNoScript | kDenyOom, nullptr},
    {"bzmpop", -5, kWrite, nullptr},
    {"bzpopmax", -3, kWrite | kNoScript, nullptr},
    {"bzpopmin", -3, kWrite | kNoScript, nullptr},
    {"client", -2, 0, nullptr},
    {"cluster", -2, 0, cmd_cluster},
    {"command", -1, 0, nullptr},
    {"config", -2, 0, nullptr},
    {"copy", -3, kWrite | kDenyOom, nullptr},
    {"dbsize", 1, 0, cmd_dbsize},
    {"debug", -2, kNoScript, nullptr},
    {"decr", 2, kWrite | kDenyOom, cmd_decr},
    {"decrby", 3, kWrite | kDenyOom, cmd_decrby},
    {"del", -2, kWrite, cmd_del},
    {"discard", 1, kNoScript, nullptr},
    {"dump", 2, 0, nullptr},
    {"echo", 2, 0, cmd_echo},
    {"eval", -3, kNoScript | kMayReplicate, cmd_eval},
    {"eval_ro", -3, kNoScript, cmd_eval_ro},
    {"evalsha", -3, kNoScript | kMayReplicate, cmd_evalsha},
    {"evalsha_ro", -3, kNoScript, cmd_evalsha_ro},
    {"exec", 1, kNoScript, nullptr},
    {"exists", -2, 0, cmd_exists},
    {"expire", -3, kWrite, cmd_expire},
    {"expireat", -3, kWrite, cmd_expireat},
    {"expiretime", 2, 0, cmd_expiretime},
    {"failover", -1, kNoScript, nullptr},
    {"fcall", -3, kNoScript | kMayReplicate, nullptr},
    {"fcall_ro", -3, kNoScript, nullptr},
    {"flushall", -1, kWrite, cmd_flushall},
    {"flushdb", -1, kWrite, cmd_flushdb},
    {"function", -2, 0, nullptr},
    {"geoadd", -5, kWrite | kDenyOom, nullptr},
    {"geodist", -4, 0, nullptr},
    {"geohash", -2, 0, nullptr},
    {"geopos", -2, 0, nullptr},
    {"georadius", -6, kWrite | kDenyOom, nullptr},
    {"georadius_ro", -6, 0, nullptr},
    {"georadiusbymember", -5, kWrite | kDenyOom, nullptr},
    {"georadiusbymember_ro", -5, 0, nullptr},
    {"geosearch", -7, 0, nullptr},
    {"geosearchstore", -8, kWrite | kDenyOom, nullptr},
    {"get", 2, 0, cmd_get},
    {"getbit", 3, 0, nullptr},
    {"getdel", 2, kWrite, cmd_getdel},
    {"getex", -2, kWrite, cmd_getex},
    {"getrange", 4, 0, nullptr},
    {"getset", 3, kWrite | kDenyOom, cmd_getset},
    {"hdel", -3, kWrite, cmd_hdel},
    {"hello", -1, kNoScript, nullptr},
    {"hexists", 3, 0, cmd_hexists},
    {"hget", 3, 0, cmd_hget},
    {"hgetall", 2, 0, cmd_hgetall},
    {"hincrby", 4, kWrite | kDenyOom, cmd_hincrby},
    {"hincrbyfloat", 4, kWrite | kDenyOom, nullptr},
    {"hkeys", 2, 0, cmd_hkeys},
    {"hlen", 2, 0, cmd_hlen},
    {"hmget", -3, 0, cmd_hmget},
    {"hmset", -4, kWrite | kDenyOom, cmd_hmset},
    {"hrandfield", -2, 0, nullptr},
    {"hscan", -3, 0, nullptr},
    {"hset", -4, kWrite | kDenyOom, cmd_hset},
    {"hsetnx", 4, kWrite | kDenyOom, cmd_hsetnx},
    {"hstrlen", 3, 0, cmd_hstrlen},
    {"hvals", 2, 0, cmd_hvals},
    {"incr", 2, kWrite | kDenyOom, cmd_incr},
    {"incrby", 3, kWrite | kDenyOom, cmd_incrby},
    {"incrbyfloat", 3, kWrite | kDenyOom, nullptr},
    {"info", -1, 0, nullptr},
    {"keys", 2, 0, cmd_keys},
    {"lastsave", 1, 0, nullptr},
    {"latency", -2, 0, nullptr},
    {"lcs", -3, 0, nullptr},
    {"lindex", 3, 0, cmd_lindex},
    {"linsert", 5, kWrite | kDenyOom, nullptr},
    {"llen", 2, 0, cmd_llen},
    {"lmove", 5, kWrite | kDenyOom, nullptr},
    {"lmpop", -4, kWrite, nullptr},
    {"lolwut", -1, 0, nullptr},
    {"lpop", -2, kWrite, cmd_lpop},
    {"lpos", -3, 0, nullptr},
    {"lpush", -3, kWrite | kDenyOom, cmd_lpush},
    {"lpushx", -3, kWrite | kDenyOom, nullptr},
    {"lrange", 4, 0, cmd_lrange},
    {"lrem", 4, kWrite, cmd_lrem},
    {"lset", 4, kWrite | kDenyOom, nullptr},
    {"ltrim", 4, kWrite, cmd_ltrim},
    {"memory", -2, 0, nullptr},
    {"mget", -2, 0, cmd_mget},
    {"migrate", -6, kWrite, nullptr},
    {"module", -2, 0, nullptr},
    {"monitor", 1, kNoScript, nullptr},
    {"move", 3, kWrite, nullptr},
    {"mset", -3, kWrite | kDenyOom, cmd_mset},
    {"msetnx", -3, kWrite | kDenyOom, cmd_msetnx},
    {"multi", 1, kNoScript, nullptr},
    {"object", -2, 0, nullptr},
    {"persist", 2, kWrite, cmd_persist},
    {"pexpire", -3, kWrite, cmd_pexpire},
    {"pexpireat", -3, kWrite, cmd_pexpireat},
    {"pexpiretime", 2, 0, cmd_pexpiretime},
    {"pfadd", -2, kWrite | kDenyOom, nullptr},
    {"pfcount", -2, kMayReplicate, nullptr},
    {"pfdebug", 3, kWrite | kDenyOom, nullptr},
    {"pfmerge", -2, kWrite | kDenyOom, nullptr},
    {"pfselftest", 1, 0, nullptr},
    {"ping", -1, kPubSubContext, cmd_ping},
    {"psetex", 4, kWrite | kDenyOom, cmd_psetex},
    {"psubscribe", -2, kNoScript | kPubSubContext, nullptr},
    {"psync", -3, kNoScript, nullptr},
    {"pttl", 2, 0, cmd_pttl},
    {"publish", 3, kMayReplicate, cmd_publish},
    {"pubsub", -2, 0, nullptr},
    {"punsubscribe", -1, kNoScript | kPubSubContext, nullptr},
    {"quit", -1, kNoScript | kPubSubContext, nullptr},
    {"randomkey", 1, 0, nullptr},
    {"readonly", 1, 0, cmd_readonly},
    {"readwrite", 1, 0, cmd_readwrite},
    {"rename", 3, kWrite, nullptr},
    {"renamenx", 3, kWrite, nullptr},
    {"replconf", -1, kNoScript, nullptr},
    {"replicaof", 3, kNoScript, nullptr},
    {"reset", 1, kNoScript | kPubSubContext, nullptr},
    {"restore", -4, kWrite | kDenyOom, nullptr},
    {"restore-asking", -4, kWrite | kDenyOom, nullptr},
    {"role", 1, kNoScript, nullptr},
    {"rpop", -2, kWrite, cmd_rpop},
    {"rpoplpush", 3, kWrite | kDenyOom, nullptr},
    {"rpush", -3, kWrite | kDenyOom, cmd_rpush},
    {"rpushx", -3, kWrite | kDenyOom, nullptr},
    {"sadd", -3, kWrite | kDenyOom, nullptr},
    {"save", 1, kNoScript, nullptr},
    {"scan", -2, 0, nullptr},
    {"scard", 2, 0, nullptr},
    {"script", -2, 0, cmd_script},
    {"sdiff", -2, 0, nullptr},
    {"sdiffstore", -3, kWrite | kDenyOom, nullptr},
    {"select", 2, 0, cmd_select},
    {"sentinel", -2, 0, nullptr},
    {"set", -3, kWrite | kDenyOom, cmd_set},
    {"setbit", 4, kWrite | kDenyOom, nullptr},
    {"setex", 4, kWrite | kDenyOom, cmd_setex},
    {"setnx", 3, kWrite | kDenyOom, cmd_setnx},
    {"setrange", 4, kWrite | kDenyOom, nullptr},
    {"shutdown", -1, kNoScript, nullptr},
    {"sinter", -2, 0, nullptr},
    {"sintercard", -3, 0, nullptr},
    {"sinterstore", -3, kWrite | kDenyOom, nullptr},
    {"sismember", 3, 0, nullptr},
    {"slaveof", 3, kNoScript, nullptr},
    {"slowlog", -2, 0, nullptr},
    {"smembers", 2, 0, nullptr},
    {"smismember", -3, 0, nullptr},
    {"smove", 4, kWrite, nullptr},
    {"sort", -2, kWrite | kDenyOom, nullptr},
    {"sort_ro", -2, 0, nullptr},
    {"spop", -2, kWrite, nullptr},
    {"spublish", 3, kMayReplicate, nullptr},
    {"srandmember", -2, 0, nullptr},
    {"srem", -3, kWrite, nullptr},
    {"sscan", -3, 0, nullptr},
    {"ssubscribe", -2, kNoScript | kPubSubContext, nullptr},
    {"strlen", 2, 0, cmd_strlen},
    {"subscribe", -2, kNoScript | kPubSubContext, cmd_subscribe},
    {"substr", 4, 0, nullptr},
    {"sunion", -2, 0, nullptr},
    {"sunionstore", -3, kWrite | kDenyOom, nullptr},
    {"sunsubscribe", -1, kNoScript | kPubSubContext, nullptr},
    {"swapdb", 3, kWrite, nullptr},
    {"sync", 1, kNoScript, nullptr},
    {"time", 1, 0, cmd_time},
    {"touch", -2, 0, cmd_touch},
    {"ttl", 2, 0, cmd_ttl},
    {"type", 2, 0, cmd_type},
    {"unlink", -2, kWrite, cmd_unlink},
    {"unsubscribe", -1, kNoScript | kPubSubContext, cmd_unsubscribe},
    {"unwatch", 1, kNoScript, nullptr},
    {"wait", 3, kNoScript, cmd_wait},
    {"watch", -2, kNoScript, nullptr},
    {"xack", -4, kWrite, nullptr},
    {"xadd", -5, kWrite | kDenyOom, nullptr},
    {"xautoclaim", -6, kWrite, nullptr},
    {"xclaim", -6, kWrite, nullptr},
    {"xdel", -3, kWrite, nullptr},
    {"xgroup", -2, 0, nullptr},
    {"xinfo", -2, 0, nullptr},
    {"xlen", 2, 0, nullptr},
    {"xpending", -3, 0, nullptr},
    {"xrange", -4, 0, nullptr},
    {"xread", -4, 0, nullptr},
    {"xreadgroup", -7, kWrite, nullptr},
    {"xrevrange", -4, 0, nullptr},
    {"xsetid", -3, kWrite | kDenyOom, nullptr},
    {"xtrim", -4, kWrite, nullptr},
    {"zadd", -4, kWrite | kDenyOom, cmd_zadd},
    {"zcard", 2, 0, cmd_zcard},
    {"zcount", 4, 0, cmd_zcount},
    {"zdiff", -3, 0, nullptr},
    {"zdiffstore", -4, kWrite | kDenyOom, nullptr},
    {"zincrby", 4, kWrite | kDenyOom, nullptr},
    {"zinter", -3, 0, nullptr},
    {"zintercard", -3, 0, nullptr},
    {"zinterstore", -4, kWrite | kDenyOom, cmd_zinterstore},
    {"zlexcount", 4, 0, nullptr},
    {"zmpop", -4, kWrite, nullptr},
    {"zmscore", -3, 0, nullptr},
    {"zpopmax", -2, kWrite, nullptr},
    {"zpopmin", -2, kWrite, nullptr},
    {"zrandmember", -2, 0, nullptr},
    {"zrange", -4, 0, cmd_zrange},
    {"zrangebylex", -4, 0, nullptr},
    {"zrangebyscore", -4, 0, cmd_zrangebyscore},
    {"zrangestore", -5, kWrite | kDenyOom, nullptr},
    {"zrank", 3, 0, cmd_zrank},
    {"zrem", -3, kWrite, cmd_zrem},
    {"zremrangebylex", 4, kWrite, nullptr},
    {"zremrangebyrank", 4, kWrite, nullptr},
    {"zremrangebyscore", 4, kWrite, cmd_zremrangebyscore},
    {"zrevrange", -4, 0, nullptr},
    {"zrevrangebylex", -4, 0, nullptr},
    {"zrevrangebyscore", -4, 0, nullptr},
    {"zrevrank", 3, 0, nullptr},
    {"zscan", -3, 0, nullptr},
    {"zscore", 3, 0, cmd_zscore},
    {"zunion", -3, 0, nullptr},
    {"zunionstore", -4, kWrite | kDenyOom, nullptr},
};

}  // namespace

std::string lower(std::string_view text) {
  std::string result(text);
  for (char& c : result) c = fold_case(c);
  return result;
}

namespace {

// The command names by a hash of their lowercase bytes (FNV-1a), in a power-of-two table a
// quarter full: a name is found at its first or second probe, without a division or a call.
constexpr std::size_t kNameSlots = 1024;
static_assert(std::size(kCommands) * 4 <= kNameSlots);

constexpr std::uint32_t kFnvBasis = 2166136261u;
constexpr std::uint32_t kFnvPrime = 16777619u;

std::uint32_t name_hash(std::string_view lowercase) {
  std::uint32_t hash = kFnvBasis;
  for (const char c : lowercase) hash = (hash ^ static_cast<unsigned char>(c)) * kFnvPrime;
  return hash;
}

const std::array<const CommandSpec*, kNameSlots>& name_table() {
  static const std::array<const CommandSpec*, kNameSlots> table = [] {
    std::array<const CommandSpec*, kNameSlots> slots{};
    for (const CommandSpec& spec : kCommands) {
      std::size_t slot = name_hash(spec.name) & (kNameSlots - 1);
      while (slots[slot] != nullptr) slot = (slot + 1) & (kNameSlots - 1);
      slots[slot] = &spec;
    }
    return slots;
  }();
  return table;
}

}  // namespace

std::span<const CommandSpec> command_specs() { return kCommands; }

const CommandSpec* find_command(std::string_view name) {
  // Lowercased on the stack while hashed: every command name is short, and this runs for every
  // command.
  char folded[32];
  if (name.size() > sizeof folded) return nullptr;
  std::uint32_t hash = kFnvBasis;
  for (std::size_t i = 0; i < name.size(); ++i) {
    folded[i] = fold_case(name[i]);
    hash = (hash ^ static_cast<unsigned char>(folded[i])) * kFnvPrime;
  }
  const std::string_view lowercase(folded, name.size());
  const auto& table = name_table();
  for (std::size_t slot = hash & (kNameSlots - 1);; slot = (slot + 1) & (kNameSlots - 1)) {
    const CommandSpec* spec = table[slot];
    if (spec == nullptr) return nullptr;
    if (spec->name == lowercase) return spec;
  }
}

bool arity_ok(const CommandSpec& spec, std::size_t argc) {
  const auto count = static_cast<long>(argc);
  return spec.arity > 0 ? count == spec.arity : count >= -spec.arity;
}

}  // namespace locksim::model_detail
