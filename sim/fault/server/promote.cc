// promote: the nemesis promotes a replica to primary (REPLICAOF NO ONE), as an operator or a
// failover script would; clients follow it from their next call. A key the replica had not
// received yet (replication is asynchronous) is not there: a lock it never saw is free again.
//
//   {"id": "promote", "do": "promote", "server": "replica"}
//
// Recorded as the instant "promote". The kind's own code is this file and its row in
// sim/fault/server_fault.cc. It acts through ServerFaultHost::promote (sim/fault/server_fault.h),
// which the scripted runner implements through the nemesis and each topology (the real servers'
// and the simulator's), and its event is the fault kind promote (sim/fault/fault.h and
// fault.cc).
#include <memory>
#include <string>

#include "sim/fault/server_fault.h"

namespace locksim {

extern const ServerFaultType kServerFaultPromote;

namespace {

class Promote final : public ServerFault {
 public:
  Promote() : ServerFault(kServerFaultPromote) {}
  std::string run(ServerFaultHost& host, std::size_t replica) const override {
    return host.promote(replica);
  }
};

std::shared_ptr<const ServerFault> parse_promote(const json::JsonReader& /*step*/) {
  return std::make_shared<Promote>();
}

}  // namespace

// server_fault.cc's table points here.
const ServerFaultType kServerFaultPromote = {.word = "promote",
                                             .aim = ServerFaultAim::kReplica,
                                             .moves_primary = true,
                                             .check_topology = &not_on_a_cluster,
                                             .parse = &parse_promote};

}  // namespace locksim
