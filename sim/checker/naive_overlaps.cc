// Naive-timestamp overlaps (Doc D's log artifact): a log line before lock() and after unlock()
// brackets more than the hold, so under contention the waiter's line comes before the holder's
// release line and the log "shows" two holders. Counting those pairs shows how often the naive
// reading would cry wolf on a run the definite windows find correct.
//
// Sweep by start with a min-heap of the active windows' ends and a per-client count of active
// windows, so each window adds (active - active of its own client) pairs in O(log n).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "sim/checker/checkers.h"

namespace locksim::checker_internal {

std::int64_t count_naive_overlaps(const KeyTimeline& timeline) {
  std::vector<NaiveWindow> windows = timeline.naive_windows;
  if (windows.size() < 2) return 0;
  std::sort(windows.begin(), windows.end(),
            [](const NaiveWindow& a, const NaiveWindow& b) { return a.start_ns < b.start_ns; });
  int clients = 0;
  for (const NaiveWindow& window : windows) clients = std::max(clients, window.client + 1);
  std::vector<std::int64_t> active_by_client(static_cast<std::size_t>(clients), 0);
  using End = std::pair<Nanos, int>;  // (end_ns, client)
  std::priority_queue<End, std::vector<End>, std::greater<>> active;
  std::int64_t pairs = 0;
  for (const NaiveWindow& window : windows) {
    // Overlap must be > 0 ns: a window ending exactly at this start shares no time with it.
    while (!active.empty() && active.top().first <= window.start_ns) {
      --active_by_client[static_cast<std::size_t>(active.top().second)];
      active.pop();
    }
    if (window.end_ns <= window.start_ns) continue;  // empty: overlaps nothing
    const auto c = static_cast<std::size_t>(window.client);
    pairs += static_cast<std::int64_t>(active.size()) - active_by_client[c];
    ++active_by_client[c];
    active.emplace(window.end_ns, window.client);
  }
  return pairs;
}

}  // namespace locksim::checker_internal
