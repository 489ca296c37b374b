// exercise.h: the schedules `locksim explore` runs: a small scripted scenario drawn from a seed,
// and the signature of what the checker found in one.
//
// An exercise is a scenario of the catalogue's own form (docs/scenarios.md): two or three
// clients, each doing a cycle or two of acquire -> work -> release, their steps interleaved in a
// drawn order, with faults drawn from a bounded menu: a crash inside the critical section, a
// crash or a pause at each of the variant's checkpoints (LockVariant::checkpoints), a pause of the
// holder, work that outlasts the lease, a lost reply of an acquire or a release, a release delayed
// on the link, a partition of the holder, and server faults while the holder works: a restart
// without persistence, a clock jump, and for a multi-server lock (Redlock, on five servers:
// "redlock_5") a node killed; for a lock that keeps a queue of waiters (LockVariant::queues), a
// waiter that dies, or is cut off, while it is queued.
//
// Swarm: each schedule first draws which kinds of the menu are on (each with probability 1/2, as
// swarm testing does) and, for each kind that is on, how hard: one fault, or several aimed at one
// window. For a multi-server lock "several" aims a restart, a clock jump or a partition at a
// majority of the nodes that granted the holder's lock, inside its validity (the ways Redlock
// loses a lock); then it draws 0..max_faults faults from the kinds that are on. A lock that keeps
// a queue is drawn waiters that queue while another client holds the lock, and its schedules
// check barging (check.barging). A schedule with a server fault runs on a topology of its own
// ("single" for a one-server lock); a lock whose grant waits for a replica
// (LockVariant::needs_replica: lua_owner_wait) always runs on a primary with one
// ("primary_replica"). Work and pause lengths are drawn against the TTL.
//
// A schedule is drawn in memory, as the Scenario it runs (no JSON is written or parsed for it,
// explore draws tens of thousands a second); `document` writes the same scenario as JSON for what
// is shown (a finding, a replay, a shrink), and parsing that document gives the same run.
//
//   ExerciseDrawer drawer(variant, ExerciseOptions{});
//   const Exercise& exercise = drawer.draw(seed);  // exercise.scenario runs on the simulator
//   nlohmann::json doc = drawer.document(exercise); // the same scenario, written
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sim/checker/check.h"
#include "sim/core/random.h"
#include "sim/lock/variant.h"
#include "sim/scenario/scenario.h"

namespace locksim {

// ExerciseFault: a kind of fault in the menu.
enum class ExerciseFault {
  kCrash,        // the holder crashes inside its critical section instead of releasing
  kCheckpoint,   // a crash or a pause (until another client is inside) at a variant checkpoint
  kPause,        // the holder is paused (a GC or VM stall) for one to three TTLs
  kOverrun,      // the holder works one to three TTLs (longer than its lease)
  kLostReply,    // the reply of the acquire or of the release is lost (the command ran)
  kDelay,        // the release is delayed on the link until another client is inside
  kPartition,    // the holder's link is cut for one to three TTLs (held, or reset); several: from
                 // a majority of a multi-server lock's nodes
  kRestart,      // while the holder works, a server restarts without persistence (forgets keys);
                 // several: a majority of a multi-server lock's nodes
  kClockJump,    // while the holder works, a server's clock jumps one to three TTLs ahead;
                 // several: on a majority of a multi-server lock's nodes
  kNodeDown,     // a multi-server lock (Redlock): a node is killed while the holder works
  kDeadWaiter,   // a lock with a queue: a waiter tries once while the lock is held, and dies
  kCutWaiter,    // a lock with a queue: a waiter tries once while the lock is held, is cut off
                 // for one to six TTLs, then tries again
  kClientClock,  // a semaphore: a client's own clock runs one to three TTLs ahead or behind
  // On a Redis Cluster (asked for by name: not in the default menu). A schedule with one runs on
  // a cluster of three primaries with a replica each (cluster-node-timeout 100 ms), the lock on
  // p1, its replica r1.
  kFailover,  // while the holder works, p1 fails over to r1: killed (then the cluster's
              // election, and p1 back as r1's replica), or a CLUSTER FAILOVER TAKEOVER or FORCE;
              // several: r1's link is cut before the holder's acquire (its grant never reaches r1)
  kSlotMove,  // while the holder works, the lock's slot migrates from p1 to p2 (ASK for a window
              // of up to a TTL, then MOVED)
};
std::string_view to_string(ExerciseFault fault);
// exercise_fault_from: the fault named `word` ("crash", "checkpoint", "pause", "overrun",
// "lost_reply", "delay", "partition", "restart", "clock_jump", "node_down", "dead_waiter",
// "cut_waiter").
std::optional<ExerciseFault> exercise_fault_from(std::string_view word);
// all_exercise_faults: every kind of the default menu, in the order above: all but the cluster's
// (kFailover, kSlotMove), which a schedule draws only when asked (--faults failover,slot_move).
std::set<ExerciseFault> all_exercise_faults();

struct ExerciseOptions {
  int max_clients = 3;  // 2..max_clients clients
  int max_cycles = 2;   // 1..max_cycles cycles each
  int max_faults = 2;   // 0..max_faults faults per schedule
  std::int64_t ttl_ms = 100;
  std::set<ExerciseFault> faults = all_exercise_faults();
};

// Choices: the draws one exercise is made of, each a raw 64-bit number. Drawn from a seed they
// are the exercise of that seed; replayed with some of them changed they are a variation of it
// (a steered search keeps the choices of schedules that covered something new and mutates them,
// as a coverage-guided fuzzer mutates its input). Past the end of a replayed prefix, draws come
// from the seed.
class Choices {
 public:
  explicit Choices(std::uint64_t seed) : rng_(seed) { drawn_.reserve(kDrawsReserved); }
  Choices(std::uint64_t seed, std::vector<std::uint64_t> prefix)
      : rng_(seed), prefix_(std::move(prefix)) {
    drawn_.reserve(kDrawsReserved);
  }
  // uniform: an integer in [low, high] (inclusive); requires low <= high.
  std::int64_t uniform(std::int64_t low, std::int64_t high);
  // chance: true with probability p.
  bool chance(double probability);
  // drawn: every raw draw so far, in order (the prefix's where it reached).
  const std::vector<std::uint64_t>& drawn() const { return drawn_; }
  // replayed: how many draws came from the prefix.
  std::size_t replayed() const { return std::min(prefix_.size(), drawn_.size()); }

