// key_slot_test: the cluster slot of a key: CRC16/XMODEM's check value, the specification's
// examples of hash tags, and the slots' bounds. (tests/integration/redis_cluster_slot_test.cc
// compares thousands of keys with a real cluster-enabled redis-server's CLUSTER KEYSLOT.)
#include "sim/redis/key_slot.h"

#include <gtest/gtest.h>

namespace locksim {
namespace {

TEST(KeySlot, Crc16IsXmodem) {
  EXPECT_EQ(crc16("123456789"), 0x31C3);  // the check value of CRC-16/XMODEM
  EXPECT_EQ(crc16(""), 0);
  EXPECT_EQ(key_slot("123456789"), 0x31C3 % 16384);
}

// The cluster specification's examples: only the first '{' ... '}' with bytes between counts.
TEST(KeySlot, HashTagsAsTheSpecificationSays) {
  EXPECT_EQ(hash_tag("{user1000}.following"), "user1000");
  EXPECT_EQ(key_slot("{user1000}.following"), key_slot("{user1000}.followers"));
  EXPECT_EQ(hash_tag("foo{}{bar}"), "foo{}{bar}");  // "{}": the whole key
  EXPECT_EQ(hash_tag("foo{{bar}}zap"), "{bar");     // from the first '{' to the first '}'
  EXPECT_EQ(hash_tag("foo{bar}{zap}"), "bar");      // the first tag only
  EXPECT_EQ(hash_tag("no tag"), "no tag");
  EXPECT_EQ(hash_tag("open {only"), "open {only");
  EXPECT_EQ(hash_tag("close} {"), "close} {");
  EXPECT_EQ(key_slot("lock:{a}"), key_slot("{a}:fence"));
}

TEST(KeySlot, EverySlotIsBelow16384) {
  std::string key = "k";
  for (int i = 0; i < 5000; ++i) {
    key += static_cast<char>('a' + i % 26);
    EXPECT_LT(key_slot(key), kClusterSlots);
    if (key.size() > 40) key = "k" + std::to_string(i);
  }
}

}  // namespace
}  // namespace locksim
