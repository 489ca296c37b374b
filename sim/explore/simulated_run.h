// simulated_run.h: run_simulated, one scenario on the simulator: a SimRuntime (sim/simulate)
// around fresh model servers, the driver (sim/driver) run in it as it is, and what the run cost.
// It sits above both, so that neither the driver nor the simulator includes the other.
//
// A scenario runs on the simulator exactly as on the machine (the same driver, client, nemesis
// and checker), on one thread, on virtual time, against an in-memory Redis (sim/model). One seed
// is one schedule: the same seed gives the same history, byte for byte; another seed draws other
// latencies and another order of what happens at the same instant. What the simulator cannot run
// yet is refused by simulator_refusal, in words.
//
//   if (std::string why = simulator_refusal(scenario, variant); !why.empty()) { skip(why); }
//   SimulatedRun run = run_simulated(scenario, variant, seed, stop, "locksim:run:variant:");
//   CheckResult verdict = check_history(run.outcome.history, options);
#pragma once

#include <cstdint>
#include <string>

#include "sim/driver/driver.h"
#include "sim/simulate/sim_runtime.h"
#include "sim/simulate/simulation.h"

namespace locksim {

// simulator_refusal: why the simulator cannot run `variant` on `scenario`, or "".
std::string simulator_refusal(const Scenario& scenario, const LockVariant& variant);

// SimulatedRun: a run on the simulator and what it cost.
struct SimulatedRun {
  RunOutcome outcome;
  std::uint64_t events = 0;  // scheduler events
  Nanos virtual_ns = 0;      // virtual time at the end
  // cut_short: why the run did not end by itself, naming its seed: it passed its bounds
  // (simulated_bounds), or stalled (SimulationStalled); "" if it ended. Such a run has no history:
  // outcome.harness_error says the same, or, when a stop request cut it short,
  // outcome.interrupted is set instead.
  std::string cut_short;
};

// kSimulatedEventsMin: every simulated run may take this many scheduler events (the largest run
// of the catalogue takes under 50,000), or kSimulatedEventsPerRecorded for each event it is
// estimated to record (estimated_events, sim/driver/driver.h), if that is more.
inline constexpr std::uint64_t kSimulatedEventsMin = 20'000'000;
inline constexpr std::uint64_t kSimulatedEventsPerRecorded = 1'000;
// kSimulatedWallMaxNs: and at most a minute of the machine's time (a schedule of explore takes
// well under a millisecond).
inline constexpr Nanos kSimulatedWallMaxNs = ms_to_ns(60'000);
// simulated_bounds: the bounds above for a run of `scenario` with `variant`; `interrupt`: a stop
// request there cuts the run short after the simulation's grace (SimulationBounds).
SimulationBounds simulated_bounds(const Scenario& scenario, const LockVariant& variant,
                                  const StopSignal* interrupt);

// wall_clock_phase_ms: where in its second the simulated servers' wall clock (TIME) stands at
// virtual time 0, 0 to 999 ms, drawn from the seed on a stream of its own (it moves no other
// draw): every server of the run reads 1,700,000,000,000 ms plus this plus the virtual time, so a
// lock that rounds TIME to whole seconds meets a second's boundary anywhere in a schedule, as on
// a real server, not only a whole second after it began.
std::int64_t wall_clock_phase_ms(std::uint64_t seed);

// run_simulated: `scenario` with `variant` on a fresh model server, schedule drawn from `seed`
// (the plan's seed too, as on the machine), with its timing profile (timing_of), within
// simulated_bounds. The driver sees `stop`; the simulation is cut short by a stop request on
// `interrupt` (default: `stop`) if the run does not end soon after it. Requires
// simulator_refusal(...) == "".
SimulatedRun run_simulated(const Scenario& scenario, const LockVariant& variant, std::uint64_t seed,
                           StopSignal& stop, const std::string& key_prefix,
                           const StopSignal* interrupt = nullptr);
// run_simulated: the same within `bounds` (for tests of what a run cut short gives).
SimulatedRun run_simulated(const Scenario& scenario, const LockVariant& variant, std::uint64_t seed,
                           StopSignal& stop, const std::string& key_prefix,
                           const SimulationBounds& bounds);

}  // namespace locksim
