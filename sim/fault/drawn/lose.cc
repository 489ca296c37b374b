// lose: Doc D's "lost" iteration, drawn per cycle with "lose_probability": the holder stops
// renewing (a lose_lock fault event, recorded by the client itself), stays inside for
// "lose_sleep_ms" instead of working (default, and 0: three of the lock's TTLs), then releases.
// Its lock has expired meanwhile, so another client may hold it too: the violations of such a
// faulted window are Doc D's, the others are the lock's own (summary.md counts them apart).
//
//   "workload": {"lose_probability": 0.1, "lose_sleep_ms": 3000, ...}
//
// The kind's own code is this file and its row in sim/fault/drawn_fault.cc, and the fault kind
// lose_lock that the client records (sim/fault/fault.h and fault.cc). It acts through two of the
// host's primitives (DrawnFaultHost, sim/fault/drawn_fault.h), which every host of the workload
// client already has: end_renewal (the thread client stops its watchdog, the process client asks
// its worker to with the worker protocol's stop_renewal op, the event loop ends the renewal it runs
// on its loop) and record_fault.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "sim/fault/drawn_fault.h"

namespace locksim {

extern const DrawnFaultType kDrawnLose;

namespace {

class Lose final : public DrawnFault {
 public:
  // sleep_ms: 0 until the lock's lease is known (with_lock_ttl).
  Lose(double probability, std::int64_t sleep_ms)
      : DrawnFault(kDrawnLose, probability), sleep_ms_(sleep_ms) {}

  void write(nlohmann::json& workload) const override {
    workload["lose_probability"] = probability();
    workload["lose_sleep_ms"] = sleep_ms_;
  }

  std::shared_ptr<const DrawnFault> with_lock_ttl(std::int64_t ttl_ms) const override {
    if (sleep_ms_ > 0) return nullptr;
    // Well past the lease; capped to stay a valid duration.
    return std::make_shared<Lose>(probability(), std::min(3 * ttl_ms, json::kMaxDurationMs));
  }

  double estimated_inside_ms() const override {
    return probability() * static_cast<double>(sleep_ms_);
  }

  Task<void> inside(DrawnFaultHost& host, DrawnCycle /*cycle*/) const override {
    co_await host.end_renewal();
    host.record_fault(FaultKind::kLoseLock);
    co_await host.sleep(ms_to_ns(sleep_ms_));
  }

 private:
  std::int64_t sleep_ms_;
};

std::shared_ptr<const DrawnFault> parse_lose(const json::JsonReader& workload) {
  const double probability = read_probability(workload, "lose_probability");
  std::int64_t sleep_ms = 0;
  if (const auto sleep = workload.optional_member("lose_sleep_ms")) {
    sleep_ms = sleep->duration_ms(0, json::kMaxDurationMs);
  }
  return std::make_shared<Lose>(probability, sleep_ms);
}

}  // namespace

// drawn_fault.cc's table points here.
const DrawnFaultType kDrawnLose = {.word = "lose",
                                   .keys = {"lose_probability", "lose_sleep_ms"},
                                   .slot = DrawSlot::kBeforeWork,
                                   .work_role = WorkRole::kInstead,
                                   .loses_lock = true,
                                   .parse = &parse_lose};

}  // namespace locksim
