// explore_bench: schedules per second of `locksim explore` on the simulator: one schedule (a
// 3-client, 2-cycle lua_owner scenario with one crash, run through the driver, its fibers, the
// model and the checker), its coverage read from its history, and whole explorations with 1 and 2
// workers, with their ratio printed at the end (near 2 on 2 idle cores means the workers share
// nothing).
//
//   build/bench/explore_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdio>

#include "bench/ratio_reporter.h"
#include "sim/explore/coverage.h"
#include "sim/explore/exercise.h"
#include "sim/explore/schedule.h"
#include "sim/explore/search.h"
#include "sim/lock/registry.h"

namespace locksim {
namespace {

using Json = nlohmann::json;

// three_clients_two_cycles: A, B and C each acquire, work 10 ms and release twice, A crashing in
// its second critical section (one fault).
Json three_clients_two_cycles() {
  Json steps = Json::array();
  for (int cycle = 0; cycle < 2; ++cycle) {
    for (const char* client : {"A", "B", "C"}) {
      steps.push_back({{"client", client}, {"do", "acquire"}});
      steps.push_back({{"client", client}, {"do", "work"}, {"work_ms", 10}});
      const bool crash = cycle == 1 && std::string(client) == "A";
      steps.push_back({{"client", client}, {"do", crash ? "crash" : "release"}});
    }
  }
  return {{"name", "bench"},
          {"description", "three clients, two cycles, one crash"},
          {"source", {{"doc", "none"}, {"claim", "bench"}}},
          {"variants", {"lua_owner"}},
          {"lock",
           {{"ttl_ms", 100},
            {"acquire_timeout_ms", 1000},
            {"wait", {{"strategy", "poll"}, {"interval_ms", 5}}}}},
          {"clients", {"A", "B", "C"}},
          {"steps", steps},
          {"expect", {{"lua_owner", "any"}}}};
}

// one_schedule: schedules of lua_owner on `input` (a PreparedSchedule or the document), one per
// iteration, each with the next seed.
template <typename Input>
void one_schedule(benchmark::State& state, const Input& input) {
  const LockVariant& lock = *find_variant("lua_owner");
  std::uint64_t seed = 0;
  for (auto _ : state) {
    const ScheduleRun run = run_schedule(input, lock, seed++, false);  // as explore's search
    if (!run.error.empty()) state.SkipWithError(run.error.c_str());
    benchmark::DoNotOptimize(run.signatures);
  }
  state.SetItemsProcessed(state.iterations());
}

// BM_OneSchedule: the scenario parsed once, as explore does for a given scenario and the
// shrinker for each candidate; BM_OneScheduleParsed adds the parse, as for a drawn exercise.
void BM_OneSchedule(benchmark::State& state) {
  one_schedule(state, prepare_schedule(three_clients_two_cycles(), *find_variant("lua_owner")));
}
BENCHMARK(BM_OneSchedule)->Unit(benchmark::kMicrosecond);

void BM_OneScheduleParsed(benchmark::State& state) {
  one_schedule(state, three_clients_two_cycles());
}
BENCHMARK(BM_OneScheduleParsed)->Unit(benchmark::kMicrosecond);

// BM_DrawExercise: drawing one exercise of lua_owner in memory (as explore draws each seed), and
// BM_DrawnSchedule the whole of a drawn schedule as explore runs it: drawn, run and judged (no JSON
// written or parsed); BM_DrawnScheduleAsJson the same schedule written as a document and parsed
// again before it runs (what a drawn schedule cost before it was drawn in memory).
void BM_DrawExercise(benchmark::State& state) {
  const LockVariant& lock = *find_variant("lua_owner");
  ExerciseDrawer drawer(lock, ExerciseOptions{});
  std::uint64_t seed = 0;
  for (auto _ : state) {
    const Exercise& exercise = drawer.draw(seed++);
    benchmark::DoNotOptimize(exercise.scenario.steps.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DrawExercise)->Unit(benchmark::kMicrosecond);

void BM_DrawnSchedule(benchmark::State& state) {
  const LockVariant& lock = *find_variant("lua_owner");
  ExerciseDrawer drawer(lock, ExerciseOptions{});
  std::uint64_t seed = 0;
  for (auto _ : state) {
    const ScheduleRun run = run_schedule(drawer.draw(seed).scenario, lock, seed, false);
    ++seed;
    if (!run.error.empty()) state.SkipWithError(run.error.c_str());
    benchmark::DoNotOptimize(run.signatures);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DrawnSchedule)->Unit(benchmark::kMicrosecond);

void BM_DrawnScheduleAsJson(benchmark::State& state) {
  const LockVariant& lock = *find_variant("lua_owner");
  ExerciseDrawer drawer(lock, ExerciseOptions{});
  std::uint64_t seed = 0;
  for (auto _ : state) {
    const Json document = drawer.document(drawer.draw(seed));
    const ScheduleRun run = run_schedule(prepare_schedule(document, lock), lock, seed, false);
    ++seed;
    benchmark::DoNotOptimize(run.signatures);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DrawnScheduleAsJson)->Unit(benchmark::kMicrosecond);

// BM_Coverage: a schedule's coverage read from its history (as run_schedule does for every
// schedule): the bench schedule's, 3 clients, 2 cycles, one crash.
void BM_Coverage(benchmark::State& state) {
  const LockVariant& lock = *find_variant("lua_owner");
  const PreparedSchedule prepared = prepare_schedule(three_clients_two_cycles(), lock);
  const ScheduleRun run = run_schedule(prepared, lock, 1, false);
  if (!run.error.empty()) state.SkipWithError(run.error.c_str());
  for (auto _ : state) {
    const Coverage covered = schedule_coverage(prepared.scenario, run.history, lock);
    benchmark::DoNotOptimize(covered);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["events"] = static_cast<double>(run.history.events.size());
}
BENCHMARK(BM_Coverage)->Unit(benchmark::kMicrosecond);

constexpr std::uint64_t kSchedules = 200;

void BM_Explore(benchmark::State& state) {
  ExploreTarget target;
  target.variant = find_variant("lua_owner");
  target.scenario = three_clients_two_cycles();
  for (auto _ : state) {
    StopSignal stop;
    const ExploreSummary summary =
        explore(target, ExploreBudget{0, kSchedules, 0, static_cast<int>(state.range(0))}, stop);
    benchmark::DoNotOptimize(summary.schedules);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kSchedules));
}
BENCHMARK(BM_Explore)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void print_ratios(const RatioReporter::Times& times) {
  const auto get = [&](const std::string& name) {
    const auto median = times.find(name + "_median");
    if (median != times.end()) return median->second;
    const auto plain = times.find(name);
    return plain != times.end() ? plain->second : 0.0;
  };
  const double one = get("BM_Explore/1/real_time");
  const double two = get("BM_Explore/2/real_time");
  const double schedule_us = get("BM_OneSchedule");
  if (schedule_us > 0) {
    std::printf("one schedule: %.0f us, %.0f schedules/s on one core\n", schedule_us,
                1e6 / schedule_us);
  }
  const double drawn_us = get("BM_DrawnSchedule");
  const double as_json_us = get("BM_DrawnScheduleAsJson");
  if (drawn_us > 0 && schedule_us > 0 && as_json_us > 0) {
    std::printf(
        "drawn schedule (lua_owner, in memory): %.1f us, %.0f schedules/s on one core; %.2fx the "
        "bench schedule's rate, %.2fx the same drawn as JSON and parsed (%.1f us)\n",
        drawn_us, 1e6 / drawn_us, schedule_us / drawn_us, as_json_us / drawn_us, as_json_us);
  }
  if (one > 0 && two > 0) {
    std::printf("explore, %llu schedules: 1 worker %.1f ms, 2 workers %.1f ms: speed-up %.2fx\n",
                static_cast<unsigned long long>(kSchedules), one, two, one / two);
  }
}

}  // namespace
}  // namespace locksim

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  locksim::RatioReporter reporter(locksim::print_ratios);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  return 0;
}
