// Fault windows: the nemesis records a window's "start" and "end" as two events aimed at one
// client; reports draw the window whole.
#include <map>
#include <utility>

#include "sim/checker/checkers.h"

namespace locksim::checker_internal {

std::vector<FaultWindow> fault_windows(const History& history) {
  std::vector<FaultWindow> windows;
  // Open windows by (target, name): the index of the window in `windows`.
  std::map<std::pair<int, StringId>, std::size_t> open;
  std::map<std::pair<int, std::string_view>, StringId> names;  // one id per name and target
  const Nanos last_ns = history.events.empty() ? 0 : history.events.back().time_ns;
  for (const Event& event : history.events) {
    if (event.f != Op::kFault) continue;
    const FaultFacts& fault = event.fault();
    const int target = fault.target >= 0 ? fault.target : event.client;
    // Ids are not deduplicated in a StringTable: the name decides which start an end closes.
    const StringId name =
        names.try_emplace({target, history.str(fault.name)}, fault.name).first->second;
    switch (fault.phase) {
      case FaultPhase::kInstant:
        windows.push_back(FaultWindow{name, target, event.time_ns, event.time_ns});
        break;
      case FaultPhase::kStart:
        open[{target, name}] = windows.size();
        windows.push_back(FaultWindow{name, target, event.time_ns, last_ns});
        break;
      case FaultPhase::kEnd:
        if (const auto it = open.find({target, name}); it != open.end()) {
          windows[it->second].to_ns = event.time_ns;
          open.erase(it);
        }
        break;
    }
  }
  return windows;
}

}  // namespace locksim::checker_internal
