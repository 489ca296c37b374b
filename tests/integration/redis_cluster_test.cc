// redis_cluster_test: the cluster topology (sim/topology/cluster.cc) and the slot-aware client
// (sim/redis/cluster_connection.h) against real redis-servers in cluster mode: a cluster of six
// is formed with the lock's slot on p1 and leaves no process behind; every command reaches the
// primary of its key's slot; a slot migration is followed through ASK and then MOVED, each
// reported; a script over two slots is refused CROSSSLOT and the same with a hash tag runs; a
// killed primary's replica is elected and the client finds it.
#include <sys/types.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "sim/redis/cluster_connection.h"
#include "sim/redis/connection.h"
#include "sim/redis/key_slot.h"
#include "sim/scenario/scenario.h"
#include "sim/topology/topology.h"
#include "tests/integration/redis_fixture.h"
#include "tests/support/cluster_spec.h"

namespace locksim {
namespace {

constexpr const char* kLockKey = "locksim:cluster-test:s1:lock";

std::unique_ptr<ClusterConnection> client_of(const Topology& topology,
                                             std::vector<Redirection>* seen = nullptr) {
  auto client = std::make_unique<ClusterConnection>(
      topology.endpoints(), [](const Endpoint& node) -> std::unique_ptr<Connection> {
        return std::make_unique<HiredisConnection>(node, ConnectionOptions{});
      });
  if (seen != nullptr) client->on_redirect([seen](const Redirection& r) { seen->push_back(r); });
  return client;
}

// holder: the server of the topology that holds `key` (GET on each primary's own connection).
std::string holder(const Topology& topology, const std::string& key) {
  for (std::size_t i = 0; i < topology.size(); ++i) {
    HiredisConnection node(topology.endpoint(i), ConnectionOptions{});
    const RedisResult role = node.command({"ROLE"});
    if (!role.ok() || role.reply.elements.empty() || role.reply.elements[0].str != "master") {
      continue;
    }
    // READONLY is not needed on a primary; a key of another slot answers MOVED (an error).
    const RedisResult value = node.command({"GET", key});
    if (value.ok() && value.reply.type == Reply::Type::kString) return topology.name(i);
  }
  return "";
}

// Proves the topology forms a cluster of six with the lock key's slot on p1, every node ok, and
// that stopping it leaves none of its processes running.
TEST(RedisCluster, FormsSixNodesWithTheLockOnTheFirstPrimaryAndStopsThemAll) {
  std::vector<pid_t> pids;
  {
    std::unique_ptr<Topology> topology =
        Topology::start(test_support::cluster_spec(3, 1), kLockKey);
    ASSERT_TRUE(topology->cluster());
    ASSERT_EQ(topology->size(), 6u);
    pids = topology->pids();
    EXPECT_EQ(pids.size(), 6u);
    for (std::size_t i = 0; i < topology->size(); ++i) {
      HiredisConnection node(topology->endpoint(i), ConnectionOptions{});
      const RedisResult info = node.command({"CLUSTER", "INFO"});
      ASSERT_TRUE(info.ok()) << topology->name(i);
      EXPECT_EQ(info_field(info.reply.str, "cluster_state"), "ok") << topology->name(i);
      EXPECT_EQ(info_field(info.reply.str, "cluster_known_nodes"), "6") << topology->name(i);
      const RedisResult role = node.command({"ROLE"});
      EXPECT_EQ(role.reply.elements.at(0).str, i < 3 ? "master" : "slave") << topology->name(i);
    }
    EXPECT_EQ(topology->primary(), 0u);
    const std::unique_ptr<ClusterConnection> client = client_of(*topology);
    ASSERT_FALSE(client->broken()) << client->last_error().describe();
    EXPECT_EQ(client->owner(key_slot(kLockKey))->port, topology->endpoint(0).port);
  }
  for (const pid_t pid : pids) EXPECT_NE(::kill(pid, 0), 0) << "pid " << pid << " still runs";
}

// Proves every command with a key reaches the primary that serves the key's slot, without a
// redirection (the map was read first), and that a keyless WAIT goes to the node of the write
// before it (its replica acknowledges).
TEST(RedisCluster, CommandsReachTheirSlotsPrimary) {
  std::unique_ptr<Topology> topology = Topology::start(test_support::cluster_spec(3, 1), kLockKey);
  std::vector<Redirection> seen;
  const std::unique_ptr<ClusterConnection> client = client_of(*topology, &seen);
  std::vector<std::string> holders;
  for (int i = 0; i < 60; ++i) {
    const std::string key = "key:" + std::to_string(i);
    ASSERT_TRUE(client->command({"SET", key, "v"}).ok()) << key;
    const RedisResult acks = client->command({"WAIT", "1", "2000"});
    ASSERT_TRUE(acks.ok()) << acks.describe();
    EXPECT_EQ(acks.reply.integer, 1) << key;
    const std::string on = holder(*topology, key);
    EXPECT_EQ(topology->endpoint(topology->spec().server_index(on)).port,
              client->owner(key_slot(key))->port)
        << key;
    holders.push_back(on);
  }
  for (const char* primary : {"p1", "p2", "p3"}) {
    EXPECT_NE(std::find(holders.begin(), holders.end(), primary), holders.end()) << primary;
  }
  EXPECT_TRUE(seen.empty());
  EXPECT_EQ(client->redirections(), 0u);
}

// Proves a migrating slot is followed: while the lock key's slot migrates from p1 to p2, the key
// p1 holds is served by p1 with no redirection, a key p1 does not hold is sent on with ASK (and
// created on p2), and once the slot is p2's a client with the old map is answered MOVED, follows
// it, and finds the lock key (moved with its TTL).
TEST(RedisCluster, FollowsAskDuringAMigrationAndMovedAfterIt) {
  std::unique_ptr<Topology> topology = Topology::start(test_support::cluster_spec(3, 0), kLockKey);
  std::vector<Redirection> seen;
  const std::unique_ptr<ClusterConnection> client = client_of(*topology, &seen);
  ASSERT_TRUE(client->command({"SET", kLockKey, "token-a", "PX", "60000"}).ok());
  // A second key of the same slot: the lock key with a hash tag of its whole self.
  const std::string absent = std::string("{") + kLockKey + "}";
  ASSERT_EQ(key_slot(absent), key_slot(kLockKey));
  ASSERT_EQ(topology->migrate_slot_start(0, 1), "");
  const RedisResult held = client->command({"GET", kLockKey});
  EXPECT_EQ(held.reply.str, "token-a");
  EXPECT_TRUE(seen.empty());
  const RedisResult created = client->command({"SET", absent, "token-b", "NX", "PX", "60000"});
  ASSERT_TRUE(created.ok()) << created.describe();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].kind, Redirection::Kind::kAsk);
  EXPECT_EQ(seen[0].slot, key_slot(kLockKey));
  EXPECT_EQ(seen[0].from.port, topology->endpoint(0).port);
  EXPECT_EQ(seen[0].to.port, topology->endpoint(1).port);
  EXPECT_EQ(holder(*topology, absent), "");  // on p2, importing: not served without ASKING
  ASSERT_EQ(topology->migrate_slot_finish(0, 1), "");
  EXPECT_EQ(holder(*topology, kLockKey), "p2");
  const RedisResult ttl = client->command({"PTTL", kLockKey});
  ASSERT_TRUE(ttl.ok()) << ttl.describe();
  EXPECT_GT(ttl.reply.integer, 50000);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].kind, Redirection::Kind::kMoved);
  EXPECT_EQ(seen[1].to.port, topology->endpoint(1).port);
  EXPECT_EQ(describe(seen[1]), "MOVED slot " + std::to_string(key_slot(kLockKey)) +
                                   " from 127.0.0.1:" + std::to_string(topology->endpoint(0).port) +
                                   " to 127.0.0.1:" + std::to_string(topology->endpoint(1).port));
  EXPECT_EQ(client->owner(key_slot(kLockKey))->port, topology->endpoint(1).port);
  EXPECT_EQ(client->command({"GET", absent}).reply.str, "token-b");
  EXPECT_EQ(topology->primary(), 1u);
}

