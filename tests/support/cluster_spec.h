// cluster_spec.h: the TopologySpec of a Redis Cluster for the cluster tests (real and simulated):
// primaries p1..pN and, with a replica each, r1..rN, as the scenario parser's "cluster" names them.
//
//   Topology::start(test_support::cluster_spec(3, 1), "lock");  // six nodes, timeout 1000 ms
#pragma once

#include <cstdint>
#include <string>

#include "sim/scenario/scenario.h"

namespace locksim::test_support {

inline TopologySpec cluster_spec(int primaries, int replicas, std::int64_t node_timeout_ms = 1000) {
  TopologySpec spec;
  spec.name = "cluster";
  spec.cluster = ClusterSpec{
      .primaries = primaries, .replicas_per_primary = replicas, .node_timeout_ms = node_timeout_ms};
  for (int i = 1; i <= primaries; ++i) {
    spec.servers.push_back({"p" + std::to_string(i), "none", ""});
  }
  for (int i = 1; i <= primaries && replicas > 0; ++i) {
    spec.servers.push_back({"r" + std::to_string(i), "none", "p" + std::to_string(i)});
  }
  return spec;
}

}  // namespace locksim::test_support
