// The workload form: N clients looping acquire -> work -> release -> rest.
#include <string>

#include "sim/scenario/scenario_parts.h"

namespace locksim::scenario_internal {
namespace {

constexpr std::int64_t kMaxClients = 256;
constexpr std::int64_t kMaxCycles = 1000000;

// parse_range: either a fixed duration (5) or an inclusive range ({"min": 1, "max": 5}).
RangeMs parse_range(const JsonReader& node) {
  if (!node.value().is_object()) {
    if (!node.value().is_number_integer()) {
      node.fail("expected an integer number of milliseconds or {\"min\": ms, \"max\": ms}, got " +
                describe(node.value()));
    }
    const std::int64_t fixed_ms = node.duration_ms(0, kMaxDurationMs);
    return RangeMs{fixed_ms, fixed_ms};
  }
  node.expect_object({"min", "max"});
  RangeMs range;
  range.min_ms = node.member("min").duration_ms(0, kMaxDurationMs);
  range.max_ms = node.member("max").duration_ms(0, kMaxDurationMs);
  if (range.min_ms > range.max_ms) {
    node.fail("\"min\" (" + std::to_string(range.min_ms) + ") must not exceed \"max\" (" +
              std::to_string(range.max_ms) + ")");
  }
  return range;
}

nlohmann::json resolved_range(const RangeMs& range) {
  return {{"min", range.min_ms}, {"max", range.max_ms}};
}

}  // namespace

Workload parse_workload(const JsonReader& node) {
  node.expect_object({"clients", "cycles", "keys", "work_ms", "rest_ms", "crash_probability",
                      "lose_probability", "lose_sleep_ms", "warmup_ms", "duration_ms",
                      "arrival_per_s", "client_mode", "pause_probability", "pause_ms",
                      "lost_reply_probability"});
  Workload workload;
  if (const auto clients = node.optional_member("clients")) {
    workload.clients = static_cast<int>(clients->count(1, kMaxClients, "a number of clients"));
  }
  if (const auto cycles = node.optional_member("cycles")) {
    workload.cycles = static_cast<int>(cycles->count(1, kMaxCycles, "a number of cycles"));
  }
  if (const auto keys = node.optional_member("keys")) {
    // More keys than clients would leave keys no client ever locks.
    workload.keys =
        static_cast<int>(keys->count(1, workload.clients, "a number of keys (1..clients)"));
  }
  if (const auto work = node.optional_member("work_ms")) workload.work_ms = parse_range(*work);
  if (const auto rest = node.optional_member("rest_ms")) workload.rest_ms = parse_range(*rest);
  if (const auto crash = node.optional_member("crash_probability")) {
    workload.crash_probability = crash->probability();
  }
  if (const auto lose = node.optional_member("lose_probability")) {
    workload.lose_probability = lose->probability();
  }
  if (const auto lose_sleep = node.optional_member("lose_sleep_ms")) {
    workload.lose_sleep_ms = lose_sleep->duration_ms(0, kMaxDurationMs);
  }
  if (const auto warmup = node.optional_member("warmup_ms")) {
    workload.warmup_ms = warmup->duration_ms(0, kMaxDurationMs);
  }
  if (const auto duration = node.optional_member("duration_ms")) {
    workload.duration_ms = duration->duration_ms(1, kMaxDurationMs);
  }
  if (const auto rate = node.optional_member("arrival_per_s")) {
    workload.arrival_per_s = rate->number("acquires per second per client");
    if (!(workload.arrival_per_s >= 0.001 && workload.arrival_per_s <= 1e6)) {
      rate->fail("expected acquires per second per client between 0.001 and 1000000, got " +
                 describe(rate->value()));
    }
  }
  if (const auto pause = node.optional_member("pause_probability")) {
    workload.pause_probability = pause->probability();
  }
  if (const auto pause_ms = node.optional_member("pause_ms")) {
    workload.pause_ms = parse_range(*pause_ms);
  } else if (workload.pause_probability > 0) {
    node.fail("\"pause_probability\" needs \"pause_ms\", how long a paused holder stays frozen");
  }
  if (const auto lost = node.optional_member("lost_reply_probability")) {
    workload.lost_reply_probability = lost->probability();
  }
  return workload;
}

nlohmann::json resolved_workload(const Workload& workload) {
  nlohmann::json resolved = {{"clients", workload.clients},
          {"cycles", workload.cycles},
          {"keys", workload.keys},
          {"work_ms", resolved_range(workload.work_ms)},
          {"rest_ms", resolved_range(workload.rest_ms)},
          {"crash_probability", workload.crash_probability},
          {"lose_probability", workload.lose_probability},
          {"lose_sleep_ms", workload.lose_sleep_ms}};
  if (workload.duration_ms > 0) {
    resolved["warmup_ms"] = workload.warmup_ms;
    resolved["duration_ms"] = workload.duration_ms;
  }
  if (workload.arrival_per_s > 0) resolved["arrival_per_s"] = workload.arrival_per_s;
  if (workload.pause_probability > 0) {
    resolved["pause_probability"] = workload.pause_probability;
    resolved["pause_ms"] = resolved_range(workload.pause_ms);
  }
  if (workload.lost_reply_probability > 0) {
    resolved["lost_reply_probability"] = workload.lost_reply_probability;
  }
  return resolved;
}

}  // namespace locksim::scenario_internal