// Proves a script over keys of two slots is refused by the server (CROSSSLOT), not by the client,
// and the same script over keys that share a hash tag runs.
TEST(RedisCluster, AScriptAcrossSlotsIsRefusedAndAHashTagJoinsThem) {
  std::unique_ptr<Topology> topology = Topology::start(test_support::cluster_spec(3, 0), kLockKey);
  const std::unique_ptr<ClusterConnection> client = client_of(*topology);
  const std::string script =
      "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('INCR', KEYS[2])";
  std::string other = "fence:0";
  for (int i = 1; key_slot(other) == key_slot("lock"); ++i) other = "fence:" + std::to_string(i);
  const RedisResult across = client->command({"EVAL", script, "2", "lock", other, "t"});
  ASSERT_EQ(across.error, RedisErrorKind::kReplyError);
  EXPECT_TRUE(across.message.starts_with("CROSSSLOT")) << across.message;
  const RedisResult tagged = client->command({"EVAL", script, "2", "{lock}", "{lock}:fence", "t"});
  ASSERT_TRUE(tagged.ok()) << tagged.describe();
  EXPECT_EQ(tagged.reply.integer, 1);
}

// Proves a killed primary's replica is elected (await_failover), the topology's primary moves to
// it, and a client that lost its connection finds the new primary after reconnect(), with a key
// the replica had received.
TEST(RedisCluster, AKilledPrimarysReplicaIsElectedAndFound) {
  std::unique_ptr<Topology> topology = Topology::start(test_support::cluster_spec(3, 1), kLockKey);
  const std::unique_ptr<ClusterConnection> client = client_of(*topology);
  ASSERT_TRUE(client->command({"SET", kLockKey, "token-a"}).ok());
  ASSERT_EQ(client->command({"WAIT", "1", "2000"}).reply.integer, 1);
  ASSERT_EQ(topology->kill(0), "");
  ASSERT_EQ(topology->await_failover(20000, [] { return false; }), "");
  EXPECT_EQ(topology->name(topology->primary()), "r1");
  RedisResult read = client->command({"GET", kLockKey});
  // The connection to the dead primary closed: broken until reconnect(), as a server's is. The
  // other nodes hear of the election within moments; until then a node may still name the dead
  // primary, and the command is refused (it did not run): a client tries again, as here.
  for (int attempt = 0; !read.ok() && attempt < 100; ++attempt) {
    EXPECT_NE(read.error, RedisErrorKind::kTimeout) << read.describe();
    if (client->broken()) client->reconnect();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    read = client->command({"GET", kLockKey});
  }
  ASSERT_TRUE(read.ok()) << read.describe();
  EXPECT_EQ(read.reply.str, "token-a");
  EXPECT_EQ(client->owner(key_slot(kLockKey))->port, topology->endpoint(3).port);
  ASSERT_EQ(topology->restart(0), "");
  HiredisConnection old(topology->endpoint(0), ConnectionOptions{});
  EXPECT_EQ(old.command({"ROLE"}).reply.elements.at(0).str, "slave");
}

