// request.h: what a run is asked to do (RunRequest) and what it gave (RunOutcome), the terms
// between the driver's run_scenario (sim/driver) and whoever calls it (the commands, explore's
// run_simulated), and that the hosts (sim/host) and RunContext (run_context.h) read.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/stop.h"
#include "sim/history/event.h"
#include "sim/lock/variant.h"
#include "sim/redis/endpoint.h"
#include "sim/scenario/scenario.h"
#include "sim/world/runtime.h"

namespace locksim {

class Topology;

// kHarnessClient: the reserved client name of the harness's own events.
inline constexpr const char* kHarnessClient = "harness";

struct RunRequest {
  const Scenario& scenario;
  const LockVariant& variant;
  std::uint64_t seed = 0;
  Endpoint endpoint;
  std::string key_prefix;  // "locksim:<run-id>:<variant>:"; every key the run touches starts so
  StopSignal& stop;        // Ctrl-C: clients stop at their next step or cycle
  // progress: called about every 200 ms from the driver's thread with the fraction done (0..1).
  std::function<void(double)> progress;
  // private_server: locksim started this server, so the driver may end a Lua script that keeps it
  // busy (SCRIPT KILL); on a server it did not start it only reports it.
  bool private_server = false;
  // admin_endpoint: where the driver watches the server from (PING, SCRIPT KILL); empty: endpoint.
  std::optional<Endpoint> admin_endpoint;
  // worker_command: how to start a client process ({"/path/to/locksim", "worker"}), for
  // scenarios whose clients run as processes.
  std::vector<std::string> worker_command = {};
  // worker_stderr_dir: where each client process's stderr goes (<dir>/<client>.stderr, kept when
  // not empty); "": inherited.
  std::string worker_stderr_dir = {};
  // topology: the run's own servers (the scenario has a "topology"); endpoint is its primary.
  // The nemesis's server faults act on it, and a multi-server variant gets a connection to each.
  Topology* topology = nullptr;
  // runtime: where the run's clock, threads and connections come from; null: the machine
  // (real_runtime()). The simulator passes its own (sim/simulate), and runs run_scenario on one
  // of its fibers.
  Runtime* runtime = nullptr;
};

struct RunOutcome {
  History history;
  std::vector<std::string> notes;  // what the driver did that a reader should know (skips, waits)
  bool interrupted = false;        // stopped by the StopSignal
  bool timed_out = false;          // stopped by time_limit_ms
  bool server_lost = false;        // the server stopped answering during the run (exit code 3)
  // server_died: a process of the topology died without the scenario killing it (a
  // `server_died` event; exit code 3). The run went on when the lock is meant to survive it (a
  // multi-server variant on independent servers that lost a node), else it was stopped.
  bool server_died = false;
  // harness_error: non-empty: the run could not be started, or a client process broke the
  // worker protocol (exit code 3; no verdict).
  std::string harness_error;
};

}  // namespace locksim
