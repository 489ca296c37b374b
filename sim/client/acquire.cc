#include "sim/client/acquire.h"

#include <utility>

namespace locksim {

Task<AcquireEnd> acquire_loop(AcquireHost& host, Nanos deadline_ns) {
  // Bounded: every pass either returns or waits until the deadline draws closer.
  bool waiting = false;  // busy() said so: after the first busy answer or refused connection
  for (int attempts = 1;; ++attempts) {
    host.prepare();
    const Nanos sent_ns = host.now();
    if (const RedisResult* refused = host.unreachable()) {
      // Nothing sent: wait for the server as for a busy lock, within the deadline.
      const Nanos now = host.now();
      if (host.stopping()) co_return AcquireEnd{AcquireEnd::Kind::kStopped, {}, attempts, -1};
      if (now >= deadline_ns) {
        AcquireAttempt attempt;
        attempt.outcome = AcquireAttempt::Outcome::kError;
        attempt.error = *refused;
        co_return AcquireEnd{AcquireEnd::Kind::kError, std::move(attempt), attempts, -1};
      }
      if (!std::exchange(waiting, true)) host.busy();
      if (!co_await host.wait(attempts, deadline_ns - now)) {
        co_return AcquireEnd{AcquireEnd::Kind::kStopped, {}, attempts, -1};
      }
      continue;
    }
    AcquireAttempt attempt = co_await host.attempt();
    switch (attempt.outcome) {
      case AcquireAttempt::Outcome::kAcquired:
        co_return AcquireEnd{AcquireEnd::Kind::kAcquired, std::move(attempt), attempts, sent_ns};
      case AcquireAttempt::Outcome::kError:
        co_return AcquireEnd{AcquireEnd::Kind::kError, std::move(attempt), attempts, -1};
      case AcquireAttempt::Outcome::kBusy:
        if (!std::exchange(waiting, true)) host.busy();
        break;
    }
    const Nanos now = host.now();
    const bool stopping = host.stopping();
    if (now >= deadline_ns || stopping) {
      co_return AcquireEnd{stopping ? AcquireEnd::Kind::kStopped : AcquireEnd::Kind::kGaveUp, {},
                           attempts, -1};
    }
    // A wait the run's stop cut short ends the acquire as stopped, without another attempt.
    if (!co_await host.wait(attempts, deadline_ns - now)) {
      co_return AcquireEnd{AcquireEnd::Kind::kStopped, {}, attempts, -1};
    }
  }
}

}  // namespace locksim
