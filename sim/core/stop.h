// stop.h: StopSignal, a cooperative stop flag with an interruptible sleep.
//
// Ctrl-C and SIGTERM set it (app/); a run, the simulator and explore poll it (requested()) and
// stop at their next step. sleep_for is a sleep that a stop cuts short, on the machine's clock:
// a stop comes in real time, so it waits through real_clock() (sim/core/clock.h), never on a
// run's clock. Thread-safe.
//
//   if (!stop.sleep_for(std::chrono::milliseconds(100))) return;  // stopped
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace locksim {

class StopSignal {
 public:
  // request: asks everything to stop; wakes all sleepers. Not async-signal-safe: call it from a
  // normal thread (app/ uses a sigwait thread).
  void request();
  bool requested() const { return requested_.load(std::memory_order_relaxed); }
  // sleep_for: sleeps `duration` of real_clock(); returns false if a stop was requested before or
  // during it.
  bool sleep_for(std::chrono::nanoseconds duration);

 private:
  std::atomic<bool> requested_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
};

}  // namespace locksim
