// lua_owner_renew: lua_owner plus a watchdog (Docs B and D). Acquire and release are lua_owner's
// (delegated, not copied); renews() asks the driver to extend the lease while the lock is held,
// with an owner-checked Lua PEXPIRE (Doc D's EXPIRE, in milliseconds here because scenarios scale
// TTLs down). Renewal fixes leases that expire during long work, but not a pause that also stops
// the renewal thread.
#include <string>
#include <utility>

#include "sim/lock/outcome.h"
#include "sim/redis/script.h"

namespace locksim::lock_detail {
namespace {

// KEYS[1] = lock key, ARGV[1] = this acquisition's token, ARGV[2] = ttl_ms. Returns 1 if the
// lease was extended, 0 if the key is gone or holds another token.
constexpr const char* kExtendSource = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
else
  return 0
end
)lua";

const Script& extend_script() {
  static const Script script("lua_owner_renew.extend", kExtendSource);
  return script;
}

class RenewingOwnerCheckedLuaLock final : public LockVariant {
 public:
  std::string_view name() const override { return "lua_owner_renew"; }
  std::string_view summary() const override {
    return "lua_owner (SET key token NX PX ttl, Lua compare-and-delete) plus a watchdog: Lua "
           "if GET key == token then PEXPIRE key ttl (EXPIRE in ms) (Docs B, D)";
  }
  bool uses_ttl() const override { return true; }

  AcquireAttempt try_acquire(const LockContext& context, const std::string& key,
                             std::int64_t ttl_ms) const override {
    return lua_owner_variant().try_acquire(context, key, ttl_ms);
  }

  ReleaseResult release(const LockContext& context, const std::string& key,
                        const std::string& token) const override {
    return lua_owner_variant().release(context, key, token);
  }

  bool renews() const override { return true; }

  ExtendResult extend(const LockContext& context, const std::string& key, const std::string& token,
                      std::int64_t ttl_ms) const override {
    RedisResult result =
        extend_script().run(context.connection, {key}, {token, std::to_string(ttl_ms)});
    ExtendResult extended;
    if (result.ok() && result.reply.is_integer(1)) {
      extended.outcome = ExtendResult::Outcome::kExtended;
    } else if (result.ok() && result.reply.is_integer(0)) {
      extended.outcome = ExtendResult::Outcome::kNotHeld;
    } else {
      extended.outcome = ExtendResult::Outcome::kError;
      extended.error = result.ok()
                           ? unexpected_reply(std::move(result), "EVALSHA lua_owner_renew.extend")
                           : std::move(result);
    }
    return extended;
  }
};

}  // namespace

const LockVariant& lua_owner_renew_variant() {
  static const RenewingOwnerCheckedLuaLock variant;
  return variant;
}

}  // namespace locksim::lock_detail
