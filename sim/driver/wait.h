// wait.h: WaitStrategy, how a client waits between acquire attempts that found the lock busy.
//
// The strategy only computes delays; the driver sleeps (interruptibly) and bounds the total by the
// acquire timeout. One instance per client thread (strategies may keep state).
//
//   auto wait = make_wait_strategy(scenario.lock.wait);
//   Nanos delay = wait->next_delay_ns(failed_attempts);
#pragma once

#include <memory>

#include "sim/core/clock.h"
#include "sim/scenario/scenario.h"

namespace locksim {

class WaitStrategy {
 public:
  virtual ~WaitStrategy() = default;
  // next_delay_ns: the pause before the next attempt, after `failed_attempts` (>= 1) busy answers.
  virtual Nanos next_delay_ns(int failed_attempts) = 0;
};

// make_wait_strategy: the strategy named by config.strategy ("poll"). The loader has validated it.
std::unique_ptr<WaitStrategy> make_wait_strategy(const WaitConfig& config);

}  // namespace locksim
