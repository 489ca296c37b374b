// shrink.h: the shrinker: a schedule whose run shows a finding made minimal (clients, cycles,
// steps, faults and durations removed while the finding stays), and the measure of how much the
// minimal scenario hangs on a race (fresh and sampled seeds).
//
//   ShrinkResult minimal = shrink(exercise_document(target, seed), *target.variant, signature,
//                                 seed);
//   ShrinkResult robust = shrink_robustly(target, signature, first_seed);
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/explore/schedule.h"
#include "sim/lock/variant.h"

namespace locksim {

struct ShrinkResult {
  nlohmann::json document;   // the minimal scenario, expecting what its run shows
  std::uint64_t seed = 0;    // the schedule shrunk (its seeds: seed..seed + seeds per candidate)
  int schedules_shrunk = 1;  // shrink_robustly: how many schedules it shrank to choose this one
  std::size_t steps_before = 0;
  std::size_t steps_after = 0;
  int clients_after = 0;
  int candidates_run = 0;
  std::vector<std::uint64_t> seeds;  // the seeds that show the finding on the minimal one
  int required_seeds = 1;            // how many of its seeds a candidate had to show it under
  // The minimal scenario run under kFreshSeeds seeds it was never chosen or shrunk under
  // (fresh_first_seed onwards, every timing profile alike): how often it shows the finding there
  // is the honest measure of how much it hangs on a race, as the seeds it was shrunk under were
  // picked because they show it.
  std::uint64_t fresh_first_seed = 0;
  int fresh_runs = 0;
  int fresh_shown = 0;
  // fresh_signatures: every signature the fresh runs showed, with how many showed it: what the
  // simulator says of the minimal scenario, to compare with a real server's runs (Confirmation).
  std::map<std::string, int> fresh_signatures;
  // sampled_signatures: every signature shown by the fresh runs or by kSampledSeeds more seeds
  // after them (sample_signatures): a timing a real machine hits now and then shows here too.
  std::map<std::string, int> sampled_signatures;
};
inline constexpr int kSampledSeeds = 240;
// sample_signatures: runs `result.document` under kSampledSeeds seeds after its fresh ones and
// fills result.sampled_signatures (the fresh runs' signatures included).
void sample_signatures(ShrinkResult& result, const LockVariant& variant);
inline constexpr int kSeedsPerCandidate = 8;  // two of each timing profile
inline constexpr int kFreshSeeds = 16;
// shrink: the smallest scenario found, from `document`, whose run still shows `signature` under
// as many of the seeds `seed`..`seed + seeds_per_candidate - 1` as `document` does: clients,
// cycles and steps removed, faults removed, durations shortened, until no single change keeps the
// finding (so removing any one step of the result loses it). Bounded by `max_candidates` runs.
ShrinkResult shrink(const nlohmann::json& document, const LockVariant& variant,
                    const std::string& signature, std::uint64_t seed,
                    int seeds_per_candidate = kSeedsPerCandidate, int max_candidates = 2000);

// robust_seed: from `first_seed` on (at most `tries` seeds), the first schedule that shows
// `signature` under all `seeds_per_candidate` of its seeds, else the one that shows it under the
// most: the schedule to shrink, so that the minimal scenario does not hang on one lucky timing.
// Consecutive seeds cycle through the simulator's four timing profiles (sim_runtime.h timing_of:
// loopback, fast machine, slow network, loaded machine), so a schedule that shows it under all
// of them does not hang on one machine's speed; whether it hangs on a race is measured after
// shrinking, on fresh seeds (ShrinkResult::fresh_shown).
std::uint64_t robust_seed(const ExploreTarget& target, const std::string& signature,
                          std::uint64_t first_seed, int seeds_per_candidate = kSeedsPerCandidate,
                          int tries = 200);

// describe_steps: a scenario's steps, one short line each ("    B acquire (read), once the lock
// is held (or after 200 ms), no release after it"): with what each waits for, a single try, a
// fault inside a call, and a hold never given back, which a minimal scenario's finding may hang
// on.
std::string describe_steps(const nlohmann::json& document);

// better_minimal: `candidate` is a better minimal scenario than `best`: one that shows the finding
// under its seeds beats one that lost it (a later schedule that never showed it, whose unshrunk
// document may show it on more fresh seeds: b_sem_seconds of a blind test was left "not shrunk"
// so), then more fresh seeds showing it, then fewer steps.
bool better_minimal(const ShrinkResult& candidate, const ShrinkResult& best);

// shrink_robustly: robust_seed from `first_seed`, shrunk; while the minimal scenario hangs on a
// race (shown under fewer than all of its fresh seeds), the next robust schedule after it,
// shrunk too, at most `schedules` in all: the result is the minimal scenario shown under the most
// fresh seeds (the fewest steps among equals, the first among those). A race a lock loses only
// sometimes is still found; the minimal scenario of one that does not hang on a race should not.
ShrinkResult shrink_robustly(const ExploreTarget& target, const std::string& signature,
                             std::uint64_t first_seed, int schedules = 4);

}  // namespace locksim
