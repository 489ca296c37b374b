// exercise.h: the schedules `locksim explore` runs: a small scripted scenario drawn from a seed,
// and the signature of what the checker found in one.
//
// An exercise is a scenario in the catalogue's own JSON format (docs/scenarios.md): two or three
// clients, each doing a cycle or two of acquire -> work -> release, their steps interleaved in a
// drawn order, with at most `max_faults` faults drawn from a bounded menu: a crash inside the
// critical section, a crash or a pause at each of the variant's checkpoints
// (LockVariant::checkpoints), a pause of the holder, work that outlasts the lease, a lost reply
// of an acquire or a release, a release delayed on the link, a partition of the holder, and
// server faults while the holder works: a restart without persistence, a clock jump, and for a
// multi-server lock (Redlock, on five servers: "redlock_5") a node killed. A schedule with a
// server fault runs on a topology of its own ("single" for a one-server lock); a lock whose grant
// waits for a replica (LockVariant::needs_replica: lua_owner_wait) always runs on a primary with
// one ("primary_replica"). Work and pause
// lengths are drawn against the TTL. So what explore finds is already a scenario a person
// can read, shrink and run on a real server.
//
//   nlohmann::json doc = draw_exercise(variant, ExerciseOptions{}, seed);
//   Scenario scenario = parse_scenario(doc, "explore", names);
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "sim/checker/check.h"
#include "sim/lock/variant.h"

namespace locksim {

// ExerciseFault: a kind of fault in the menu.
enum class ExerciseFault {
  kCrash,       // the holder crashes inside its critical section instead of releasing
  kCheckpoint,  // a crash or a pause (until another client is inside) at a variant checkpoint
  kPause,       // the holder is paused (a GC or VM stall) for one to three TTLs
  kOverrun,     // the holder works one to three TTLs (longer than its lease)
  kLostReply,   // the reply of the acquire or of the release is lost (the command ran)
  kDelay,       // the release is delayed on the link until another client is inside
  kPartition,   // the holder's link is cut for one to three TTLs (held, or reset)
  kRestart,     // while the holder works, a server restarts without persistence (forgets keys)
  kClockJump,   // while the holder works, a server's clock jumps one to three TTLs ahead
  kNodeDown,    // a multi-server lock (Redlock): a node is killed while the holder works
};
std::string_view to_string(ExerciseFault fault);
// exercise_fault_from: the fault named `word` ("crash", "checkpoint", "pause", "overrun",
// "lost_reply", "delay", "partition", "restart", "clock_jump", "node_down").
std::optional<ExerciseFault> exercise_fault_from(std::string_view word);

struct ExerciseOptions {
  int max_clients = 3;  // 2..max_clients clients
  int max_cycles = 2;   // 1..max_cycles cycles each
  int max_faults = 1;   // 0..max_faults faults per schedule
  std::int64_t ttl_ms = 100;
  std::set<ExerciseFault> faults = {ExerciseFault::kCrash,     ExerciseFault::kCheckpoint,
                                    ExerciseFault::kPause,     ExerciseFault::kOverrun,
                                    ExerciseFault::kLostReply, ExerciseFault::kDelay,
                                    ExerciseFault::kPartition, ExerciseFault::kRestart,
                                    ExerciseFault::kClockJump, ExerciseFault::kNodeDown};
};

// draw_exercise: the exercise of `seed`: a scripted scenario document for `variant` named
// "explore-<seed>", expecting "any" (explore judges by findings).
nlohmann::json draw_exercise(const LockVariant& variant, const ExerciseOptions& options,
                             std::uint64_t seed);

// faults_in: the menu faults a scenario document's steps use (for "what was exercised").
std::vector<std::string> faults_in(const nlohmann::json& document);

// signatures: what a run showed that explore reports, one word each: a finding whose verdict is
// not ok ("mutex_violation (stale_release)", "deadlock"), and the verdict-neutral findings that
// are a lock's own bug (idle_hold, stale_release, stolen_renewal, barging). Sorted, unique.
std::set<std::string> signatures(const CheckResult& result);

}  // namespace locksim
