#include "sim/client/acquire.h"

#include <utility>

namespace locksim {

Task<AcquireEnd> acquire_loop(AcquireHost& host, Nanos deadline_ns) {
  // Bounded: every pass either returns or waits until the deadline draws closer.
  for (int attempts = 1;; ++attempts) {
    host.prepare();
    const Nanos sent_ns = host.now();
    AcquireAttempt attempt = co_await host.attempt();
    switch (attempt.outcome) {
      case AcquireAttempt::Outcome::kAcquired:
        co_return AcquireEnd{AcquireEnd::Kind::kAcquired, std::move(attempt), attempts, sent_ns};
      case AcquireAttempt::Outcome::kError:
        co_return AcquireEnd{AcquireEnd::Kind::kError, std::move(attempt), attempts, -1};
      case AcquireAttempt::Outcome::kBusy:
        if (attempts == 1) host.busy();
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
