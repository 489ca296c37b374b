// replies.h: building the model's replies, and the error replies whose words a lock can observe,
// in Redis 7.0.15's text (server.c createSharedObjects, networking.c addReplyError*).
//
// An error reply's text is what hiredis hands over: no leading '-', no CRLF ("ERR syntax error").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/redis/connection.h"

namespace locksim::model_detail {

inline Reply nil_reply() { return Reply{}; }
inline Reply ok_reply() { return Reply{Reply::Type::kStatus, "OK", 0, {}}; }
inline Reply status_reply(std::string text) {
  return Reply{Reply::Type::kStatus, std::move(text), 0, {}};
}
inline Reply integer_reply(std::int64_t value) {
  return Reply{Reply::Type::kInteger, {}, value, {}};
}
inline Reply bulk_reply(std::string_view text) {
  return Reply{Reply::Type::kString, std::string(text), 0, {}};
}
inline Reply array_reply(std::vector<Reply> elements) {
  return Reply{Reply::Type::kArray, {}, 0, std::move(elements)};
}
inline Reply empty_array() { return array_reply({}); }
// error_reply: an error with Redis's code word first ("ERR ...", "WRONGTYPE ...").
inline Reply error_reply(std::string text) {
  return Reply{Reply::Type::kError, std::move(text), 0, {}};
}
inline bool is_error(const Reply& reply) { return reply.type == Reply::Type::kError; }

inline Reply wrong_type() {
  return error_reply("WRONGTYPE Operation against a key holding the wrong kind of value");
}
inline Reply syntax_error() { return error_reply("ERR syntax error"); }
inline Reply not_an_integer() { return error_reply("ERR value is not an integer or out of range"); }
inline Reply not_a_float() { return error_reply("ERR value is not a valid float"); }
inline Reply overflow_error() { return error_reply("ERR increment or decrement would overflow"); }
inline Reply no_script() { return error_reply("NOSCRIPT No matching script. Please use EVAL."); }
inline Reply read_only_replica() {
  return error_reply("READONLY You can't write against a read only replica.");
}
// oom_error: a command that may grow memory, refused over maxmemory (shared.oomerr).
inline Reply oom_error() {
  return error_reply("OOM command not allowed when used memory > 'maxmemory'.");
}
// arity_error: "wrong number of arguments for 'get' command" (`name` as Redis's fullname,
// lowercase, "script|load" for a subcommand).
inline Reply arity_error(std::string_view name) {
  return error_reply("ERR wrong number of arguments for '" + std::string(name) + "' command");
}
// invalid_expire_time: SET's and EXPIRE's "invalid expire time in 'set' command".
inline Reply invalid_expire_time(std::string_view name) {
  return error_reply("ERR invalid expire time in '" + std::string(name) + "' command");
}
// not_modelled: a command Redis has and the model lacks: such a lock runs on the real server only.
inline Reply not_modelled(std::string_view name) {
  return error_reply("ERR locksim model: unknown command '" + std::string(name) + "'");
}

}  // namespace locksim::model_detail
