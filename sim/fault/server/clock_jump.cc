// clock_jump: a server's wall clock jumps "jump_ms" further ahead (on top of earlier jumps), as
// an NTP step or an operator's `date` would move it. Redis expires keys by the wall clock, so a
// key with less time left than the jump is gone at once; the monotonic clock, which Redis times
// out by, is left alone. Every server of a topology whose script has a clock jump runs with
// locksim's clock shift preloaded (sim/clockshift).
//
//   {"id": "jump", "do": "clock_jump", "server": "n1", "jump_ms": 20000,
//    "wait_for": {"done": "a-acquire"}}
//
// Recorded as the instant "clock_jump". The kind's own code is this file and its row in
// sim/fault/server_fault.cc; it is the model for a new kind with a key of its own. It acts through
// ServerFaultHost::shift_clock (sim/fault/server_fault.h), which the scripted runner implements
// through the nemesis and each topology (the real servers' and the simulator's), and its event is
// the fault kind clock_jump (sim/fault/fault.h and fault.cc): a kind that needs an operation or an
// event no kind has yet adds it there too.
#include <cstdint>
#include <memory>
#include <string>

#include "sim/fault/server_fault.h"

namespace locksim {

extern const ServerFaultType kServerFaultClockJump;

namespace {

class ClockJump final : public ServerFault {
 public:
  explicit ClockJump(std::int64_t jump_ms)
      : ServerFault(kServerFaultClockJump), jump_ms_(jump_ms) {}
  void write(nlohmann::json& step) const override { step["jump_ms"] = jump_ms_; }
  std::string run(ServerFaultHost& host, std::size_t server) const override {
    return host.shift_clock(server, jump_ms_);
  }

 private:
  std::int64_t jump_ms_;
};

std::shared_ptr<const ServerFault> parse_clock_jump(const json::JsonReader& step) {
  return std::make_shared<ClockJump>(step.member("jump_ms").duration_ms(1, json::kMaxDurationMs));
}

}  // namespace

// server_fault.cc's table points here.
const ServerFaultType kServerFaultClockJump = {.word = "clock_jump",
                                               .aim = ServerFaultAim::kServer,
                                               .keys = {"jump_ms"},
                                               .shifts_clock = true,
                                               .parse = &parse_clock_jump};

}  // namespace locksim
