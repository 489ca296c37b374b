// fenced_store.h: the store of a "fenced_counter" resource, Kleppmann's storage service that
// checks fencing tokens ("How to do distributed locking", 2016), kept on the Redis server.
//
// A write presents the fencing number of its writer's grant. The store accepts it if the number
// is at least the highest it has accepted (equal: the same holder writing again) and then
// remembers it; it refuses a lower number without writing anything. A write that presents no
// number (-1: the writer's lock hands out none) is accepted and leaves the highest number as it
// was: the store cannot protect a client that has no number to show.
//
// Keys, both under the resource's Redis key:
//   <key>                   the value, a decimal integer (read with GET, like a plain counter)
//   <key>:highest_fencing   the highest fencing number accepted so far; absent: none yet
//
//   const RedisResult r = fenced_store_write(connection, key, 9, 34);
//   if (r.ok() && r.reply.is_integer(0)) { /* refused: a higher number had written */ }
#pragma once

#include <cstdint>
#include <string>

#include "sim/lock/variant.h"
#include "sim/redis/connection.h"

namespace locksim {

// fenced_store_write: writes `value` to the store at `key` presenting `fencing` (-1: none), in
// one atomic Lua script. On success the reply is integer 1 (written) or 0 (refused); any other
// reply is returned as a kUnexpectedReply error. Fencing numbers are compared as Lua numbers, so
// they must stay below 2^53 (INCR counters do, by far).
RedisResult fenced_store_write(Connection& connection, const std::string& key, std::int64_t value,
                               std::int64_t fencing);
// fenced_store_write_command, fenced_store_write_reply: the same as one command (the script, by
// EVALSHA) and what its reply says, for a host that sends its own commands (the event loop).
OneCommand fenced_store_write_command(const std::string& key, std::int64_t value,
                                      std::int64_t fencing);
RedisResult fenced_store_write_reply(RedisResult result);

}  // namespace locksim
