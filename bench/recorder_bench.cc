// recorder_bench: the cost of recording one event, alone and with every client thread recording
// at once (it must not contend). DESIGN budget: <= 100 ns per event.
//   ./build/bench/recorder_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <benchmark/benchmark.h>

#include "sim/history/recorder.h"

namespace locksim {
namespace {

constexpr std::size_t kClients = 8;

// One shared recorder for all benchmark threads: each thread writes only its own log.
void BM_RecordEvent(benchmark::State& state) {
  // Built once, thread-safely (function-local static); each benchmark thread owns one log.
  static RunClock clock;
  static Recorder recorder = [] {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < kClients; ++i) names.push_back("c" + std::to_string(i));
    return Recorder(clock, names);
  }();
  ClientLog& log = recorder.log(static_cast<std::size_t>(state.thread_index()) % kClients);
  const std::string token = "0123456789abcdef0123456789abcdef";
  for (auto _ : state) {
    // A typical event: stamped, keyed, with a token (interned) and a typed fact.
    Event& event = log.record(EventType::kOk, Op::kAcquire, "lock");
    event.token = log.intern(token);
    event.acquire().attempts = 1;
    if (log.size() >= (1 << 20)) {
      state.PauseTiming();
      log.clear();
      state.ResumeTiming();
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RecordEvent)->Threads(1)->Threads(2)->Threads(8)->UseRealTime();

// The end-of-run merge, per event.
void BM_MergeLogs(benchmark::State& state) {
  const auto per_client = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();
    RunClock clock;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < kClients; ++i) names.push_back("c" + std::to_string(i));
    Recorder recorder(clock, names);
    for (std::size_t c = 0; c < kClients; ++c) {
      for (std::size_t i = 0; i < per_client; ++i) {
        recorder.log(c).record(EventType::kOk, Op::kEnter, "lock");
      }
    }
    state.ResumeTiming();
    benchmark::DoNotOptimize(std::move(recorder).merge());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(per_client * kClients));
}
BENCHMARK(BM_MergeLogs)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace locksim

BENCHMARK_MAIN();
