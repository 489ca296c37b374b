// lost_reply: the nemesis drops the reply of a cycle's acquire, drawn per cycle with
// "lost_reply_probability": the server runs the acquire (it may take the lock), and its reply
// is dropped on the client's link, so the client hears nothing, records `info` and, like a
// process that gave up on the call, goes on without the lock (if it was taken, it is left for its
// TTL). The link proxy drops it, so a workload with lost replies runs its links through proxies.
//
//   "workload": {"lost_reply_probability": 0.1, ...}
//
// The kind's own code is this file and its row in sim/fault/drawn_fault.cc. It acts through
// DrawnFaultHost::lose_next_reply (sim/fault/drawn_fault.h), which the blocking host implements
// through the nemesis (the client's links drop the reply: a LinkProxy's or a SimLink's) and the
// event loop refuses before the run, and the nemesis records the fault kind lose_reply
// (sim/fault/fault.h and fault.cc).
#include <memory>
#include <string>

#include "sim/fault/drawn_fault.h"

namespace locksim {

extern const DrawnFaultType kDrawnLostReply;

namespace {

class LostReply final : public DrawnFault {
 public:
  explicit LostReply(double probability) : DrawnFault(kDrawnLostReply, probability) {}

  // Written only when on: a workload without lost replies reads as it always did.
  void write(nlohmann::json& workload) const override {
    if (on()) workload["lost_reply_probability"] = probability();
  }

  std::string event_loop_refusal(std::string_view why) const override {
    if (!on()) return "";
    return "$.workload.lost_reply_probability: not supported" + std::string(why) +
           "; use \"threads\" or \"processes\"";
  }

  void before_acquire(DrawnFaultHost& host, const DrawnCycle& /*cycle*/) const override {
    host.lose_next_reply();
  }

  void unanswered_acquire(DrawnFaultHost& host, const DrawnCycle& cycle) const override {
    host.note(std::string(cycle.client) + ": the reply of its acquire was lost (cycle " +
              std::to_string(cycle.cycle + 1) + ")");
  }
};

std::shared_ptr<const DrawnFault> parse_lost_reply(const json::JsonReader& workload) {
  return std::make_shared<LostReply>(read_probability(workload, "lost_reply_probability"));
}

}  // namespace

// drawn_fault.cc's table points here.
const DrawnFaultType kDrawnLostReply = {.word = "lost_reply",
                                        .keys = {"lost_reply_probability"},
                                        .slot = DrawSlot::kAfterRest,
                                        .needs_link_proxy = true,
                                        .parse = &parse_lost_reply};

}  // namespace locksim
