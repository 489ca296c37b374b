// setnx_then_expire: Doc B's first lock (B1). `SETNX key 1`, then a separate `PEXPIRE key ttl_ms`
// (the document's `EXPIRE key 30`, in milliseconds here because scenarios scale TTLs down), and an
// unconditional `DEL key` to release. The two acquire commands are not atomic: a client that
// crashes between them leaves a key without TTL that nobody ever deletes (deadlock). The
// checkpoint "after_setnx" between them is where scenarios inject that crash.
#include <string>
#include <utility>

#include "sim/lock/outcome.h"

namespace locksim::lock_detail {
namespace {

constexpr std::string_view kSetnxThenExpireValue = "1";

class SetNxThenExpireLock final : public LockVariant {
 public:
  std::string_view name() const override { return "setnx_then_expire"; }
  std::vector<CheckpointSite> checkpoints() const override { return {{"after_setnx", true}}; }
  std::string_view summary() const override {
    return "SETNX key 1, then a separate PEXPIRE key ttl (EXPIRE in ms); release: DEL key "
           "(Doc B, B1)";
  }
  bool uses_ttl() const override { return true; }

  AcquireAttempt try_acquire(const LockContext& context, const std::string& key,
                             std::int64_t ttl_ms) const override {
    AcquireAttempt attempt =
        flag_acquire_outcome(context.connection.command({"SETNX", key, kSetnxThenExpireValue}),
                             std::string(kSetnxThenExpireValue), "SETNX");
    if (attempt.outcome != AcquireAttempt::Outcome::kAcquired) return attempt;

    // May throw (a crash injected by the driver): the key then stays without TTL, on purpose.
    context.at("after_setnx");

    RedisResult expired = context.connection.command({"PEXPIRE", key, std::to_string(ttl_ms)});
    if (!expired.ok()) {
      expired.message =
          "SETNX succeeded but PEXPIRE failed, the key is set without TTL: " + expired.message;
      return AcquireAttempt{AcquireAttempt::Outcome::kError, "", std::move(expired)};
    }
    if (expired.reply.type != Reply::Type::kInteger) {
      return AcquireAttempt{AcquireAttempt::Outcome::kError, "",
                            unexpected_reply(std::move(expired), "PEXPIRE")};
    }
    // A reply of 0 means someone deleted the key between the two commands. Doc B's code ignores
    // EXPIRE's reply and goes on as the holder, and so does this variant: the resulting overlap is
    // the lock's behaviour, not the harness's.
    return attempt;
  }

  ReleaseResult release(const LockContext& context, const std::string& key,
                        const std::string& /*token*/) const override {
    return release_outcome(context.connection.command({"DEL", key}), "DEL");
  }
};

}  // namespace

const LockVariant& setnx_then_expire_variant() {
  static const SetNxThenExpireLock variant;
  return variant;
}

}  // namespace locksim::lock_detail
