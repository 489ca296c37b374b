// window_index.h: WindowIndex, "which hold window overlaps this interval" in near-constant time.
//
// Internal to the checker. Windows of a correct history are disjoint, so walking back from the
// last window that starts before the interval ends, while the running maximum of ends still
// reaches into the interval, visits one or two windows; overlapping windows (a violation) cost
// one step each.
//
//   WindowIndex index(timeline.windows);
//   int w = index.find(t, t + 1, [&](const WindowRecord& r) { return r.client != releaser; });
#pragma once

#include <algorithm>
#include <vector>

#include "sim/checker/timeline.h"

namespace locksim::checker_internal {

class WindowIndex {
 public:
  // windows: sorted by start_ns; must outlive the index.
  explicit WindowIndex(const std::vector<WindowRecord>& windows) : windows_(windows) {
    max_end_ns_.reserve(windows.size());
    Nanos max_end_ns = 0;
    for (const WindowRecord& window : windows) {
      max_end_ns = std::max(max_end_ns, window.end_ns);
      max_end_ns_.push_back(max_end_ns);
    }
  }

  // find: the latest-starting window with start_ns < to_ns and end_ns > from_ns for which
  // accept(window) holds, or -1.
  template <typename Accept>
  int find(Nanos from_ns, Nanos to_ns, Accept accept) const {
    auto after =
        std::lower_bound(windows_.begin(), windows_.end(), to_ns,
                         [](const WindowRecord& window, Nanos t) { return window.start_ns < t; });
    for (auto i = after - windows_.begin() - 1; i >= 0; --i) {
      const auto at = static_cast<std::size_t>(i);
      if (max_end_ns_[at] <= from_ns) break;
      if (windows_[at].end_ns > from_ns && accept(windows_[at])) return static_cast<int>(i);
    }
    return -1;
  }

 private:
  const std::vector<WindowRecord>& windows_;
  std::vector<Nanos> max_end_ns_;  // max_end_ns_[i]: the latest end among windows_[0..i]
};

}  // namespace locksim::checker_internal
