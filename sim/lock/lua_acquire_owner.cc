// lua_acquire_owner: Doc C's lock, with both operations in Lua. The acquire script runs `SET key
// token NX PX ttl_ms` and returns 1 or 0; the release is lua_owner's compare-and-delete. On a
// single server it behaves like lua_owner; it exists because the document presents it this way.
#include <string>
#include <utility>

#include "sim/lock/outcome.h"
#include "sim/redis/script.h"

namespace locksim::lock_detail {
namespace {

// KEYS[1] = lock key, ARGV[1] = ttl_ms, ARGV[2] = this acquisition's token. Returns 1 if set.
constexpr const char* kAcquireOwnerSource = R"lua(
if redis.call('SET', KEYS[1], ARGV[2], 'NX', 'PX', ARGV[1]) then
  return 1
else
  return 0
end
)lua";

const Script& acquire_owner_script() {
  static const Script script("lua_acquire_owner.acquire", kAcquireOwnerSource);
  return script;
}

class LuaAcquireOwnerLock final : public LockVariant {
 public:
  std::string_view name() const override { return "lua_acquire_owner"; }
  std::string_view summary() const override {
    return "Lua SET key token NX PX ttl; release: Lua compare-and-delete (Doc C)";
  }
  bool uses_ttl() const override { return true; }

  AcquireAttempt try_acquire(const LockContext& context, const std::string& key,
                             std::int64_t ttl_ms) const override {
    std::string token = context.rng.token_hex(32);
    RedisResult result =
        acquire_owner_script().run(context.connection, {key}, {std::to_string(ttl_ms), token});
    return flag_acquire_outcome(std::move(result), std::move(token),
                                "EVALSHA lua_acquire_owner.acquire");
  }

  ReleaseResult release(const LockContext& context, const std::string& key,
                        const std::string& token) const override {
    return release_outcome(compare_and_delete_script().run(context.connection, {key}, {token}),
                           "EVALSHA lua_owner.release");
  }
};

}  // namespace

const LockVariant& lua_acquire_owner_variant() {
  static const LuaAcquireOwnerLock variant;
  return variant;
}

}  // namespace locksim::lock_detail
