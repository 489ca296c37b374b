// lua_fair_queue: a fair (FIFO) lock in the manner of Redisson's RedissonFairLock. Waiters take a
// place in a queue on the server and only the head of the queue may take the lock, so a client
// that has just released cannot barge in ahead of those already waiting. Every attempt is one
// atomic Lua script; the release is lua_owner's compare-and-delete.
//
// A waiter keeps its place by trying again: each busy attempt sets its deadline to now +
// queue_timeout_ms on the server's clock, and every attempt first drops the waiters at the head
// whose deadline has passed. A waiter that dies (or gives up) therefore blocks the queue for at
// most queue_timeout_ms after its last attempt, not forever.
//
// Keys, all derived from the lock key so they share the run's prefix:
//   <key>                   the lock: SET token PX ttl_ms, as lua_owner
//   <key>:queue             list of waiter ids, head first
//   <key>:queue:deadlines   zset: waiter id -> deadline in ms on the server's clock
#include <string>
#include <utility>

#include "sim/core/assert.h"
#include "sim/lock/outcome.h"
#include "sim/redis/script.h"

namespace locksim::lock_detail {
namespace {

// KEYS[1] = lock key, KEYS[2] = queue, KEYS[3] = deadlines.
// ARGV[1] = this acquisition's token, ARGV[2] = ttl_ms, ARGV[3] = waiter id,
// ARGV[4] = queue_timeout_ms. Returns 1 if the lock is now this waiter's, 0 if it is queued.
//
// TIME is the server's clock, one clock for every waiter whatever their machines say; Redis 7
// replicates a script's effects, not the script, so a non-deterministic command is allowed.
// The queue keys expire two queue timeouts after the last busy attempt: by then every waiter in
// them has missed its deadline, so nothing is lost and nothing lingers.
constexpr const char* kFairQueueAcquireSource = R"lua(
local time = redis.call('TIME')
local now_ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local timeout_ms = tonumber(ARGV[4])
-- Drop the waiters at the head that stopped trying; bounded by the queue's length.
for _ = 1, redis.call('LLEN', KEYS[2]) do
  local first = redis.call('LINDEX', KEYS[2], 0)
  local deadline = redis.call('ZSCORE', KEYS[3], first)
  if deadline and tonumber(deadline) > now_ms then break end
  redis.call('LPOP', KEYS[2])
  redis.call('ZREM', KEYS[3], first)
end
local head = redis.call('LINDEX', KEYS[2], 0)
if redis.call('EXISTS', KEYS[1]) == 0 and (not head or head == ARGV[3]) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  if head then
    redis.call('LPOP', KEYS[2])
    redis.call('ZREM', KEYS[3], ARGV[3])
  end
  return 1
end
if not redis.call('ZSCORE', KEYS[3], ARGV[3]) then
  redis.call('RPUSH', KEYS[2], ARGV[3])
end
redis.call('ZADD', KEYS[3], string.format('%d', now_ms + timeout_ms), ARGV[3])
local linger_ms = string.format('%d', 2 * timeout_ms)
redis.call('PEXPIRE', KEYS[2], linger_ms)
redis.call('PEXPIRE', KEYS[3], linger_ms)
return 0
)lua";

const Script& fair_queue_acquire_script() {
  static const Script script("lua_fair_queue.acquire", kFairQueueAcquireSource);
  return script;
}

class FairQueueLuaLock final : public LockVariant {
 public:
  std::string_view name() const override { return "lua_fair_queue"; }
  std::vector<CheckpointSite> checkpoints() const override { return {{"queued", true}}; }
  std::string_view summary() const override {
    return "Redisson's fair lock: one Lua script queues the waiter (RPUSH + ZADD deadline), drops "
           "waiters silent for queue_timeout_ms, and lets only the head SET key token PX ttl; "
           "release: Lua compare-and-delete";
  }
  bool uses_ttl() const override { return true; }
  bool queues() const override { return true; }

  AcquireAttempt try_acquire(const LockContext& context, const std::string& key,
                             std::int64_t ttl_ms) const override {
    // Every caller that builds a LockContext fills these; without them the queue is meaningless.
    LOCKSIM_ASSERT(!context.waiter_id.empty() && context.queue_timeout_ms > 0);
    std::string token = context.rng.token_hex(32);
    RedisResult result = fair_queue_acquire_script().run(
        context.connection, {key, key + ":queue", key + ":queue:deadlines"},
        {token, std::to_string(ttl_ms), std::string(context.waiter_id),
         std::to_string(context.queue_timeout_ms)});
    AcquireAttempt attempt =
        flag_acquire_outcome(std::move(result), std::move(token), "EVALSHA lua_fair_queue.acquire");
    // Busy means queued: a crash here is a waiter that dies in the queue.
    if (attempt.outcome == AcquireAttempt::Outcome::kBusy) context.after_busy("queued");
    return attempt;
  }

  ReleaseResult release(const LockContext& context, const std::string& key,
                        const std::string& token) const override {
    return release_outcome(compare_and_delete_script().run(context.connection, {key}, {token}),
                           "EVALSHA lua_owner.release");
  }
};

}  // namespace

const LockVariant& lua_fair_queue_variant() {
  static const FairQueueLuaLock variant;
  return variant;
}

}  // namespace locksim::lock_detail
