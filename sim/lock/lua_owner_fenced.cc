// lua_owner_fenced: lua_owner plus Kleppmann's fencing tokens ("How to do distributed locking",
// 2016). Every grant carries a fencing number that increases with every grant of the lock, so a
// store that remembers the highest number it has accepted can refuse a write from a holder whose
// lease ran out while it stalled (33 after 34 has written). The number comes from INCR of a
// counter beside the lock key, in the same Lua script as the SET NX PX, so no grant goes without
// a number and no number is spent on a busy attempt. The release is lua_owner's compare-and-delete.
// It does not renew: fencing does not keep a lease, it makes a lost one harmless to the store.
//
// Keys, both derived from the lock key so they share the run's prefix:
//   <key>         the lock: SET token NX PX ttl_ms, as lua_owner
//   <key>:fence   the fencing counter: the number of the latest grant; never expires, since a
//                 counter that restarted would hand out numbers a store has already seen
#include <array>
#include <string>
#include <utility>

#include "sim/lock/outcome.h"
#include "sim/redis/script.h"

namespace locksim::lock_detail {
namespace {

// KEYS[1] = lock key, KEYS[2] = fencing counter, ARGV[1] = this acquisition's token,
// ARGV[2] = ttl_ms. Returns the grant's fencing number (1, 2, ...), or 0 if the lock is held.
constexpr const char* kFencedAcquireSource = R"lua(
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return 0
)lua";

const Script& fenced_acquire_script() {
  static const Script script("lua_owner_fenced.acquire", kFencedAcquireSource);
  return script;
}

class FencedOwnerCheckedLuaLock final : public OneCommandVariant {
 public:
  std::string_view name() const override { return "lua_owner_fenced"; }
  std::string_view summary() const override {
    return "Lua SET key token NX PX ttl and, if set, INCR key:fence: every grant carries a "
           "fencing number (Kleppmann); release: Lua compare-and-delete; no renewal";
  }
  bool uses_ttl() const override { return true; }

  std::optional<OneCommand> acquire_command(const std::string& key, std::int64_t ttl_ms,
                                            Rng& rng) const override {
    std::array<char, 32> token;  // kept in the command's words only (most attempts fail)
    rng.fill_hex(token);
    return OneCommand{
        &fenced_acquire_script(),
        OneCommand::words({key, key + ":fence", std::string_view(token.data(), token.size()),
                           std::to_string(ttl_ms)}),
        2, 2};
  }
  // read_acquire: integer n >= 1 -> acquired with fencing number n; 0 -> busy; anything else
  // (a negative number, a string) is outside the script's contract.
  AcquireAttempt read_acquire(RedisResult result, std::string_view token) const override {
    AcquireAttempt attempt;
    if (result.ok() && result.reply.type == Reply::Type::kInteger && result.reply.integer >= 1) {
      attempt.outcome = AcquireAttempt::Outcome::kAcquired;
      attempt.token = token;
      attempt.fencing = result.reply.integer;
    } else if (result.ok() && result.reply.is_integer(0)) {
      attempt.outcome = AcquireAttempt::Outcome::kBusy;
    } else {
      attempt.outcome = AcquireAttempt::Outcome::kError;
      attempt.error = result.ok()
                          ? unexpected_reply(std::move(result), "EVALSHA lua_owner_fenced.acquire")
                          : std::move(result);
    }
    return attempt;
  }
  std::optional<OneCommand> release_command(const std::string& key,
                                            const std::string& token) const override {
    return OneCommand{&compare_and_delete_script(), OneCommand::words({key, token}), 1};
  }
  ReleaseResult read_release(RedisResult result) const override {
    return release_outcome(std::move(result), "EVALSHA lua_owner.release");
  }
};

}  // namespace

const LockVariant& lua_owner_fenced_variant() {
  static const FencedOwnerCheckedLuaLock variant;
  return variant;
}

}  // namespace locksim::lock_detail