 private:
  std::uint64_t raw();
  // Room for a schedule's draws at once (most draw 10 to 30): grown from nothing it was
  // reallocated five times in every schedule.
  static constexpr std::size_t kDrawsReserved = 64;
  Rng rng_;
  std::vector<std::uint64_t> prefix_;
  std::vector<std::uint64_t> drawn_;
};

// Exercise: one drawn schedule, in memory.
struct Exercise {
  std::uint64_t seed = 0;
  Scenario scenario;  // what runs: its steps, clients and topology (not in resolved form)
  // faults: what it exercised, in words, sorted: each fault kind ("pause", "crash at queued"),
  // an aimed one ("restart on a majority"), the swarm's draw ("swarm: 3 kinds on").
  std::vector<std::string> faults;
  bool any_fault = false;  // some fault was drawn (faults names more than the swarm)
};

// ExerciseDrawer: draws the exercises of one lock and one set of options. The templates (the
// scenario around the steps) are parsed once; each draw fills in steps, clients and topology.
// Not thread-safe: one per worker.
class ExerciseDrawer {
 public:
  ExerciseDrawer(const LockVariant& variant, const ExerciseOptions& options);
  ExerciseDrawer(const ExerciseDrawer&) = delete;
  ExerciseDrawer& operator=(const ExerciseDrawer&) = delete;
  ~ExerciseDrawer();
  // draw: the exercise of `seed`. The reference stays valid until the next draw.
  const Exercise& draw(std::uint64_t seed);
  // draw: the exercise drawn from `choices` (named after `seed`).
  const Exercise& draw(Choices& choices, std::uint64_t seed);
  // document: `exercise` as a scenario document; parsed (parse_schedule) it runs as `exercise`.
  nlohmann::json document(const Exercise& exercise) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// draw_exercise: the exercise of `seed`, written: a scripted scenario document for `variant`
// named "explore-<seed>", expecting "any" (explore judges by findings).
nlohmann::json draw_exercise(const LockVariant& variant, const ExerciseOptions& options,
                             std::uint64_t seed);

// faults_in: the menu faults a scenario document's steps use (for a scenario explore is given:
// what it exercises).
std::vector<std::string> faults_in(const nlohmann::json& document);

// signatures: what a run showed that explore reports, one word each: a finding whose verdict is
// not ok ("mutex_violation (stale_release)", "deadlock"), and the verdict-neutral findings that
// are a lock's own bug (idle_hold, stale_release, stolen_renewal, barging). Sorted, unique.
std::set<std::string> signatures(const CheckResult& result);

}  // namespace locksim
