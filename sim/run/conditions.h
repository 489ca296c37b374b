// conditions.h: waiting on the observable conditions of scripted steps.
#pragma once

#include <string>
#include <vector>

#include "sim/run/run_context.h"
#include "sim/redis/connection.h"
#include "sim/scenario/scenario.h"

namespace locksim {

// wait_for_conditions: true once every condition holds; false after max_ns or when the run
// stops. Client-state changes are notified; key conditions are polled every 2 ms through
// `observer` (a connection whose commands are never recorded).
bool wait_for_conditions(RunContext& run, Connection& observer,
                         const std::vector<Condition>& conditions, Nanos max_ns);

// describe_conditions: "inside B and key_absent lock", for notes.
std::string describe_conditions(const std::vector<Condition>& conditions);

}  // namespace locksim
