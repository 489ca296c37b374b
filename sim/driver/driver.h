// driver.h: run_scenario, which turns a scenario into running clients against a real Redis.
//
// The driver is the only place that starts threads. Each client gets its own thread, its own
// Connection and its own ClientLog; every call to the lock variant is wrapped and recorded here
// (the variant never records). Scripted scenarios run their steps in order, coordinated on
// observable conditions; workloads loop acquire -> work -> release with seeded timings.
// A run is bounded by the scenario's time_limit_ms and stops early on a StopSignal (Ctrl-C);
// every key it created under its prefix is deleted at the end.
//
//   RunOutcome out = run_scenario(RunRequest{scenario, variant, seed, endpoint, prefix, stop});
//   CheckResult verdict = check_history(out.history, options);
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/core/stop.h"
#include "sim/history/event.h"
#include "sim/lock/variant.h"
#include "sim/redis/endpoint.h"
#include "sim/scenario/scenario.h"

namespace locksim {

struct RunRequest {
  const Scenario& scenario;
  const LockVariant& variant;
  std::uint64_t seed = 0;
  Endpoint endpoint;
  std::string key_prefix;  // "locksim:<run-id>:<variant>:"; every key the run touches starts so
  StopSignal& stop;        // Ctrl-C: clients stop at their next step or cycle
  // progress: called about every 200 ms from the driver's thread with the fraction done (0..1).
  std::function<void(double)> progress;
};

struct RunOutcome {
  History history;
  std::vector<std::string> notes;  // what the driver did that a reader should know (skips, waits)
  bool interrupted = false;        // stopped by the StopSignal
  bool timed_out = false;          // stopped by time_limit_ms
  std::string harness_error;       // non-empty: the run could not be carried out (exit code 3)
};

RunOutcome run_scenario(const RunRequest& request);

}  // namespace locksim
