#include "sim/client/acquire.h"

#include <utility>

namespace locksim {

Task<AcquireEnd> acquire_loop(AcquireHost& host, Nanos deadline_ns) {
  // Bounded: every pass either returns or waits until the deadline draws closer.
  bool waiting = false;  // busy() said so: after the first busy answer or refused connection
  Nanos busy_ns = -1;    // when the first busy answer was read: from then on it certainly waited
  AcquireAttempt attempt;  // the last attempt's (host.attempt assigns all of it)
  for (int attempts = 1;; ++attempts) {
    host.prepare();
    const Nanos sent_ns = host.now();
    if (const RedisResult* refused = host.unreachable()) {
      // Nothing sent: wait for the server as for a busy lock, within the deadline.
      const Nanos now = host.now();
      if (host.stopping())
        co_return AcquireEnd{AcquireEnd::Kind::kStopped, {}, attempts, -1, busy_ns};
      if (now >= deadline_ns) {
        AcquireAttempt refusal;
        refusal.outcome = AcquireAttempt::Outcome::kError;
        refusal.error = *refused;
        co_return AcquireEnd{AcquireEnd::Kind::kError, std::move(refusal), attempts, -1, busy_ns};
      }
      if (!std::exchange(waiting, true)) host.busy();
      if (!co_await host.wait(attempts, deadline_ns - now)) {
        co_return AcquireEnd{AcquireEnd::Kind::kStopped, {}, attempts, -1, busy_ns};
      }
      continue;
    }
    co_await host.attempt(attempt);
    switch (attempt.outcome) {
      case AcquireAttempt::Outcome::kAcquired:
        co_return AcquireEnd{AcquireEnd::Kind::kAcquired, std::move(attempt), attempts, sent_ns,
                             busy_ns};
      case AcquireAttempt::Outcome::kError:
        co_return AcquireEnd{AcquireEnd::Kind::kError, std::move(attempt), attempts, -1, busy_ns};
      case AcquireAttempt::Outcome::kBusy:
        if (busy_ns < 0) busy_ns = host.now();
        if (!std::exchange(waiting, true)) host.busy();
        break;
    }
    const Nanos now = host.now();
    const bool stopping = host.stopping();
    if (now >= deadline_ns || stopping) {
      co_return AcquireEnd{stopping ? AcquireEnd::Kind::kStopped : AcquireEnd::Kind::kGaveUp,
                           {},
                           attempts,
                           -1,
                           busy_ns};
    }
    // A wait the run's stop cut short ends the acquire as stopped, without another attempt.
    if (!co_await host.wait(attempts, deadline_ns - now)) {
      co_return AcquireEnd{AcquireEnd::Kind::kStopped, {}, attempts, -1, busy_ns};
    }
  }
}

}  // namespace locksim
