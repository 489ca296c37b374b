// partition_server: a server of a Redis Cluster is cut off from the rest of the cluster for a
// window, as a network partition would leave it on the minority side, while the clients on its
// side still reach it: its cluster bus is cut from every other node's, both ways (a relay in
// front of each node's bus tells the nodes apart by their messages' headers), and so are the
// replication links between it and its replicas (or its primary).
//
// A primary cut off for longer than cluster-node-timeout is counted failing by the majority,
// which elects its replica; meanwhile it goes on taking writes from its clients until it counts
// the majority failing itself (after cluster-node-timeout, then it answers CLUSTERDOWN), and a
// write it took is lost when it rejoins as the new primary's replica. Cut off for less, nothing
// changes.
//
//   {"do": "partition_server", "server": "p1", "partition_ms": 3000}
//   {"do": "partition_server", "server": "p1", "until": {"done": "b-acquire"}, "max_ms": 30000}
//
// Recorded as the window "server_partition" aimed at the server. The kind's own code is this
// file and its row in sim/fault/server_fault.cc; it acts through ServerFaultHost::partition and
// heal_partition (the nemesis, then Topology::isolate and rejoin).
#include <memory>
#include <string>

#include "sim/fault/server_fault.h"

namespace locksim {

extern const ServerFaultType kServerFaultPartitionServer;

namespace {

class PartitionServer final : public ServerFault {
 public:
  PartitionServer() : ServerFault(kServerFaultPartitionServer) {}
  std::string run(ServerFaultHost& host, std::size_t server) const override {
    if (std::string error = host.partition(server); !error.empty()) return error;
    host.hold_window("cut off");
    return host.heal_partition(server);
  }
};

void check_partition_server_topology(const json::JsonReader& step,
                                     const ServerFaultTopology& topology) {
  if (!topology.cluster) {
    step.member("do").fail(
        "\"partition_server\" cuts a node off from the rest of a Redis Cluster (\"topology\": "
        "\"cluster\"); to cut a client off, use \"partition\" with a \"client\"");
  }
}

std::shared_ptr<const ServerFault> parse_partition_server(const json::JsonReader& /*step*/) {
  return std::make_shared<PartitionServer>();
}

}  // namespace

// server_fault.cc's table points here.
const ServerFaultType kServerFaultPartitionServer = {
    .word = "partition_server",
    .aim = ServerFaultAim::kServer,
    .duration_key = "partition_ms",
    .check_topology = &check_partition_server_topology,
    .parse = &parse_partition_server};

}  // namespace locksim
