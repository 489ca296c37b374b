// zset_semaphore and zset_semaphore_server: counting semaphores of lock.permits permits kept in
// one sorted set, a member per holder (its token), after "Redis in Action" 6.3.
//
// zset_semaphore is the book's basic semaphore (6.3.1): each permit is scored with the time on
// the acquiring client's own clock; an acquire first removes the members older than a lease by
// that clock, adds its own, and keeps it if its rank is below the permits. Its textbook bug is the
// clocks: a client whose clock runs ahead by more than a lease removes live holders' permits and
// lets itself in, and one whose clock runs behind scores its permit before the live ones and takes
// a rank that belongs to them (the book says so and goes on to the fair semaphore). Written as one
// script so that its three commands are one step, as the book's MULTI made them.
//
// zset_semaphore_server is the fix this harness holds it against: the same set, timed by the
// server (TIME inside the script), each member scored with the end of its lease, the expired ones
// removed first, and a permit granted only while fewer than the permits are held. The key expires
// with its newest lease, so no permit outlives every lease. Release, for both, is ZREM of the
// holder's own token: it never removes another holder's permit.
#include <string>
#include <utility>

#include "sim/lock/outcome.h"
#include "sim/redis/script.h"

namespace locksim::lock_detail {
namespace {

// KEYS[1] = the semaphore, ARGV[1] = the client's now (ms), ARGV[2] = token, ARGV[3] = ttl_ms,
// ARGV[4] = permits. Returns 1 (acquired) or 0 (every permit held).
constexpr const char* kClientTimedAcquireSource = R"lua(
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[3]))
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
if redis.call('ZRANK', KEYS[1], ARGV[2]) < tonumber(ARGV[4]) then
  return 1
end
redis.call('ZREM', KEYS[1], ARGV[2])
return 0
)lua";

// KEYS[1] = the semaphore, ARGV[1] = token, ARGV[2] = ttl_ms, ARGV[3] = permits. Returns 1 or 0.
// A member scored s expires once the server's millisecond is past s, as a key set with PX does
// (expired when the clock's millisecond is greater than its end): TIME is cut to the millisecond,
// so removing scores up to `now` itself would end a lease up to a millisecond early.
// Its own permit is added first, and taken back if that makes one too many: the set never empties
// while the script runs, so the key it was called with exists throughout. On Redis Cluster a
// script that empties its key (every permit expired) and then writes it again, while its slot
// migrates, is refused mid-way ("Script attempted to access a non local key": the key is missing
// from a migrating slot, so it belongs to the node importing it), and its acquire ends in an error.
constexpr const char* kServerTimedAcquireSource = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
if redis.call('ZCARD', KEYS[1]) > tonumber(ARGV[3]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 0
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
)lua";

const Script& client_timed_acquire_script() {
  static const Script script("zset_semaphore.acquire", kClientTimedAcquireSource);
  return script;
}

const Script& server_timed_acquire_script() {
  static const Script script("zset_semaphore_server.acquire", kServerTimedAcquireSource);
  return script;
}

// ZsetSemaphore: what both share: a fresh token per acquire, ZREM of it to release.
class ZsetSemaphore : public LockVariant {
 public:
  bool uses_ttl() const override { return true; }
  bool semaphore() const override { return true; }

  ReleaseResult release(const LockContext& context, const std::string& key,
                        const std::string& token) const final {
    return release_outcome(context.connection.command({"ZREM", key, token}), "ZREM");
  }
};

class ClientTimedSemaphore final : public ZsetSemaphore {
 public:
  std::string_view name() const override { return "zset_semaphore"; }
  bool reads_client_clock() const override { return true; }
  std::string_view summary() const override {
    return "semaphore: Lua ZREMRANGEBYSCORE older than a lease by the client's clock, ZADD now, "
           "ZRANK < permits or ZREM; release: ZREM token (Redis in Action 6.3.1)";
  }
  AcquireAttempt try_acquire(const LockContext& context, const std::string& key,
                             std::int64_t ttl_ms) const override {
    std::string token = context.rng.token_hex(32);
    const std::string now = std::to_string(context.client_now_ms());
    RedisResult result = client_timed_acquire_script().run(
        context.connection, {key},
        {now, token, std::to_string(ttl_ms), std::to_string(context.permits)});
    return flag_acquire_outcome(std::move(result), token, "EVALSHA zset_semaphore.acquire");
  }
};

class ServerTimedSemaphore final : public ZsetSemaphore {
 public:
  std::string_view name() const override { return "zset_semaphore_server"; }
  std::string_view summary() const override {
    return "semaphore: Lua TIME, ZADD now+ttl, ZREMRANGEBYSCORE expired, ZCARD > permits then "
           "ZREM, else PEXPIRE; release: ZREM token (the fix of Redis in Action 6.3.1)";
  }
  AcquireAttempt try_acquire(const LockContext& context, const std::string& key,
                             std::int64_t ttl_ms) const override {
    std::string token = context.rng.token_hex(32);
    RedisResult result = server_timed_acquire_script().run(
        context.connection, {key},
        {token, std::to_string(ttl_ms), std::to_string(context.permits)});
    return flag_acquire_outcome(std::move(result), token, "EVALSHA zset_semaphore_server.acquire");
  }
};

}  // namespace

const LockVariant& zset_semaphore_variant() {
  static const ClientTimedSemaphore variant;
  return variant;
}

const LockVariant& zset_semaphore_server_variant() {
  static const ServerTimedSemaphore variant;
  return variant;
}

}  // namespace locksim::lock_detail
