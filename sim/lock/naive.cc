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
                             std::int64_t ttl_ms) const override {
    OneCommand command = *acquire_command(key, ttl_ms, context.rng);
    return read_acquire(run_one(context.connection, command), std::move(command.token));
  }

  std::optional<OneCommand> acquire_command(const std::string& key, std::int64_t /*ttl_ms*/,
                                            Rng& /*rng*/) const override {
    return OneCommand{nullptr, {"SET", key, std::string(kValue), "NX"}, 0, std::string(kValue)};
  }
  AcquireAttempt read_acquire(RedisResult result, std::string token) const override {
    return acquire_outcome(std::move(result), std::move(token), "SET NX");
  }

  ReleaseResult release(const LockContext& context, const std::string& key,
                        const std::string& token) const override {
    return read_release(run_one(context.connection, *release_command(key, token)));
  }

  std::optional<OneCommand> release_command(const std::string& key,
                                            const std::string& /*token*/) const override {
    return OneCommand{nullptr, {"DEL", key}, 0, {}};
  }
  ReleaseResult read_release(RedisResult result) const override {
    return release_outcome(std::move(result), "DEL");
  }
};

}  // namespace

const LockVariant& naive_variant() {
  static const NaiveLock variant;
  return variant;
}

}  // namespace locksim::lock_detail
