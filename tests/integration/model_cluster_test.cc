// model_cluster_test: the model as a Redis Cluster node (sim/model/cluster_commands.cc) against
// real redis-servers in cluster mode (sim/topology/cluster.cc): the same commands sent to a real
// node and to a model node that knows the same cluster (its nodes' addresses and ids, its slot
// map, its open slots) answer the same, byte for byte: MOVED, CROSSSLOT, a script's non-local and
// cross-slot keys, a slot being migrated (ASK, TRYAGAIN, ASKING), CLUSTER SLOTS, KEYSLOT, MYID,
// the no-cluster script flag; and a cluster that lost a primary without a replica is down
// (CLUSTERDOWN) on both.
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "sim/model/model_server.h"
#include "sim/redis/connection.h"
#include "sim/redis/key_slot.h"
#include "sim/scenario/scenario.h"
#include "sim/topology/topology.h"
#include "tests/integration/redis_fixture.h"
#include "tests/support/cluster_spec.h"
#include "tests/support/reply_text.h"

namespace locksim {
namespace {

constexpr const char* kLockKey = "locksim:model-cluster-test:lock";

Reply must(Connection& node, std::initializer_list<std::string_view> argv) {
  RedisResult result = node.command(argv);
  if (!result.ok() && result.error != RedisErrorKind::kReplyError) {
    ADD_FAILURE() << "redis-server failed: " << result.describe();
  }
  return result.reply;
}

// Twins: a real cluster, its nodes' connections, and one model server per node that knows the
// cluster as the real nodes do (addresses, ids, slots read from them).
class Twins {
 public:
  explicit Twins(const TopologySpec& spec) : topology_(Topology::start(spec, kLockKey)) {
    ModelCluster view;
    view.slots.assign(kClusterSlots, -1);
    for (std::size_t i = 0; i < topology_->size(); ++i) {
      real_.push_back(
          std::make_unique<HiredisConnection>(topology_->endpoint(i), ConnectionOptions{}));
      ModelClusterNode node;
      node.host = "127.0.0.1";
      node.port = topology_->endpoint(i).port;
      node.id = must(*real_.back(), {"CLUSTER", "MYID"}).str;
      const std::string& primary = spec.servers[i].replica_of;
      node.primary = primary.empty() ? -1 : static_cast<int>(spec.server_index(primary));
      view.nodes.push_back(node);
    }
    const Reply slots = must(*real_[0], {"CLUSTER", "SLOTS"});
    for (const Reply& range : slots.elements) {
      const auto port = range.elements[2].elements[1].integer;
      for (std::size_t i = 0; i < view.nodes.size(); ++i) {
        if (view.nodes[i].port != port) continue;
        for (std::int64_t s = range.elements[0].integer; s <= range.elements[1].integer; ++s) {
          view.slots[static_cast<std::size_t>(s)] = static_cast<std::int16_t>(i);
        }
      }
    }
    for (std::size_t i = 0; i < topology_->size(); ++i) {
      models_.push_back(std::make_unique<ModelServer>());
      view.myself = static_cast<int>(i);
      models_.back()->enable_cluster(view);
      model_clients_.push_back(models_.back()->connect());
    }
  }

  Topology& topology() { return *topology_; }
  ModelCluster& view(std::size_t node) { return *models_[node]->cluster(); }
  Connection& real(std::size_t node) { return *real_[node]; }
  const std::string& id(std::size_t node) { return models_[0]->cluster()->nodes[node].id; }

  // same: `argv` on node `node` of both; the real reply's text, after checking they match.
  std::string same(std::size_t node, std::initializer_list<std::string_view> argv) {
    const Reply real = must(*real_[node], argv);
    const Reply model = models_[node]->execute(
        model_clients_[node], std::span<const std::string_view>(argv.begin(), argv.size()), 0);
    std::string words;
    for (std::string_view a : argv) words += std::string(a) + " ";
    EXPECT_EQ(test_support::show(model), test_support::show(real))
        << "on " << topology_->name(node) << ": " << words;
    return test_support::show(real);
  }

  // a key of `slot_owner`'s slots (the first "k<n>" that hashes there), tagged with `prefix`.
  std::string key_of(std::size_t owner, const std::string& prefix = "k") const {
    for (int n = 0;; ++n) {
      const std::string key = prefix + std::to_string(n);
      if (models_[0]->cluster()->slots[key_slot(key)] == static_cast<std::int16_t>(owner)) {
        return key;
      }
    }
  }

