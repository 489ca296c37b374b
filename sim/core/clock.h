// clock.h: RunClock, the only source of time in locksim.
//
// Every timestamp in a history is nanoseconds of CLOCK_MONOTONIC since the run started, so
// timestamps taken on different client threads are directly comparable. Only core reads the clock
// (a model backend with virtual time can replace this seam later).
//
//   RunClock clock;
//   Nanos t = clock.now_ns();
#pragma once

#include <chrono>
#include <cstdint>

namespace locksim {

// Nanos: a duration or an instant in nanoseconds since the run started.
using Nanos = std::int64_t;

constexpr Nanos kNanosPerMilli = 1'000'000;

constexpr Nanos ms_to_ns(std::int64_t ms) { return ms * kNanosPerMilli; }
constexpr double ns_to_ms(Nanos ns) { return static_cast<double>(ns) / 1e6; }

// RunClock: monotonic nanoseconds since construction. Thread-safe (read-only after construction).
class RunClock {
 public:
  RunClock() : start_(std::chrono::steady_clock::now()) {}

  // now_ns: nanoseconds since the clock was constructed; never decreases.
  Nanos now_ns() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                start_)
        .count();
  }

  // Converts an instant of this clock to a steady_clock time point (for deadlines).
  std::chrono::steady_clock::time_point to_time_point(Nanos t) const {
    return start_ + std::chrono::nanoseconds(t);
  }

  // restart: time 0 is now. Only before anything has read the clock for an event (a run restarts
  // it when its clients start, so that starting them, processes included, is not part of it).
  void restart() { start_ = std::chrono::steady_clock::now(); }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace locksim
