// key_slot.h: the Redis Cluster slot of a key (the first piece of the slot-aware client of issue
// 44): CRC16 (XMODEM: polynomial 0x1021, initial value 0, as the cluster specification's
// crc16.c) of the key, or of its hash tag, modulo 16384. Written by hand: hiredis has no cluster
// support and Debian packages no C cluster client (docs/design.md).
//
// The hash tag: when the key holds a '{' and, after it, a '}' with at least one byte between
// them, only the bytes between the first '{' and the first '}' after it are hashed, so that keys
// sharing a tag ("{user1000}.following", "{user1000}.followers") share a slot. "{}" or a '{'
// without a later '}' hashes the whole key.
//
//   key_slot("123456789") == 12739  (crc16 0x31C3, the specification's check value)
//   key_slot("lock:{a}") == key_slot("{a}:fence")
#pragma once

#include <cstdint>
#include <string_view>

namespace locksim {

inline constexpr std::uint16_t kClusterSlots = 16384;

// crc16: CRC-16/XMODEM of `bytes`.
std::uint16_t crc16(std::string_view bytes);
// hash_tag: the part of `key` its slot is computed from (the tag, or the whole key).
std::string_view hash_tag(std::string_view key);
// key_slot: the cluster slot of `key`, 0..16383.
std::uint16_t key_slot(std::string_view key);

}  // namespace locksim
