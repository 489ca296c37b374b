// runners.h (internal to driver/): the per-thread bodies of the two scenario forms.
#pragma once

#include "sim/host/client.h"
#include "sim/run/run_context.h"

namespace locksim::driver_internal {

using host::CallFaults;
using host::DriverClient;

// run_scripted_client: executes this client's steps of a scripted scenario, in order, each after
// every earlier step has started and its wait_for conditions hold.
void run_scripted_client(RunContext& run, DriverClient& client);
// run_scripted_server_faults: the scripted scenario's server faults, in order, on the nemesis's
// own thread, under the same ordering rule as the clients' steps.
void run_scripted_server_faults(RunContext& run);

}  // namespace locksim::driver_internal
