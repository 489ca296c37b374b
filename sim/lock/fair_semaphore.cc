// fair_semaphore: the fair semaphore of "Redis in Action" 6.3.2, a counting semaphore of
// lock.permits permits kept in two sorted sets and a counter, written from the published
// algorithm.
//
// The basic semaphore (zset_semaphore, 6.3.1) ranks its holders by the time on each acquiring
// client's clock, so a client whose clock runs behind scores its permit before the live ones and
// takes a rank that is theirs. The fair one ranks them by a counter instead: every acquire takes
// the next number from INCR and is granted while its rank by that number is below the permits,
// whatever its clock says. The time on the client's clock still decides which permits have timed
// out, so the book's limit stays: a client whose clock runs ahead by more than a lease removes
// live holders' permits as timed out and lets itself in (and one whose clock runs behind scores
// its own permit early, so others time it out before its lease ends).
//
// Keys, all derived from the semaphore's key so they share the run's prefix:
//   <key>           zset: token -> the acquiring client's time (ms): what times permits out
//   <key>:owner     zset: token -> its number from the counter: what ranks the holders
//   <key>:counter   string: the last number handed out
//
// The book sends its commands in two MULTI transactions and a third to give up; here each
// operation is one script, so an acquire is one step as zset_semaphore's is and no other client
// runs between the counter and the rank. Release removes the holder's own token from both sets
// and answers whether it was still in the timeout set (as the book returns): it never removes
// another holder's permit.
#include <string>
#include <utility>

#include "sim/lock/outcome.h"
#include "sim/redis/script.h"

namespace locksim::lock_detail {
namespace {

// KEYS[1] = timeout set, KEYS[2] = owner set, KEYS[3] = counter. ARGV[1] = the client's now
// (ms), ARGV[2] = token, ARGV[3] = ttl_ms, ARGV[4] = permits. Returns 1 (acquired) or 0.
//
// The clean-up removes the permits that timed out by the client's clock from the timeout set,
// then keeps in the owner set only the members still in the timeout set (ZINTERSTORE with the
// timeout set's weight 0: each keeps its number). Timed out is strictly older than a lease: the
// book's clock is float seconds, where a score exactly one lease old never occurs, but at whole
// milliseconds it is common, and that permit's lease has up to a millisecond left (explore found
// the inclusive bound letting a client in beside a holder whose lease still ran).
constexpr const char* kFairSemaphoreAcquireSource = R"lua(
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - tonumber(ARGV[3])))
redis.call('ZINTERSTORE', KEYS[2], 2, KEYS[2], KEYS[1], 'WEIGHTS', 1, 0)
local number = redis.call('INCR', KEYS[3])
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], number, ARGV[2])
if redis.call('ZRANK', KEYS[2], ARGV[2]) < tonumber(ARGV[4]) then
  return 1
end
redis.call('ZREM', KEYS[1], ARGV[2])
redis.call('ZREM', KEYS[2], ARGV[2])
return 0
)lua";

// KEYS[1] = timeout set, KEYS[2] = owner set, ARGV[1] = token. Returns 1 if the permit was still
// in the timeout set (held), else 0.
constexpr const char* kFairSemaphoreReleaseSource = R"lua(
local held = redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return held
)lua";

const Script& fair_semaphore_acquire_script() {
  static const Script script("fair_semaphore.acquire", kFairSemaphoreAcquireSource);
  return script;
}

const Script& fair_semaphore_release_script() {
  static const Script script("fair_semaphore.release", kFairSemaphoreReleaseSource);
  return script;
}

class FairSemaphore final : public LockVariant {
 public:
  std::string_view name() const override { return "fair_semaphore"; }
  std::string_view summary() const override {
    return "fair semaphore: Lua ZREMRANGEBYSCORE timed out by the client's clock, ZINTERSTORE "
           "into the owner set, INCR counter, ZADD both, ZRANK in the owner set < permits or "
           "ZREM both; release: ZREM token from both (Redis in Action 6.3.2)";
  }
  bool uses_ttl() const override { return true; }
  bool semaphore() const override { return true; }
  bool reads_client_clock() const override { return true; }

  AcquireAttempt try_acquire(const LockContext& context, const std::string& key,
                             std::int64_t ttl_ms) const override {
    std::string token = context.rng.token_hex(32);
    const std::string now = std::to_string(context.client_now_ms());
    RedisResult result = fair_semaphore_acquire_script().run(
        context.connection, {key, key + ":owner", key + ":counter"},
        {now, token, std::to_string(ttl_ms), std::to_string(context.permits)});
    return flag_acquire_outcome(std::move(result), token, "EVALSHA fair_semaphore.acquire");
  }

  ReleaseResult release(const LockContext& context, const std::string& key,
                        const std::string& token) const override {
    return release_outcome(
        fair_semaphore_release_script().run(context.connection, {key, key + ":owner"}, {token}),
        "EVALSHA fair_semaphore.release");
  }
};

}  // namespace

const LockVariant& fair_semaphore_variant() {
  static const FairSemaphore variant;
  return variant;
}

}  // namespace locksim::lock_detail
