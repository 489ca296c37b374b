// lua_owner_wait: lua_owner plus `WAIT 1 timeout` after the SET, so that a grant counts only once
// at least one replica acknowledged the key (SEEDS.md "Failover"; Redisson's lock waits the same
// way). Replication is asynchronous: a primary that fails over before its replica received the
// key hands the next client a free lock. WAIT narrows that window; it does not close it, and it
// is not strong consistency: a replica that acknowledged can still lose the write (it restarts
// without persistence, or is itself replaced), and a failover can promote a replica that did not
// acknowledge.
//
// The wait is max(10, ttl/10) ms, a tenth of the lease at most, so most of the lease is left to
// the holder. No acknowledgement in time: the key is released (owner-checked) and the attempt is
// kError of kind kRefused, not indeterminate: the lock was not taken. A WAIT refused because the
// server is itself a replica (a cluster's failover between the SET and the WAIT) is the same
// refusal; any other WAIT error reply releases it too and is that error. A WAIT that gets no reply
// at all (the connection's command timeout is shorter than the wait, or the connection broke) is
// returned as that I/O error, indeterminate: the key is set with this token and stays so until its
// TTL, and the broken connection cannot release it. The checkpoint "after_set" sits between SET and
// WAIT. Release is lua_owner's; no renewal.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "sim/lock/outcome.h"

namespace locksim::lock_detail {
namespace {

// wait_timeout_ms: how long the acquire waits for a replica's acknowledgement: a tenth of the
// lease, at least 10 ms.
std::int64_t wait_timeout_ms(std::int64_t ttl_ms) {
  return std::max<std::int64_t>(10, ttl_ms / 10);
}

class ReplicatedOwnerCheckedLuaLock final : public LockVariant {
 public:
  std::string_view name() const override { return "lua_owner_wait"; }
  std::vector<CheckpointSite> checkpoints() const override { return {{"after_set", true}}; }
  std::string_view summary() const override {
    return "lua_owner (SET key token NX PX ttl, Lua compare-and-delete), then WAIT 1 "
           "max(10, ttl/10) ms: held once a replica acknowledged the key, else released; narrows "
           "the failover window, not strong consistency: an acknowledging replica can still lose "
           "it, a failover can promote one that did not (Redis WAIT docs, Redisson)";
  }
  bool uses_ttl() const override { return true; }
  bool needs_replica() const override { return true; }

  AcquireAttempt try_acquire(const LockContext& context, const std::string& key,
                             std::int64_t ttl_ms) const override {
    AcquireAttempt attempt = acquire_with_fresh_token(context, key, ttl_ms);
    if (attempt.outcome != AcquireAttempt::Outcome::kAcquired) return attempt;

    // May throw (a crash injected by the driver): the key stays, unacknowledged, until its TTL.
    context.at("after_set");

    const std::int64_t timeout_ms = wait_timeout_ms(ttl_ms);
    RedisResult acked = context.connection.command({"WAIT", "1", std::to_string(timeout_ms)});
    if (acked.ok() && acked.reply.type == Reply::Type::kInteger && acked.reply.integer >= 1) {
      return attempt;
    }
    if (!acked.ok() && acked.error != RedisErrorKind::kReplyError) {
      // No answer: the connection is broken and cannot release; the key expires with its TTL.
      acked.message = "SET succeeded but WAIT got no answer: " + acked.message;
      return AcquireAttempt{AcquireAttempt::Outcome::kError, "", std::move(acked)};
    }

    RedisResult failure;
    if (acked.ok() && acked.reply.type == Reply::Type::kInteger) {
      failure = RedisResult{
          RedisErrorKind::kRefused,
          "no replica acknowledged the lock within " + std::to_string(timeout_ms) + " ms",
          {}};
    } else if (acked.ok()) {
      failure = unexpected_reply(std::move(acked), "WAIT");
    } else {
      failure = std::move(acked);
      failure.message = "WAIT failed: " + failure.message;
      // The server that granted it is a replica by now (a Redis Cluster's failover between the
      // SET and the WAIT, or a writable replica): no replica of it can acknowledge the key, so
      // the lock was not taken, as when none acknowledged in time; the caller may try again.
      if (failure.message.find("WAIT cannot be used with replica instances") != std::string::npos) {
        failure.error = RedisErrorKind::kRefused;
      }
    }
    const ReleaseResult released = lua_owner_variant().release(context, key, attempt.token);
    failure.message +=
        released.outcome == ReleaseResult::Outcome::kError
            ? "; releasing it failed (" + released.error.describe() + "), it expires with its TTL"
            : "; released it";
    return AcquireAttempt{AcquireAttempt::Outcome::kError, "", std::move(failure)};
  }

  ReleaseResult release(const LockContext& context, const std::string& key,
                        const std::string& token) const override {
    return lua_owner_variant().release(context, key, token);
  }
};

}  // namespace

const LockVariant& lua_owner_wait_variant() {
  static const ReplicatedOwnerCheckedLuaLock variant;
  return variant;
}

}  // namespace locksim::lock_detail
