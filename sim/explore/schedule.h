// schedule.h: one schedule of `locksim explore`: a scenario document run on the simulator under
// a seed and judged by the checker.
//
// A schedule is a seed: with drawn exercises (exercise.h) the seed draws the scenario itself and
// its interleaving; with a given scenario it draws the interleaving (latencies, the order of what
// happens at one instant) and the workload's draws.
//
//   ExploreTarget target{.variant = find_variant("set_nx_ex")};
//   ScheduleRun run = run_schedule(exercise_document(target, seed), *target.variant, seed);
//   for (const std::string& signature : run.signatures) { ... }
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/core/stop.h"
#include "sim/explore/coverage.h"
#include "sim/explore/exercise.h"
#include "sim/history/event.h"
#include "sim/lock/variant.h"
#include "sim/scenario/scenario.h"

namespace locksim {

struct ExploreTarget {
  const LockVariant* variant = nullptr;
  // scenario: a scenario document to explore (its steps or workload as written); none: drawn
  // exercises.
  std::optional<nlohmann::json> scenario;
  ExerciseOptions exercise;
};

// exercise_document: the scenario document of schedule `seed`.
nlohmann::json exercise_document(const ExploreTarget& target, std::uint64_t seed);

// parse_schedule: `document` as a Scenario for `variant` (the only variant it names), to run and
// never to write: the document itself is what explore writes (a shrunk scenario, a replay).
// Throws InputError if it is not a valid scenario.
Scenario parse_schedule(const nlohmann::json& document, const LockVariant& variant);

// ScheduleRun: one schedule, run and judged.
struct ScheduleRun {
  std::set<std::string> signatures;
  std::string verdict;             // the verdict word
  std::vector<std::string> words;  // the findings in words
  // words_of: each signature's first finding in words (with words only).
  std::map<std::string, std::string> words_of;
  History history;
  Coverage coverage;  // what the schedule covered (coverage.h); empty if it did not run
  std::string error;  // the document is not a valid scenario, or the run could not run
  // cut_short: `error` is a harness error: the run did not end by itself (it passed its bounds, or
  // stalled: simulated_bounds, sim/simulate/sim_runtime.h), naming its seed.
  bool cut_short = false;
};
// PreparedSchedule: a document parsed for the simulator once, to run under many seeds.
struct PreparedSchedule {
  Scenario scenario;
  std::string error;  // the document is not a valid scenario, or the simulator cannot run it
};
PreparedSchedule prepare_schedule(const nlohmann::json& document, const LockVariant& variant);
// `words` false: the findings' words are left out (CheckOptions::words), for a search that reads
// only the signatures. `interrupt`: a stop request there cuts short a run that does not end soon
// after it (the run itself always runs to its end otherwise).
ScheduleRun run_schedule(const PreparedSchedule& prepared, const LockVariant& variant,
                         std::uint64_t seed, bool words = true,
                         const StopSignal* interrupt = nullptr);
// run_schedule: a scenario drawn in memory (an Exercise's, exercise.h) on the simulator with
// `seed`, judged; refused as prepare_schedule refuses a document the simulator cannot run.
ScheduleRun run_schedule(const Scenario& scenario, const LockVariant& variant, std::uint64_t seed,
                         bool words = true, const StopSignal* interrupt = nullptr);
// run_schedule: `document` on the simulator with `seed`, judged.
ScheduleRun run_schedule(const nlohmann::json& document, const LockVariant& variant,
                         std::uint64_t seed, bool words = true);

}  // namespace locksim
