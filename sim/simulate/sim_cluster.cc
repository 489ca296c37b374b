// sim_cluster.cc: SimTopology's Redis Cluster: its nodes' views (ModelCluster), the cron of the
// cluster (failure detection, elections, a cut-off node's minority), and its own faults (a
// manual CLUSTER FAILOVER, a slot migration, a node's partition from the rest).
//
// The timings are Redis 7.0.15's (cluster.c): a node not heard for cluster-node-timeout is
// PFAIL, FAIL once a majority of the primaries flag it (gossip: 200 to 800 ms more here); a
// replica of a FAIL primary asks for votes 500 ms + 0 to 500 ms + 1000 ms per replica that
// received more (clusterGetSlaveRank) after the FAIL, if its data is not too old (its link down
// for less than cluster-node-timeout x 10 + 10 s) and wins with a majority of the primaries
// that serve slots; a node that hears no majority of them for cluster-node-timeout says the
// cluster is down, and a primary that was in such a minority waits the rejoin delay
// (cluster-node-timeout, 500 ms to 5 s) after it hears them again; a restarted primary waits
// CLUSTER_WRITABLE_DELAY (2 s). While a failed primary's slots are not served, every node of
// the majority says the cluster is down (cluster-require-full-coverage yes).
#include <algorithm>
#include <cstdio>

#include "sim/core/assert.h"
#include "sim/redis/key_slot.h"
#include "sim/simulate/sim_topology.h"

namespace locksim {
namespace {

// kClusterTickNs: how often the model's cluster looks (Redis's clusterCron runs every 100 ms; its
// gossip reaches the other nodes within a round trip, which a tick stands for).
constexpr Nanos kClusterTickNs = 10'000'000;
// kGossipMinNs, kGossipMaxNs: how much later than cluster-node-timeout the majority flags a node
// FAIL (the cron that notices PFAIL, and the gossip that carries a majority's reports: a ping a
// second to a random node, and to those not heard for half the timeout). Drawn so that a
// killed primary's replica is elected 1.7 to 2.8 s after the kill with cluster-node-timeout
// 1000 ms: real elections here took 1.94 to 2.3 s (docs/faults.md).
constexpr Nanos kGossipMinNs = 200'000'000;
constexpr Nanos kGossipMaxNs = 800'000'000;
// A replica's election: 500 ms + up to 500 ms + 1000 ms per rank (clusterHandleSlaveFailover).
constexpr Nanos kElectionDelayNs = 500'000'000;
constexpr Nanos kElectionJitterNs = 500'000'000;
constexpr Nanos kElectionRankNs = 1'000'000'000;
// A manual failover's handshake and election on one machine, and a TAKEOVER's epoch bump.
constexpr Nanos kManualFailoverMinNs = 1'000'000;
constexpr Nanos kManualFailoverMaxNs = 10'000'000;
// CLUSTER_MF_TIMEOUT: a manual failover the replica cannot complete is given up after 5 s.
constexpr Nanos kManualFailoverTimeoutNs = 5'000'000'000;
// cluster-replica-validity-factor 10 and repl-ping-replica-period 10 s (the defaults).
constexpr std::int64_t kValidityFactor = 10;
constexpr Nanos kReplPingPeriodNs = 10'000'000'000;

// node_id: a node's 40 hex digits, made from its index (a real node draws its own).
std::string node_id(std::size_t index) {
  std::string id;
  std::uint64_t x = 0x9e3779b97f4a7c15ULL * (index + 1);
  while (id.size() < 40) {
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ULL;
    char buffer[17];
    std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(x));
    id += buffer;
  }
  id.resize(40);
  return id;
}

}  // namespace

