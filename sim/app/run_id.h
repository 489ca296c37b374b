// run_id.h: make_run_id, the name of one scenario run: its report directory and Redis key prefix.
//
// A run id is the UTC start time to the second, the seed, the repetition (with --repeat) and six
// hex digits from the operating system's random source: "20261122-073012-s42-r2-9f3a1c". Ids sort
// by time; the random part keeps two runs with the same seed in the same second apart (their keys
// on a shared --redis server, their report directories). It never comes from the seeded Rng, so
// naming a run does not change the run's seeded choices.
#pragma once

#include <cstdint>
#include <string>

namespace locksim {

// make_run_id: `repetition` 0 leaves the "-r<n>" part out (a run without --repeat).
std::string make_run_id(std::uint64_t seed, int repetition);

}  // namespace locksim
