// failover: waits, at most "max_ms" (default 30000), until the topology's Sentinel has promoted
// another server, as it does once the primary has been down (killed or paused) for its
// down-after-milliseconds, or a Redis Cluster has elected a replica in the place of the primary
// that served the lock's slot (once the other primaries counted it failing for
// cluster-node-timeout); clients follow the new primary from their next call. The step causes
// nothing itself: an earlier kill_server or pause_server of the primary does. It names no server,
// and needs a topology with Sentinel, or a cluster.
//
//   {"id": "promote", "do": "failover", "max_ms": 30000, "wait_for": {"done": "a-acquire"}}
//
// Recorded as the instant "failover", aimed at the server Sentinel promoted. The kind's own code
// is this file and its row in sim/fault/server_fault.cc. It acts through
// ServerFaultHost::wait_for_failover (sim/fault/server_fault.h), which the scripted runner
// implements through the nemesis and each topology (the real servers' and the simulator's), and
// its event is the fault kind failover (sim/fault/fault.h and fault.cc).
#include <cstdint>
#include <memory>
#include <string>

#include "sim/fault/server_fault.h"

namespace locksim {

extern const ServerFaultType kServerFaultFailover;

namespace {

// kDefaultMaxMs: long enough for Sentinel to notice (down-after-milliseconds 1000) and elect.
constexpr std::int64_t kDefaultMaxMs = 30000;

class Failover final : public ServerFault {
 public:
  explicit Failover(std::int64_t max_ms) : ServerFault(kServerFaultFailover), max_ms_(max_ms) {}
  void write(nlohmann::json& step) const override { step["max_ms"] = max_ms_; }
  std::string run(ServerFaultHost& host, std::size_t /*server*/) const override {
    return host.wait_for_failover(max_ms_);
  }

 private:
  std::int64_t max_ms_;
};

void check_failover_topology(const json::JsonReader& step, const ServerFaultTopology& topology) {
  if (!topology.sentinel && !topology.cluster) {
    step.member("do").fail(
        "\"failover\" waits for Sentinel or a Redis Cluster's election; the topology has neither "
        "(use \"topology\": \"sentinel\" or \"cluster\", or \"promote\" to promote a replica "
        "yourself)");
  }
}

std::shared_ptr<const ServerFault> parse_failover(const json::JsonReader& step) {
  std::int64_t max_ms = kDefaultMaxMs;
  if (const auto max = step.optional_member("max_ms")) {
    max_ms = max->duration_ms(1, json::kMaxDurationMs);
  }
  return std::make_shared<Failover>(max_ms);
}

}  // namespace

// server_fault.cc's table points here.
const ServerFaultType kServerFaultFailover = {.word = "failover",
                                              .aim = ServerFaultAim::kNone,
                                              .keys = {"max_ms"},
                                              .moves_primary = true,
                                              .check_topology = &check_failover_topology,
                                              .parse = &parse_failover};

}  // namespace locksim