void SimTopology::form_cluster(std::string_view anchor_key) {
  const ClusterSpec& shape = *spec_.cluster;
  anchor_slot_ = key_slot(anchor_key);
  node_timeout_ns_ = ms_to_ns(shape.node_timeout_ms);
  config_.slots.assign(kClusterSlots, -1);
  for (std::size_t i = 0; i < servers_.size(); ++i) {
    ModelClusterNode node;
    node.host = endpoints_[i].host;
    node.port = endpoints_[i].port;
    node.id = node_id(i);
    node.primary = spec_.servers[i].replica_of.empty()
                       ? -1
                       : static_cast<int>(spec_.server_index(spec_.servers[i].replica_of));
    config_.nodes.push_back(std::move(node));
  }
  // The shares of ProcessTopology's (cluster.cc share_of): from the anchor slot, wrapping.
  const int primaries = shape.primaries;
  const int size = kClusterSlots / primaries;
  for (int p = 0; p < primaries; ++p) {
    const int first = (anchor_slot_ + p * size) % kClusterSlots;
    const int count = p == primaries - 1 ? kClusterSlots - p * size : size;
    for (int k = 0; k < count; ++k) {
      config_.slots[static_cast<std::size_t>((first + k) % kClusterSlots)] =
          static_cast<std::int16_t>(spec_.server_index("p" + std::to_string(p + 1)));
    }
  }
  nodes_.assign(servers_.size(), ClusterNode{});
  changed();
  view_versions_.assign(servers_.size(), config_version_);
  for (std::size_t i = 0; i < servers_.size(); ++i) {
    ModelCluster view = config_;
    view.myself = static_cast<int>(i);
    servers_[i]->enable_cluster(std::move(view));
  }
  primary_ = spec_.server_index("p1");
}

bool SimTopology::heard(std::size_t server) const {
  return !hosts_[server]->down && !hosts_[server]->paused && !nodes_[server].isolated;
}

bool SimTopology::serves_slots(std::size_t server) const {
  return config_.nodes[server].primary < 0 && slot_counts_[server] > 0;
}

void SimTopology::changed() {
  slot_counts_.assign(servers_.size(), 0);
  for (const std::int16_t owner : config_.slots) {
    if (owner >= 0) ++slot_counts_[static_cast<std::size_t>(owner)];
  }
  ++config_version_;
}

int SimTopology::quorum() const {
  int size = 0;
  for (std::size_t i = 0; i < servers_.size(); ++i) size += serves_slots(i) ? 1 : 0;
  return size / 2 + 1;
}

int SimTopology::votes() const {
  int count = 0;
  for (std::size_t i = 0; i < servers_.size(); ++i) {
    count += serves_slots(i) && heard(i) && !config_.nodes[i].failed ? 1 : 0;
  }
  return count;
}

bool SimTopology::cluster_ok(std::size_t server) const {
  const ClusterNode& node = nodes_[server];
  if (node.isolated) return !node.minority;
  if (simulation_.now() < node.writable_at) return false;
  for (std::size_t i = 0; i < servers_.size(); ++i) {
    if (config_.nodes[i].failed && serves_slots(i)) return false;  // slots nobody serves
  }
  return true;
}

void SimTopology::publish() {
  for (std::size_t i = 0; i < servers_.size(); ++i) {
    ModelCluster& view = *servers_[i]->cluster();
    if (nodes_[i].isolated) {
      view.ok = cluster_ok(i);  // it knows only its own plight
      continue;
    }
    if (!heard(i)) continue;
    if (view_versions_[i] != config_version_) {
      view.nodes = config_.nodes;
      view.slots = config_.slots;
      view_versions_[i] = config_version_;
    }
    view.migrating = nodes_[i].migrating;
    view.importing = nodes_[i].importing;
    view.ok = cluster_ok(i);
    reconcile(i);
  }
}

void SimTopology::reconcile(std::size_t server) {
  const int primary = config_.nodes[server].primary;
  if (primary < 0) return;
  // A node the configuration names a replica of `primary` replicates it (a former primary that
  // was failed over: a full sync from its successor, its own writes lost).
  const Replication* r = replication_of(server);
  if (r != nullptr && r->primary == static_cast<std::size_t>(primary)) return;
  link(static_cast<std::size_t>(primary), server);
}

int SimTopology::rank(std::size_t replica) const {
  const int primary = config_.nodes[replica].primary;
  std::size_t mine = SIZE_MAX;
  for (const Replication& r : replications_) {
    if (r.replica == replica && r.link && r.link->attached()) mine = r.link->pending();
  }
  int rank = 0;
  for (const Replication& r : replications_) {
    if (r.replica == replica || !r.link || !r.link->attached()) continue;
    if (config_.nodes[r.replica].primary == primary && r.link->pending() < mine) ++rank;
  }
  return rank;
}

