// check_history: builds the per-key timelines once, runs every checker over each key, and takes
// the strongest verdict the findings support.
#include "sim/checker/check.h"

#include <algorithm>

#include "sim/checker/checkers.h"
#include "sim/checker/timeline.h"

namespace locksim {

std::vector<std::string> CheckResult::causes() const {
  std::vector<std::string> distinct;
  for (const MutexViolation& violation : violations) distinct.push_back(violation.cause);
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  return distinct;
}

CheckResult check_history(const History& history, const CheckOptions& options) {
  using namespace checker_internal;
  CheckResult result;
  // Stats first: the checkers add the counts only they can tell (holds in violation).
  result.stats = compute_stats(history);
  const Timelines timelines = build_timelines(history);
  for (const KeyTimeline& timeline : timelines.keys) {
    result.stats.holds += static_cast<std::int64_t>(timeline.windows.size());
    check_mutual_exclusion(history, timeline, result);
    check_liveness(history, timeline, options, result);
    check_idle_holds(history, timeline, result);
    check_indeterminacy(history, timeline, result);
    result.naive_timestamp_overlaps += count_naive_overlaps(timeline);
  }
  check_resource(history, options.resource, result);
  result.violations_outside_faults =
      std::count_if(result.violations.begin(), result.violations.end(),
                    [](const MutexViolation& violation) { return !violation.earlier.faulted; });

  // A stale release or an idle hold alone is a finding, not a verdict: it harmed nobody unless
  // someone got in (then there is a violation) or a waiter gave up (then there is a deadlock).
  if (!result.violations.empty()) {
    result.verdict = Verdict::kMutexViolation;
  } else if (!result.resource_findings.empty()) {
    result.verdict = Verdict::kResourceCorrupted;
  } else if (!result.deadlocks.empty()) {
    result.verdict = Verdict::kDeadlock;
  } else if (!result.indeterminate.empty()) {
    result.verdict = Verdict::kUnknown;
  } else {
    result.verdict = Verdict::kOk;
  }
  return result;
}

}  // namespace locksim
