// explorer.h: explore, many schedules of one lock on the simulator, each judged by the checker;
// shrink, a failing schedule made minimal; confirm, the minimal one run on a real redis-server.
//
// A schedule is a seed: with drawn exercises (exercise.h) the seed draws the scenario itself and
// its interleaving; with a given scenario it draws the interleaving (latencies, the order of what
// happens at one instant) and the workload's draws. Seeds are independent, so workers (-j) and
// shards (--seeds A..B on other machines) split them freely: what is found, and the first seed
// that shows it, does not depend on how they were split.
//
//   ExploreTarget target{.variant = find_variant("set_nx_ex")};
//   ExploreSummary s = explore(target, ExploreBudget{.first_seed = 0, .schedules = 5000}, stop);
//   for (auto& [signature, found] : s.findings) { ... found.first_seed ... }
//   ShrinkResult minimal = shrink(exercise_document(target, seed), *target.variant, signature,
//   seed); Confirmation c = confirm(minimal.document, *target.variant, 5, stop);
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/core/stop.h"
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

// ScheduleRun: one schedule, run and judged.
struct ScheduleRun {
  std::set<std::string> signatures;
  std::string verdict;             // the verdict word
  std::vector<std::string> words;  // the findings in words
  History history;
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
// run_schedule: `document` on the simulator with `seed`, judged.
ScheduleRun run_schedule(const nlohmann::json& document, const LockVariant& variant,
                         std::uint64_t seed, bool words = true);

struct ExploreBudget {
  std::uint64_t first_seed = 0;
  std::uint64_t schedules = 1000;  // at most this many seeds, first_seed onwards
  double seconds = 0;              // > 0: stop after this long too (wall time)
  int jobs = 1;
};

struct ExploreFinding {
  std::uint64_t schedules = 0;  // schedules that showed it
  std::uint64_t first_seed = 0;
};
struct ExploreSummary {
  std::uint64_t schedules = 0;  // run
  std::uint64_t last_seed = 0;  // the highest seed run (seeds first_seed..last_seed were all run)
  double seconds = 0;
  std::map<std::string, ExploreFinding> findings;  // by signature
  std::map<std::string, std::uint64_t> exercised;  // fault -> schedules that had it
  std::uint64_t with_no_fault = 0;
  // unknown: schedules whose verdict was unknown (an indeterminate call could hide a violation):
  // judged, but never counted as ok; the least seed of them.
  std::uint64_t unknown = 0;
  std::uint64_t unknown_first_seed = 0;
  std::uint64_t could_not_run = 0;  // schedules that ran nothing to judge (a model gap): no verdict
  struct Error {
    std::uint64_t seed = 0;
    std::string why;
  };
  std::vector<Error> errors;  // the first few of them
  // harness_errors: schedules cut short (ScheduleRun::cut_short): never judged, never ok; the
  // first few, with why.
  std::uint64_t harness_errors = 0;
  std::vector<Error> harness_error_seeds;
  bool interrupted = false;
};
// explore: runs seeds first_seed, first_seed + 1, ... until the budget is spent or `stop`;
// `progress` (may be empty) is called about every 200 ms with the schedules run so far.
ExploreSummary explore(const ExploreTarget& target, const ExploreBudget& budget, StopSignal& stop,
                       const std::function<void(std::uint64_t)>& progress = {});

struct ShrinkResult {
  nlohmann::json document;  // the minimal scenario, expecting what its run shows
  std::uint64_t seed = 0;   // the schedule shrunk (its seeds: seed..seed + seeds per candidate)
  int schedules_shrunk = 1;  // shrink_robustly: how many schedules it shrank to choose this one
  std::size_t steps_before = 0;
  std::size_t steps_after = 0;
  int clients_after = 0;
  int candidates_run = 0;
  std::vector<std::uint64_t> seeds;  // the seeds that show the finding on the minimal one
  int required_seeds = 1;            // how many of its seeds a candidate had to show it under
  // The minimal scenario run under kFreshSeeds seeds it was never chosen or shrunk under
  // (fresh_first_seed onwards, every timing profile alike): how often it shows the finding there
  // is the honest measure of how much it hangs on a race, as the seeds it was shrunk under were
  // picked because they show it.
  std::uint64_t fresh_first_seed = 0;
  int fresh_runs = 0;
  int fresh_shown = 0;
  // fresh_signatures: every signature the fresh runs showed, with how many showed it: what the
  // simulator says of the minimal scenario, to compare with a real server's runs (Confirmation).
  std::map<std::string, int> fresh_signatures;
  // sampled_signatures: every signature shown by the fresh runs or by kSampledSeeds more seeds
  // after them (sample_signatures): a timing a real machine hits now and then shows here too.
  std::map<std::string, int> sampled_signatures;
};
inline constexpr int kSampledSeeds = 240;
// sample_signatures: runs `result.document` under kSampledSeeds seeds after its fresh ones and
// fills result.sampled_signatures (the fresh runs' signatures included).
void sample_signatures(ShrinkResult& result, const LockVariant& variant);
inline constexpr int kSeedsPerCandidate = 8;  // two of each timing profile
inline constexpr int kFreshSeeds = 16;
// shrink: the smallest scenario found, from `document`, whose run still shows `signature` under
// as many of the seeds `seed`..`seed + seeds_per_candidate - 1` as `document` does: clients,
// cycles and steps removed, faults removed, durations shortened, until no single change keeps the
// finding (so removing any one step of the result loses it). Bounded by `max_candidates` runs.
ShrinkResult shrink(const nlohmann::json& document, const LockVariant& variant,
                    const std::string& signature, std::uint64_t seed,
                    int seeds_per_candidate = kSeedsPerCandidate, int max_candidates = 2000);

// robust_seed: from `first_seed` on (at most `tries` seeds), the first schedule that shows
// `signature` under all `seeds_per_candidate` of its seeds, else the one that shows it under the
// most: the schedule to shrink, so that the minimal scenario does not hang on one lucky timing.
// Consecutive seeds cycle through the simulator's four timing profiles (sim_runtime.h timing_of:
// loopback, fast machine, slow network, loaded machine), so a schedule that shows it under all
// of them does not hang on one machine's speed; whether it hangs on a race is measured after
// shrinking, on fresh seeds (ShrinkResult::fresh_shown).
std::uint64_t robust_seed(const ExploreTarget& target, const std::string& signature,
                          std::uint64_t first_seed, int seeds_per_candidate = kSeedsPerCandidate,
                          int tries = 200);

// shrink_robustly: robust_seed from `first_seed`, shrunk; while the minimal scenario hangs on a
// race (shown under fewer than all of its fresh seeds), the next robust schedule after it,
// shrunk too, at most `schedules` in all: the result is the minimal scenario shown under the most
// fresh seeds (the fewest steps among equals, the first among those). A race a lock loses only
// sometimes is still found; the minimal scenario of one that does not hang on a race should not.
ShrinkResult shrink_robustly(const ExploreTarget& target, const std::string& signature,
                             std::uint64_t first_seed, int schedules = 4);

// Confirmation: the minimal scenario run on a real redis-server in real time.
struct Confirmation {
  int runs = 0;
  int reproduced = 0;
  // signatures: every signature the runs showed (exercise.h signatures), with how many showed it.
  std::map<std::string, int> signatures;
  std::vector<std::string> observed;  // what each run that did not reproduce observed
  std::string error;                  // the server could not be started
};
// BackendDifference: what a real server's runs of a minimal scenario showed that the simulator's
// runs of it (fresh and sampled seeds: ShrinkResult::sampled_signatures) never did, and what the simulator showed under every fresh seed that not every
// real run did: where the two disagree, the simulator is wrong (the model or its timing), and the
// difference is named (docs/simulator.md).
struct BackendDifference {
  std::vector<std::string> only_real;    // "<signature> (k of N real runs)"
  std::vector<std::string> not_on_real;  // "<signature> (k of N real runs; every simulated seed)"
  bool empty() const { return only_real.empty() && not_on_real.empty(); }
};
BackendDifference compare_backends(const ShrinkResult& simulated, const Confirmation& real);

// confirm: runs `document` (whose expect says what it must show) `runs` times on a private
// redis-server.
Confirmation confirm(const nlohmann::json& document, const LockVariant& variant, int runs,
                     StopSignal& stop);

}  // namespace locksim
