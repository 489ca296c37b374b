// Idle holds (Doc C): a release that deleted nothing while its own lease ran leaves the key held
// by a token nobody will present; the lock sits idle until the lease runs out. The timeline finds
// those releases; this names how long the key stayed idle and who got it next.
#include <algorithm>
#include <string>
#include <vector>

#include "sim/checker/checkers.h"
#include "sim/checker/explain.h"

namespace locksim::checker_internal {

void check_idle_holds(const History& history, const KeyTimeline& timeline, CheckResult& result) {
  const std::vector<WindowRecord>& windows = timeline.windows;
  for (const IdleRelease& idle : timeline.idle_releases) {
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
    result.idle_holds.push_back(IdleHold{
        .key = timeline.key,
        .client = idle.client,
        .from_ns = idle.invoke_ns,
        .until_ns = until_ns,
        .explanation = std::move(text),
    });
  }
}

}  // namespace locksim::checker_internal