void SimTopology::elect(std::size_t replica) {
  const auto old = static_cast<std::size_t>(config_.nodes[replica].primary);
  LOCKSIM_ASSERT(config_.nodes[replica].primary >= 0);
  // The replica stops replicating and serves what it has: what had not reached it is lost.
  servers_[replica]->promote();
  for (Replication& r : replications_) {
    if (r.replica == replica && r.link) r.link.reset();
  }
  config_.nodes[replica].primary = -1;
  config_.nodes[replica].failed = false;
  nodes_[replica].election_at = -1;
  for (std::int16_t& owner : config_.slots) {
    if (owner == static_cast<std::int16_t>(old)) owner = static_cast<std::int16_t>(replica);
  }
  // The other replicas of the old primary, and the old primary itself, follow the new one.
  for (std::size_t i = 0; i < servers_.size(); ++i) {
    if (i == replica) continue;
    if (config_.nodes[i].primary == static_cast<int>(old) || i == old) {
      config_.nodes[i].primary = static_cast<int>(replica);
      nodes_[i].election_at = -1;
      // One that does not hear the cluster now learns it when it does (publish, restart).
      if (heard(i)) link(replica, i);
    }
  }
  changed();
  publish();
}

void SimTopology::cluster_tick() {
  while (!stopped_) {
    const Nanos now = simulation_.now();
    for (std::size_t i = 0; i < servers_.size(); ++i) {
      ClusterNode& node = nodes_[i];
      ModelClusterNode& known = config_.nodes[i];
      // Failure detection, as the majority sees node i.
      if (!heard(i)) {
        if (node.unreachable_since < 0) {
          node.unreachable_since = now;
          node.fail_at =
              now + node_timeout_ns_ + simulation_.rng().uniform(kGossipMinNs, kGossipMaxNs);
        }
        if (!known.failed && now >= node.fail_at) {
          // The primaries that flag it: a majority of those serving slots, itself not counted.
          if (votes() >= quorum()) {
            known.failed = true;
            node.fail_time = now;
            changed();
          }
        }
      } else {
        node.unreachable_since = -1;
        // clearNodeFailureIfNeeded: a replica, or a primary without slots, at once; a primary
        // still serving slots after cluster-node-timeout x 2 (no replica took over).
        if (known.failed && (!serves_slots(i) || now - node.fail_time > 2 * node_timeout_ns_)) {
          known.failed = false;
          changed();
        }
      }
      // A cut-off node's own view: no majority heard for cluster-node-timeout.
      if (node.isolated && !node.minority && now >= node.minority_at) node.minority = true;
      // A replica's link.
      if (known.primary >= 0) {
        const Replication* r = replication_of(i);
        const bool flows = r != nullptr && flowing(*r);
        if (flows) {
          node.link_down_since = -1;
        } else if (node.link_down_since < 0) {
          node.link_down_since = now;
        }
      }
    }
    // Elections: the replicas of a failed primary that serves slots.
    for (std::size_t i = 0; i < servers_.size(); ++i) {
      ClusterNode& node = nodes_[i];
      const int primary = config_.nodes[i].primary;
      if (primary < 0) continue;
      const auto p = static_cast<std::size_t>(primary);
      if (!config_.nodes[p].failed || !serves_slots(p) || !heard(i)) {
        node.election_at = -1;
        continue;
      }
      if (node.election_at < 0) {
        node.election_at = now + kElectionDelayNs +
                           simulation_.rng().uniform(0, kElectionJitterNs) +
                           kElectionRankNs * rank(i);
        continue;
      }
      if (now < node.election_at) continue;
      // Too old a copy may not fail over (clusterHandleSlaveFailover's data age).
      Nanos age = node.link_down_since < 0 ? 0 : now - node.link_down_since;
      if (age > node_timeout_ns_) age -= node_timeout_ns_;
      if (age > kReplPingPeriodNs + node_timeout_ns_ * kValidityFactor) continue;
      if (votes() >= quorum()) {
        elect(i);
      } else {
        // No majority: asked again after cluster-node-timeout x 2 (at least 4 s).
        node.election_at = now + std::max<Nanos>(2 * node_timeout_ns_, ms_to_ns(4000));
      }
    }
    publish();
    simulation_.sleep_until(simulation_.now() + kClusterTickNs);
  }
}

bool SimTopology::serves_lock(std::size_t server) const {
  if (!cluster()) return primary() == server;
  if (hosts_[server]->down || hosts_[server]->paused) return false;
  const ModelCluster& view = *servers_[server]->cluster();
  return view.slots[anchor_slot_] == static_cast<std::int16_t>(server) &&
         !servers_[server]->is_replica() && view.ok;
}

