// simulation.h: Simulation, a seeded discrete-event scheduler on virtual time, whose threads are
// fibers run one at a time; and VirtualClock, the Clock (sim/core/clock.h) it keeps.
//
// Everything that happens is an event at a virtual instant: a fiber resuming (it was started,
// woken, its sleep ended, or the reply it waits for arrived), or an action on the scheduler's own
// stack (a command reaching a model server). Events run in time order; events at the same
// instant run in an order drawn from the seed, so one seed is one schedule, replayed exactly, and
// another seed is another interleaving. Nothing reads the machine's clock, and nothing runs in
// parallel: the same seed gives the same events, byte for byte, on any machine.
//
// A fiber waits only through the simulation: sleep_until, park (until woken or a deadline), or
// the VirtualClock's waits (which park). A fiber must not block the thread in any other way (a
// real socket, a contended std::mutex held across a wait): nothing else would run.
//
// A run that does not end by itself (fibers that keep waking each other, a loop that never ends in
// virtual time) is cut short by its bounds (SimulationBounds: scheduler events, the machine's time,
// a stop request): run() throws SimulationCutShort. The bounds are the only thing here that reads
// the machine's clock, and they never change what a run that ends does.
//
//   Simulation sim(seed);
//   sim.spawn([&] { sim.sleep_until(ms_to_ns(5)); done = true; });
//   sim.run();                                   // returns when nothing is left to run
//
//   VirtualClock clock(sim);                     // a Clock on the simulation's time
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/core/clock.h"
#include "sim/core/random.h"
#include "sim/core/stop.h"
#include "sim/core/threads.h"
#include "sim/simulate/action.h"
#include "sim/simulate/fiber_unwind.h"

namespace locksim {

namespace simulate_internal {
class Fiber;
}

// SimulationStalled: every fiber waits with no deadline and nothing is scheduled: the simulated
// program deadlocked (its names say who waits).
struct SimulationStalled : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// SimulationCutShort: run() passed one of its bounds (SimulationBounds): `why` says which; the
// words say when (the events run and the virtual time), for a message that names the seed.
struct SimulationCutShort : std::runtime_error {
  enum class Why { kEvents, kWallTime, kStopped };
  SimulationCutShort(Why why_cut, const std::string& what) : std::runtime_error(what), why(why_cut) {}
  Why why;
};

// SimulationBounds: how much one run() may take before it is cut short. 0: no bound.
struct SimulationBounds {
  std::uint64_t max_events = 0;  // scheduler events
  Nanos max_wall_ns = 0;         // the machine's time (a RunClock on real_clock())
  // stop: once it is requested, the simulated program has stop_grace_wall_ns of the machine's time
  // to end by itself (a driver stops its clients at their next step; a schedule of explore takes
  // well under a millisecond), then run() is cut short.
  const StopSignal* stop = nullptr;
  Nanos stop_grace_wall_ns = ms_to_ns(500);
};

class Simulation {
 public:
  using FiberId = std::uint64_t;
  static constexpr Nanos kForever = std::numeric_limits<Nanos>::max();

  explicit Simulation(std::uint64_t seed);
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  // now: virtual nanoseconds since the simulation began.
  Nanos now() const { return now_; }
  // rng: the schedule's own random stream (latencies, ties), for the simulated world.
  Rng& rng() { return rng_; }
  // wake_latency: how much later than its notify a woken thread runs, drawn in [min, max]
  // (default 5 to 50 µs; a timing profile sets it, sim_runtime.h).
  void set_wake_latency(Nanos min_ns, Nanos max_ns) {
    wake_min_ns_ = min_ns;
    wake_max_ns_ = max_ns;
  }
  // wake_stalls: besides, one wake-up in `one_in` runs up to `max_ns` late (at least the latency's
  // max): a thread descheduled on a loaded machine, whose polls then drift far apart; 0: none.
  void set_wake_stalls(std::int64_t one_in, Nanos max_ns) {
    stall_one_in_ = one_in;
    stall_max_ns_ = max_ns;
  }
  Nanos draw_wake_latency() {
    if (stall_one_in_ > 0 && rng_.scaled(0, stall_one_in_ - 1) == 0) {
      return rng_.scaled(wake_max_ns_, std::max(wake_max_ns_, stall_max_ns_));
    }
    return rng_.scaled(wake_min_ns_, wake_max_ns_);
  }

