// SHA-1 as FIPS 180-4 specifies it; only for naming scripts, never for security.
#include "sim/core/sha1.h"

#include <array>
#include <cstdint>

namespace locksim {
namespace {

constexpr std::uint32_t rotate_left(std::uint32_t value, int bits) {
  return (value << bits) | (value >> (32 - bits));
}

void compress(std::array<std::uint32_t, 5>& state, const unsigned char* block) {
  std::array<std::uint32_t, 80> w{};
  for (int i = 0; i < 16; ++i) {
    w[i] = (std::uint32_t{block[4 * i]} << 24) | (std::uint32_t{block[4 * i + 1]} << 16) |
           (std::uint32_t{block[4 * i + 2]} << 8) | std::uint32_t{block[4 * i + 3]};
  }
  for (int i = 16; i < 80; ++i) w[i] = rotate_left(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
  std::uint32_t a = state[0], b = state[1], c = state[2], d = state[3], e = state[4];
  for (int i = 0; i < 80; ++i) {
    std::uint32_t f = 0;
    std::uint32_t k = 0;
    if (i < 20) {
      f = (b & c) | (~b & d);
      k = 0x5A827999;
    } else if (i < 40) {
      f = b ^ c ^ d;
      k = 0x6ED9EBA1;
    } else if (i < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8F1BBCDC;
    } else {
      f = b ^ c ^ d;
      k = 0xCA62C1D6;
    }
    const std::uint32_t next = rotate_left(a, 5) + f + e + k + w[i];
    e = d;
    d = c;
    c = rotate_left(b, 30);
    b = a;
    a = next;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
  state[4] += e;
}

}  // namespace

std::string sha1_hex(std::string_view data) {
  std::array<std::uint32_t, 5> state = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  const std::uint64_t bit_length = static_cast<std::uint64_t>(data.size()) * 8;
  std::size_t offset = 0;
  for (; offset + 64 <= data.size(); offset += 64) {
    compress(state, reinterpret_cast<const unsigned char*>(data.data() + offset));
  }
  // The tail, the 0x80 marker, zero padding and the 64-bit length fill one or two blocks.
  std::array<unsigned char, 128> tail{};
  const std::size_t rest = data.size() - offset;
  for (std::size_t i = 0; i < rest; ++i) tail[i] = static_cast<unsigned char>(data[offset + i]);
  tail[rest] = 0x80;
  const std::size_t blocks = rest + 1 + 8 <= 64 ? 1 : 2;
  for (int i = 0; i < 8; ++i) {
    tail[blocks * 64 - 1 - i] = static_cast<unsigned char>(bit_length >> (8 * i));
  }
  for (std::size_t b = 0; b < blocks; ++b) compress(state, tail.data() + 64 * b);

  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(40);
  for (const std::uint32_t word : state) {
    for (int shift = 28; shift >= 0; shift -= 4) hex.push_back(kHex[(word >> shift) & 0xF]);
  }
  return hex;
}

}  // namespace locksim
