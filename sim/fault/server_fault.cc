// The server fault kinds, one row each (server_fault.h). A new kind is its file under
// sim/fault/server/ and one row here.
#include "sim/fault/server_fault.h"

#include <array>

namespace locksim {

// The kinds' own files define these (sim/fault/server/<word>.cc). Naming one in the table is also
// what links its file into a program: nothing registers itself at start-up.
extern const ServerFaultType kServerFaultKillServer;
extern const ServerFaultType kServerFaultRestartServer;
extern const ServerFaultType kServerFaultPauseServer;
extern const ServerFaultType kServerFaultClockJump;
extern const ServerFaultType kServerFaultCutReplication;
extern const ServerFaultType kServerFaultHealReplication;
extern const ServerFaultType kServerFaultPromote;
extern const ServerFaultType kServerFaultFailover;
extern const ServerFaultType kServerFaultClusterFailover;
extern const ServerFaultType kServerFaultMigrateSlot;
extern const ServerFaultType kServerFaultPartitionServer;

namespace {

// The table's order is the order in which the scenario parser offers the words for "do" (after
// the client actions, before the link faults) and lists them in its messages.
constexpr std::array kServerFaultKinds = {
    &kServerFaultKillServer,  &kServerFaultRestartServer,   &kServerFaultPauseServer,
    &kServerFaultClockJump,   &kServerFaultCutReplication,  &kServerFaultHealReplication,
    &kServerFaultPromote,     &kServerFaultFailover,        &kServerFaultClusterFailover,
    &kServerFaultMigrateSlot, &kServerFaultPartitionServer,
};

}  // namespace

std::span<const ServerFaultType* const> server_fault_types() { return kServerFaultKinds; }

const ServerFaultType* server_fault_type(std::string_view word) {
  for (const ServerFaultType* type : kServerFaultKinds) {
    if (type->word == word) return type;
  }
  return nullptr;
}

std::vector<std::string> server_fault_keys(const ServerFaultType& type) {
  std::vector<std::string> keys;
  if (type.aim != ServerFaultAim::kNone) keys.emplace_back("server");
  if (!type.duration_key.empty()) {
    keys.emplace_back(type.duration_key);
    keys.emplace_back("until");
    keys.emplace_back("max_ms");
  }
  keys.insert(keys.end(), type.keys.begin(), type.keys.end());
  return keys;
}

void not_on_a_cluster(const json::JsonReader& step, const ServerFaultTopology& topology) {
  if (!topology.cluster) return;
  step.member("do").fail(
      "\"" + step.member("do").string() +
      "\" is not for a Redis Cluster, whose replicas are elected by the cluster: kill the "
      "primary (\"kill_server\", then \"failover\"), or use \"cluster_failover\"");
}

}  // namespace locksim
