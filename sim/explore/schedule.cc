// schedule.cc: one schedule of explore: its document, parsed for the simulator, run under a seed
// and judged.
#include "sim/explore/schedule.h"

#include <utility>

#include "sim/checker/check.h"
#include "sim/core/error.h"
#include "sim/explore/simulated_run.h"
#include "sim/report/run_record.h"
#include "sim/scenario/loader.h"

namespace locksim {
namespace {

using Json = nlohmann::json;

}  // namespace

namespace {
// run_runnable: `scenario`, which the simulator can run (simulator_refusal said nothing), run
// under `seed` and judged.
ScheduleRun run_runnable(const Scenario& scenario, const LockVariant& variant, std::uint64_t seed,
                         bool words, const StopSignal* interrupt);
}  // namespace

Scenario parse_schedule(const Json& document, const LockVariant& variant) {
  // Run, never written: the document itself is what explore writes (a shrunk scenario, a replay).
  return parse_scenario(document, document.value("name", "explore"), {std::string(variant.name())},
                        Resolved::kSkip);
}

Json exercise_document(const ExploreTarget& target, std::uint64_t seed) {
  if (target.scenario) return *target.scenario;
  return draw_exercise(*target.variant, target.exercise, seed);
}

PreparedSchedule prepare_schedule(const Json& document, const LockVariant& variant) {
  PreparedSchedule prepared;
  try {
    prepared.scenario = parse_schedule(document, variant);
  } catch (const InputError& e) {
    prepared.error = e.what();
    return prepared;
  }
  if (const std::string why = simulator_refusal(prepared.scenario, variant); !why.empty()) {
    prepared.error = "the simulator cannot run it: " + why;
  }
  return prepared;
}

ScheduleRun run_schedule(const Json& document, const LockVariant& variant, std::uint64_t seed,
                         bool words) {
  return run_schedule(prepare_schedule(document, variant), variant, seed, words);
}

ScheduleRun run_schedule(const PreparedSchedule& prepared, const LockVariant& variant,
                         std::uint64_t seed, bool words, const StopSignal* interrupt) {
  if (!prepared.error.empty()) {
    ScheduleRun run;
    run.error = prepared.error;
    return run;
  }
  // prepare_schedule already asked the simulator whether it can run it.
  return run_runnable(prepared.scenario, variant, seed, words, interrupt);
}

ScheduleRun run_schedule(const Scenario& scenario, const LockVariant& variant, std::uint64_t seed,
                         bool words, const StopSignal* interrupt) {
  if (const std::string why = simulator_refusal(scenario, variant); !why.empty()) {
    ScheduleRun run;
    run.error = "the simulator cannot run it: " + why;
    return run;
  }
  return run_runnable(scenario, variant, seed, words, interrupt);
}

namespace {

ScheduleRun run_runnable(const Scenario& scenario, const LockVariant& variant, std::uint64_t seed,
                         bool words, const StopSignal* interrupt) {
  ScheduleRun run;
  StopSignal stop;
  SimulatedRun simulated =
      run_simulated(scenario, variant, seed, stop,
                    "locksim:explore:" + std::string(variant.name()) + ":", interrupt);
  if (!simulated.cut_short.empty()) {
    run.error = simulated.cut_short;
    run.cut_short = true;
    return run;
  }
  if (!simulated.outcome.harness_error.empty()) {
    run.error = simulated.outcome.harness_error;
    return run;
  }
  CheckOptions options = check_options(scenario);
  options.words = words;
  const CheckResult result = check_history(simulated.outcome.history, options);
  run.signatures = signatures(result);
  run.verdict = std::string(to_string(result.verdict));
  for (const Finding& f : result.findings) {
    if (words && (verdict_of(f.kind) != Verdict::kOk ||
                  run.signatures.count(std::string(to_string(f.kind))))) {
      run.words.push_back(f.words);
    }
  }
  if (words) {
    for (const Finding& f : result.findings) {
      const std::string signature =
          std::string(to_string(f.kind)) + (f.cause.empty() ? "" : " (" + f.cause + ")");
      if (run.signatures.count(signature) > 0) run.words_of.emplace(signature, f.words);
    }
  }
  run.coverage = schedule_coverage(scenario, simulated.outcome.history, variant);
  run.history = std::move(simulated.outcome.history);
  return run;
}

}  // namespace

}  // namespace locksim
