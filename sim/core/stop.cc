#include "sim/core/stop.h"

#include "sim/core/clock.h"

namespace locksim {

void StopSignal::request() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    requested_.store(true);
  }
  real_clock().notify_all(wake_);
}

bool StopSignal::sleep_for(std::chrono::nanoseconds duration) {
  if (duration <= std::chrono::nanoseconds::zero()) return !requested();
  std::unique_lock<std::mutex> lock(mutex_);
  return !real_clock().wait_for(wake_, lock, static_cast<Nanos>(duration.count()),
                                [this] { return requested_.load(); });
}

}  // namespace locksim
