// Indeterminacy: an acquire without a definite answer may have succeeded; if the interval in
// which it may have held the key overlaps another client's definite window, a violation could be
// hidden there, so the run cannot be called ok. Nor can it if another client gave up waiting for
// the key inside that interval: it was kept out either by the unanswered acquire (a lock its
// owner does not know it holds, and may never release) or by nobody, and the history cannot tell
// which.
#include <algorithm>
#include <string>

#include "sim/checker/checkers.h"
#include "sim/checker/explain.h"
#include "sim/checker/window_index.h"

namespace locksim::checker_internal {

void check_indeterminacy(const History& history, const KeyTimeline& timeline, CheckResult& result) {
  if (timeline.maybe_acquires.empty()) return;
  const WindowIndex index(timeline.windows);
  for (const MaybeAcquire& maybe : timeline.maybe_acquires) {
    const int found = index.find(maybe.invoke_ns, maybe.end_ns,
                                 [&](const WindowRecord& w) { return w.client != maybe.client; });
    const std::string who = client_name(history, maybe.client);
    const std::string how = maybe.interrupted ? "was interrupted before its reply"
                                              : "got no definite reply (" + maybe.error + ")";
    if (found < 0) {
      const auto blocked = std::find_if(
          timeline.failed_acquires.begin(), timeline.failed_acquires.end(),
          [&](const FailedAcquire& f) {
            return f.client != maybe.client && f.waited && f.fail_ns > maybe.invoke_ns &&
                   f.invoke_ns < maybe.end_ns;
          });
      if (blocked == timeline.failed_acquires.end()) continue;
      result.findings.push_back(Finding{
          .kind = FindingKind::kIndeterminate,
          .cause = maybe.interrupted ? "interrupted" : "no_reply",
          .key = timeline.key,
          .clients = {maybe.client, blocked->client},
          .from_ns = maybe.invoke_ns,
          .to_ns = maybe.end_ns,
          .amount = 0,
          .record = "",
          .words = who + "'s acquire of " + timeline.key + " at " + format_ms(maybe.invoke_ns) +
                   " " + how + "; it may have succeeded, and while it may have held the key " +
                   client_name(history, blocked->client) + " waited from " +
                   format_ms(blocked->invoke_ns) + " and gave up at " +
                   format_ms(blocked->fail_ns) +
                   ": kept out by a holder that does not know it holds the lock, or by nobody.",
      });
      continue;
    }
    const WindowRecord& window = timeline.windows[static_cast<std::size_t>(found)];
    result.findings.push_back(Finding{
        .kind = FindingKind::kIndeterminate,
        .cause = maybe.interrupted ? "interrupted" : "no_reply",
        .key = timeline.key,
        .clients = {maybe.client, window.client},
        .from_ns = maybe.invoke_ns,
        .to_ns = maybe.end_ns,
        .amount = 0,
        .record = "",
        .words = who + "'s acquire of " + timeline.key + " at " + format_ms(maybe.invoke_ns) + " " +
                 how + "; it may have succeeded, and its possible hold until " +
                 format_ms(maybe.end_ns) + " overlaps " + client_name(history, window.client) +
                 "'s hold from " + format_ms(window.start_ns) + " to " + format_ms(window.end_ns) +
                 ".",
    });
  }
}

}  // namespace locksim::checker_internal
