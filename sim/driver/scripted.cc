// Scripted scenarios: steps run on their clients' threads in the listed order, coordinated on
// observable conditions (client state and keys on the server) rather than on sleeps, so that an
// outcome does not depend on how fast the machine is.
#include <chrono>
#include <string>

#include "sim/driver/runners.h"

namespace locksim::driver_internal {
namespace {

using std::chrono::milliseconds;

// key_condition_holds: EXISTS on the observer connection; false if Redis did not answer.
bool key_condition_holds(RunContext& run, DriverClient& client, const Condition& condition) {
  const RedisResult result =
      client.observer().command({"EXISTS", run.full_key(condition.argument)});
  if (!result.ok()) return false;
  const bool exists = result.reply.integer > 0;
  return condition.kind == Condition::Kind::kKeyPresent ? exists : !exists;
}

bool is_key_condition(const Condition& condition) {
  return condition.kind == Condition::Kind::kKeyAbsent ||
         condition.kind == Condition::Kind::kKeyPresent;
}

// state_condition_holds: requires run.mutex to be held.
bool state_condition_holds(RunContext& run, const Condition& condition) {
  const Scenario& scenario = run.scenario();
  auto client_index = [&](const std::string& name) {
    for (std::size_t i = 0; i < scenario.clients.size(); ++i) {
      if (scenario.clients[i] == name) return i;
    }
    return scenario.clients.size();
  };
  switch (condition.kind) {
    case Condition::Kind::kInside: return run.inside.at(client_index(condition.argument));
    case Condition::Kind::kOutside: return !run.inside.at(client_index(condition.argument));
    case Condition::Kind::kCrashed: return run.crashed.at(client_index(condition.argument));
    case Condition::Kind::kDone: return run.steps_done.count(condition.argument) > 0;
    case Condition::Kind::kKeyAbsent:
    case Condition::Kind::kKeyPresent: return true;  // checked outside the lock
  }
  return false;
}

// wait_for_conditions: true once every condition holds; false after max_ns or when the run stops.
// State changes are notified; key conditions are polled every 2 ms.
bool wait_for_conditions(RunContext& run, DriverClient& client,
                         const std::vector<Condition>& conditions, Nanos max_ns) {
  bool any_key_condition = false;
  for (const Condition& c : conditions) any_key_condition |= is_key_condition(c);
  const Nanos deadline = run.clock().now_ns() + max_ns;
  while (true) {
    bool keys_hold = true;
    for (const Condition& c : conditions) {
      if (is_key_condition(c) && !key_condition_holds(run, client, c)) keys_hold = false;
    }
    std::unique_lock<std::mutex> lock(run.mutex);
    bool all_hold = keys_hold;
    for (const Condition& c : conditions) {
      if (!is_key_condition(c) && !state_condition_holds(run, c)) all_hold = false;
    }
    if (all_hold) return true;
    if (run.should_stop() || run.clock().now_ns() >= deadline) return false;
    run.changed.wait_for(lock, any_key_condition ? milliseconds(2) : milliseconds(20));
  }
}

std::string describe_conditions(const std::vector<Condition>& conditions) {
  static constexpr const char* kNames[] = {"inside",      "outside", "key_absent",
                                           "key_present", "done",    "crashed"};
  std::string text;
  for (const Condition& c : conditions) {
    if (!text.empty()) text += " and ";
    text += std::string(kNames[static_cast<int>(c.kind)]) + " " + c.argument;
  }
  return text;
}

// wait_for_turn: blocks until every step before `index` has started; false if the run stops.
bool wait_for_turn(RunContext& run, std::size_t index) {
  std::unique_lock<std::mutex> lock(run.mutex);
  while (run.steps_started < index) {
    if (run.should_stop()) return false;
    run.changed.wait_for(lock, milliseconds(20));
  }
  return true;
}

void mark_started(RunContext& run, std::size_t index) {
  {
    std::lock_guard<std::mutex> lock(run.mutex);
    run.step_started[index] = true;
    while (run.steps_started < run.step_started.size() && run.step_started[run.steps_started]) {
      ++run.steps_started;
    }
  }
  run.changed.notify_all();
}

void mark_done(RunContext& run, const Step& step) {
  {
    std::lock_guard<std::mutex> lock(run.mutex);
    run.steps_done.insert(step.id);
  }
  run.changed.notify_all();
}

void execute(RunContext& run, DriverClient& client, const Step& step) {
  const Scenario& scenario = run.scenario();
  const std::string who = client.name() + " (" + step.id + ")";
  if (client.crashed()) {
    run.note(who + ": skipped, " + client.name() + " has crashed");
    return;
  }
  switch (step.action) {
    case Step::Action::kAcquire: {
      if (client.holding()) {
        run.note(who + ": skipped, " + client.name() + " already holds the lock");
        return;
      }
      const std::int64_t timeout_ms =
          step.acquire_timeout_ms.value_or(scenario.lock.acquire_timeout_ms);
      const AcquireStatus status = client.acquire(scenario.lock.key, timeout_ms);
      if (status == AcquireStatus::kFailed) {
        run.note(who + ": could not acquire " + scenario.lock.key +
                 (timeout_ms == 0 ? std::string(": it was held at its single try")
                                  : " within " + std::to_string(timeout_ms) + " ms"));
      } else if (status == AcquireStatus::kIndeterminate) {
        run.note(who + ": acquire outcome unknown (the reply was lost)");
      }
      return;
    }
    case Step::Action::kRelease:
      if (!client.holding()) {
        run.note(who + ": release skipped, " + client.name() + " does not hold the lock");
        return;
      }
      client.release();
      return;
    case Step::Action::kWork:
      if (!client.holding()) {
        run.note(who + ": work skipped, " + client.name() + " does not hold the lock");
        return;
      }
      if (step.until.empty()) {
        client.record_work(step.work_ms);
        run.pause(ms_to_ns(step.work_ms));
      } else {
        client.record_work(step.max_ms);
        if (!wait_for_conditions(run, client, step.until, ms_to_ns(step.max_ms)) &&
            !run.should_stop()) {
          run.note(who + ": worked the full " + std::to_string(step.max_ms) + " ms; never saw " +
                   describe_conditions(step.until));
        }
      }
      return;
    case Step::Action::kCrash:
      client.crash();
      return;
    case Step::Action::kSleep:
      run.pause(ms_to_ns(step.work_ms));
      return;
  }
}

}  // namespace

void run_scripted_client(RunContext& run, DriverClient& client) {
  const std::vector<Step>& steps = run.scenario().steps;
  for (std::size_t index = 0; index < steps.size(); ++index) {
    const Step& step = steps[index];
    if (step.client != client.name()) continue;
    if (!wait_for_turn(run, index)) {
      run.stopped_early = true;
      return;
    }
    if (!step.wait_for.empty() &&
        !wait_for_conditions(run, client, step.wait_for, ms_to_ns(step.wait_max_ms))) {
      if (run.should_stop()) {
        run.stopped_early = true;
        return;
      }
      run.note(client.name() + " (" + step.id + "): started after " +
               std::to_string(step.wait_max_ms) + " ms without " +
               describe_conditions(step.wait_for));
    }
    mark_started(run, index);
    execute(run, client, step);
    mark_done(run, step);
    if (run.should_stop()) {
      run.stopped_early = true;
      return;
    }
  }
}

}  // namespace locksim::driver_internal
