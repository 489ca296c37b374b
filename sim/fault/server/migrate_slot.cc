// migrate_slot: the slot of the lock key migrates from one primary of a Redis Cluster to another,
// as `redis-cli --cluster reshard` moves it: the slot is marked IMPORTING on the target and
// MIGRATING on the source for the step's window (keys stay on the source; a command for a key
// the source does not hold is answered ASK, and the client asks the target), then every key of
// the slot is moved with MIGRATE (value and remaining TTL) and the slot given to the target
// (SETSLOT NODE): the source answers MOVED from then on.
//
//   {"do": "migrate_slot", "server": "p1", "to": "p2", "migrating_ms": 500}
//   {"do": "migrate_slot", "server": "p1", "to": "p2", "until": {"inside": "B"}, "max_ms": 3000}
//
// "server" names the primary that serves the lock key's slot (p1, as the cluster topology places
// it), "to" another primary. Recorded as the window "slot_migration" aimed at the source, from
// MIGRATING until the slot is the target's. The kind's own code is this file and its row in
// sim/fault/server_fault.cc; it acts through ServerFaultHost::migrate_slot_start and
// migrate_slot_finish (the nemesis, then the Topology's).
#include <memory>
#include <string>
#include <vector>

#include "sim/fault/server_fault.h"

namespace locksim {

extern const ServerFaultType kServerFaultMigrateSlot;

namespace {

class MigrateSlot final : public ServerFault {
 public:
  explicit MigrateSlot(std::string to) : ServerFault(kServerFaultMigrateSlot), to_(std::move(to)) {}
  void write(nlohmann::json& step) const override { step["to"] = to_; }
  std::string run(ServerFaultHost& host, std::size_t from) const override {
    const std::size_t to = host.server_index(to_);
    if (std::string error = host.migrate_slot_start(from, to); !error.empty()) return error;
    host.hold_window("kept migrating the lock's slot of");
    return host.migrate_slot_finish(from, to);
  }

 private:
  std::string to_;
};

void check_migrate_slot_topology(const json::JsonReader& step,
                                 const ServerFaultTopology& topology) {
  if (!topology.cluster) {
    step.member("do").fail("\"migrate_slot\" needs a Redis Cluster (\"topology\": \"cluster\")");
  }
  std::vector<std::string> primaries;
  for (const ServerFaultServer& server : topology.servers) {
    if (server.replica_of.empty()) primaries.push_back(server.name);
  }
  const std::string from =
      step.member("server").one_of(primaries, "primary", "primaries of the cluster");
  std::vector<std::string> others;
  std::string list;
  for (const std::string& name : primaries) {
    if (name == from) continue;
    others.push_back(name);
    list += (list.empty() ? "" : ", ") + name;
  }
  if (step.member("to").value().is_string() && step.member("to").string() == from) {
    step.member("to").fail("the slot moves from \"" + from +
                           "\" to another primary; name one of: " + list);
  }
  step.member("to").one_of(others, "primary", "other primaries of the cluster");
}

std::shared_ptr<const ServerFault> parse_migrate_slot(const json::JsonReader& step) {
  return std::make_shared<MigrateSlot>(step.member("to").string());
}

}  // namespace

// server_fault.cc's table points here.
const ServerFaultType kServerFaultMigrateSlot = {.word = "migrate_slot",
                                                 .aim = ServerFaultAim::kServer,
                                                 .duration_key = "migrating_ms",
                                                 .keys = {"to"},
                                                 .check_topology = &check_migrate_slot_topology,
                                                 .parse = &parse_migrate_slot};

}  // namespace locksim