std::string SimTopology::cluster_failover(std::size_t replica, std::string_view mode,
                                          std::int64_t max_ms) {
  if (!cluster()) return "the topology is not a Redis Cluster";
  if (config_.nodes[replica].primary < 0) {
    return "CLUSTER FAILOVER failed: ERR You should send CLUSTER FAILOVER to a replica";
  }
  const auto old = static_cast<std::size_t>(config_.nodes[replica].primary);
  const Nanos deadline = simulation_.now() + ms_to_ns(max_ms);
  const bool served_lock = config_.slots[anchor_slot_] == static_cast<std::int16_t>(old);
  // Asked again after each 5 s a manual failover is given up, until max_ms (as the machine's).
  while (true) {
    if (!heard(replica)) return name(replica) + " does not answer";
    simulation_.sleep_until(simulation_.now() +
                            simulation_.rng().uniform(kManualFailoverMinNs, kManualFailoverMaxNs));
    bool done = false;
    if (config_.nodes[replica].primary < 0) {
      done = true;  // elected meanwhile
    } else if (mode == "takeover") {
      elect(replica);  // no election: a new epoch of its own
      done = true;
    } else if (mode == "force") {
      // No handshake with the primary; an election all the same.
      if (votes() >= quorum()) {
        elect(replica);
        done = true;
      }
    } else {
      // The default: the primary stops its writers until the replica has everything, then the
      // replica is elected: nothing is lost.
      Replication* r = replication_of(replica);
      if (heard(old) && r != nullptr && r->primary == old && flowing(*r) && votes() >= quorum()) {
        r->link->deliver();
        elect(replica);
        done = true;
      }
    }
    if (done && simulation_.now() <= deadline) break;
    if (done) {
      return "it was a primary only after " + std::to_string(max_ms) + " ms (max_ms)";
    }
    const Nanos retry = simulation_.now() + kManualFailoverTimeoutNs;
    if (retry >= deadline) {
      simulation_.sleep_until(deadline);
      return "it was not a primary of an ok cluster within " + std::to_string(max_ms) +
             " ms (it was still a replica)";
    }
    simulation_.sleep_until(retry);
  }
  if (served_lock) primary_ = replica;
  return "";
}

std::string SimTopology::migrate_slot_start(std::size_t from, std::size_t to) {
  if (!cluster()) return "the topology is not a Redis Cluster";
  nodes_[to].importing.emplace_back(anchor_slot_, static_cast<int>(from));
  nodes_[from].migrating.emplace_back(anchor_slot_, static_cast<int>(to));
  publish();
  return "";
}

std::string SimTopology::migrate_slot_finish(std::size_t from, std::size_t to) {
  if (!cluster()) return "the topology is not a Redis Cluster";
  // MIGRATE of every key of the slot (with its TTL), then SETSLOT NODE everywhere.
  servers_[from]->migrate_slot_keys(anchor_slot_, *servers_[to], simulation_.now());
  config_.slots[anchor_slot_] = static_cast<std::int16_t>(to);
  changed();
  std::erase_if(nodes_[to].importing, [&](const auto& open) { return open.first == anchor_slot_; });
  std::erase_if(nodes_[from].migrating,
                [&](const auto& open) { return open.first == anchor_slot_; });
  publish();
  primary_ = to;
  return "";
}

std::string SimTopology::isolate(std::size_t server) {
  if (!cluster()) return "the topology is not a Redis Cluster";
  ClusterNode& node = nodes_[server];
  node.isolated = true;
  node.isolated_at = simulation_.now();
  node.minority_at =
      simulation_.now() + node_timeout_ns_ + simulation_.rng().uniform(0, kClusterTickNs * 10);
  node.minority = false;
  return "";
}

std::string SimTopology::rejoin(std::size_t server) {
  if (!cluster()) return "the topology is not a Redis Cluster";
  ClusterNode& node = nodes_[server];
  node.isolated = false;
  // A primary that was in a minority waits the rejoin delay before it says the cluster is ok.
  if (node.minority && config_.nodes[server].primary < 0) {
    node.writable_at =
        simulation_.now() + std::clamp<Nanos>(node_timeout_ns_, ms_to_ns(500), ms_to_ns(5000));
  }
  node.minority = false;
  publish();
  return "";
}

}  // namespace locksim
