// benchmark.h: what the server itself can serve, measured by redis-benchmark, the yardstick
// contention reports and the harness bench read locksim's throughput against.
//
//   const double ops = server_capacity(server.endpoint(), "locksim:run:");  // 0: not measured
//   const double cluster_ops = cluster_capacity(topology->endpoint(0), "locksim:run:");
#pragma once

#include <string>

#include "sim/redis/endpoint.h"

namespace locksim {

// server_capacity: SET NX PX operations per second the server serves to `clients` parallel
// clients, measured by /usr/bin/redis-benchmark (`requests` requests on random keys under
// `prefix`, expiring in 10 s); 0 if redis-benchmark is missing or failed. Only for a server
// without a password (the private one): a password would show on the command line.
// cluster_capacity: the same of the Redis Cluster `endpoint` is a node of (redis-benchmark
// --cluster: it reads the cluster's primaries from that node, spreads the clients over them and
// puts each client's keys in a slot of its own primary, through the key's "{tag}").
double server_capacity(const Endpoint& endpoint, const std::string& prefix, int clients = 50,
                       int requests = 100000);
double cluster_capacity(const Endpoint& endpoint, const std::string& prefix, int clients = 50,
                        int requests = 100000);

}  // namespace locksim
