// Never granted: a run in which a key was wanted and never granted shows nothing about mutual
// exclusion, so it must not pass as ok. An acquire that may have succeeded (info, or cut short by
// a crash) counts as possibly granted: the lock did hand it out, the client never heard.
#include <algorithm>
#include <string>
#include <vector>

#include "sim/checker/checkers.h"
#include "sim/checker/explain.h"

namespace locksim::checker_internal {

void check_grants(const History& history, const KeyTimeline& timeline, CheckResult& result) {
  (void)history;
  if (timeline.acquires_completed == 0 || timeline.acquires_ok > 0) return;
  if (!timeline.maybe_acquires.empty()) return;
  std::vector<int> clients;
  for (const FailedAcquire& failed : timeline.failed_acquires) {
    if (std::find(clients.begin(), clients.end(), failed.client) == clients.end()) {
      clients.push_back(failed.client);
    }
  }
  result.findings.push_back(Finding{
      .kind = FindingKind::kNeverGranted,
      .cause = "",
      .key = timeline.key,
      .clients = std::move(clients),
      .from_ns = -1,
      .to_ns = -1,
      .amount = timeline.acquires_completed,
      .record = "",
      .words = "the lock " + timeline.key +
               " was never granted: " + std::to_string(timeline.acquires_completed) +
               " acquire(s) ended, none succeeded, so this run shows nothing about mutual "
               "exclusion.",
  });
}

}  // namespace locksim::checker_internal
