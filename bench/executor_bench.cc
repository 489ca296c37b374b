// executor_bench: what a lock cycle costs when the client is a `locksim worker` process, against
// the same client as a thread. One client runs uncontended lua_owner cycles (acquire, enter, work
// 0 ms, exit, release, all recorded) through run_scenario against a private redis-server, in runs
// of 200 and of 1000 cycles. A run's wall time is a start (connecting; for a process, starting
// the worker and handing its history back) plus a cost per cycle; the cost per cycle is the slope
// between the two lengths, (T(1000) - T(200)) / 800. Prints, per executor, the cost per cycle and
// the start, and `processes / threads` per cycle.
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

constexpr int kShort = 200;
constexpr int kLong = 1000;
std::unique_ptr<RedisServer> g_server;

Scenario one_client(bool processes, int cycles) {
  Scenario scenario = parse_scenario(
      nlohmann::json::parse(R"({"name": "bench", "source": {"doc": "none", "claim": "cost"},
        "variants": ["lua_owner"], "lock": {"ttl_ms": 1000},
        "workload": {"clients": 1, "cycles": )" +
                            std::to_string(cycles) + R"(, "work_ms": 0},
        "expect": {"lua_owner": "ok"}})"),
      "bench.json", variant_names());
  scenario.executor = processes ? Executor::kProcesses : Executor::kThreads;
  return scenario;
}

void BM_Cycles(benchmark::State& state, bool processes) {
  const auto cycles = static_cast<int>(state.range(0));
  const Scenario scenario = one_client(processes, cycles);
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
  state.SetItemsProcessed(state.iterations() * cycles);
}

// print_ratios: per executor, the cost of a cycle (the slope between the two run lengths) and of
// the start; then processes against threads per cycle. For each aggregate (or the single runs).
void print_ratios(const RatioReporter::Times& times) {
  for (const char* suffix : {"", "_mean", "_median"}) {
    // Times are in the benchmarks' unit, milliseconds per run.
    const auto time = [&](const char* executor, int cycles) {
      const auto found = times.find("cycles/" + std::string(executor) + "/" +
                                    std::to_string(cycles) + "/real_time" + suffix);
      return found == times.end() ? -1.0 : found->second;
    };
    double per_cycle[2];
    bool complete = true;
    const char* executors[2] = {"threads", "processes"};
    for (int i = 0; i < 2; ++i) {
      const double short_run = time(executors[i], kShort);
      const double long_run = time(executors[i], kLong);
      complete = complete && short_run > 0 && long_run > 0;
      per_cycle[i] = (long_run - short_run) * 1e3 / (kLong - kShort);  // microseconds
      if (!complete) break;
      std::printf("%-10s%-8s %.0f us per cycle, %.1f ms to start\n", executors[i],
                  suffix[0] ? suffix + 1 : "run", per_cycle[i],
                  short_run - per_cycle[i] * kShort / 1e3);
    }
    if (!complete || per_cycle[0] <= 0) continue;
    std::printf("processes / threads %-8s %.2f x per lock cycle\n", suffix[0] ? suffix + 1 : "run",
                per_cycle[1] / per_cycle[0]);
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
  for (const bool processes : {false, true}) {
    benchmark::RegisterBenchmark(processes ? "cycles/processes" : "cycles/threads", BM_Cycles,
                                 processes)
        ->Arg(kShort)
        ->Arg(kLong)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  RatioReporter reporter(print_ratios);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  g_server.reset();
  return 0;
}
