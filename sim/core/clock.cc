#include "sim/core/clock.h"

#include <chrono>
#include <ctime>
#include <thread>

namespace locksim {
namespace {

using Steady = std::chrono::steady_clock;

Steady::time_point time_point_of(Nanos t) {
  return Steady::time_point(
      std::chrono::duration_cast<Steady::duration>(std::chrono::nanoseconds(t)));
}

class SteadyClock final : public Clock {
 public:
  Nanos now_ns() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Steady::now().time_since_epoch())
        .count();
  }
  bool wait_until(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                  Nanos deadline_ns, const std::function<bool()>& done) const override {
    return cv.wait_until(lock, time_point_of(deadline_ns), done);
  }
  void sleep_for(Nanos duration) const override {
    if (duration > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(duration));
  }
  std::int64_t unix_seconds() const override {
    return static_cast<std::int64_t>(std::time(nullptr));
  }
};

}  // namespace

const Clock& real_clock() {
  static const SteadyClock clock;
  return clock;
}

}  // namespace locksim
