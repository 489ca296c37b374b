#include "sim/core/stop.h"

namespace locksim {

void StopSignal::request() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    requested_.store(true);
  }
  wake_.notify_all();
}

bool StopSignal::sleep_for(std::chrono::nanoseconds duration) {
  if (duration <= std::chrono::nanoseconds::zero()) return !requested();
  std::unique_lock<std::mutex> lock(mutex_);
  return !wake_.wait_for(lock, duration, [this] { return requested_.load(); });
}

}  // namespace locksim
