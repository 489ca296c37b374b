#include "sim/simulate/simulation.h"

#include <algorithm>
#include <utility>

#include "sim/core/assert.h"
#include "sim/simulate/fiber.h"

namespace locksim {

using simulate_internal::Fiber;

namespace {}  // namespace

struct Simulation::FiberState {
  std::unique_ptr<Fiber> fiber;  // freed when the body ends
  bool ended = false;
  bool parked = false;
  bool woken = false;
  // generation: counts the fiber's waits; a resume scheduled for an earlier wait is stale.
  std::uint64_t generation = 0;
  std::vector<FiberId> joiners;
};

Simulation::Simulation(std::uint64_t seed) : rng_(seed) {}

Simulation::~Simulation() = default;

Simulation::FiberState& Simulation::state(FiberId fiber) {
  const auto it = fibers_.find(fiber);
  LOCKSIM_ASSERT(it != fibers_.end());
  return *it->second;
}

Simulation::FiberId Simulation::spawn(std::function<void()> body) {
  const FiberId id = next_fiber_++;
  auto state = std::make_unique<FiberState>();
  state->fiber = std::make_unique<Fiber>(std::move(body));
  const std::uint64_t generation = state->generation;
  fibers_.emplace(id, std::move(state));
  schedule_resume(id, now_, generation);
  return id;
}

bool Simulation::ended(FiberId fiber) const {
  const auto it = fibers_.find(fiber);
  return it == fibers_.end() || it->second->ended;
}

std::size_t Simulation::fibers_alive() const {
  return static_cast<std::size_t>(std::count_if(
      fibers_.begin(), fibers_.end(), [](const auto& entry) { return !entry.second->ended; }));
}

void Simulation::join(FiberId fiber) {
  if (ended(fiber)) return;
  LOCKSIM_ASSERT(current_ != 0 && current_ != fiber);
  state(fiber).joiners.push_back(current_);
  while (!ended(fiber)) park();
}

void Simulation::at(Nanos t, std::function<void()> action) {
  events_.push(Event{std::max(t, now_), rng_.next(), sequence_++, std::move(action)});
}

void Simulation::schedule_resume(FiberId fiber, Nanos t, std::uint64_t generation) {
  events_.push(Event{std::max(t, now_), rng_.next(), sequence_++, {}, fiber, generation});
}

bool Simulation::stale(const Event& event) const {
  if (event.fiber == 0) return false;
  const FiberState& s = *fibers_.at(event.fiber);
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

void Simulation::suspend_current() {
  LOCKSIM_ASSERT(current_ != 0);
  state(current_).fiber->suspend();
}

void Simulation::sleep_until(Nanos t) {
  LOCKSIM_ASSERT(current_ != 0);
  FiberState& s = state(current_);
  schedule_resume(current_, std::max(t, now_), s.generation);
  suspend_current();
}

void Simulation::yield() { sleep_until(now_); }

bool Simulation::park(Nanos deadline) {
  LOCKSIM_ASSERT(current_ != 0);
  FiberState& s = state(current_);
  s.parked = true;
  s.woken = false;
  if (deadline != kForever) schedule_resume(current_, deadline, s.generation);
  suspend_current();
  s.parked = false;
  return s.woken;
}

void Simulation::wake(FiberId fiber, Nanos after) {
  const auto it = fibers_.find(fiber);
  if (it == fibers_.end()) return;
  FiberState& s = *it->second;
  if (s.ended || !s.parked || s.woken) return;
  s.woken = true;
  schedule_resume(fiber, now_ + std::max<Nanos>(after, 0), s.generation);
}

void Simulation::run() {
  LOCKSIM_ASSERT(current_ == 0);
  while (!events_.empty()) {
    // The queue's top is const; its action is moved out before the pop (the order is unchanged).
    Event event = std::move(const_cast<Event&>(events_.top()));
    events_.pop();
    if (stale(event)) continue;  // a timer of a wait that a wake-up ended: time stays
    now_ = std::max(now_, event.time);
    ++events_run_;
    if (event.fiber != 0) {
      resume(event.fiber);
    } else {
      event.action();
    }
    if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
  }
  std::string waiting;
  for (const auto& [id, s] : fibers_) {
    if (!s->ended) waiting += (waiting.empty() ? "" : ", ") + std::to_string(id);
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
    const Simulation::FiberId me = simulation_.current();
    LOCKSIM_ASSERT(me != 0);  // only a fiber can wait on virtual time
    std::vector<Simulation::FiberId>& list = waiters_[&cv];
    list.push_back(me);
    lock.unlock();
    simulation_.park(deadline_ns);
    lock.lock();
    // Timed out (or woken): no longer a waiter of this one.
    if (const auto it = waiters_.find(&cv); it != waiters_.end()) {
      std::erase(it->second, me);
      if (it->second.empty()) waiters_.erase(it);
    }
  }
  return true;
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
  cv.notify_all();
  const auto it = waiters_.find(&cv);
  if (it == waiters_.end()) return;
  const std::vector<Simulation::FiberId> woken = std::move(it->second);
  waiters_.erase(it);
  for (const Simulation::FiberId fiber : woken) {
    simulation_.wake(fiber, simulation_.draw_wake_latency());
  }
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
