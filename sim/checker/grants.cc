// Never granted: a run in which a key was wanted and never granted shows nothing about mutual
// exclusion, so it must not pass as ok. An acquire that may have succeeded (info, or cut short by
// a crash) counts as possibly granted: the lock may have handed it out, the client never heard.
// Nor is that a grant: a key granted to nobody for certain, with acquires that may have
// succeeded, decided nothing either (an indeterminate finding: unknown, never ok).
#include <algorithm>
#include <string>
#include <vector>

#include "sim/checker/checkers.h"
#include "sim/checker/explain.h"

namespace locksim::checker_internal {

namespace {

// undecided: the finding of a key no acquire was granted for certain while some may have been.
Finding undecided(const History& history, const KeyTimeline& timeline) {
  std::vector<int> clients;
  for (const MaybeAcquire& maybe : timeline.maybe_acquires) {
    if (std::find(clients.begin(), clients.end(), maybe.client) == clients.end()) {
      clients.push_back(maybe.client);
    }
  }
  const MaybeAcquire& first = timeline.maybe_acquires.front();
  const std::string how = first.interrupted ? "was interrupted before its reply"
                                            : "got no definite reply (" + first.error + ")";
  const auto count = static_cast<std::int64_t>(timeline.maybe_acquires.size());
  return Finding{
      .kind = FindingKind::kIndeterminate,
      .cause = first.interrupted ? "interrupted" : "no_reply",
      .key = timeline.key,
      .clients = std::move(clients),
      .from_ns = first.invoke_ns,
      .to_ns = first.end_ns,
      .amount = count,
      .record = "",
      .words = "the lock " + timeline.key + " was never granted for certain: " +
               std::to_string(count) + " acquire(s) may have succeeded and none surely did (" +
               client_name(history, first.client) + "'s at " + format_ms(first.invoke_ns) + " " +
               how + "), so this run decided nothing about it.",
  };
}

}  // namespace

void check_grants(const History& history, const KeyTimeline& timeline, CheckResult& result) {
  if (timeline.acquires_ok > 0) return;
  if (!timeline.maybe_acquires.empty()) {
    // Said once: an acquire the indeterminacy check found keeping another out says it already.
    const bool said = std::any_of(result.findings.begin(), result.findings.end(),
                                  [&timeline](const Finding& f) {
                                    return f.kind == FindingKind::kIndeterminate &&
                                           f.key == timeline.key;
                                  });
    if (!said) result.findings.push_back(undecided(history, timeline));
    return;
  }
  if (timeline.acquires_completed == 0) return;
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