 private:
  std::unique_ptr<Topology> topology_;
  std::vector<std::unique_ptr<HiredisConnection>> real_;
  std::vector<std::unique_ptr<ModelServer>> models_;
  std::vector<ModelClientId> model_clients_;
};

// Proves a model node answers as a real one to the commands a lock client sends a cluster: its
// own keys run, another node's are MOVED, keys over two slots are CROSSSLOT (a hash tag joins
// them), a script may touch only local keys of one slot unless it declares
// allow-cross-slot-keys or has no shebang, a no-cluster script is refused, and KEYSLOT and MYID
// match.
TEST(ModelCluster, ANodeAnswersAsARealNode) {
  Twins twins(test_support::cluster_spec(3, 1));
  const std::string mine = twins.key_of(0);
  const std::string theirs = twins.key_of(1);
  const std::string mine_too = twins.key_of(0, "other");
  ASSERT_NE(key_slot(mine), key_slot(mine_too)) << "two slots of p1 wanted";
  EXPECT_EQ(twins.same(0, {"SET", mine, "v"}), "+OK");
  EXPECT_EQ(twins.same(0, {"GET", mine}), "\"v\"");
  EXPECT_TRUE(twins.same(0, {"SET", theirs, "v"}).starts_with("-MOVED "));
  twins.same(0, {"GET", theirs});
  EXPECT_TRUE(twins.same(0, {"MSET", mine, "1", theirs, "2"}).starts_with("-CROSSSLOT"));
  twins.same(0, {"MSET", mine, "1", mine_too, "2"});
  twins.same(0, {"DEL", mine, mine_too});
  twins.same(0, {"MSET", "{" + mine + "}a", "1", "{" + mine + "}b", "2"});
  twins.same(0, {"MGET", "{" + mine + "}a", "{" + mine + "}b"});
  // Scripts: declared keys route the EVAL; undeclared ones are checked inside.
  twins.same(0, {"EVAL", "return redis.call('get', KEYS[1])", "1", mine});
  twins.same(0, {"EVAL", "return redis.call('get', KEYS[1])", "1", theirs});
  twins.same(0, {"EVAL", "return redis.call('get', KEYS[1])", "2", mine, theirs});
  EXPECT_TRUE(twins.same(0, {"EVAL", "return redis.call('get', ARGV[1])", "0", theirs})
                  .find("non local key") != std::string::npos);
  twins.same(0, {"EVAL", "return redis.call('get', ARGV[1])", "0", mine});
  // Undeclared keys of another local slot: a script with a shebang is refused them, unless it
  // allows cross-slot keys; one without (EVAL's compatibility mode) may reach them.
  EXPECT_TRUE(
      twins
          .same(0, {"EVAL", "#!lua\nredis.call('get', KEYS[1]) return redis.call('get', ARGV[1])",
                    "1", mine, mine_too})
          .find("same slot") != std::string::npos);
  twins.same(0, {"EVAL",
                 "#!lua flags=allow-cross-slot-keys\nredis.call('get', KEYS[1]) return "
                 "redis.call('get', ARGV[1])",
                 "1", mine, mine_too});
  twins.same(0, {"EVAL", "redis.call('get', KEYS[1]) return redis.call('get', ARGV[1])", "1", mine,
                 mine_too});
  twins.same(0, {"EVAL", "#!lua flags=no-cluster\nreturn 1", "0"});
  twins.same(0, {"EVAL", "return redis.pcall('set', ARGV[1], 'x')", "0", theirs});
  // Commands without a key run anywhere.
  twins.same(0, {"PING"});
  twins.same(0, {"ECHO", theirs});
  twins.same(1, {"GET", mine});
  twins.same(0, {"CLUSTER", "KEYSLOT", "{user1000}.following"});
  twins.same(0, {"CLUSTER", "KEYSLOT", "123456789"});
  twins.same(1, {"CLUSTER", "MYID"});
  // A real node lists a replica in CLUSTER SLOTS once gossip has told it the replica's offset (a
  // moment after the cluster forms); the model lists it at once: compared once the real one does.
  bool listed = false;
  for (int i = 0; i < 200 && !listed; ++i) {
    const Reply slots = must(twins.real(0), {"CLUSTER", "SLOTS"});
    listed = !slots.elements.empty() &&
             std::all_of(slots.elements.begin(), slots.elements.end(),
                         [](const Reply& range) { return range.elements.size() == 4; });
    if (!listed) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(listed) << "p1 never listed every primary's replica in CLUSTER SLOTS";
  twins.same(0, {"CLUSTER", "SLOTS"});
  twins.same(0, {"READONLY"});
  twins.same(0, {"READWRITE"});
  // A replica answers MOVED for its primary's keys, as for any other (no READONLY reads here).
  twins.same(3, {"GET", mine});
  twins.same(3, {"SET", mine, "x"});
}

// Proves a slot being migrated is answered as a real cluster answers it: the source serves the
// keys it still has and sends the others on with ASK (TRYAGAIN for a multi-key command that
// finds some; a script whose key is gone half-way is refused there), the target refuses them
// (MOVED) unless the command comes right after ASKING, which holds for that one command only.
TEST(ModelCluster, ASlotBeingMigratedAnswersAsARealOne) {
  Twins twins(test_support::cluster_spec(3, 0));
  const std::string here = twins.key_of(0);
  const std::string tag = "{" + here + "}";
  const std::uint16_t slot = key_slot(here);
  twins.same(0, {"SET", here, "v"});
  twins.same(0, {"SET", tag + "a", "1"});
  const std::string s = std::to_string(slot);
  ASSERT_EQ(must(twins.real(1), {"CLUSTER", "SETSLOT", s, "IMPORTING", twins.id(0)}).str, "OK");
  ASSERT_EQ(must(twins.real(0), {"CLUSTER", "SETSLOT", s, "MIGRATING", twins.id(1)}).str, "OK");
  twins.view(1).importing.emplace_back(slot, 0);
  twins.view(0).migrating.emplace_back(slot, 1);
  twins.same(0, {"GET", here});
  twins.same(0, {"GET", tag + "missing"});
  twins.same(0, {"SET", tag + "missing", "x"});
  twins.same(0, {"MGET", tag + "a", tag + "missing"});
  twins.same(0, {"MGET", tag + "b", tag + "missing"});
  twins.same(0, {"EVAL", "return redis.call('get', KEYS[1])", "1", tag + "missing"});
  // A script that empties its key and writes it again is refused half-way: the key is missing
  // from a migrating slot by then (explore found zset_semaphore_server's acquire so, when every
  // permit had expired: it now adds its own permit first).
  twins.same(0, {"SET", tag + "gone", "1"});
  twins.same(0, {"EVAL", "redis.call('del', KEYS[1]) return redis.call('set', KEYS[1], 'z')", "1",
                 tag + "gone"});
  twins.same(0, {"SET", tag + "kept", "1"});
  twins.same(0, {"EVAL", "redis.call('set', KEYS[1], 'z') return redis.call('get', KEYS[1])", "1",
                 tag + "kept"});
  twins.same(1, {"GET", tag + "missing"});
  twins.same(1, {"ASKING"});
  twins.same(1, {"SET", tag + "missing", "y"});
  twins.same(1, {"GET", tag + "missing"});
  twins.same(1, {"ASKING"});
  twins.same(1, {"GET", tag + "missing"});
  twins.same(1, {"ASKING"});
  twins.same(1, {"MGET", tag + "missing", tag + "other"});
  twins.same(1, {"ASKING"});
  twins.same(1, {"EVAL", "return redis.call('get', KEYS[1])", "1", tag + "missing"});
  twins.same(1, {"ASKING"});
  twins.same(1, {"EVAL", "return redis.call('get', ARGV[1])", "0", tag + "missing"});
  twins.same(1, {"CLUSTER", "SLOTS"});
}

// Proves a cluster that lost a primary with no replica to take its place is down on every other
// node as on the model's: every command with a key is refused CLUSTERDOWN, and a script that
// reaches for a key is refused inside.
TEST(ModelCluster, AClusterThatLostAPrimaryIsDownOnBoth) {
  Twins twins(test_support::cluster_spec(3, 0));
  const std::string here = twins.key_of(0);
  ASSERT_EQ(twins.topology().kill(2), "");
  HiredisConnection p1(twins.topology().endpoint(0), ConnectionOptions{});
  bool down = false;
  for (int i = 0; i < 200 && !down; ++i) {  // cluster-node-timeout 1 s, then FAIL by gossip
    down = must(p1, {"CLUSTER", "INFO"}).str.find("cluster_state:fail") != std::string::npos;
    if (!down) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(down) << "p1 never said the cluster was down after p3 died";
  twins.view(0).ok = false;
  EXPECT_TRUE(twins.same(0, {"GET", here}).starts_with("-CLUSTERDOWN"));
  twins.same(0, {"EVAL", "return 1", "0"});
  twins.same(0, {"EVAL", "return redis.pcall('get', ARGV[1])", "0", here});
  twins.same(0, {"PING"});
}

}  // namespace
}  // namespace locksim
