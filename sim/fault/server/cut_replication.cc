// cut_replication: the nemesis cuts a replica's link to its primary (the relay between them
// closes it and refuses it until heal_replication), as a network partition between the two
// would: writes to the primary no longer reach the replica, so a promotion meanwhile loses them.
//
//   {"id": "cut", "do": "cut_replication", "server": "replica"}
//
// Recorded as the start of the window "replication_cut". The kind's own code is this file and
// its row in sim/fault/server_fault.cc. It acts through ServerFaultHost::cut_replication
// (sim/fault/server_fault.h), which the scripted runner implements through the nemesis and each
// topology (the real servers' and the simulator's), and its window is the fault kind
// replication_cut (sim/fault/fault.h and fault.cc).
#include <memory>
#include <string>

#include "sim/fault/server_fault.h"

namespace locksim {

extern const ServerFaultType kServerFaultCutReplication;

namespace {

class CutReplication final : public ServerFault {
 public:
  CutReplication() : ServerFault(kServerFaultCutReplication) {}
  std::string run(ServerFaultHost& host, std::size_t replica) const override {
    return host.cut_replication(replica);
  }
};

std::shared_ptr<const ServerFault> parse_cut_replication(const json::JsonReader& /*step*/) {
  return std::make_shared<CutReplication>();
}

}  // namespace

// server_fault.cc's table points here.
const ServerFaultType kServerFaultCutReplication = {
    .word = "cut_replication", .aim = ServerFaultAim::kReplica, .parse = &parse_cut_replication};

}  // namespace locksim
