#include "sim/run/conditions.h"

#include "sim/topology/topology.h"

namespace locksim {
namespace {

// is_key_condition: a condition that asks the servers (outside the run's lock).
bool is_key_condition(const Condition& condition) {
  return condition.kind == Condition::Kind::kKeyAbsent ||
         condition.kind == Condition::Kind::kKeyPresent ||
         condition.kind == Condition::Kind::kPrimary;
}

// key_condition_holds: EXISTS on the observer connection; false if Redis did not answer.
bool key_condition_holds(RunContext& run, Connection& observer, const Condition& condition) {
  if (condition.kind == Condition::Kind::kPrimary) {
    const Topology* topology = run.request().topology;
    return topology != nullptr &&
           topology->serves_lock(topology->spec().server_index(condition.argument));
  }
  if (observer.broken()) observer.reconnect();
  // Where the lock of that key is kept: a library may prefix it ("mutex:<key>").
  const std::string key = run.request().variant.stored_key(run.full_key(condition.argument));
  const RedisResult result = observer.command({"EXISTS", key});
  if (!result.ok()) return false;
  const bool exists = result.reply.integer > 0;
  return condition.kind == Condition::Kind::kKeyPresent ? exists : !exists;
}

// state_condition_holds: requires run.mutex to be held. `renewals_before`: each client's renewal
// count when the wait began ("renewed" counts the renewals since).
bool state_condition_holds(RunContext& run, const Condition& condition,
                           const std::vector<int>& renewals_before) {
  switch (condition.kind) {
    case Condition::Kind::kInside:
      return run.inside.at(run.client_index(condition.argument));
    case Condition::Kind::kOutside:
      return !run.inside.at(run.client_index(condition.argument));
    case Condition::Kind::kCrashed:
      return run.crashed.at(run.client_index(condition.argument));
    case Condition::Kind::kDone: {
      const std::vector<Step>& steps = run.scenario().steps;
      for (std::size_t i = 0; i < steps.size(); ++i) {
        if (steps[i].id == condition.argument && run.step_finished[i]) return true;
      }
      return false;
    }
    case Condition::Kind::kOpen: {
      const std::vector<Step>& steps = run.scenario().steps;
      for (std::size_t i = 0; i < steps.size(); ++i) {
        if (steps[i].id == condition.argument && run.step_window_open[i]) return true;
      }
      return false;
    }
    case Condition::Kind::kRenewed: {
      const std::size_t c = run.client_index(condition.argument);
      return run.renewals.at(c) - renewals_before.at(c) >= condition.times;
    }
    case Condition::Kind::kKeyAbsent:
    case Condition::Kind::kKeyPresent:
    case Condition::Kind::kPrimary:
      return true;  // checked outside the lock
  }
  return false;
}

}  // namespace

bool wait_for_conditions(RunContext& run, Connection& observer,
                         const std::vector<Condition>& conditions, Nanos max_ns) {
  bool any_key_condition = false;
  for (const Condition& c : conditions) any_key_condition |= is_key_condition(c);
  const Nanos deadline = run.clock().now_ns() + max_ns;
  std::vector<int> renewals_before;
  {
    std::lock_guard<std::mutex> lock(run.mutex);
    renewals_before = run.renewals;
  }
  while (true) {
    bool keys_hold = true;
    for (const Condition& c : conditions) {
      if (is_key_condition(c) && !key_condition_holds(run, observer, c)) keys_hold = false;
    }
    std::unique_lock<std::mutex> lock(run.mutex);
    bool all_hold = keys_hold;
    for (const Condition& c : conditions) {
      if (!is_key_condition(c) && !state_condition_holds(run, c, renewals_before)) {
        all_hold = false;
      }
    }
    if (all_hold) return true;
    if (run.should_stop() || run.clock().now_ns() >= deadline) return false;
    run.clock().base().pause(run.changed, lock, ms_to_ns(any_key_condition ? 2 : 20));
  }
}

std::string describe_conditions(const std::vector<Condition>& conditions) {
  static constexpr const char* kNames[] = {"inside",      "outside", "key_absent",
                                           "key_present", "done",    "crashed",
                                           "renewed",     "open",    "primary"};
  std::string text;
  for (const Condition& c : conditions) {
    if (!text.empty()) text += " and ";
    text += std::string(kNames[static_cast<int>(c.kind)]) + " " + c.argument;
    if (c.kind == Condition::Kind::kRenewed) text += " " + std::to_string(c.times) + " times";
  }
  return text;
}

}  // namespace locksim
