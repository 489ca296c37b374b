#include "sim/simulate/simulation.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "sim/core/assert.h"
#include "sim/simulate/fiber.h"

namespace locksim {

using simulate_internal::Fiber;

struct Simulation::FiberState {
  std::unique_ptr<Fiber> fiber;  // freed when the body ends
  bool ended = false;
  bool parked = false;
  bool woken = false;
  // generation: counts the fiber's waits; a resume scheduled for an earlier wait is stale.
  std::uint64_t generation = 0;
  std::vector<FiberId> joiners;
};

namespace {

// The event queue's buffer is handed from one simulation to the next on a thread (explore makes
// one per schedule; its queue holds a few hundred events). spare_gone: the thread's spare was
// destroyed (its thread is ending); a simulation that ends after that frees its own.
thread_local bool spare_gone = false;
template <class Event>
struct SpareEvents {
  std::vector<Event> events;
  ~SpareEvents() { spare_gone = true; }
};

}  // namespace

std::vector<Simulation::Event>& Simulation::spare_events() {
  thread_local SpareEvents<Event> spare;
  return spare.events;
}

Simulation::Simulation(std::uint64_t seed) : rng_(seed) {
  if (!spare_gone) events_.swap(spare_events());
  events_.reserve(256);
}

namespace {

// A schedule's queue holds a handful of events: while it holds at most this many it is a vector
// sorted latest first, so that a pop takes the back and a push finds its place by a binary
// search and moves the few earlier events up one (a heap's sift-down at every pop cost more);
// past it (a long run of many clients), a heap from then on.
constexpr std::size_t kSortedEventsMax = 64;

}  // namespace

// The heap is a 4-ary min-heap: half the depth of a binary one, and a node's children share a
// cache line or two, so a pop, which walks down once, touches fewer lines. Either way events run
// in (time, order) order.
void Simulation::push(const Event& event) {
  if (!heap_) {
    if (events_.size() < kSortedEventsMax) {
      // Latest first: it goes before the first event that is not later than it.
      const auto at = std::partition_point(events_.begin(), events_.end(),
                                           [&event](const Event& e) { return e > event; });
      events_.insert(at, event);
      return;
    }
    std::reverse(events_.begin(), events_.end());  // earliest first: a valid min-heap
    heap_ = true;
  }
  std::size_t i = events_.size();
  events_.push_back(event);
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (!(events_[parent] > event)) break;
    events_[i] = events_[parent];
    i = parent;
  }
  events_[i] = event;
}

Simulation::Event Simulation::pop() {
  if (!heap_) {
    const Event earliest = events_.back();
    events_.pop_back();
    return earliest;
  }
  const Event top = events_.front();
  const Event last = events_.back();
  events_.pop_back();
  const std::size_t n = events_.size();
  if (n == 0) return top;
  std::size_t i = 0;
  while (true) {
    const std::size_t first = 4 * i + 1;
    if (first >= n) break;
    std::size_t least = first;
    const std::size_t end = std::min(first + 4, n);
    for (std::size_t c = first + 1; c < end; ++c) {
      if (events_[least] > events_[c]) least = c;
    }
    if (!(last > events_[least])) break;
    events_[i] = events_[least];
    i = least;
  }
  events_[i] = last;
  return top;
}

Simulation::~Simulation() {
  // Whatever fibers are left end here: run() unwound those it ran, so these never started (their
  // bodies are released).
  unwind_fibers();
  events_.clear();
  if (!spare_gone && events_.capacity() > spare_events().capacity()) {
    events_.swap(spare_events());
  }
}

Simulation::FiberState& Simulation::state(FiberId fiber) {
  LOCKSIM_ASSERT(fiber >= 1 && fiber <= fibers_.size());
  return *fibers_[fiber - 1];
}

Simulation::FiberId Simulation::spawn(std::function<void()> body) {
  const FiberId id = next_fiber_++;
  auto state = std::make_unique<FiberState>();
  state->fiber = std::make_unique<Fiber>(std::move(body));
  const std::uint64_t generation = state->generation;
  fibers_.push_back(std::move(state));
  schedule_resume(id, now_, generation);
  return id;
}

