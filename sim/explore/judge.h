// judge.h: a finding of explore judged against the reference lock of its kind: the lock's own
// bug, or a limit every lock of that kind has.
//
// A user asks "is my lock safe?". A holder that outlives its lease and a server that forgets the
// key are what every lease lock shows under those faults (physics, not a bug); a release that
// deletes another client's key is a bug. The reference (reference_of, sim/lock/registry.h:
// lua_owner, lua_owner_renew, lua_fair_queue or redlock) tells them apart: the finding is run with
// the reference in the same scenario, under the same seeds, and what the reference shows too is a
// limit. The reference judged against itself has nothing to compare with; for it, only the known
// limits of every lease (kLeaseLimits) are limits, so a checker that misjudged a correct lock
// still shows up as a finding of its own.
//
//   Judgement j = judge_finding(variant, "mutex_violation (lease_expired)",
//                               {{drawn_document, {seed, seed + 1, ...}}});
//   if (!j.limit) ...  // the lock's own finding: explore exits 1
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "sim/lock/variant.h"
#include "sim/report/run_record.h"

namespace locksim {

// ScenarioSeeds: a scenario document the finding showed in, and the seeds to run it under.
struct ScenarioSeeds {
  nlohmann::json document;
  std::vector<std::uint64_t> seeds;
};

struct Judgement {
  bool limit = false;     // the reference shows it too: a limit of every lock of the kind
  std::string reference;  // the reference it was judged against
  std::string why;        // in words: "lua_owner shows it too in the same scenario (seed 12)"
};

// judge_finding: `signature` (an explore signature, exercise.h) of `variant`, judged against
// reference_of(variant) in each of `where` (the drawn schedule it was found in, its minimal
// scenario): a limit as soon as the reference shows it in one of them under one of its seeds.
Judgement judge_finding(const LockVariant& variant, const std::string& signature,
                        const std::vector<ScenarioSeeds>& where);

// limit_help: for a limit, what would help ("" for a signature with no advice).
std::string limit_help(const std::string& signature);

// for_reference: `document` of `variant` rewritten for `reference`: its variants and expect name
// the reference, and a fault at a checkpoint the reference does not have moves to the nearest
// point it has (a pause there becomes the same stall of the release on the link; a crash inside
// the acquire a crash just after it, one inside the release a crash instead of it); the rest of
// the scenario is unchanged.
nlohmann::json for_reference(const nlohmann::json& document, const LockVariant& variant,
                             const LockVariant& reference);

// judge_violations: each mutex_violation of one scenario's runs (`runs`, every variant that ran in
// it) told apart as the lock's own bug or a limit every lease of its kind has, in
// VariantRun::judged ("own", "limit") and judged_why, so that a red cell of the index says which;
// the runs of other verdicts are left unjudged. As judge_finding does, a violation is judged
// against the reference of the lock's kind in the same scenario: a limit when the reference ran
// beside it and shows a mutex_violation with every cause it has, and the lock has no finding that
// is a bug whatever the fault (own_findings). The reference itself, or a lock whose reference did
// not run in the scenario, is judged by its causes alone: lease_expired and lock_lost are the
// limits of every lease (kLeaseLimits), anything else is its own. `locksim run` calls it before a
// scenario's results.json is written.
void judge_violations(std::vector<VariantRun>& runs);

}  // namespace locksim
