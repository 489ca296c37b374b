#include "sim/client/fenced_store.h"

#include "sim/redis/script.h"

namespace locksim {
namespace {

// KEYS[1] = value, KEYS[2] = highest accepted fencing number; ARGV[1] = the value to write,
// ARGV[2] = the writer's fencing number or -1. Returns 1 if written, 0 if refused.
constexpr const char* kWriteSource = R"lua(
local fencing = tonumber(ARGV[2])
if fencing >= 0 then
  local highest = tonumber(redis.call('GET', KEYS[2]) or '-1')
  if fencing < highest then return 0 end
  redis.call('SET', KEYS[2], ARGV[2])
end
redis.call('SET', KEYS[1], ARGV[1])
return 1
)lua";

const Script& write_script() {
  static const Script script("fenced_counter.write", kWriteSource);
  return script;
}

}  // namespace

RedisResult fenced_store_write(Connection& connection, const std::string& key, std::int64_t value,
                               std::int64_t fencing) {
  RedisResult result = write_script().run(connection, {key, key + ":highest_fencing"},
                                          {std::to_string(value), std::to_string(fencing)});
  if (result.ok() && !result.reply.is_integer(1) && !result.reply.is_integer(0)) {
    result.error = RedisErrorKind::kUnexpectedReply;
    result.message = "script fenced_counter.write answered outside 1 (written) or 0 (refused)";
  }
  return result;
}

}  // namespace locksim
