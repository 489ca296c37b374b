// heal_replication: the nemesis lets a replica whose link to its primary was cut
// (cut_replication) reach it again; the replica then resynchronises.
//
//   {"do": "heal_replication", "server": "replica"}
//
// Recorded as the end of the window "replication_cut". The kind's own code is this file and its
// row in sim/fault/server_fault.cc. It acts through ServerFaultHost::heal_replication
// (sim/fault/server_fault.h), which the scripted runner implements through the nemesis and each
// topology (the real servers' and the simulator's), and its window is the fault kind
// replication_cut (sim/fault/fault.h and fault.cc).
#include <memory>
#include <string>

#include "sim/fault/server_fault.h"

namespace locksim {

extern const ServerFaultType kServerFaultHealReplication;

namespace {

class HealReplication final : public ServerFault {
 public:
  HealReplication() : ServerFault(kServerFaultHealReplication) {}
  std::string run(ServerFaultHost& host, std::size_t replica) const override {
    return host.heal_replication(replica);
  }
};

std::shared_ptr<const ServerFault> parse_heal_replication(const json::JsonReader& /*step*/) {
  return std::make_shared<HealReplication>();
}

}  // namespace

// server_fault.cc's table points here.
const ServerFaultType kServerFaultHealReplication = {
    .word = "heal_replication", .aim = ServerFaultAim::kReplica, .parse = &parse_heal_replication};

}  // namespace locksim
