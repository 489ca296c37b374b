// hash_reentrant and reentrant_counter: reentrant locks, kept in one hash with a hold count, as
// Redisson's RLock keeps its lock (a hash field per owner, "<id>:<thread>", counting its holds).
//
// The owner is the client itself (LockContext::waiter_id), not a token of one acquire: the same
// client acquiring again while it holds the lock gets in at once and counts one hold more, and
// each release undoes one hold. The lock is freed when the count reaches zero, and only then.
//
// hash_reentrant is the published algorithm: the hash's one field is the owner, its value the
// count. An acquire sets the field (or adds one to it) if the hash is absent or the owner's, and
// resets the lease; a release by anyone but the owner is refused (the field is not there), one by
// the owner takes one from the count, resets the lease while holds remain, and deletes the hash
// and publishes on "<key>:released" when the count reaches zero (the waiters' pub/sub wake-up).
//
// reentrant_counter is its textbook bug: the owner and the count kept in two fields, the owner
// checked on acquire but not on release. A client that releases a lock it does not hold (the
// `finally { unlock() }` after a tryLock that timed out) takes a hold from the owner's count, and
// at zero deletes the lock under a live holder.
//
// Release replies: 1 the hold count reached zero and the hash was deleted; 0 one hold was undone
// and the lock is still held, or the release was refused (the history tells the two apart by the
// client's depth).
#include <string>
#include <utility>

#include "sim/lock/outcome.h"
#include "sim/redis/script.h"

namespace locksim::lock_detail {
namespace {

// KEYS[1] = the lock, ARGV[1] = ttl_ms, ARGV[2] = owner. Returns 1 (acquired) or 0 (busy).
constexpr const char* kHashAcquireSource = R"lua(
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], ARGV[2]) == 1 then
  redis.call('HINCRBY', KEYS[1], ARGV[2], 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return 1
end
return 0
)lua";

// KEYS[1] = the lock, ARGV[1] = ttl_ms, ARGV[2] = owner, ARGV[3] = the wake-up channel.
constexpr const char* kHashReleaseSource = R"lua(
if redis.call('HEXISTS', KEYS[1], ARGV[2]) == 0 then
  return 0
end
if redis.call('HINCRBY', KEYS[1], ARGV[2], -1) > 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return 0
end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[3], ARGV[2])
return 1
)lua";

// The bug's acquire: owner and count in two fields. KEYS[1] = the lock, ARGV[1] = ttl_ms,
// ARGV[2] = owner.
constexpr const char* kCounterAcquireSource = R"lua(
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'owner', ARGV[2], 'count', 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return 1
end
if redis.call('HGET', KEYS[1], 'owner') == ARGV[2] then
  redis.call('HINCRBY', KEYS[1], 'count', 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return 1
end
return 0
)lua";

// The bug's release: the count taken down without a look at the owner. KEYS[1] = the lock,
// ARGV[1] = ttl_ms, ARGV[2] = owner (unused: the bug), ARGV[3] = the wake-up channel.
constexpr const char* kCounterReleaseSource = R"lua(
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
if redis.call('HINCRBY', KEYS[1], 'count', -1) > 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return 0
end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[3], ARGV[2])
return 1
)lua";

// ReentrantLock: what both share: the owner is the client, one script to acquire and one to
// release. An inner release resets the lease to the lock's TTL (LockContext::ttl_ms), as
// Redisson's unlock resets it to its lease time.
class ReentrantLock : public LockVariant {
 public:
  ReentrantLock(const char* name, const char* summary, const Script& acquire, const Script& release)
      : name_(name), summary_(summary), acquire_(acquire), release_(release) {}

  std::string_view name() const override { return name_; }
  std::string_view summary() const override { return summary_; }
  bool uses_ttl() const override { return true; }
  bool reentrant() const override { return true; }

  AcquireAttempt try_acquire(const LockContext& context, const std::string& key,
                             std::int64_t ttl_ms) const override {
    const std::string owner = owner_of(context);
    RedisResult result = acquire_.run(context.connection, {key}, {std::to_string(ttl_ms), owner});
    return flag_acquire_outcome(std::move(result), owner, acquire_.name());
  }

  ReleaseResult release(const LockContext& context, const std::string& key,
                        const std::string& /*token*/) const override {
    RedisResult result =
        release_.run(context.connection, {key},
                     {std::to_string(context.ttl_ms), owner_of(context), key + ":released"});
    return release_outcome(std::move(result), release_.name());
  }

 private:
  // owner_of: the client's own identity (its name in the run, whose keys are the run's own).
  static std::string owner_of(const LockContext& context) {
    return "owner:" + std::string(context.waiter_id);
  }

  const char* name_;
  const char* summary_;
  const Script& acquire_;
  const Script& release_;
};

}  // namespace

const LockVariant& hash_reentrant_variant() {
  static const Script acquire("hash_reentrant.acquire", kHashAcquireSource);
  static const Script release("hash_reentrant.release", kHashReleaseSource);
  static const ReentrantLock variant(
      "hash_reentrant",
      "reentrant: Lua EXISTS/HEXISTS owner then HINCRBY owner 1 + PEXPIRE; release: HEXISTS "
      "owner, HINCRBY -1, DEL + PUBLISH at zero (Redisson's RLock)",
      acquire, release);
  return variant;
}

const LockVariant& reentrant_counter_variant() {
  static const Script acquire("reentrant_counter.acquire", kCounterAcquireSource);
  static const Script release("reentrant_counter.release", kCounterReleaseSource);
  static const ReentrantLock variant(
      "reentrant_counter",
      "reentrant: Lua HSET owner + count, HINCRBY count if HGET owner is ours; release: HINCRBY "
      "count -1, DEL at zero, owner never checked (the wrong-owner release)",
      acquire, release);
  return variant;
}

}  // namespace locksim::lock_detail
