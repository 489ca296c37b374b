// driver.h: run_scenario, which turns a scenario into running clients against a real Redis.
//
// A run's threads come from its Runtime's Threads (sim/core/threads.h: real threads, or the
// simulator's fibers): the driver starts one per client (or one for an event loop) and one for
// the nemesis's server faults, and a client's renewal (Watchdog) and a scripted step's link
// fault (the thread that forwards a delayed command or closes a window) start theirs the same
// way. Real threads and processes are started elsewhere too, outside the Runtime: a worker
// process per client and the thread that reads it (process_transport.cc), a LinkProxy's loop
// thread (sim/proxy), the topology's redis-server processes and its keeper thread (sim/topology,
// sim/redis).
//
// The driver compiles the scenario and seed into a Plan (sim/plan), then executes it on the
// scenario's executor: each client gets its own thread, which runs the client inside locksim (its
// own Connection) or drives a worker process (clients_run_as "processes"), or one thread runs
// every client of a workload on an event loop ("event_loop"); each has its own ClientLog; every
// call to the lock variant is wrapped and recorded here (the variant never records). Faults are
// injected by the run's Nemesis (sim/nemesis), through a LinkProxy per client (sim/proxy; a
// SimLink in the simulator) when a step or the workload faults a client's link. Scripted
// scenarios run their steps in order, coordinated on observable conditions; workloads loop
// acquire -> work -> release with seeded timings.
// A run is bounded by the scenario's time_limit_ms and stops early on a StopSignal (Ctrl-C) or when
// the server stops answering; every key it created under its prefix is deleted at the end. The
// harness's own observations are part of the history, under the reserved client "harness": a
// `stop` event when the run was cut short (time limit, Ctrl-C), a `server_lost` event when the
// server stopped answering, and a `server_died` event when a process of the run's topology died
// without the scenario killing it, so the checkers (and `locksim check` later) see them. While
// the run goes on, the driver PINGs the server and looks at the topology's processes about every
// 200 ms; on the private server it also ends a Lua script that keeps the server busy (SCRIPT
// KILL), e.g. a user lock whose script loops. An interruption (Ctrl-C, SIGTERM) wins over the
// failures it causes: a client process or a server fault that fails because of it makes the run
// interrupted, not a harness failure.
//
//   RunOutcome out = run_scenario(RunRequest{scenario, variant, seed, endpoint, prefix, stop});
//   CheckResult verdict = check_history(out.history, options);
#pragma once

#include <string>

#include "sim/lock/variant.h"
#include "sim/run/request.h"
#include "sim/scenario/scenario.h"

namespace locksim {

RunOutcome run_scenario(const RunRequest& request);

// clients_run_as_refusal: why `variant` cannot run `scenario` on the scenario's executor
// ("clients_run_as": "event_loop" needs a one-command variant that renews, if at all, in one
// command), in words for
// a message about the clients_run_as field; "" if it can. For validating input before a run.
std::string clients_run_as_refusal(const Scenario& scenario, const LockVariant& variant);

// estimated_events: an upper estimate of the events one run of `scenario` with `variant` records
// (workloads: every cycle of every client with its renewals and resource accesses; scripted: a
// few per step), for refusing before a run what would not fit in memory.
double estimated_events(const Scenario& scenario, const LockVariant& variant);

}  // namespace locksim
