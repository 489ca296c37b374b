// Idle holds (Doc C): a release that deleted nothing while its own lease ran leaves the key held
// by a token nobody will present; the lock sits idle until the lease runs out. The timeline finds
// those releases; this names how long the key stayed idle and who got it next.
#include <algorithm>
#include <string>
#include <vector>

#include "sim/checker/checkers.h"
#include "sim/checker/explain.h"

namespace locksim::checker_internal {

namespace {

// deleted_by_someone_else: another client's release deleted a key while `idle`'s client held it
// (its window up to its release): its own key is gone, so its refused release left the lock free,
// not idle. Foreign deletes are rare, so a scan is fine.
bool deleted_by_someone_else(const KeyTimeline& timeline, const IdleRelease& idle) {
  Nanos held_since = -1;
  for (const WindowRecord& w : timeline.windows) {
    if (w.client == idle.client && w.start_ns <= idle.invoke_ns) held_since = w.start_ns;
  }
  if (held_since < 0) return false;
  for (const ForeignDelete& d : timeline.foreign_deletes) {
    if (d.client != idle.client && d.ok_ns >= held_since && d.invoke_ns <= idle.invoke_ns) {
      return true;
    }
  }
  return false;
}

}  // namespace

void check_idle_holds(const History& history, const KeyTimeline& timeline, CheckResult& result) {
  const std::vector<WindowRecord>& windows = timeline.windows;
  for (const IdleRelease& idle : timeline.idle_releases) {
    if (deleted_by_someone_else(timeline, idle)) continue;
    const auto next =
        std::lower_bound(windows.begin(), windows.end(), idle.invoke_ns,
                         [](const WindowRecord& w, Nanos t) { return w.start_ns < t; });
    const bool taken_early = next != windows.end() && next->start_ns < idle.lease_end_ns;
    const Nanos until_ns = taken_early ? next->start_ns : idle.lease_end_ns;
    std::string text = client_name(history, idle.client) + "'s release of " + timeline.key +
                       " at " + format_ms(idle.invoke_ns) +
                       " deleted nothing though its lease ran until " +
                       format_ms(idle.lease_end_ns) + ": the lock sat idle, held by nobody, for " +
                       format_ms(until_ns - idle.invoke_ns);
    if (taken_early) {
      text += ", until " + client_name(history, next->client) + " got it at " +
              format_ms(next->start_ns) + ".";
    } else if (next != windows.end()) {
      text += " (" + client_name(history, next->client) + " got it at " +
              format_ms(next->start_ns) + ").";
    } else {
      text += " (nobody got it afterwards).";
    }
    result.findings.push_back(Finding{
        .kind = FindingKind::kIdleHold,
        .cause = "",
        .key = timeline.key,
        .clients = {idle.client},
        .from_ns = idle.invoke_ns,
        .to_ns = until_ns,
        .amount = 0,
        .record = "",
        .words = std::move(text),
    });
  }
}

}  // namespace locksim::checker_internal
