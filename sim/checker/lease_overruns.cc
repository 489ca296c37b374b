// Lease overruns: a holder still inside after its lease had certainly run out. The lock no
// longer protected it from then until it left: whether anybody got in meanwhile (a violation,
// reported by mutual_exclusion.cc) depended on luck, so an `ok` run with an overrun was not
// earned by the lock. Doc A's and Doc B's GC pause and slow holder, seen even where no second
// client happened to want the lock.
#include <algorithm>
#include <string>

#include "sim/checker/checkers.h"
#include "sim/checker/explain.h"

namespace locksim::checker_internal {

void check_lease_overruns(const History& history, const KeyTimeline& timeline, bool words,
                          CheckResult& result) {
  for (const WindowRecord& w : timeline.windows) {
    // Only a holder that left by itself: a crashed one did no more work, and one still inside at
    // the end of the history is the run's stop, not the lock's.
    if (w.end != HoldWindow::End::kExit || w.lease_end_ns == kNever) continue;
    if (w.lease_end_ns >= w.end_ns) continue;  // lease_end_ns: the latest it can have run out
    Finding overrun{
        .kind = FindingKind::kLeaseOverrun,
        .cause = w.faulted ? "faulted" : "slow",
        .key = timeline.key,
        .clients = {w.client},
        .from_ns = w.lease_end_ns,
        .to_ns = w.end_ns,
        .amount = 0,
        .record = "",
        .words = "",
    };
    if (!words) {
      result.findings.push_back(std::move(overrun));
      continue;
    }
    std::string text = client_name(history, w.client) + " was still inside " + timeline.key +
                       " after its lease had run out (by " + format_ms(w.lease_end_ns) +
                       " at the latest: " +
                       (w.renewed_ns >= 0 ? "last renewed at " + format_ms(w.renewed_ns)
                                          : "acquired at " + format_ms(w.acquire_ok_ns)) +
                       " with a " + std::to_string(w.ttl_ms) + " ms TTL) and left at " +
                       format_ms(w.end_ns) + ", " + format_ms(w.end_ns - w.lease_end_ns) +
                       " unprotected";
    // Windows are sorted by start: only those starting inside this one are looked at, so a run
    // with many overruns stays linear in what overlaps rather than quadratic in its windows.
    const WindowRecord* intruder = nullptr;
    const auto first =
        std::lower_bound(timeline.windows.begin(), timeline.windows.end(), w.start_ns,
                         [](const WindowRecord& other, Nanos t) { return other.start_ns < t; });
    for (auto other = first; other != timeline.windows.end() && other->start_ns < w.end_ns;
         ++other) {
      if (other->client != w.client) {
        intruder = &*other;
        break;
      }
    }
    text += intruder != nullptr ? "; " + client_name(history, intruder->client) + " got in at " +
                                      format_ms(intruder->start_ns) + "."
                                : "; nobody else got the lock meanwhile.";
    overrun.words = std::move(text);
    result.findings.push_back(std::move(overrun));
  }
}

}  // namespace locksim::checker_internal