  // spawn: a fiber that runs `body`, runnable now (it starts at an event of its own). An
  // exception `body` throws ends run() with it.
  FiberId spawn(std::function<void()> body);
  // ended: the fiber's body returned.
  bool ended(FiberId fiber) const;
  // join: from a fiber: waits until `fiber` has ended.
  void join(FiberId fiber);

  // From a fiber. current: the fiber running now (0 outside every fiber).
  FiberId current() const { return current_; }
  // sleep_until: suspends the current fiber until virtual time `t` (none if t <= now).
  void sleep_until(Nanos t);
  // park: suspends the current fiber until wake() or virtual time `deadline`; true if woken.
  bool park(Nanos deadline = kForever);
  // wake: a parked fiber resumes (at an event `after` from now); nothing if it is not parked.
  void wake(FiberId fiber, Nanos after = 0);
  // add_deadline: a parked fiber's wait gets a deadline `t` (as park(t) would have set), for a
  // wait that turns out to need one after it began; nothing if it is not parked.
  void add_deadline(FiberId fiber, Nanos t);
  // yield: lets every other event at this instant run first (in the seeded order).
  void yield();

  // at: runs `action` on the scheduler's stack at virtual time `t` (>= now).
  void at(Nanos t, Action action);

  // set_bounds: the bounds of run() (none by default).
  void set_bounds(const SimulationBounds& bounds) { bounds_ = bounds; }
  // run: from outside every fiber: runs events until none is left. Throws what a fiber threw,
  // SimulationStalled if fibers wait forever with nothing scheduled, or SimulationCutShort if it
  // passed its bounds. Before a throw the fibers that had not ended are unwound, newest first:
  // the wait each is suspended in throws FiberUnwind (fiber_unwind.h), so the destructors on its
  // stack run. While they run, a wait does not suspend: it throws FiberUnwind again, or inside a
  // destructor returns at once (a join, a park that returns false, a VirtualClock wait that
  // returns done()); virtual time stands still and nothing is scheduled. After a throw the
  // simulation is good for nothing but destruction.
  void run();
  // unwinding: run() ended early and unwinds (or has unwound) the fibers left: a wait in a
  // destructor returns at once, and nothing is scheduled any more (at and wake do nothing, a
  // fiber spawned then never runs).
  bool unwinding() const { return unwinding_; }

  // events_run: events run so far (a measure of work for reports and benchmarks).
  std::uint64_t events_run() const { return events_run_; }
  // fibers_alive: fibers started and not ended.
  std::size_t fibers_alive() const;

 private:
  // Event: small and trivially copied (the queue moves events about); an action waits in
  // actions_ until its event runs.
  // (Two events with the same time and the same 64-bit draw would run in the order the heap
  // leaves them in: still the same on every replay.)
  struct Event {
    Nanos time;
    std::uint64_t order;  // drawn from the seed: ties at one instant run in a seeded order
    std::uint64_t generation = 0;
    std::uint32_t fiber = 0;  // 0: run actions_[action]; else resume `fiber` if its wait is current
    std::uint32_t action = 0;
    bool operator>(const Event& other) const {
      if (time != other.time) return time > other.time;
      return order > other.order;
    }
  };
  struct FiberState;

