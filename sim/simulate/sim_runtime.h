// sim_runtime.h: SimRuntime, the simulator's Runtime (sim/world/runtime.h): a VirtualClock,
// fibers for threads, and SimConnections to the model servers it was given; and the timing
// profiles a seed draws. run_simulated (sim/explore/simulated_run.h) runs one scenario on it.
//
// It runs no clients and knows no scenario: whoever runs a run in it (run_simulated) wires the
// driver to it. What it cannot do (client processes, an event loop over real sockets) its traits()
// say.
//
//   Simulation simulation(seed);
//   SimRuntime runtime(simulation, timing_of(seed).link);
//   Endpoint endpoint = runtime.add_server(model_server);
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/world/runtime.h"
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
  // traits: no client processes and no event loop (its connections are no sockets); its servers
  // fail only as the run makes them, and go with it.
  RuntimeTraits traits() const override {
    return RuntimeTraits{.client_processes = false,
                         .event_loop = false,
                         .servers_fail_alone = false,
                         .servers_outlive_run = false};
  }

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

}  // namespace locksim
