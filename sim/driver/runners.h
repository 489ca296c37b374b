// runners.h (internal to driver/): the per-thread bodies of the two scenario forms.
#pragma once

#include "sim/driver/client.h"
#include "sim/driver/run_context.h"

namespace locksim::driver_internal {

// run_scripted_client: executes this client's steps of a scripted scenario, in order, each after
// every earlier step has started and its wait_for conditions hold.
void run_scripted_client(RunContext& run, DriverClient& client);
// run_scripted_server_faults: the scripted scenario's server faults, in order, on the nemesis's
// own thread, under the same ordering rule as the clients' steps.
void run_scripted_server_faults(RunContext& run);

// run_workload_client: loops acquire -> work -> release -> rest for the workload's cycles.
void run_workload_client(RunContext& run, DriverClient& client);

}  // namespace locksim::driver_internal
