// executor_bench: what a lock cycle costs when the client is a `locksim worker` process behind
// the worker protocol, against the same client as a thread. One client runs 200 uncontended
// lua_owner cycles (acquire, enter, work 0 ms, exit, release, all recorded) through run_scenario
// against a private redis-server; the time per cycle is the run's wall time over its cycles, so
// it includes starting the worker. Prints `processes / threads` per cycle at the end.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <string>

#include "bench/ratio_reporter.h"
#include "sim/driver/driver.h"
#include "sim/lock/registry.h"
#include "sim/redis/server.h"
#include "sim/scenario/loader.h"

namespace locksim {
namespace {

constexpr int kCycles = 200;
std::unique_ptr<RedisServer> g_server;

Scenario one_client(bool processes) {
  Scenario scenario = parse_scenario(
      nlohmann::json::parse(R"({"name": "bench", "source": {"doc": "none", "claim": "cost"},
        "variants": ["lua_owner"], "lock": {"ttl_ms": 1000},
        "workload": {"clients": 1, "cycles": )" + std::to_string(kCycles) + R"(, "work_ms": 0},
        "expect": {"lua_owner": "ok"}})"),
      "bench.json", variant_names());
  scenario.executor = processes ? Executor::kProcesses : Executor::kThreads;
  return scenario;
}

void BM_Cycles(benchmark::State& state, bool processes) {
  const Scenario scenario = one_client(processes);
  int run = 0;
  for (auto _ : state) {
    StopSignal stop;
    const RunRequest request{scenario, *find_variant("lua_owner"), 1, g_server->endpoint(),
                             "bench:" + std::to_string(++run) + ":", stop, {}, true, {},
                             {LOCKSIM_BINARY, "worker"}};
    const RunOutcome outcome = run_scenario(request);
    if (!outcome.harness_error.empty()) {
      state.SkipWithError(outcome.harness_error.c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * kCycles);
}

// print_ratios: processes against threads per lock cycle, for each run and aggregate.
void print_ratios(const RatioReporter::Times& times) {
  for (const auto& [name, time] : times) {
    if (!name.starts_with("cycles/processes")) continue;
    const std::string threads = "cycles/threads" + name.substr(16);
    const auto found = times.find(threads);
    if (found == times.end() || found->second <= 0) continue;
    // Times are in the benchmarks' unit, milliseconds per run of kCycles.
    std::printf("%-44s %.2f x per lock cycle (%.0f us vs %.0f us)\n",
                (name + " / threads").c_str(), time / found->second, time * 1e3 / kCycles,
                found->second * 1e3 / kCycles);
  }
}

}  // namespace
}  // namespace locksim

int main(int argc, char** argv) {
  using namespace locksim;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  try {
    g_server = std::make_unique<RedisServer>(RedisServer::start(RedisServerOptions{}));
  } catch (const std::exception& error) {
    std::fprintf(stderr, "executor_bench: %s\n", error.what());
    return 3;
  }
  // Real time: the cycles wait for the server and the worker, which CPU time would not count.
  benchmark::RegisterBenchmark("cycles/threads", BM_Cycles, false)->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("cycles/processes", BM_Cycles, true)->UseRealTime()->Unit(benchmark::kMillisecond);
  RatioReporter reporter(print_ratios);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  g_server.reset();
  return 0;
}
