// lua_setnx_expire: Doc B's second lock (B2). SETNX and PEXPIRE run in one Lua script, so the key
// never exists without a TTL (the document uses EXPIRE in seconds; milliseconds here because
// scenarios scale TTLs down). The value is the constant 1 and the release an unconditional
// `DEL key`, so a holder whose lease expired still deletes the next holder's lock.
#include <string>

#include "sim/lock/outcome.h"
#include "sim/redis/script.h"

namespace locksim::lock_detail {
namespace {

constexpr std::string_view kLuaSetnxExpireValue = "1";

// KEYS[1] = lock key, ARGV[1] = value, ARGV[2] = ttl_ms. Returns 1 if set, 0 if already held.
constexpr const char* kSetNxExpireSource = R"lua(
if redis.call('SETNX', KEYS[1], ARGV[1]) == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
)lua";

const Script& setnx_expire_script() {
  static const Script script("lua_setnx_expire.acquire", kSetNxExpireSource);
  return script;
}

class LuaSetNxExpireLock final : public LockVariant {
 public:
  std::string_view name() const override { return "lua_setnx_expire"; }
  std::string_view summary() const override {
    return "Lua SETNX key 1 + PEXPIRE key ttl (EXPIRE in ms); release: DEL key (Doc B, B2)";
  }
  bool uses_ttl() const override { return true; }

  AcquireAttempt try_acquire(const LockContext& context, const std::string& key,
                             std::int64_t ttl_ms) const override {
    return flag_acquire_outcome(
        setnx_expire_script().run(context.connection, {key},
                                  {std::string(kLuaSetnxExpireValue), std::to_string(ttl_ms)}),
        std::string(kLuaSetnxExpireValue), "EVALSHA lua_setnx_expire.acquire");
  }

  ReleaseResult release(const LockContext& context, const std::string& key,
                        const std::string& /*token*/) const override {
    return release_outcome(context.connection.command({"DEL", key}), "DEL");
  }
};

}  // namespace

const LockVariant& lua_setnx_expire_variant() {
  static const LuaSetNxExpireLock variant;
  return variant;
}

}  // namespace locksim::lock_detail