bool Simulation::ended(FiberId fiber) const {
  return fiber < 1 || fiber > fibers_.size() || fibers_[fiber - 1]->ended;
}

std::size_t Simulation::fibers_alive() const {
  return static_cast<std::size_t>(
      std::count_if(fibers_.begin(), fibers_.end(), [](const auto& s) { return !s->ended; }));
}

void Simulation::join(FiberId fiber) {
  // While fibers are unwound, nothing runs that could end the other one: a join (in a thread
  // handle's destructor, most often) returns at once, and never throws FiberUnwind.
  if (ended(fiber) || unwinding_) return;
  LOCKSIM_ASSERT(current_ != 0 && current_ != fiber);
  state(fiber).joiners.push_back(current_);
  while (!ended(fiber)) {
    wait(kForever, /*may_throw=*/false);
    if (unwinding_) return;
  }
}

void Simulation::at(Nanos t, Action action) {
  if (unwinding_) return;  // the run is over: `action` goes now, with what it holds
  std::uint32_t slot = 0;
  if (free_actions_.empty()) {
    slot = static_cast<std::uint32_t>(actions_.size());
    actions_.push_back(std::move(action));
  } else {
    slot = free_actions_.back();
    free_actions_.pop_back();
    actions_[slot] = std::move(action);
  }
  push(Event{std::max(t, now_), rng_.next(), 0, 0, slot});
}

void Simulation::schedule_resume(FiberId fiber, Nanos t, std::uint64_t generation) {
  if (unwinding_) return;  // the run is over: nothing is scheduled any more
  LOCKSIM_ASSERT(fiber <= UINT32_MAX);
  push(Event{std::max(t, now_), rng_.next(), generation, static_cast<std::uint32_t>(fiber), 0});
}

bool Simulation::stale(const Event& event) const {
  if (event.fiber == 0) return false;
  const FiberState& s = *fibers_[event.fiber - 1];
  return s.ended || s.generation != event.generation;
}

void Simulation::resume(FiberId fiber) {
  FiberState& s = state(fiber);
  ++s.generation;  // every other resume scheduled for this wait is stale now
  current_ = fiber;
  s.fiber->resume();
  current_ = 0;
  if (!s.fiber->done()) return;
  s.ended = true;
  if (s.fiber->error() && !failure_) failure_ = s.fiber->error();
  s.fiber.reset();
  for (const FiberId joiner : std::exchange(s.joiners, {})) wake(joiner);
}

void Simulation::suspend_current(bool may_throw) {
  LOCKSIM_ASSERT(current_ != 0);
  state(current_).fiber->suspend(may_throw);
}

void Simulation::sleep_until(Nanos t) {
  LOCKSIM_ASSERT(current_ != 0);
  FiberState& s = state(current_);
  schedule_resume(current_, std::max(t, now_), s.generation);
  suspend_current(true);  // unwinding: throws FiberUnwind, or in a destructor returns at once
}

void Simulation::yield() { sleep_until(now_); }

bool Simulation::park(Nanos deadline) { return wait(deadline, /*may_throw=*/true); }

bool Simulation::wait(Nanos deadline, bool may_throw) {
  LOCKSIM_ASSERT(current_ != 0);
  FiberState& s = state(current_);
  s.parked = true;
  s.woken = false;
  if (deadline != kForever) schedule_resume(current_, deadline, s.generation);
  suspend_current(may_throw);
  s.parked = false;
  return s.woken;
}

void Simulation::wake(FiberId fiber, Nanos after) {
  if (fiber < 1 || fiber > fibers_.size()) return;
  FiberState& s = *fibers_[fiber - 1];
  if (s.ended || !s.parked || s.woken) return;
  s.woken = true;
  schedule_resume(fiber, now_ + std::max<Nanos>(after, 0), s.generation);
}

void Simulation::add_deadline(FiberId fiber, Nanos t) {
  if (fiber < 1 || fiber > fibers_.size()) return;
  FiberState& s = *fibers_[fiber - 1];
  if (s.ended || !s.parked) return;
  schedule_resume(fiber, t, s.generation);
}

