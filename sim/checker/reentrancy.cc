// check_reentrancy: a reentrant lock held to its depth. A nested acquire (the client inside, its
// lease still running) must be granted at once; one answered busy until it gave up is the owner
// deadlocked on itself, a deadlock of the lock's own. An inner release that deleted the lock freed
// it early (reported, and the cause of a violation it let in: mutual_exclusion.cc).
#include <string>

#include "sim/checker/checkers.h"
#include "sim/checker/explain.h"

namespace locksim::checker_internal {

void check_reentrancy(const History& history, const KeyTimeline& timeline, CheckResult& result) {
  if (!history.reentrant) return;
  for (const EarlyFree& free : timeline.inner_frees) {
    if (!free.early) continue;
    const std::string who = client_name(history, free.client);
    result.findings.push_back(Finding{
        .kind = FindingKind::kEarlyRelease,
        .cause = "",
        .key = timeline.key,
        .clients = {free.client},
        .from_ns = free.invoke_ns,
        .to_ns = free.ok_ns,
        .amount = free.depth,
        .record = "",
        .words = who + "'s release of " + timeline.key + " at " + format_ms(free.invoke_ns) +
                 " undid one of its " + std::to_string(free.depth) +
                 " holds and deleted the lock, " + who +
                 " still inside: a reentrant lock is freed only when its owner's last hold is "
                 "released.",
    });
  }
  for (const NestedRefusal& refusal : timeline.nested_refusals) {
    // Its first attempt reached the server after the invoke; a lease that may have run out by
    // then (a millisecond kept for the server's whole-millisecond expiry) may have let another in.
    if (refusal.lease_end_lower_ns != kNever &&
        refusal.invoke_ns + ms_to_ns(1) >= refusal.lease_end_lower_ns) {
      continue;
    }
    const std::string who = client_name(history, refusal.client);
    result.findings.push_back(Finding{
        .kind = FindingKind::kDeadlock,
        .cause = "nested_refused",
        .key = timeline.key,
        .clients = {refusal.client},
        .from_ns = refusal.invoke_ns,
        .to_ns = refusal.fail_ns,
        .amount = refusal.depth,
        .record = "",
        .words = who + "'s nested acquire of " + timeline.key + " at " +
                 format_ms(refusal.invoke_ns) + " was refused " +
                 (refusal.granted ? "and got in only at " : "until it gave up at ") +
                 format_ms(refusal.fail_ns) + ", while " + who + " itself held the lock (inside " +
                 "since " + format_ms(refusal.held_since_ns) + ", " +
                 std::to_string(refusal.depth) + (refusal.depth == 1 ? " hold" : " holds") +
                 ", its lease still running): a reentrant lock lets its owner in again at once; " +
                 who + " waited on itself.",
    });
  }
}

}  // namespace locksim::checker_internal
