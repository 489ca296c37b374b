#include "sim/core/random.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <random>

#include "sim/core/assert.h"

namespace locksim {
namespace {

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// span_of: how many integers [low, high] holds, 0 for all 2^64 (no signed overflow).
std::uint64_t span_of(std::int64_t low, std::int64_t high) {
  LOCKSIM_ASSERT(low <= high);
  return static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low) + 1;
}

// offset: low + `by`, wrapping as two's complement does (a full-range draw may pass INT64_MAX).
std::int64_t offset(std::int64_t low, std::uint64_t by) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(low) + by);
}

}  // namespace

Rng::Rng(std::uint64_t seed) : seed_(seed) {
  std::uint64_t x = seed;
  for (auto& word : state_) word = splitmix64(x);
}

std::int64_t Rng::uniform(std::int64_t low, std::int64_t high) {
  const std::uint64_t span = span_of(low, high);
  return span == 0 ? static_cast<std::int64_t>(next()) : offset(low, next() % span);
}

std::int64_t Rng::scaled(std::int64_t low, std::int64_t high) {
  const std::uint64_t span = span_of(low, high);
  if (span == 0) return static_cast<std::int64_t>(next());  // the full 64-bit range
  // The draw times the span, its high 64 bits: a multiply where uniform divides. The bias, under
  // span / 2^64, is as small as a modulo's.
  const auto product = static_cast<unsigned __int128>(next()) * span;
  return offset(low, static_cast<std::uint64_t>(product >> 64));
}

bool Rng::chance(double probability) {
  if (probability <= 0) return false;
  if (probability >= 1) return true;
  return static_cast<double>(next() >> 11) * 0x1.0p-53 < probability;
}

std::string Rng::token_hex(int hex_digits) {
  std::string token(static_cast<std::size_t>(std::max(hex_digits, 0)), '0');
  fill_hex(token);
  return token;
}

void Rng::fill_hex(std::span<char> out) {
  // Each draw gives 16 digits, its lowest nibble first, made 8 at a time: the nibbles of 32 bits
  // spread one to a byte, then each byte turned into its digit ('0'..'9', 'a'..'f') at once.
  const auto eight_digits = [](std::uint64_t nibbles, char* to) {
    std::uint64_t x = nibbles & 0xffffffffU;
    x = (x | (x << 16)) & 0x0000ffff0000ffffULL;
    x = (x | (x << 8)) & 0x00ff00ff00ff00ffULL;
    x = (x | (x << 4)) & 0x0f0f0f0f0f0f0f0fULL;  // byte k: nibble k
    const std::uint64_t letters = ((x + 0x0606060606060606ULL) >> 4) & 0x0101010101010101ULL;
    x += 0x3030303030303030ULL + letters * ('a' - '0' - 10);
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(to, &x, 8);  // byte k first
    } else {
      for (int k = 0; k < 8; ++k) to[k] = static_cast<char>((x >> (8 * k)) & 0xff);
    }
  };
  const std::size_t count = out.size();
  std::size_t i = 0;
  for (; i + 16 <= count; i += 16) {  // whole draws straight into `out`
    const std::uint64_t bits = next();
    eight_digits(bits, out.data() + i);
    eight_digits(bits >> 32, out.data() + i + 8);
  }
  if (i < count) {  // the last draw's lowest digits
    const std::uint64_t bits = next();
    std::array<char, 16> digits;
    eight_digits(bits, digits.data());
    eight_digits(bits >> 32, digits.data() + 8);
    std::memcpy(out.data() + i, digits.data(), count - i);
  }
}

Rng Rng::fork(std::uint64_t stream) const {
  std::uint64_t x = seed_ ^ (0xd1b54a32d192ed03ULL * (stream + 1));
  return Rng(splitmix64(x));
}

std::int64_t draw_ms(Rng& rng, const RangeMs& range) {
  return range.min_ms == range.max_ms ? range.min_ms : rng.uniform(range.min_ms, range.max_ms);
}

std::uint64_t random_seed() {
  std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

}  // namespace locksim
