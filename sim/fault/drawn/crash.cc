// crash: the drawn fault that kills a holder, drawn per cycle with "crash_probability": the
// client dies inside the critical section instead of releasing (its connections close; a
// process client is SIGKILLed) and runs no further cycle, so its lock is left for its TTL (or
// forever), exactly as a dead process would leave it.
//
//   "workload": {"crash_probability": 0.05, ...}
//
// The kind's own code is this file and its row in sim/fault/drawn_fault.cc. It acts through the
// client verb crash (DrawnFaultHost::crash, sim/fault/drawn_fault.h), which every host of the
// workload client implements (the thread client, the process client by a SIGKILL of its worker,
// the event loop), and what it records is the history's own crash operation.
#include <memory>
#include <string>

#include "sim/fault/drawn_fault.h"

namespace locksim {

extern const DrawnFaultType kDrawnCrash;

namespace {

class Crash final : public DrawnFault {
 public:
  explicit Crash(double probability) : DrawnFault(kDrawnCrash, probability) {}

  void write(nlohmann::json& workload) const override {
    workload["crash_probability"] = probability();
  }

  bool before_release(DrawnFaultHost& host, const DrawnCycle& cycle) const override {
    host.crash();
    host.note(std::string(cycle.client) + " crashed inside the critical section (cycle " +
              std::to_string(cycle.cycle + 1) + ")");
    return true;
  }
};

std::shared_ptr<const DrawnFault> parse_crash(const json::JsonReader& workload) {
  return std::make_shared<Crash>(read_probability(workload, "crash_probability"));
}

}  // namespace

// drawn_fault.cc's table points here.
const DrawnFaultType kDrawnCrash = {.word = "crash",
                                    .keys = {"crash_probability"},
                                    .slot = DrawSlot::kBeforeRest,
                                    .parse = &parse_crash};

}  // namespace locksim
