// rw_lock and rw_lock_fair: read-write locks in one hash, after Redisson's RReadWriteLock: a
// "mode" field ("read" or "write") and a field per hold (its token) counting it. Readers share the
// lock; a writer excludes everyone. Every grant resets the whole key's lease.
//
// rw_lock is the textbook lock with reader preference: a reader gets in whenever the lock is
// free or held for reading. Its bug: a stream of readers whose holds overlap keeps a waiting writer
// out for as long as the stream lasts (writer starvation).
//
// rw_lock_fair is its fix with writer preference: a writer that finds the lock busy leaves its
// intent in the hash "<key>:writer" (a field per waiting writer, the hash kept for a lease from
// the last busy answer), and a reader does not get in while any writer's intent is there. Readers
// then drain and a writer gets in, taking away its own intent only: another writer still waiting
// keeps new readers out (explore's seed 8639 of the reader streams found the first version,
// whose granted writer deleted every intent, letting a reader in past the next writer). A writer
// that gives up leaves its intent until the lease runs out.
//
// Neither upgrades a read hold to a write one: a client that holds a read hold and asks for the
// write lock waits for every read hold, its own included (two readers that both ask deadlock).
//
// The mode of an acquire is LockContext::read (the scenario's `"mode": "read"`); the token says
// nothing about it. Release: the hold's field is taken away; the key is deleted (and
// "<key>:released" published) when no hold is left: 1 then, else 0 (another hold remains, or the
// token held nothing).
#include <string>
#include <utility>

#include "sim/lock/outcome.h"
#include "sim/redis/script.h"

namespace locksim::lock_detail {
namespace {

// KEYS[1] = the lock, KEYS[2] = the writers' intents; ARGV[1] = ttl_ms, ARGV[2] = token,
// ARGV[3] = "read" or "write", ARGV[4] = 1: writer preference, ARGV[5] = the writer's own name
// for its intent (the same over all the attempts of its acquire; each attempt's token is new).
// Returns 1 (acquired) or 0 (busy).
constexpr const char* kAcquireSource = R"lua(
local mode = redis.call('HGET', KEYS[1], 'mode')
if ARGV[3] == 'read' then
  if ARGV[4] == '1' and redis.call('EXISTS', KEYS[2]) == 1 then
    return 0
  end
  if mode == false or mode == 'read' then
    redis.call('HSET', KEYS[1], 'mode', 'read')
    redis.call('HINCRBY', KEYS[1], ARGV[2], 1)
    redis.call('PEXPIRE', KEYS[1], ARGV[1])
    return 1
  end
  return 0
end
if mode == false then
  redis.call('HSET', KEYS[1], 'mode', 'write', ARGV[2], 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  if ARGV[4] == '1' then
    redis.call('HDEL', KEYS[2], ARGV[5])
  end
  return 1
end
if ARGV[4] == '1' then
  redis.call('HSET', KEYS[2], ARGV[5], 1)
  redis.call('PEXPIRE', KEYS[2], ARGV[1])
end
return 0
)lua";

// KEYS[1] = the lock; ARGV[1] = token, ARGV[2] = the wake-up channel. Returns 1 (the last hold:
// the lock is free) or 0.
constexpr const char* kReleaseSource = R"lua(
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  return 0
end
if redis.call('HINCRBY', KEYS[1], ARGV[1], -1) <= 0 then
  redis.call('HDEL', KEYS[1], ARGV[1])
end
if redis.call('HLEN', KEYS[1]) <= 1 then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', ARGV[2], ARGV[1])
  return 1
end
return 0
)lua";

const Script& acquire_script() {
  static const Script script("rw_lock.acquire", kAcquireSource);
  return script;
}

const Script& release_script() {
  static const Script script("rw_lock.release", kReleaseSource);
  return script;
}

class ReadWriteLock final : public LockVariant {
 public:
  ReadWriteLock(const char* name, const char* summary, bool writer_preference)
      : name_(name), summary_(summary), writer_preference_(writer_preference) {}

  std::string_view name() const override { return name_; }
  std::string_view summary() const override { return summary_; }
  bool uses_ttl() const override { return true; }
  bool read_write() const override { return true; }

  AcquireAttempt try_acquire(const LockContext& context, const std::string& key,
                             std::int64_t ttl_ms) const override {
    std::string token = context.rng.token_hex(32);
    RedisResult result =
        acquire_script().run(context.connection, {key, key + ":writer"},
                             {std::to_string(ttl_ms), token, context.read ? "read" : "write",
                              writer_preference_ ? "1" : "0",
                              context.waiter_id.empty() ? token : std::string(context.waiter_id)});
    return flag_acquire_outcome(std::move(result), token, "EVALSHA rw_lock.acquire");
  }

  ReleaseResult release(const LockContext& context, const std::string& key,
                        const std::string& token) const override {
    RedisResult result =
        release_script().run(context.connection, {key}, {token, key + ":released"});
    return release_outcome(std::move(result), "EVALSHA rw_lock.release");
  }

 private:
  const char* name_;
  const char* summary_;
  bool writer_preference_;
};

}  // namespace

const LockVariant& rw_lock_variant() {
  static const ReadWriteLock variant(
      "rw_lock",
      "read-write: Lua hash with a mode field and a field per hold; readers in while free or read, "
      "a writer only while free (reader preference: a reader stream starves a writer)",
      false);
  return variant;
}

const LockVariant& rw_lock_fair_variant() {
  static const ReadWriteLock variant(
      "rw_lock_fair",
      "read-write: rw_lock with writer preference: a waiting writer's intent at <key>:writer "
      "keeps new readers out",
      true);
  return variant;
}

}  // namespace locksim::lock_detail
