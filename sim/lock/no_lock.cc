// no_lock: the baseline without any lock. Every acquire succeeds and no call touches Redis, so the
// resource checks of a scenario show what happens when nothing protects the critical section.
#include "sim/lock/outcome.h"

namespace locksim::lock_detail {
namespace {

class NoLock final : public LockVariant {
 public:
  std::string_view name() const override { return "no_lock"; }
  std::string_view summary() const override {
    return "no lock at all: every acquire succeeds (baseline for resource checks)";
  }
  bool uses_ttl() const override { return false; }

  AcquireAttempt try_acquire(const LockContext& /*context*/, const std::string& /*key*/,
                             std::int64_t /*ttl_ms*/) const override {
    AcquireAttempt attempt;
    attempt.outcome = AcquireAttempt::Outcome::kAcquired;
    attempt.token = "none";
    return attempt;
  }

  // release: nothing was stored, so nothing is deleted (kNotHeld, deleted 0).
  ReleaseResult release(const LockContext& /*context*/, const std::string& /*key*/,
                        const std::string& /*token*/) const override {
    return ReleaseResult{};
  }
};

}  // namespace

const LockVariant& no_lock_variant() {
  static const NoLock variant;
  return variant;
}

}  // namespace locksim::lock_detail
