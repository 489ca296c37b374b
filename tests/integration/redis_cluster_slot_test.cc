// redis_cluster_slot_test: key_slot (sim/redis/key_slot.h) against a real redis-server in cluster
// mode: CLUSTER KEYSLOT answers the same slot for every key of a seeded random set (bytes of
// every value, hash tags, empty tags, braces alone) and for the lock keys locksim writes.
#include <string>

#include "sim/core/random.h"
#include "sim/redis/connection.h"
#include "sim/redis/key_slot.h"
#include "sim/redis/server.h"
#include "tests/integration/redis_fixture.h"

namespace locksim {
namespace {

TEST(RedisClusterSlot, KeySlotMatchesClusterKeyslot) {
  RedisServerOptions options;
  options.cluster_enabled = true;
  RedisServer server = RedisServer::start(options);
  HiredisConnection connection(server.endpoint(), ConnectionOptions{});
  const auto slot_of = [&](const std::string& key) {
    const RedisResult result = connection.command({"CLUSTER", "KEYSLOT", key});
    EXPECT_TRUE(result.ok()) << key;
    return result.reply.integer;
  };
  for (const std::string key : {"lock", "locksim:20261130-s1:lock", "{lock}:fence", "{}", "{",
                                "}", "a{b}c", "a{}b{c}", "", "123456789"}) {
    EXPECT_EQ(slot_of(key), key_slot(key)) << key;
  }
  Rng rng(20261130);
  const std::string alphabet = std::string("{}ab:") + std::string(1, '\0') + "\xff\x80";
  for (int i = 0; i < 3000; ++i) {
    std::string key;
    const std::int64_t length = rng.uniform(0, 24);
    for (std::int64_t j = 0; j < length; ++j) {
      key += rng.chance(0.5) ? alphabet[static_cast<std::size_t>(
                                   rng.uniform(0, static_cast<std::int64_t>(alphabet.size()) - 1))]
                             : static_cast<char>(rng.uniform(0, 255));
    }
    ASSERT_EQ(slot_of(key), key_slot(key)) << "key of " << key.size() << " bytes, #" << i;
  }
}

}  // namespace
}  // namespace locksim