namespace {

// The machine's clock and the stop request are looked at every this many events: a few
// nanoseconds an event, and a few hundred microseconds between two looks.
constexpr std::uint64_t kBoundsEveryEvents = 1024;

std::string describe_bound_ms(Nanos ns) {
  return std::to_string(ns / kNanosPerMilli) + " ms";
}

}  // namespace

void Simulation::check_bounds(const RunClock& wall, Nanos& stop_seen_ns) const {
  using Why = SimulationCutShort::Why;
  const auto cut = [this](Why why, const std::string& what) {
    throw SimulationCutShort(why, "the schedule " + what + " (after " +
                                      std::to_string(events_run_) + " scheduler events, at " +
                                      describe_bound_ms(now_) + " of virtual time)");
  };
  if (bounds_.max_events != 0 && events_run_ >= bounds_.max_events) {
    cut(Why::kEvents, "did not end within its bound of " + std::to_string(bounds_.max_events) +
                          " scheduler events");
  }
  const Nanos elapsed = wall.now_ns();
  if (bounds_.max_wall_ns != 0 && elapsed >= bounds_.max_wall_ns) {
    cut(Why::kWallTime, "did not end within its bound of " +
                            describe_bound_ms(bounds_.max_wall_ns) + " of the machine's time");
  }
  if (bounds_.stop == nullptr || !bounds_.stop->requested()) return;
  if (stop_seen_ns < 0) stop_seen_ns = elapsed;
  if (elapsed - stop_seen_ns >= bounds_.stop_grace_wall_ns) {
    cut(Why::kStopped, "was stopped: it did not end within " +
                           describe_bound_ms(bounds_.stop_grace_wall_ns) +
                           " of the stop request");
  }
}

void Simulation::run() {
  LOCKSIM_ASSERT(current_ == 0 && !unwinding_);
  // Whatever ends the run early (a bound, a stall, a fiber's or an action's exception) leaves
  // fibers suspended: they are unwound before it is thrown on, while everything their stacks
  // refer to (the caller's runtime, servers, topology) is still alive. Outside the catch block,
  // so that the fibers' own exceptions never nest inside the scheduler's.
  std::exception_ptr ended_early;
  try {
    run_events();
  } catch (...) {
    ended_early = std::current_exception();
  }
  if (!ended_early) return;
  unwind_fibers();
  std::rethrow_exception(ended_early);
}

void Simulation::unwind_fibers() {
  LOCKSIM_ASSERT(current_ == 0);
  unwinding_ = true;
  // Newest first: a fiber's stack holds what the fibers it started use (their thread handles
  // join them, so they end first), never the other way round. A destructor may start a fiber:
  // the scan begins again until every fiber has ended.
  bool any = true;
  while (any) {
    any = false;
    for (std::size_t i = fibers_.size(); i > 0; --i) {
      FiberState& s = *fibers_[i - 1];
      if (s.ended) continue;
      any = true;
      current_ = i;
      s.fiber->unwind();  // whatever it threw besides is dropped: the run has failed already
      current_ = 0;
      s.ended = true;
      s.fiber.reset();
      s.joiners.clear();
    }
  }
}

void Simulation::run_events() {
  const RunClock wall;  // for the bounds only: nothing simulated reads it
  Nanos stop_seen_ns = -1;
  while (!events_.empty()) {
    const Event event = pop();
    if (stale(event)) continue;  // a timer of a wait that a wake-up ended: time stays
    if (events_run_ % kBoundsEveryEvents == 0 ||
        (bounds_.max_events != 0 && events_run_ >= bounds_.max_events)) {
      check_bounds(wall, stop_seen_ns);
    }
    now_ = std::max(now_, event.time);
    ++events_run_;
    if (event.fiber != 0) {
      resume(event.fiber);
    } else {
      // Moved out first: the action may schedule others, which may reuse its slot.
      Action action = std::move(actions_[event.action]);  // leaves the slot empty
      free_actions_.push_back(event.action);
      action();
    }
    if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
  }
  std::string waiting;
  for (std::size_t i = 0; i < fibers_.size(); ++i) {
    if (!fibers_[i]->ended) waiting += (waiting.empty() ? "" : ", ") + std::to_string(i + 1);
  }
  if (!waiting.empty()) {
    throw SimulationStalled("the simulation stalled at " + std::to_string(now_) + " ns: fiber(s) " +
                            waiting +
                            " wait with no deadline and nothing is scheduled to wake them");
  }
}

