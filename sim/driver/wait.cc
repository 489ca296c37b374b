#include "sim/driver/wait.h"

#include "sim/core/assert.h"

namespace locksim {
namespace {

// FixedPoll: the same interval after every busy answer (Doc D polls every 100 ms).
class FixedPoll final : public WaitStrategy {
 public:
  explicit FixedPoll(Nanos interval_ns) : interval_ns_(interval_ns) {}
  Nanos next_delay_ns(int /*failed_attempts*/) override { return interval_ns_; }

 private:
  Nanos interval_ns_;
};

}  // namespace

std::unique_ptr<WaitStrategy> make_wait_strategy(const WaitConfig& config) {
  LOCKSIM_ASSERT(config.strategy == "poll");
  return std::make_unique<FixedPoll>(ms_to_ns(config.interval_ms));
}

}  // namespace locksim
