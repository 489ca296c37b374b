// Barging: a grant to a client while another client's acquire of the same key, invoked earlier,
// was still waiting. A fair (FIFO) lock like Redisson's RedissonFairLock (or lua_fair_queue) hands
// a freed lock to the longest waiter; a lock that lets whoever asks first after a release take it
// lets a newcomer barge past the queue. Only where the scenario asks (check.barging): for a lock
// that does not promise fairness this is simply how it works.
#include <map>
#include <string>
#include <utility>

#include "sim/checker/checkers.h"
#include "sim/checker/explain.h"

namespace locksim::checker_internal {

void check_barging(const History& history, const CheckOptions& options, CheckResult& result) {
  if (!options.barging) return;
  // Per key, the acquires still open, by invoke time: (invoke, client). An acquire is open from
  // its invoke to its outcome (ok, fail or info), so one that ended (given up, crashed) never
  // counts as waiting.
  std::map<KeyId, std::map<std::pair<Nanos, int>, bool>> open;
  std::map<std::pair<KeyId, int>, Nanos> invoked;  // (key, client) -> invoke of its open acquire
  for (const Event& e : history.events) {
    if (e.f != Op::kAcquire) continue;
    const auto who = std::make_pair(e.key, static_cast<int>(e.client));
    if (e.type == EventType::kInvoke) {
      invoked[who] = e.time_ns;
      open[e.key][{e.time_ns, e.client}] = true;
      continue;
    }
    const auto mine = invoked.find(who);
    if (mine == invoked.end()) continue;
    const Nanos my_invoke = mine->second;
    invoked.erase(mine);
    auto& waiting = open[e.key];
    waiting.erase({my_invoke, e.client});
    if (e.type != EventType::kOk || waiting.empty()) continue;
    const auto& [earliest, _] = *waiting.begin();
    if (earliest.first >= my_invoke) continue;
    const int waiter = earliest.second;
    std::string text = client_name(history, e.client) + " got " + history.key_name(e) + " at " +
                       format_ms(e.time_ns) + " (it asked at " + format_ms(my_invoke) + ") while " +
                       client_name(history, waiter) +
                       ", who asked earlier, was still waiting for it (since " +
                       format_ms(earliest.first) + "): it barged past a waiter.";
    result.findings.push_back(Finding{
        .kind = FindingKind::kBarging,
        .cause = "",
        .key = history.key_name(e),
        .clients = {static_cast<int>(e.client), waiter},
        .from_ns = earliest.first,
        .to_ns = e.time_ns,
        .amount = 0,
        .record = "",
        .words = std::move(text),
    });
  }
}

}  // namespace locksim::checker_internal
