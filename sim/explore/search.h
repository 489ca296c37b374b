// search.h: explore, the search over seeds: many schedules of one lock on the simulator
// (schedule.h), run on worker threads, each judged by the checker, their findings counted.
//
// Seeds are independent, so workers (-j) and shards (--seeds A..B on other machines) split them
// freely: what is found, and the first seed that shows it, does not depend on how they were
// split.
//
//   ExploreSummary s = explore(target, ExploreBudget{.first_seed = 0, .schedules = 5000}, stop);
//   for (auto& [signature, found] : s.findings) { ... found.first_seed ... }
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/stop.h"
#include "sim/explore/coverage.h"
#include "sim/explore/schedule.h"

namespace locksim {

struct ExploreBudget {
  std::uint64_t first_seed = 0;
  std::uint64_t schedules = 1000;  // at most this many seeds, first_seed onwards
  double seconds = 0;              // > 0: stop after this long too (wall time)
  int jobs = 1;
  // steer: steer drawn schedules toward what is not covered yet: a schedule that covered an item
  // no schedule before it had, or an item with fewer choices than the one kept for it, is kept
  // (its choices; each item is stood for by its smallest), and one schedule in two (chosen by a
  // draw from its seed) is a variation of the schedule of a rare item (some of its choices drawn
  // anew), as a coverage-guided fuzzer mutates its input; the other is drawn from its seed.
  // What a variation shows is written (ExploreFinding::steered), since its seed alone does not
  // draw it; which schedules are kept depends on the order they end, so with several workers a
  // steered exploration is not repeated exactly.
  bool steer = false;
  // own: asked once for each signature a schedule shows first (never for a signature asked
  // before), with the schedule's seed and, for a steered variation, the document that ran;
  // true: the finding is the lock's own (its reference does not show it there), and the search
  // stops drawing (ExploreSummary::stopped_at_own). Unset: the budget alone ends the search.
  std::function<bool(const std::string& signature, std::uint64_t seed,
                     const nlohmann::json* steered_document)>
      own = {};
};

struct ExploreFinding {
  std::uint64_t schedules = 0;  // schedules that showed it
  std::uint64_t first_seed = 0;
  // seeds: the least seeds that showed it (at most kJudgedSeeds, first_seed first): a finding is
  // judged against the reference in each of their schedules, not in the first alone, whose
  // timing may be the lock's own (a lease that ran out by one command's latency).
  std::vector<std::uint64_t> seeds;
  // steered: the seeds of `seeds` whose schedule was a steered variation (ExploreBudget::steer),
  // with its document: what ran, which `--seed` would not draw.
  std::map<std::uint64_t, nlohmann::json> steered;
};
inline constexpr std::size_t kJudgedSeeds = 4;
struct ExploreSummary {
  std::uint64_t schedules = 0;  // run
  std::uint64_t last_seed = 0;  // the highest seed run (seeds first_seed..last_seed were all run)
  double seconds = 0;
  std::map<std::string, ExploreFinding> findings;  // by signature
  std::map<std::string, std::uint64_t> exercised;  // fault -> schedules that had it
  std::uint64_t with_no_fault = 0;
  std::uint64_t variations = 0;  // steered: schedules that were variations of a kept one
  std::uint64_t kept = 0;        // steered: schedules kept for covering something new
  // coverage: how many of the judged schedules covered each item (coverage.h), and the menu;
  // none in a merge of summaries written without it.
  std::optional<CoverageCounts> coverage;
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
  // stopped_at_own: ExploreBudget::own said a finding was the lock's own, and the search ended
  // there: the seeds after it were not all run.
  bool stopped_at_own = false;
};
// explore: runs seeds first_seed, first_seed + 1, ... until the budget is spent or `stop`;
// `progress` (may be empty) is called about every 200 ms with the schedules run so far.
ExploreSummary explore(const ExploreTarget& target, const ExploreBudget& budget, StopSignal& stop,
                       const std::function<void(std::uint64_t)>& progress = {});

}  // namespace locksim
