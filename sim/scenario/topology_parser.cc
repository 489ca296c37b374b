// "topology": the private servers a scenario's runs start: a name, or an object with a name or
// a list of servers, a persistence for all of them, and whether Sentinel watches.
#include <algorithm>
#include <map>
#include <regex>
#include <string>

#include "sim/scenario/scenario_parts.h"

namespace locksim {

std::size_t TopologySpec::server_index(const std::string& server) const {
  for (std::size_t i = 0; i < servers.size(); ++i) {
    if (servers[i].name == server) return i;
  }
  return servers.size();
}

namespace scenario_internal {
namespace {

const std::vector<std::string> kTopologyNames = {
    "single", "primary_replica", "sentinel", "redlock_3", "redlock_5", "redlock_7", "cluster"};
const std::vector<std::string> kPersistence = {"none", "aof_always", "aof_everysec"};
constexpr std::size_t kMaxServers = 9;

// cluster_servers: p1..pN, then r1..rN (the first replica of each), then s1..sN (the second).
std::vector<ServerSpec> cluster_servers(const ClusterSpec& cluster) {
  std::vector<ServerSpec> servers;
  for (int i = 1; i <= cluster.primaries; ++i) {
    servers.push_back({"p" + std::to_string(i), "none", ""});
  }
  for (int r = 0; r < cluster.replicas_per_primary; ++r) {
    for (int i = 1; i <= cluster.primaries; ++i) {
      servers.push_back(
          {(r == 0 ? "r" : "s") + std::to_string(i), "none", "p" + std::to_string(i)});
    }
  }
  return servers;
}

ClusterSpec parse_cluster(const JsonReader& node) {
  ClusterSpec cluster;
  node.expect_object({"primaries", "replicas_per_primary", "node_timeout_ms"});
  if (const auto primaries = node.optional_member("primaries")) {
    // Fewer than three primaries cannot elect a replica (a majority of primaries votes).
    cluster.primaries = static_cast<int>(primaries->count(3, 5, "primaries"));
  }
  if (const auto replicas = node.optional_member("replicas_per_primary")) {
    cluster.replicas_per_primary = static_cast<int>(replicas->count(0, 2, "replicas per primary"));
  }
  if (const auto timeout = node.optional_member("node_timeout_ms")) {
    cluster.node_timeout_ms = timeout->duration_ms(100, 60000);
  }
  return cluster;
}

std::vector<ServerSpec> named_servers(const std::string& name) {
  if (name == "single") return {{"n1", "none", ""}};
  if (name == "cluster") return cluster_servers(ClusterSpec{});
  if (name == "primary_replica" || name == "sentinel") {
    return {{"primary", "none", ""}, {"replica", "none", "primary"}};
  }
  const int count = std::stoi(name.substr(std::string("redlock_").size()));
  std::vector<ServerSpec> servers;
  for (int i = 1; i <= count; ++i) servers.push_back({"n" + std::to_string(i), "none", ""});
  return servers;
}

}  // namespace

TopologySpec parse_topology(const JsonReader& node) {
  static const std::regex kServerName("[a-z][a-z0-9_]{0,15}");
  TopologySpec topology;
  if (node.value().is_string()) {
    topology.name = node.one_of(kTopologyNames, "topology", "named topologies");
    topology.servers = named_servers(topology.name);
    topology.sentinel = topology.name == "sentinel";
    if (topology.name == "cluster") topology.cluster = ClusterSpec{};
    return topology;
  }
  node.expect_object({"name", "servers", "persistence", "sentinel", "cluster"});
  if (static_cast<int>(node.has("name")) + static_cast<int>(node.has("servers")) +
          static_cast<int>(node.has("cluster")) !=
      1) {
    node.fail("give one of \"name\" (one of " + join(kTopologyNames) +
              "), \"servers\" (a list of servers) or \"cluster\" (a Redis Cluster's shape)");
  }
  if (node.has("cluster")) {
    topology.name = "cluster";
    topology.cluster = parse_cluster(node.member("cluster"));
    topology.servers = cluster_servers(*topology.cluster);
  } else if (node.has("name")) {
    topology.name = node.member("name").one_of(kTopologyNames, "topology", "named topologies");
    topology.servers = named_servers(topology.name);
    topology.sentinel = topology.name == "sentinel";
    if (topology.name == "cluster") topology.cluster = ClusterSpec{};
  } else {
    topology.name = "custom";
    const JsonReader list = node.member("servers");
    const std::vector<JsonReader> elements = list.elements(/*non_empty=*/true);
    if (elements.size() > kMaxServers) {
      list.fail("expected 1 to " + std::to_string(kMaxServers) + " servers, got " +
                std::to_string(elements.size()));
    }
    std::map<std::string, std::string> path_of;
    for (const JsonReader& element : elements) {
      element.expect_object({"name", "persistence", "replica_of"});
      ServerSpec server;
      server.name = element.member("name").matching(
          kServerName, "a server name of 1 to 16 lowercase letters, digits or '_'");
      const auto [previous, inserted] = path_of.emplace(server.name, element.path());
      if (!inserted) {
        element.member("name").fail("duplicate server \"" + server.name + "\" (also at " +
                                    previous->second + ")");
      }
      if (const auto persistence = element.optional_member("persistence")) {
        server.persistence = persistence->one_of(kPersistence, "persistence", "allowed");
      }
      topology.servers.push_back(std::move(server));
    }
    for (std::size_t i = 0; i < elements.size(); ++i) {
      const auto replica_of = elements[i].optional_member("replica_of");
      if (!replica_of) continue;
      std::vector<std::string> primaries;
      for (const ServerSpec& other : topology.servers) {
        if (other.name != topology.servers[i].name) primaries.push_back(other.name);
      }
      // A server named as its own primary is a slip worth its own words (else it would read as
      // an unknown server, and with one server as a choice among none).
      if (replica_of->string() == topology.servers[i].name) {
        replica_of->fail("\"" + topology.servers[i].name +
                         "\" cannot be a replica of itself; name another server of the list" +
                         (primaries.empty() ? std::string(" (this list has no other)")
                                            : ": " + join(primaries)));
      }
      topology.servers[i].replica_of = replica_of->one_of(primaries, "server", "other servers");
    }
    for (const ServerSpec& server : topology.servers) {
      if (!server.replica_of.empty() &&
          !topology.servers[topology.server_index(server.replica_of)].replica_of.empty()) {
        list.fail("\"" + server.name + "\" is a replica of \"" + server.replica_of +
                  "\", which is itself a replica; chains of replicas are not supported");
      }
    }
    if (topology.servers.front().replica_of != "") {
      list.fail("the first server is where clients connect, so it must be a primary");
    }
  }
  if (const auto persistence = node.optional_member("persistence")) {
    const std::string value = persistence->one_of(kPersistence, "persistence", "allowed");
    for (ServerSpec& server : topology.servers) server.persistence = value;
  }
  if (const auto sentinel = node.optional_member("sentinel")) {
    topology.sentinel = sentinel->boolean();
    if (topology.sentinel && topology.cluster) {
      sentinel->fail(
          "a Redis Cluster elects its own replicas; Sentinel watches a primary that is "
          "not in a cluster");
    }
    if (topology.sentinel &&
        std::none_of(topology.servers.begin(), topology.servers.end(),
                     [](const ServerSpec& s) { return !s.replica_of.empty(); })) {
      sentinel->fail("Sentinel needs a replica to promote; add a server with \"replica_of\"");
    }
  }
  return topology;
}

nlohmann::json resolved_topology(const TopologySpec& topology) {
  nlohmann::json servers = nlohmann::json::array();
  for (const ServerSpec& server : topology.servers) {
    nlohmann::json entry = {{"name", server.name}, {"persistence", server.persistence}};
    if (!server.replica_of.empty()) entry["replica_of"] = server.replica_of;
    servers.push_back(std::move(entry));
  }
  if (topology.cluster) {
    // Its servers follow from its shape (and load again from it); their persistence is one.
    return {{"cluster",
             {{"primaries", topology.cluster->primaries},
              {"replicas_per_primary", topology.cluster->replicas_per_primary},
              {"node_timeout_ms", topology.cluster->node_timeout_ms}}},
            {"persistence", topology.servers.front().persistence}};
  }
  return {{"servers", servers}, {"sentinel", topology.sentinel}};
}

}  // namespace scenario_internal
}  // namespace locksim