  // check_bounds: throws SimulationCutShort if run() passed its bounds (`wall`: since it began;
  // `stop_seen_ns`: when on `wall` it first saw the stop request, or -1).
  void check_bounds(const RunClock& wall, Nanos& stop_seen_ns) const;
  void schedule_resume(FiberId fiber, Nanos t, std::uint64_t generation);
  // stale: a resume event for a wait that is over (it neither runs nor moves the time).
  bool stale(const Event& event) const;
  void resume(FiberId fiber);
  void run_events();  // run()'s loop
  // unwind_fibers: every fiber that has not ended is unwound (Fiber::unwind), newest first.
  void unwind_fibers();
  // wait: park(deadline); `may_throw` false: unwinding, it returns rather than throw (join).
  bool wait(Nanos deadline, bool may_throw);
  void suspend_current(bool may_throw);
  FiberState& state(FiberId fiber);

  Nanos now_ = 0;
  Rng rng_;
  Nanos wake_min_ns_ = 5'000;
  Nanos wake_max_ns_ = 50'000;
  std::int64_t stall_one_in_ = 0;
  Nanos stall_max_ns_ = 0;
  std::uint64_t events_run_ = 0;
  SimulationBounds bounds_;
  // The events on (time, order), least first out: a sorted vector while small, a min-heap once
  // large (heap_; simulation.cc); a resume for a wait that is over stays in it until its time,
  // and is skipped then (stale). pop: takes the least.
  void push(const Event& event);
  Event pop();
  static std::vector<Event>& spare_events();  // this thread's (simulation.cc)
  std::vector<Event> events_;
  bool heap_ = false;
  std::vector<Action> actions_;                      // of the events not run yet
  std::vector<std::uint32_t> free_actions_;          // slots of actions_ to use again
  std::vector<std::unique_ptr<FiberState>> fibers_;  // fiber id n is fibers_[n - 1]
  FiberId next_fiber_ = 1;
  FiberId current_ = 0;
  std::exception_ptr failure_;
  bool unwinding_ = false;
};

// VirtualClock: a Clock on a Simulation's virtual time. Its waits park the calling fiber;
// notify_all wakes the fibers that wait on that condition variable through it, each after a
// wake-up latency drawn from the seed (Simulation::set_wake_latency, 5 to 50 µs by default, as a
// thread woken by a condition variable runs a little later: what it records then comes after what
// woke it, never at the same instant). Sleeps and timed waits end a drawn latency after their
// deadline too (a timer's slack), so threads that poll at one interval drift apart as real ones do,
// not in lockstep. unix_seconds is a fixed instant (2023-11-14) plus the virtual time.
class VirtualClock final : public Clock {
 public:
  explicit VirtualClock(Simulation& simulation) : simulation_(simulation) {}

  Nanos now_ns() const override { return simulation_.now(); }
  bool wait_until(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                  Nanos deadline_ns, const std::function<bool()>& done) const override;
  void wait(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
            const std::function<bool()>& done) const override;
  void sleep_for(Nanos duration) const override;
  std::int64_t unix_seconds() const override;
  void notify_all(std::condition_variable& cv) const override;
  // pause: Clock::pause's wait, parked once without a predicate (it is false until the fiber has
  // waited once): the same wake-up latency drawn, the same events.
  void pause(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
             Nanos duration) const override;

 private:
  // park_waiter: parks the current fiber as a waiter on `cv` until it is notified or
  // `deadline_ns`, with `lock` released meanwhile (held again when it returns or throws).
  void park_waiter(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                   Nanos deadline_ns) const;

  Simulation& simulation_;
  // The fibers waiting, each on one condition variable, in the order they began to wait.
  struct Waiter {
    const std::condition_variable* cv;
    Simulation::FiberId fiber;
  };
  mutable std::vector<Waiter> waiters_;
};

// SimThreads: Threads (sim/core/threads.h) that are a Simulation's fibers: start spawns one, and
// join (from a fiber) waits until it has ended.
class SimThreads final : public Threads {
 public:
  explicit SimThreads(Simulation& simulation) : simulation_(simulation) {}
  std::unique_ptr<Started> start(std::function<void()> body) override;

 private:
  Simulation& simulation_;
};

}  // namespace locksim
