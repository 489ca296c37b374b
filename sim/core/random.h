// random.h: Rng, the seeded pseudo-random generator every random choice in locksim goes through.
//
// One seed per run is printed first; each client derives its own stream with Rng::fork(client),
// so a run can be repeated with --seed. Not thread-safe: one Rng per thread.
//
//   Rng rng(seed);
//   Rng client_rng = rng.fork(3);
//   if (client_rng.chance(0.2)) { ... }
#pragma once

#include <bit>
#include <cstdint>
#include <span>
#include <string>

#include "sim/core/clock.h"

namespace locksim {

// Rng: xoshiro256** seeded through splitmix64.
class Rng {
 public:
  explicit Rng(std::uint64_t seed);

  // next: xoshiro256**. Inline: the simulator draws several times an event.
  std::uint64_t next() {
    const std::uint64_t result = std::rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = std::rotl(state_[3], 45);
    return result;
  }
  // uniform: an integer in [low, high] (inclusive). Requires low <= high.
  std::int64_t uniform(std::int64_t low, std::int64_t high);
  // scaled: like uniform, without a division (the simulator draws a latency for every message
  // and wake-up); another value than uniform's for the same draw. uniform's values are kept for
  // a seed across builds (a plan's cycles); the simulator's seed replays within one build.
  std::int64_t scaled(std::int64_t low, std::int64_t high);
  // chance: true with probability p (p outside [0, 1] is clamped).
  bool chance(double probability);
  // token_hex: `hex_digits` random lowercase hex characters (a lock owner token).
  std::string token_hex(int hex_digits = 32);
  // fill_hex: `out` filled with random lowercase hex digits, drawn as token_hex draws them.
  void fill_hex(std::span<char> out);
  // fork: an independent stream for sub-component `stream` (a client index).
  Rng fork(std::uint64_t stream) const;

 private:
  std::uint64_t state_[4];
  std::uint64_t seed_;
};

// draw_ms: a uniform draw from `range`; a fixed duration (min_ms == max_ms) takes no draw from
// `rng`, so fixing one range shifts no later draw of the same stream.
std::int64_t draw_ms(Rng& rng, const RangeMs& range);

// random_seed: a seed from the operating system, for runs without --seed.
std::uint64_t random_seed();

}  // namespace locksim