bool VirtualClock::wait_until(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                              Nanos deadline_ns, const std::function<bool()>& done) const {
  // A timed wait, like a sleep, ends a little after its deadline (a timer's slack, then the
  // scheduler): drawn once, so threads polling at one interval drift apart as real ones do.
  if (deadline_ns < Simulation::kForever / 2) {
    deadline_ns += simulation_.draw_wake_latency();
  }
  while (!done()) {
    if (simulation_.now() >= deadline_ns) return false;
    park_waiter(cv, lock, deadline_ns);
    // Unwinding, in a destructor: nothing will change any more; the wait ends now.
    if (simulation_.unwinding()) return done();
  }
  return true;
}

void VirtualClock::park_waiter(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                               Nanos deadline_ns) const {
  const Simulation::FiberId me = simulation_.current();
  LOCKSIM_ASSERT(me != 0);  // only a fiber can wait on virtual time
  waiters_.push_back(Waiter{&cv, me});
  lock.unlock();
  try {
    simulation_.park(deadline_ns);
  } catch (const FiberUnwind&) {
    // Unwound: left as a condition variable's wait leaves, with the lock held again.
    lock.lock();
    std::erase_if(waiters_, [me](const Waiter& w) { return w.fiber == me; });
    throw;
  }
  lock.lock();
  // Timed out (or woken): no longer a waiter.
  std::erase_if(waiters_, [me](const Waiter& w) { return w.fiber == me; });
}

void VirtualClock::pause(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                         Nanos duration) const {
  // As wait_until(cv, lock, now + duration, done) with a done() false only before the first
  // wait: the latency drawn the same, at most one park, and whatever ends it ends the pause.
  Nanos deadline_ns = simulation_.now() + duration;
  if (deadline_ns < Simulation::kForever / 2) {
    deadline_ns += simulation_.draw_wake_latency();
  }
  if (simulation_.now() >= deadline_ns) return;
  park_waiter(cv, lock, deadline_ns);
}

void VirtualClock::wait(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                        const std::function<bool()>& done) const {
  wait_until(cv, lock, Simulation::kForever, done);
}

void VirtualClock::sleep_for(Nanos duration) const {
  // Ends a drawn wake-up latency late, as a real sleep does (timer slack, then the scheduler).
  simulation_.sleep_until(simulation_.now() + std::max<Nanos>(duration, 0) +
                          simulation_.draw_wake_latency());
}

std::int64_t VirtualClock::unix_seconds() const {
  return 1'700'000'000 + simulation_.now() / 1'000'000'000;
}

void VirtualClock::notify_all(std::condition_variable& cv) const {
  // Nobody waits on `cv` itself: a fiber waits through this clock (parked, a waiter below), and
  // nothing else may block the simulation's thread. So the condition variable is not notified
  // (a pthread_cond_broadcast at every change of a run's shared state, for nobody).
  // Woken in the order they began to wait (wake only schedules an event: waiters_ stays as is).
  for (const Waiter& w : waiters_) {
    if (w.cv == &cv) simulation_.wake(w.fiber, simulation_.draw_wake_latency());
  }
  std::erase_if(waiters_, [&](const Waiter& w) { return w.cv == &cv; });
}

namespace {

class SimStarted final : public Started {
 public:
  SimStarted(Simulation& simulation, Simulation::FiberId fiber)
      : simulation_(simulation), fiber_(fiber) {}
  ~SimStarted() override { join(); }
  void join() override { simulation_.join(fiber_); }

 private:
  Simulation& simulation_;
  Simulation::FiberId fiber_;
};

}  // namespace

std::unique_ptr<Started> SimThreads::start(std::function<void()> body) {
  return std::make_unique<SimStarted>(simulation_, simulation_.spawn(std::move(body)));
}

}  // namespace locksim
