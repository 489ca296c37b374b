// check_history: builds the per-key timelines once, runs every checker over each key and over the
// whole history, orders the findings by kind, and takes the strongest verdict they support.
#include "sim/checker/check.h"

#include <algorithm>
#include <set>

#include "sim/checker/checkers.h"
#include "sim/checker/timeline.h"

namespace locksim {

std::vector<std::string> CheckResult::causes() const {
  std::set<std::string> distinct;
  for (const Finding& finding : findings) {
    if (finding.kind == FindingKind::kMutexViolation) distinct.insert(finding.cause);
  }
  return {distinct.begin(), distinct.end()};
}

bool is_own_cause(std::string_view cause) {
  return cause == "stale_release" || cause == "racy_acquire" || cause == "client_clock" ||
         cause == "early_release";
}

bool is_own_finding(const Finding& finding) {
  switch (finding.kind) {
    case FindingKind::kStaleRelease:
    case FindingKind::kStolenRenewal:
    case FindingKind::kIdleHold:
    case FindingKind::kEarlyRelease:
      return true;
    case FindingKind::kBarging:
      // A queue a server forgot (restarted without persistence, a clock jump) is every queue's
      // limit, as the lock a server forgot is every lease's (explore's kLeaseLimits).
      return finding.cause != "queue_lost";
    case FindingKind::kMutexViolation:
      return is_own_cause(finding.cause);
    case FindingKind::kDeadlock:
      return finding.cause == "nested_refused" || finding.cause == "writer_starved";
    default:
      return false;
  }
}

std::vector<const Finding*> CheckResult::of(FindingKind kind) const {
  std::vector<const Finding*> found;
  for (const Finding& finding : findings) {
    if (finding.kind == kind) found.push_back(&finding);
  }
  return found;
}

std::size_t CheckResult::count(FindingKind kind) const {
  return static_cast<std::size_t>(std::count_if(
      findings.begin(), findings.end(), [kind](const Finding& f) { return f.kind == kind; }));
}

CheckResult check_history(const History& history, const CheckOptions& options) {
  using namespace checker_internal;
  CheckResult result;
  // Stats first: the checkers add the counts only they can tell (holds in violation).
  result.stats = compute_stats(history);
  const Timelines timelines = build_timelines(history);
  std::size_t hold_count = 0;
  for (const KeyTimeline& timeline : timelines.keys) hold_count += timeline.windows.size();
  result.holds.reserve(hold_count);
  // The faults first: liveness asks whether one touched a refused attempt.
  result.faults = fault_windows(history);
  for (const KeyTimeline& timeline : timelines.keys) {
    result.stats.holds += static_cast<std::int64_t>(timeline.windows.size());
    for (const WindowRecord& record : timeline.windows) {
      result.holds.push_back(to_hold_window(record, timeline.key_id));
    }
    check_mutual_exclusion(history, timeline, options.words, result);
    check_liveness(history, timeline, options, result);
    check_idle_holds(history, timeline, result);
    check_reentrancy(history, timeline, result);
    check_read_write(history, timeline, options, result);
    check_lease_overruns(history, timeline, options.words, result);
    check_indeterminacy(history, timeline, result);
    check_renewals(history, timeline, result);
    check_grants(history, timeline, result);
    result.naive_timestamp_overlaps += count_naive_overlaps(timeline);
  }
  check_server_outages(history, result);
  check_barging(history, options, result);
  check_stalls(history, options, result);
  check_resource(history, options.resource, result);
  check_stale_writes(history, options.resource, result);
  check_run(history, result);
  // Keys are kept apart while building; a report wants one timeline across keys.
  std::stable_sort(
      result.holds.begin(), result.holds.end(),
      [](const HoldWindow& a, const HoldWindow& b) { return a.start_ns < b.start_ns; });
  std::stable_sort(result.findings.begin(), result.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.kind < b.kind; });

  // A stale release, a stale write, a stolen renewal or an idle hold alone supports no verdict: it
  // harmed nobody unless someone got in (a violation), a waiter was stuck (a deadlock) or the
  // resource was corrupted.
  result.verdict = Verdict::kOk;
  for (const Finding& finding : result.findings) {
    result.verdict = strongest(result.verdict, verdict_of(finding.kind));
  }
  // A server of the topology that died without the scenario killing it decides the run: a
  // deadlock or an error may be its doing (a node fewer keeps a waiter out, a server gone refuses
  // the lock), so the run is unknown. A violation observed all the same is still one.
  if (result.count(FindingKind::kServerDied) > 0 &&
      (result.verdict == Verdict::kDeadlock || result.verdict == Verdict::kError)) {
    result.verdict = Verdict::kUnknown;
  }
  return result;
}

}  // namespace locksim
