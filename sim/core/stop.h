// stop.h: StopSignal, a cooperative stop flag with interruptible sleeps.
//
// Ctrl-C and SIGTERM set it (app/), every bounded loop in the driver polls it, and every sleep
// in locksim goes through sleep_for so it wakes as soon as a stop is requested. Thread-safe.
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
  // sleep_for: sleeps `duration`; returns false if a stop was requested before or during it.
  bool sleep_for(std::chrono::nanoseconds duration);

 private:
  std::atomic<bool> requested_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
};

}  // namespace locksim