// Proves a partition cuts a primary off from the rest of the cluster while its clients still
// reach it: it takes a write its replica never gets, the majority elects the replica (without the
// write), the cut-off primary stops taking writes, and after the heal it rejoins as a replica.
TEST(RedisCluster, AnIsolatedPrimaryIsReplacedAndRejoinsAsAReplica) {
  std::unique_ptr<Topology> topology = Topology::start(test_support::cluster_spec(3, 1), kLockKey);
  ASSERT_EQ(topology->isolate(0), "");
  HiredisConnection p1(topology->endpoint(0), ConnectionOptions{});
  ASSERT_TRUE(p1.command({"SET", kLockKey, "token-a"}).ok());
  ASSERT_EQ(topology->await_failover(20000, [] { return false; }), "");
  EXPECT_EQ(topology->name(topology->primary()), "r1");
  HiredisConnection r1(topology->endpoint(3), ConnectionOptions{});
  EXPECT_TRUE(r1.command({"GET", kLockKey}).reply.is_nil());
  const RedisResult refused = p1.command({"SET", kLockKey, "token-c"});
  EXPECT_EQ(refused.error, RedisErrorKind::kReplyError);
  EXPECT_TRUE(refused.message.starts_with("CLUSTERDOWN")) << refused.message;
  ASSERT_EQ(topology->rejoin(0), "");
  bool replica = false;
  for (int i = 0; i < 200 && !replica; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    replica = p1.command({"ROLE"}).reply.elements.at(0).str == "slave";
  }
  EXPECT_TRUE(replica);
}

// Proves the redirection parser reads the server's words and refuses anything else.
TEST(ClusterConnectionWords, RedirectionsAndKeys) {
  const std::optional<Redirection> moved = parse_redirection("MOVED 3999 127.0.0.1:6381");
  ASSERT_TRUE(moved);
  EXPECT_EQ(moved->kind, Redirection::Kind::kMoved);
  EXPECT_EQ(moved->slot, 3999);
  EXPECT_EQ(moved->to.port, 6381);
  EXPECT_EQ(parse_redirection("ASK 0 127.0.0.1:1")->kind, Redirection::Kind::kAsk);
  EXPECT_FALSE(parse_redirection("MOVED 16384 127.0.0.1:6381"));
  EXPECT_FALSE(parse_redirection("MOVED 1 127.0.0.1"));
  EXPECT_FALSE(parse_redirection("ERR MOVED 1 127.0.0.1:2"));
  const std::vector<std::string_view> set = {"SET", "k", "v"};
  EXPECT_EQ(command_key(set), "k");
  const std::vector<std::string_view> eval = {"EVALSHA", "abc", "2", "k1", "k2", "a"};
  EXPECT_EQ(command_key(eval), "k1");
  const std::vector<std::string_view> keyless_eval = {"EVAL", "return 1", "0"};
  EXPECT_FALSE(command_key(keyless_eval));
  const std::vector<std::string_view> wait = {"wait", "1", "100"};
  EXPECT_FALSE(command_key(wait));
}

}  // namespace
}  // namespace locksim
