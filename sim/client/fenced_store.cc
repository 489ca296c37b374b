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

OneCommand fenced_store_write_command(const std::string& key, std::int64_t value,
                                      std::int64_t fencing) {
  const std::string highest = key + ":highest_fencing";
  const std::string value_word = std::to_string(value);
  const std::string fencing_word = std::to_string(fencing);
  return OneCommand{.script = &write_script(),
                    .argv = OneCommand::words({key, highest, value_word, fencing_word}),
                    .keys = 2};
}

RedisResult fenced_store_write(Connection& connection, const std::string& key, std::int64_t value,
                               std::int64_t fencing) {
  return fenced_store_write_reply(
      run_one(connection, fenced_store_write_command(key, value, fencing)));
}

RedisResult fenced_store_write_reply(RedisResult result) {
  if (result.ok() && !result.reply.is_integer(1) && !result.reply.is_integer(0)) {
    result.error = RedisErrorKind::kUnexpectedReply;
    result.message = "script fenced_counter.write answered outside 1 (written) or 0 (refused)";
  }
  return result;
}

}  // namespace locksim
