// set_nx_ex: Doc E's auto-release lock. `SET key 1 NX PX ttl_ms` fixes the naive lock's deadlock,
// but the release is an unconditional `DEL key`: a holder whose lease expired deletes whoever
// holds the lock now. That flaw is deliberate; scenarios show it.
#include <string>

#include "sim/lock/outcome.h"

namespace locksim::lock_detail {
namespace {

constexpr std::string_view kSetNxExValue = "1";

class AutoReleaseLock final : public UnconditionalDelVariant {
 public:
  std::string_view name() const override { return "set_nx_ex"; }
  std::string_view summary() const override {
    return "SET key 1 NX PX ttl; release: unconditional DEL key (Doc E, auto-release lock)";
  }
  bool uses_ttl() const override { return true; }

  std::optional<OneCommand> acquire_command(const std::string& key, std::int64_t ttl_ms,
                                            Rng& /*rng*/) const override {
    return OneCommand{
        nullptr, OneCommand::words({"SET", key, kSetNxExValue, "NX", "PX", std::to_string(ttl_ms)}),
        0, 2};
  }
  AcquireAttempt read_acquire(RedisResult result, std::string_view token) const override {
    return acquire_outcome(std::move(result), token, "SET NX PX");
  }
};

}  // namespace

const LockVariant& set_nx_ex_variant() {
  static const AutoReleaseLock variant;
  return variant;
}

}  // namespace locksim::lock_detail
