// naive: Doc E's basic lock. `SET key 1 NX` with no expiry, released by `DEL key`. A holder that
// crashes leaves the key forever (deadlock), which is what scenarios use it to show.
#include "sim/lock/outcome.h"

namespace locksim::lock_detail {
namespace {

constexpr std::string_view kValue = "1";

class NaiveLock final : public LockVariant {
 public:
  std::string_view name() const override { return "naive"; }
  std::string_view summary() const override {
    return "SET key 1 NX, no TTL; release: DEL key (Doc E, basic lock)";
  }
  bool uses_ttl() const override { return false; }

  AcquireAttempt try_acquire(const LockContext& context, const std::string& key,
                             std::int64_t /*ttl_ms*/) const override {
    return acquire_outcome(context.connection.command({"SET", key, kValue, "NX"}),
                           std::string(kValue), "SET NX");
  }

  ReleaseResult release(const LockContext& context, const std::string& key,
                        const std::string& /*token*/) const override {
    return release_outcome(context.connection.command({"DEL", key}), "DEL");
  }
};

}  // namespace

const LockVariant& naive_variant() {
  static const NaiveLock variant;
  return variant;
}

}  // namespace locksim::lock_detail
