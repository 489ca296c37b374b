// sim_runtime.h: SimRuntime, the simulator's Runtime (sim/driver/runtime.h): a VirtualClock,
// fibers for threads, and SimConnections to the model servers it was given; and run_simulated,
// which runs one scenario on it.
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
#include <memory>
#include <string>
#include <vector>

#include "sim/driver/driver.h"
#include "sim/driver/runtime.h"
#include "sim/model/model_server.h"
#include "sim/simulate/sim_connection.h"
#include "sim/simulate/sim_link.h"
#include "sim/simulate/simulation.h"

namespace locksim {

class SimRuntime final : public Runtime {
 public:
  explicit SimRuntime(Simulation& simulation, SimLinkLatency latency = {});
  // What a paused server still holds goes with the runtime (each held command keeps its host's
  // state, which holds it, alive: a cycle that would outlive the run).
  ~SimRuntime() override;

  // add_server: `server` is reachable at the returned endpoint (host "model", port 1, 2, ...).
  Endpoint add_server(ModelServer& server);
  // host: the host state (down, paused) of the server at `endpoint` (from add_server).
  std::shared_ptr<SimServerHost> host(const Endpoint& endpoint) const;

  const Clock& clock() const override { return clock_; }
  Threads& threads() override { return threads_; }
  // connect: a SimConnection to the server at `endpoint`; refused if there is none.
  std::unique_ptr<Connection> connect(const Endpoint& endpoint,
                                      const ConnectionOptions& options) override;
  // open_link: a SimLink to the server at `upstream` (EnvironmentError if there is none).
  std::unique_ptr<Link> open_link(const Endpoint& upstream) override;
  bool simulated() const override { return true; }

 private:
  struct LinkEntry {
    std::size_t server;
    std::shared_ptr<SimLinkState> state;
  };
  Simulation& simulation_;
  SimLinkLatency latency_;
  VirtualClock clock_;
  SimThreads threads_;
  std::vector<ModelServer*> servers_;
  std::vector<std::shared_ptr<SimServerHost>> hosts_;  // by server
  std::vector<LinkEntry> links_;  // by link port - 1
};

// simulator_refusal: why the simulator cannot run `variant` on `scenario`, or "".
std::string simulator_refusal(const Scenario& scenario, const LockVariant& variant);

// SimTiming: how long things take in a simulated run: every link's one-way latency and how late
// a woken thread runs. A run's seed picks one of kTimingProfiles (seed % 4), so four consecutive
// seeds see a loopback, a fast, a slow and a loaded machine: a finding that shows under all four
// does not hang on one machine's timing, and is the kind a real server reproduces.
struct SimTiming {
  const char* name = "loopback";
  SimLinkLatency link;
  Nanos wake_min_ns = 5'000;
  Nanos wake_max_ns = 50'000;
  // One wake-up in stall_one_in (0: none) runs up to stall_max_ns late: a loaded machine's
  // descheduled thread (a real run of a shrunk scenario missed a finding the simulator showed
  // under every seed: the waiter's poll came more than 8 ms late).
  std::int64_t stall_one_in = 0;
  Nanos stall_max_ns = 0;
};
inline constexpr int kTimingProfiles = 4;
// timing_of: the timing profile of `seed`, its latencies scaled by a factor in [0.5, 2) drawn
// from the seed (machines of one kind differ in speed, and a race between two pollers turns on
// their period).
SimTiming timing_of(std::uint64_t seed);
// describe: "loaded machine (hops 20-500 µs, wake-ups 50-1000 µs, 1 in 50 up to 15000 µs)".
std::string describe(const SimTiming& timing);

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
