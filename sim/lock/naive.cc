// naive: Doc E's basic lock. `SET key 1 NX` with no expiry, released by `DEL key`. A holder that
// crashes leaves the key forever (deadlock), which is what scenarios use it to show.
#include "sim/lock/outcome.h"

namespace locksim::lock_detail {
namespace {

constexpr std::string_view kNaiveValue = "1";

class NaiveLock final : public UnconditionalDelVariant {
 public:
  std::string_view name() const override { return "naive"; }
  std::string_view summary() const override {
    return "SET key 1 NX, no TTL; release: DEL key (Doc E, basic lock)";
  }
  bool uses_ttl() const override { return false; }

  std::optional<OneCommand> acquire_command(const std::string& key, std::int64_t /*ttl_ms*/,
                                            Rng& /*rng*/) const override {
    return OneCommand{nullptr, OneCommand::words({"SET", key, kNaiveValue, "NX"}), 0, 2};
  }
  AcquireAttempt read_acquire(RedisResult result, std::string_view token) const override {
    return acquire_outcome(std::move(result), token, "SET NX");
  }
};

}  // namespace

const LockVariant& naive_variant() {
  static const NaiveLock variant;
  return variant;
}

}  // namespace locksim::lock_detail
