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
  const Timelines timelines = build_timelines(history);
  for (const KeyTimeline& timeline : timelines.keys) {
    check_mutual_exclusion(history, timeline, result);
    check_liveness(history, timeline, options, result);
    check_indeterminacy(history, timeline, result);
  }
  result.stats = compute_stats(history);

  // A stale release alone is a finding, not a verdict: it harmed nobody unless someone got in,
  // and then there is a violation.
  if (!result.violations.empty()) {
    result.verdict = Verdict::kMutexViolation;
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
