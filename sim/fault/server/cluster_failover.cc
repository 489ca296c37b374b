// cluster_failover: an operator's manual failover on a Redis Cluster: CLUSTER FAILOVER sent to a
// replica, which becomes the primary of its primary's slots; clients find it by the MOVED answers
// of the old primary (now its replica). The default mode waits until the replica has every write
// of its primary (the primary holds its clients meanwhile), so nothing is lost; "force" does not
// wait for the primary (it may be down), and "takeover" does not even ask the other primaries
// (no election): a write the replica had not received is lost, as with an automatic failover.
//
//   {"do": "cluster_failover", "server": "r1"}
//   {"do": "cluster_failover", "server": "r1", "mode": "takeover", "max_ms": 10000}
//
// Returns once the replica serves as a primary of an ok cluster (at most "max_ms", default
// 30000; a manual failover that Redis gave up after its own 5 s is asked again). Recorded as the instant "cluster_failover" aimed at the replica. The kind's own code is
// this file and its row in sim/fault/server_fault.cc; it acts through
// ServerFaultHost::cluster_failover (the nemesis, then Topology::cluster_failover).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/fault/server_fault.h"

namespace locksim {

extern const ServerFaultType kServerFaultClusterFailover;

namespace {

// kClusterFailoverMaxMs: room for a few manual failovers of Redis's own 5 s limit each (one that
// times out on a loaded machine is asked again).
constexpr std::int64_t kClusterFailoverMaxMs = 30000;

class ClusterFailover final : public ServerFault {
 public:
  ClusterFailover(std::string mode, std::int64_t max_ms)
      : ServerFault(kServerFaultClusterFailover), mode_(std::move(mode)), max_ms_(max_ms) {}
  void write(nlohmann::json& step) const override {
    step["mode"] = mode_;
    step["max_ms"] = max_ms_;
  }
  std::string run(ServerFaultHost& host, std::size_t replica) const override {
    return host.cluster_failover(replica, mode_ == "default" ? "" : mode_, max_ms_);
  }

 private:
  std::string mode_;
  std::int64_t max_ms_;
};

void check_cluster_failover_topology(const json::JsonReader& step,
                                     const ServerFaultTopology& topology) {
  if (!topology.cluster) {
    step.member("do").fail(
        "\"cluster_failover\" needs a Redis Cluster (\"topology\": \"cluster\"); on a primary "
        "with a replica, \"promote\" promotes it");
  }
}

std::shared_ptr<const ServerFault> parse_cluster_failover(const json::JsonReader& step) {
  std::string mode = "default";
  if (const auto word = step.optional_member("mode")) {
    mode = word->one_of({"default", "force", "takeover"}, "mode", "modes");
  }
  std::int64_t max_ms = kClusterFailoverMaxMs;
  if (const auto max = step.optional_member("max_ms")) {
    max_ms = max->duration_ms(1, json::kMaxDurationMs);
  }
  return std::make_shared<ClusterFailover>(std::move(mode), max_ms);
}

}  // namespace

// server_fault.cc's table points here.
const ServerFaultType kServerFaultClusterFailover = {
    .word = "cluster_failover",
    .aim = ServerFaultAim::kReplica,
    .keys = {"mode", "max_ms"},
    .moves_primary = true,
    .check_topology = &check_cluster_failover_topology,
    .parse = &parse_cluster_failover};

}  // namespace locksim
