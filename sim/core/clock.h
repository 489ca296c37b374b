// clock.h: Clock, where locksim's time comes from, and RunClock, a run's time since its start.
//
// Every timestamp, deadline, timed wait and sleep outside this file goes through a Clock, so a
// virtual clock can replace the real one without touching the lock variants, the client or the
// checker. real_clock() is CLOCK_MONOTONIC; clock.cc is the only file that reads it (the test
// tests/unit/seams_test.cc keeps it so). Every timestamp in a history is nanoseconds of a
// RunClock, so timestamps taken on different client threads are directly comparable.
//
//   const Clock& clock = real_clock();
//   Nanos deadline = clock.now_ns() + ms_to_ns(200);
//   bool done = clock.wait_until(cv, lock, deadline, [&] { return stopped; });
//   clock.notify_all(cv);  // from whoever sets `stopped` (a virtual clock wakes its waiters)
//
//   RunClock run;                    // time 0 is now
//   Nanos t = run.now_ns();
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <utility>

namespace locksim {

// Nanos: a duration or an instant in nanoseconds (of a RunClock: since the run started).
using Nanos = std::int64_t;

constexpr Nanos kNanosPerMilli = 1'000'000;

constexpr Nanos ms_to_ns(std::int64_t ms) { return ms * kNanosPerMilli; }
constexpr double ns_to_ms(Nanos ns) { return static_cast<double>(ns) / 1e6; }

// RangeMs: an inclusive range of milliseconds, drawn uniformly with a run's seeded Rng
// (draw_ms in random.h); min_ms == max_ms is a fixed duration.
struct RangeMs {
  std::int64_t min_ms = 0;
  std::int64_t max_ms = 0;
};

// Clock: a monotonic time source and the waits measured on it. Implementations are thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;

  // now_ns: nanoseconds since this clock's own epoch; never decreases.
  virtual Nanos now_ns() const = 0;
  // wait_until: with `lock` held (it guards what `done` reads), waits on `cv` until `done()` is
  // true or the clock reaches `deadline_ns`; spurious wake-ups are absorbed. Returns done().
  virtual bool wait_until(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                          Nanos deadline_ns, const std::function<bool()>& done) const = 0;
  // wait: as wait_until with no deadline.
  virtual void wait(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                    const std::function<bool()>& done) const {
    cv.wait(lock, done);
  }
  // sleep_for: blocks the calling thread for `duration` of this clock (none if <= 0).
  virtual void sleep_for(Nanos duration) const = 0;
  // unix_seconds: the calendar time, seconds since 1970 UTC, for what people read (run ids, the
  // date of a report); never for a run's timing, which is monotonic.
  virtual std::int64_t unix_seconds() const = 0;
  // notify_all: wakes whoever waits on `cv` through this clock. Code that waits through a Clock
  // notifies through it too, so that a virtual clock (sim/simulate), whose waiters are not
  // parked on the condition variable itself, wakes them.
  virtual void notify_all(std::condition_variable& cv) const { cv.notify_all(); }

  // wait_for: wait_until now + `duration`.
  bool wait_for(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, Nanos duration,
                const std::function<bool()>& done) const {
    return wait_until(cv, lock, now_ns() + duration, done);
  }
  // pause: with `lock` held, waits on `cv` for a notification or `duration`, whichever comes
  // first (a poll interval that a change cuts short). A clock may do it more directly than
  // through wait_for's predicate, as long as it waits the same way (a virtual clock does: every
  // poll interval of a simulated client is one).
  virtual void pause(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                     Nanos duration) const {
    bool woken = false;
    wait_for(cv, lock, duration, [&woken] { return std::exchange(woken, true); });
  }
};

// real_clock: the machine's monotonic clock (CLOCK_MONOTONIC). Lives for the program.
const Clock& real_clock();

// RunClock: nanoseconds of a base clock since construction (or restart()). Thread-safe for
// reading; restart() only before anything has read it for an event.
class RunClock {
 public:
  explicit RunClock(const Clock& base = real_clock()) : base_(&base), start_(base.now_ns()) {}

  // now_ns: nanoseconds since the run started; never decreases.
  Nanos now_ns() const { return base_->now_ns() - start_; }
  // base: the clock this one counts on, for timed waits (clock.base().wait_until(..., at(t), ...)).
  const Clock& base() const { return *base_; }
  // at: the base clock's instant of run time `t`.
  Nanos at(Nanos t) const { return start_ + t; }

  // restart: time 0 is now. Only before anything has read the clock for an event (a run restarts
  // it when its clients start, so that starting them, processes included, is not part of it).
  void restart() { start_ = base_->now_ns(); }
  // restart_at: time 0 is the base clock's instant `start` (a client process takes the run's
  // time 0 from the harness: both read the same monotonic clock).
  void restart_at(Nanos start) { start_ = start; }

 private:
  const Clock* base_;
  Nanos start_;
};

}  // namespace locksim
