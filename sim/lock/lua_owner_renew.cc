// lua_owner_renew: lua_owner plus a watchdog (Docs B and D). Acquire and release are lua_owner's
// (delegated, not copied, one-command forms included); renews() asks the host to extend the lease
// while the lock is held, with one command (extend_command): an owner-checked Lua PEXPIRE (Doc D's
// EXPIRE, in milliseconds here because scenarios scale TTLs down). Renewal fixes leases that
// expire during long work, but not a pause that also stops the renewal.
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

  // The one-command forms are lua_owner's too (the event-loop host sends them).
  std::optional<OneCommand> acquire_command(const std::string& key, std::int64_t ttl_ms,
                                            Rng& rng) const override {
    return lua_owner_variant().acquire_command(key, ttl_ms, rng);
  }
  AcquireAttempt read_acquire(RedisResult result, std::string_view token) const override {
    return lua_owner_variant().read_acquire(std::move(result), token);
  }
  std::optional<OneCommand> release_command(const std::string& key,
                                            const std::string& token) const override {
    return lua_owner_variant().release_command(key, token);
  }
  ReleaseResult read_release(RedisResult result) const override {
    return lua_owner_variant().read_release(std::move(result));
  }

  bool renews() const override { return true; }

  // extend: the one-command form, sent and read (the event loop sends the same command).
  ExtendResult extend(const LockContext& context, const std::string& key, const std::string& token,
                      std::int64_t ttl_ms) const override {
    return read_extend(run_one(context.connection, *extend_command(key, token, ttl_ms)));
  }

  std::optional<OneCommand> extend_command(const std::string& key, const std::string& token,
                                           std::int64_t ttl_ms) const override {
    const std::string ttl = std::to_string(ttl_ms);
    return OneCommand{&extend_script(), OneCommand::words({key, token, ttl}), 1};
  }

  ExtendResult read_extend(RedisResult result) const override {
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
