// wait.h: WaitStrategy, how a client waits between acquire attempts that found the lock busy.
//
// The driver asks the strategy to wait, bounded by the acquire deadline; sleeping strategies
// compute a delay, the notification strategy blocks on the server until a releaser wakes it. One
// instance per client thread (strategies keep state, and "notify" owns a connection).
//
//   auto wait = make_wait_strategy(scenario.lock.wait, endpoint);
//   wait->wait(pause, full_key, failed_attempts, remaining_ns);  // after a busy answer
//   wait->on_release(connection, full_key);                       // after a successful release
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "sim/core/clock.h"
#include "sim/redis/connection.h"
#include "sim/scenario/scenario.h"

namespace locksim {

class WaitStrategy {
 public:
  // Pause: sleeps up to the given time; false if the run must stop (Ctrl-C, time limit).
  using Pause = std::function<bool(Nanos)>;

  virtual ~WaitStrategy() = default;
  // wait: returns when the next attempt should be made, after `failed_attempts` (>= 1) busy
  // answers, and never later than `max_ns` from now.
  virtual void wait(const Pause& pause, const std::string& full_key, int failed_attempts,
                    Nanos max_ns) = 0;
  // on_release: this client just released `full_key` (the notify strategy wakes one waiter).
  virtual void on_release(Connection& /*connection*/, const std::string& /*full_key*/) {}
};

// make_wait_strategy: the strategy named by config.strategy (validated by the loader).
std::unique_ptr<WaitStrategy> make_wait_strategy(const WaitConfig& config,
                                                 const Endpoint& endpoint);

// delay_ns: for the sleeping strategies, the pause after `failed_attempts` busy answers
// (exposed for tests). "notify" answers its fallback.
Nanos delay_ns(const WaitConfig& config, int failed_attempts);

// notify_key: the list a notify waiter blocks on for `full_key`.
std::string notify_key(const std::string& full_key);

}  // namespace locksim
