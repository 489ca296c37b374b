// pause: the nemesis freezes a holder, drawn per cycle with "pause_probability": while inside,
// before its work, the client is frozen for a "pause_ms" draw (SIGSTOP for a process client, its
// renewal thread held for a thread), as a GC or VM stall would freeze it, then thawed. Its
// renewal stops too, so a pause past the lease lets another client in. A lost iteration (lose)
// is never also paused.
//
//   "workload": {"pause_probability": 0.2, "pause_ms": {"min": 500, "max": 1500}, ...}
//
// The kind's own code is this file and its row in sim/fault/drawn_fault.cc; it is the model for a
// new one. It acts through DrawnFaultHost::pause_holder and resume_holder
// (sim/fault/drawn_fault.h), which the blocking host implements through the nemesis, which
// freezes the client (FaultTarget::freeze: the thread client holds its renewal, the process
// client SIGSTOPs its worker), and the event loop refuses before the run; the nemesis records
// the fault kind pause (sim/fault/fault.h and fault.cc). A kind that needs something of the
// client no DrawnFaultHost verb does adds the verb to every host, as lose (lose.cc) did.
#include <cstdint>
#include <memory>
#include <string>

#include "sim/fault/drawn_fault.h"

namespace locksim {

extern const DrawnFaultType kDrawnPause;

namespace {

class Pause final : public DrawnFault {
 public:
  Pause(double probability, RangeMs pause_ms)
      : DrawnFault(kDrawnPause, probability), pause_ms_(pause_ms) {}

  // Written only when on: a workload without pauses reads as it always did.
  void write(nlohmann::json& workload) const override {
    if (!on()) return;
    workload["pause_probability"] = probability();
    workload["pause_ms"] = json::range_json(pause_ms_);
  }

  std::string event_loop_refusal(std::string_view why) const override {
    if (!on()) return "";
    return "$.workload.pause_probability: not supported" + std::string(why) +
           "; use \"threads\" or \"processes\"";
  }

  // The chance and the length are both drawn every cycle; the draw is the length (ms).
  std::int64_t draw(Rng& rng) const override {
    const bool paused = rng.chance(probability());
    const std::int64_t length_ms = draw_ms(rng, pause_ms_);
    return paused ? length_ms : 0;
  }

  Task<void> inside(DrawnFaultHost& host, DrawnCycle cycle) const override {
    // A stall of the holder (GC, VM): its renewal stops too.
    host.pause_holder();
    co_await host.sleep(ms_to_ns(cycle.drawn));
    host.resume_holder();
  }

 private:
  RangeMs pause_ms_;
};

std::shared_ptr<const DrawnFault> parse_pause(const json::JsonReader& workload) {
  const double probability = read_probability(workload, "pause_probability");
  RangeMs pause_ms;
  if (const auto length = workload.optional_member("pause_ms")) {
    pause_ms = length->duration_range_ms(0, json::kMaxDurationMs);
  } else if (probability > 0) {
    workload.fail(
        "\"pause_probability\" needs \"pause_ms\", how long a paused holder stays frozen");
  }
  return std::make_shared<Pause>(probability, pause_ms);
}

}  // namespace

// drawn_fault.cc's table points here.
const DrawnFaultType kDrawnPause = {.word = "pause",
                                    .keys = {"pause_probability", "pause_ms"},
                                    .slot = DrawSlot::kAfterRest,
                                    .work_role = WorkRole::kBeside,
                                    .parse = &parse_pause};

}  // namespace locksim
