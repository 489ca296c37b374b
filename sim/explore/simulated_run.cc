#include "sim/explore/simulated_run.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>

#include "sim/core/assert.h"
#include "sim/core/error.h"
#include "sim/core/random.h"
#include "sim/core/small_blocks.h"
#include "sim/scenario/loader.h"
#include "sim/simulate/sim_topology.h"

namespace locksim {
namespace {

// kScheduleStream: the schedule's random stream (latencies, ties), forked from the run's seed so
// that it shifts none of the plan's draws.
constexpr std::uint64_t kScheduleStream = 0x7363686564;  // "sched"
constexpr std::uint64_t kWallClockStream = 0x77616c6c;   // "wall"

}  // namespace

std::int64_t wall_clock_phase_ms(std::uint64_t seed) {
  return static_cast<std::int64_t>(Rng(seed).fork(kWallClockStream).next() % 1000);
}

std::string simulator_refusal(const Scenario& scenario, const LockVariant& variant) {
  if (variant.name().rfind("lib:", 0) == 0) {
    return std::string(variant.name()) +
           " is a library: it runs only as its adapter's processes, on a real server";
  }
  if (scenario.executor != Executor::kThreads) {
    // The simulator runs them as threads (its fibers), if the scenario can run so.
    try {
      Scenario as_threads = scenario;
      run_clients_as(as_threads, Executor::kThreads);
    } catch (const InputError& e) {
      return std::string("its clients cannot run as the simulator's fibers (threads): ") + e.what();
    }
  }
  if (scenario.topology) {
    if (const std::string why = SimTopology::refusal(*scenario.topology); !why.empty()) return why;
  }
  return "";
}

SimulationBounds simulated_bounds(const Scenario& scenario, const LockVariant& variant,
                                  const StopSignal* interrupt) {
  SimulationBounds bounds;
  const double scaled =
      estimated_events(scenario, variant) * static_cast<double>(kSimulatedEventsPerRecorded);
  bounds.max_events = scaled > static_cast<double>(kSimulatedEventsMin)
                          ? static_cast<std::uint64_t>(std::min(scaled, 1e18))
                          : kSimulatedEventsMin;
  bounds.max_wall_ns = kSimulatedWallMaxNs;
  bounds.stop = interrupt;
  return bounds;
}

SimulatedRun run_simulated(const Scenario& scenario, const LockVariant& variant, std::uint64_t seed,
                           StopSignal& stop, const std::string& key_prefix,
                           const StopSignal* interrupt) {
  return run_simulated(scenario, variant, seed, stop, key_prefix,
                       simulated_bounds(scenario, variant, interrupt ? interrupt : &stop));
}

SimulatedRun run_simulated(const Scenario& scenario, const LockVariant& variant, std::uint64_t seed,
                           StopSignal& stop, const std::string& key_prefix,
                           const SimulationBounds& bounds) {
  LOCKSIM_ASSERT(simulator_refusal(scenario, variant).empty());
  // A schedule allocates and frees a few hundred small blocks, most at its end: this thread keeps
  // them for its next schedule (sim/core/small_blocks.h).
  keep_small_blocks();
  // Client processes and an event loop run as threads here: every thread is a fiber, a pause
  // freezes the client (renewal included) as SIGSTOP does, a crash closes its connections.
  std::optional<Scenario> as_threads;
  if (scenario.executor != Executor::kThreads) {
    as_threads = scenario;
    run_clients_as(*as_threads, Executor::kThreads);
  }
  const Scenario& simulated = as_threads ? *as_threads : scenario;
  ModelOptions server_options;
  server_options.unix_epoch_base_ms += wall_clock_phase_ms(seed);
  ModelServer server(server_options);
  Simulation simulation(Rng(seed).fork(kScheduleStream).next());
  const SimTiming timing = timing_of(seed);
  simulation.set_wake_latency(timing.wake_min_ns, timing.wake_max_ns);
  simulation.set_wake_stalls(timing.stall_one_in, timing.stall_max_ns);
  SimRuntime runtime(simulation, timing.link);
  // A topology's servers, or the one server.
  std::optional<SimTopology> topology;
  if (simulated.topology) {
    topology.emplace(*simulated.topology, simulation, runtime, key_prefix + simulated.lock.key,
                     server_options);
  }
  const Endpoint endpoint = topology ? topology->primary_endpoint() : runtime.add_server(server);
  const RunRequest request{simulated,
                           variant,
                           seed,
                           endpoint,
                           key_prefix,
                           stop,
                           {},
                           /*private_server=*/true,
                           {},
                           {},
                           {},
                           topology ? &*topology : nullptr,
                           &runtime};
  SimulatedRun run;
  simulation.spawn([&] {
    if (topology) topology->start();
    run.outcome = run_scenario(request);
    if (topology) topology->stop();
  });
  simulation.set_bounds(bounds);
  try {
    simulation.run();
  } catch (const SimulationCutShort& e) {
    run.cut_short = "the simulated run of seed " + std::to_string(seed) + " was cut short: " +
                    e.what();
    run.outcome = RunOutcome{};  // whatever the fibers left is no history
    if (e.why == SimulationCutShort::Why::kStopped) {
      run.outcome.interrupted = true;
      run.outcome.notes.push_back(run.cut_short);
    } else {
      run.outcome.harness_error = run.cut_short;
    }
  } catch (const SimulationStalled& e) {
    run.cut_short = "the simulated run of seed " + std::to_string(seed) + " stalled: " + e.what();
    run.outcome = RunOutcome{};
    run.outcome.harness_error = run.cut_short;
  }
  if (as_threads) {
    run.outcome.notes.insert(
        run.outcome.notes.begin(),
        std::string("its clients ran as threads (the simulator's fibers), not as ") +
            (scenario.executor == Executor::kProcesses ? "processes" : "an event loop"));
  }
  run.outcome.notes.push_back("simulated timing (seed " + std::to_string(seed) +
                              "): " + describe(timing));
  run.events = simulation.events_run();
  run.virtual_ns = simulation.now();
  if (run.outcome.harness_error.empty()) {
    // A command or Lua library the model lacks answered "ERR locksim model: ..." (docs/model.md):
    // the run says nothing about the lock, so it is no run at all, never a finding of the lock.
    // A server notes such a gap even when a script caught the error (redis.pcall, pcall) and
    // its reply carries no marker: the run diverged from Redis all the same.
    std::string gap = server.first_gap();
    for (std::size_t i = 0; topology && gap.empty() && i < topology->spec().servers.size(); ++i) {
      gap = topology->model(i).first_gap();
    }
    const History& history = run.outcome.history;
    for (std::size_t i = 0; gap.empty() && i < history.events.size(); ++i) {
      const Event& event = history.events[i];
      if (event.message == 0) continue;
      const std::string_view message = history.str(event.message);
      const std::size_t at = message.find(kModelGap);
      if (at == std::string_view::npos) continue;
      std::string_view words = message.substr(at + kModelGap.size());
      words = words.substr(0, std::min(words.find(" script: "), words.find('\n')));
      while (!words.empty() && words.front() == ' ') words.remove_prefix(1);
      gap = words.empty() ? std::string_view("(unnamed)") : words;
    }
    if (!gap.empty()) {
      run.outcome.harness_error = "the simulator's model of Redis lacks what this lock uses (" +
                                  gap +
                                  "): it runs on a real redis-server only (locksim run, without "
                                  "--backend sim)";
    }
  }
  return run;
}

}  // namespace locksim
