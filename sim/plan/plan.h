// plan.h: Plan, what a run will do, compiled from a Scenario and a seed before anything runs.
//
// Jepsen separates *what* to do (a generator) from *who does it* (the clients and the nemesis);
// here the separation is a value. compile_plan makes every decision a run needs up front: each
// client's name, key and random stream, when an open-loop client's first acquire is due, and
// every per-cycle draw of a workload (how long to work and rest, and each drawn fault kind's draw:
// whether to crash, to lose the lock, to be paused by the nemesis, to lose an acquire's reply). The
// plan does not know what runs the clients: the executor (Scenario::executor: threads, processes,
// one event loop) only carries it out, so the same seed means the same operations whichever
// executor runs them (DriverExecutors.CarryOutThePlan runs one workload on all three and compares).
//
// Per-cycle draws are counter-based: cycle n of client c is a pure function of (seed, c, n), so a
// plan of 256 clients x 1,000,000 cycles (or a time-bounded run with no cycle count) costs no
// memory, and an executor may ask for a cycle twice.
//
//   Plan plan = compile_plan(scenario, seed);
//   for (std::int64_t n = 0; n < plan.cycles(); ++n) {
//     const CyclePlan cycle = plan.cycle(client, n);
//     ...
//   }
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/clock.h"
#include "sim/fault/drawn_fault.h"
#include "sim/scenario/scenario.h"

namespace locksim {

// CyclePlan: one workload cycle of one client, decided in advance.
struct CyclePlan {
  std::int64_t work_ms = 0;  // time inside the critical section
  std::int64_t rest_ms = 0;  // time outside afterwards (closed loop)
  bool read = false;         // a read-write lock's read hold (Workload::read_share), else write
  // drawn: each drawn fault kind's draw for the cycle (DrawnFault::draw), in the order of
  // drawn_fault_types() and of Workload::drawn_faults; 0: the kind is not drawn this cycle. What
  // any other value means is the kind's own: 1 for a crash, a lost iteration or a lost reply, the
  // pause's length in ms.
  std::array<std::int64_t, kMaxDrawnFaultKinds> drawn{};

  // of: the draw of the kind whose word is `word` ("pause"); asserts that it exists.
  std::int64_t of(std::string_view word) const { return drawn[drawn_fault_index(word)]; }
};

// workload_key: the logical key client `client` of a workload over `keys` keys locks: the lock
// key itself with one key, else the lock key with "-<client % keys>" after it, inside the braces
// of a key that is one hash tag ("{lock}": "{lock-0}", "{lock-1}"), so that a Redis Cluster spreads
// the keys over its slots.
std::string workload_key(const std::string& lock_key, int keys, std::size_t client);

// ClientPlan: one client's identity and random stream.
struct ClientPlan {
  std::string name;
  std::uint64_t seed = 0;   // the client's own stream (lock tokens, wait jitter)
  std::string key;          // workload: the logical key it locks; scripted: lock.key
  Nanos first_due_ns = -1;  // open loop: when its first acquire is due; -1: closed loop
};

class Plan {
 public:
  // The plan refers to `scenario`, which must outlive it.
  Plan(const Scenario& scenario, std::uint64_t seed);

  const Scenario& scenario() const { return *scenario_; }
  std::uint64_t seed() const { return seed_; }
  const std::vector<ClientPlan>& clients() const { return clients_; }
  // links: whether client links go through locksim's fault proxy (some fault needs one).
  bool proxied_links() const { return proxied_links_; }

  // cycle: cycle `n` (0-based) of client `client` of a workload. Pure and thread-safe.
  CyclePlan cycle(std::size_t client, std::int64_t n) const;

 private:
  const Scenario* scenario_;
  std::uint64_t seed_;
  std::vector<ClientPlan> clients_;
  bool proxied_links_ = false;
};

// compile_plan: the plan of `scenario` with `seed`.
Plan compile_plan(const Scenario& scenario, std::uint64_t seed);

}  // namespace locksim
