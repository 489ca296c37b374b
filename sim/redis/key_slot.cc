#include "sim/redis/key_slot.h"

#include <array>

namespace locksim {
namespace {

// crc16_table: the CRC-16/XMODEM table, byte by byte (polynomial 0x1021, most significant bit
// first), computed at compile time.
constexpr std::array<std::uint16_t, 256> crc16_table() {
  std::array<std::uint16_t, 256> table{};
  for (std::uint32_t byte = 0; byte < 256; ++byte) {
    std::uint32_t crc = byte << 8;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1;
    table[byte] = static_cast<std::uint16_t>(crc & 0xFFFF);
  }
  return table;
}

constexpr std::array<std::uint16_t, 256> kCrc16Table = crc16_table();

}  // namespace

std::uint16_t crc16(std::string_view bytes) {
  std::uint16_t crc = 0;
  for (const char c : bytes) {
    const auto index = static_cast<std::uint8_t>((crc >> 8) ^ static_cast<std::uint8_t>(c));
    crc = static_cast<std::uint16_t>((crc << 8) ^ kCrc16Table[index]);
  }
  return crc;
}

std::string_view hash_tag(std::string_view key) {
  const std::size_t open = key.find('{');
  if (open == std::string_view::npos) return key;
  const std::size_t close = key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

std::uint16_t key_slot(std::string_view key) {
  return static_cast<std::uint16_t>(crc16(hash_tag(key)) % kClusterSlots);
}

}  // namespace locksim
