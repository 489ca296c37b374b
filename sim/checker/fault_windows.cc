// Fault windows: the nemesis records a window's "start" and "end" as two events aimed at one
// client; reports draw the window whole.
#include <map>
#include <string_view>
#include <tuple>
#include <utility>

#include "sim/checker/checkers.h"

namespace locksim::checker_internal {

std::vector<FaultWindow> fault_windows(const History& history) {
  std::vector<FaultWindow> windows;
  // Open windows by (target, server, kind): the index of the window in `windows`.
  using WindowKey = std::tuple<int, std::string_view, FaultKind>;
  std::map<WindowKey, std::size_t> open;
  const Nanos last_ns = history.events.empty() ? 0 : history.events.back().time_ns;
  for (const Event& event : history.events) {
    if (event.f != Op::kFault) continue;
    const FaultFacts& fault = event.fault();
    const int target = fault.target >= 0 ? fault.target : event.client;
    // Ids are not deduplicated in a StringTable: the server's words decide which start an end
    // closes.
    const WindowKey key{target, history.str(fault.server), fault.kind};
    switch (fault.phase) {
      case FaultPhase::kInstant:
        windows.push_back(
            FaultWindow{fault.kind, target, fault.server, event.time_ns, event.time_ns});
        break;
      case FaultPhase::kStart:
        open[key] = windows.size();
        windows.push_back(FaultWindow{fault.kind, target, fault.server, event.time_ns, last_ns});
        break;
      case FaultPhase::kEnd:
        if (const auto it = open.find(key); it != open.end()) {
          windows[it->second].to_ns = event.time_ns;
          open.erase(it);
        }
        break;
    }
  }
  return windows;
}

}  // namespace locksim::checker_internal
