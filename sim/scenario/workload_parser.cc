// The workload form: N clients looping acquire -> work -> release -> rest.
#include <string>

#include "sim/scenario/scenario_parts.h"

namespace locksim::scenario_internal {
namespace {

constexpr std::int64_t kMaxClients = 256;
constexpr std::int64_t kMaxCycles = 1000000;

// parse_range: either a fixed duration (5) or an inclusive range ({"min": 1, "max": 5}).
RangeMs parse_range(const JsonReader& node) { return node.duration_range_ms(0, kMaxDurationMs); }

}  // namespace

Workload parse_workload(const JsonReader& node) {
  // The workload's own keys, then each drawn fault kind's.
  std::vector<std::string> allowed = {"clients",     "cycles",    "keys",        "work_ms",
                                      "rest_ms",     "warmup_ms", "duration_ms", "arrival_per_s",
                                      "client_mode", "read_share"};
  for (const DrawnFaultType* type : drawn_fault_types()) {
    allowed.insert(allowed.end(), type->keys.begin(), type->keys.end());
  }
  node.expect_object(allowed);
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
  if (const auto share = node.optional_member("read_share")) {
    workload.read_share = share->number("a share of read holds");
    if (!(workload.read_share >= 0 && workload.read_share <= 1)) {
      share->fail("expected a share of read holds between 0 and 1, got " +
                  describe(share->value()));
    }
  }
  for (const DrawnFaultType* type : drawn_fault_types()) {
    workload.drawn_faults.push_back(type->parse(node));
  }
  return workload;
}

nlohmann::json resolved_workload(const Workload& workload) {
  nlohmann::json resolved = {{"clients", workload.clients},
                             {"cycles", workload.cycles},
                             {"keys", workload.keys},
                             {"work_ms", json::range_json(workload.work_ms)},
                             {"rest_ms", json::range_json(workload.rest_ms)}};
  if (workload.duration_ms > 0) {
    resolved["warmup_ms"] = workload.warmup_ms;
    resolved["duration_ms"] = workload.duration_ms;
  }
  if (workload.arrival_per_s > 0) resolved["arrival_per_s"] = workload.arrival_per_s;
  if (workload.read_share > 0) resolved["read_share"] = workload.read_share;
  for (const std::shared_ptr<const DrawnFault>& fault : workload.drawn_faults) {
    fault->write(resolved);
  }
  return resolved;
}

}  // namespace locksim::scenario_internal
