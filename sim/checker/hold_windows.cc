#include <algorithm>

#include "sim/checker/check.h"
#include "sim/checker/timeline.h"

namespace locksim {

std::vector<HoldWindow> hold_windows(const History& history) {
  const checker_internal::Timelines timelines = checker_internal::build_timelines(history);
  std::vector<HoldWindow> windows;
  for (const checker_internal::KeyTimeline& timeline : timelines.keys) {
    for (const checker_internal::WindowRecord& record : timeline.windows) {
      windows.push_back(checker_internal::to_hold_window(record, timeline.key));
    }
  }
  // Keys are kept apart while building; a report wants one timeline across keys.
  std::stable_sort(windows.begin(), windows.end(), [](const HoldWindow& a, const HoldWindow& b) {
    return a.start_ns < b.start_ns;
  });
  return windows;
}

}  // namespace locksim
