// plan_test: compile_plan decides every random choice of a run before it runs, and cycle n of
// client c depends on nothing but (seed, c, n). That every executor carries the plan out alike is
// shown on the real executors: DriverExecutors.CarryOutThePlan in driver_test.
#include "sim/plan/plan.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "sim/scenario/loader.h"

namespace locksim {
namespace {

Scenario workload(const std::string& extra) {
  const std::string text = R"({"name": "w", "variants": ["lua_owner"], "source": {"doc": "none", "claim": "c"},
    "workload": {"clients": 3, "cycles": 50, "work_ms": {"min": 1, "max": 40},
                 "rest_ms": {"min": 0, "max": 9}, "crash_probability": 0.1)" +
                           extra + R"(},
    "expect": {"lua_owner": "any"}})";
  return parse_scenario(nlohmann::json::parse(text), "w.json", {"lua_owner"});
}

bool same(const CyclePlan& a, const CyclePlan& b) {
  return a.work_ms == b.work_ms && a.rest_ms == b.rest_ms && a.drawn == b.drawn;
}

TEST(Plan, CyclesArePureFunctionsOfSeedClientAndIndex) {
  const Scenario scenario = workload("");
  const Plan plan = compile_plan(scenario, 42);
  // Asked in any order, any number of times, a cycle is the same.
  const CyclePlan late = plan.cycle(2, 49);
  for (std::int64_t n = 0; n < 50; ++n) (void)plan.cycle(1, n);
  EXPECT_TRUE(same(late, plan.cycle(2, 49)));
  EXPECT_TRUE(same(late, compile_plan(scenario, 42).cycle(2, 49)));
  // Different clients and seeds draw differently (40 work values, 50 cycles: not all equal).
  std::set<std::int64_t> works;
  int differ_by_client = 0;
  int differ_by_seed = 0;
  const Plan other = compile_plan(scenario, 43);
  for (std::int64_t n = 0; n < 50; ++n) {
    const CyclePlan c = plan.cycle(0, n);
    EXPECT_GE(c.work_ms, 1);
    EXPECT_LE(c.work_ms, 40);
    EXPECT_LE(c.rest_ms, 9);
    works.insert(c.work_ms);
    differ_by_client += !same(c, plan.cycle(1, n));
    differ_by_seed += !same(c, other.cycle(0, n));
  }
  EXPECT_GT(works.size(), 10u);
  EXPECT_GT(differ_by_client, 25);
  EXPECT_GT(differ_by_seed, 25);
}

TEST(Plan, AddingANemesisDrawShiftsNoOtherDraw) {
  // A Plan refers to its scenario, which must outlive it.
  const Scenario quiet_scenario = workload("");
  const Plan quiet = compile_plan(quiet_scenario, 9);
  const Scenario noisy_scenario =
      workload(R"(, "pause_probability": 0.5, "pause_ms": {"min": 100, "max": 200},
                  "lost_reply_probability": 0.5)");
  const Plan noisy = compile_plan(noisy_scenario, 9);
  EXPECT_FALSE(quiet.proxied_links());
  EXPECT_TRUE(noisy.proxied_links());
  int pauses = 0;
  int lost = 0;
  for (std::int64_t n = 0; n < 50; ++n) {
    const CyclePlan q = quiet.cycle(0, n);
    const CyclePlan c = noisy.cycle(0, n);
    EXPECT_EQ(q.work_ms, c.work_ms);
    EXPECT_EQ(q.rest_ms, c.rest_ms);
    EXPECT_EQ(q.of("crash"), c.of("crash"));
    EXPECT_EQ(q.of("pause"), 0);
    EXPECT_EQ(q.of("lost_reply"), 0);
    if (c.of("pause") > 0) {
      ++pauses;
      EXPECT_GE(c.of("pause"), 100);
      EXPECT_LE(c.of("pause"), 200);
    }
    lost += c.of("lost_reply") != 0;
  }
  EXPECT_GT(pauses, 10);
  EXPECT_LT(pauses, 40);
  EXPECT_GT(lost, 10);
  EXPECT_LT(lost, 40);
}

// The draws of a seed are pinned. These cycles and digests were computed by the code before the
// drawn faults became kinds of their own files (sim/fault/drawn/), which named each fault in
// Plan::cycle and drew, from one stream per (client, cycle): lose, work_ms, crash, rest_ms,
// pause and its length, lost_reply. A change that moves a draw (a kind's place in its stream, a
// draw skipped or added, a kind that no longer takes its stream's draws when it is off) fails
// here: a seed would no longer repeat the runs it gave.
struct PinnedCycle {
  std::size_t client;
  std::int64_t n;
  std::int64_t work_ms;
  std::int64_t rest_ms;
  std::int64_t lose;
  std::int64_t crash;
  std::int64_t pause_ms;
  std::int64_t lost_reply;
};

Scenario every_fault(const std::string& body) {
  const std::string text =
      R"({"name": "w", "variants": ["lua_owner"], "source": {"doc": "none", "claim": "c"},
    "workload": {"clients": 4, "cycles": 500)" +
      body + R"(},
    "expect": {"lua_owner": "any"}})";
  return parse_scenario(nlohmann::json::parse(text), "w.json", {"lua_owner"});
}

// digest: 64-bit FNV-1a over every draw of 4 clients x 500 cycles, in the order above.
std::uint64_t digest(const Plan& plan) {
  std::uint64_t hash = 1469598103934665603ULL;
  const auto mix = [&hash](std::int64_t value) {
    hash ^= static_cast<std::uint64_t>(value);
    hash *= 1099511628211ULL;
  };
  for (std::size_t c = 0; c < 4; ++c) {
    for (std::int64_t n = 0; n < 500; ++n) {
      const CyclePlan p = plan.cycle(c, n);
      for (const std::int64_t value :
           {p.work_ms, p.rest_ms, p.of("lose"), p.of("crash"), p.of("pause"), p.of("lost_reply")}) {
        mix(value);
      }
    }
  }
  return hash;
}

constexpr const char* kEveryFault =
    R"(, "work_ms": {"min": 1, "max": 40}, "rest_ms": {"min": 0, "max": 9},
       "crash_probability": 0.3, "lose_probability": 0.3, "pause_probability": 0.5,
       "pause_ms": {"min": 100, "max": 200}, "lost_reply_probability": 0.4)";

TEST(Plan, ASeedGivesTheCyclesItAlwaysGave) {
  const std::string three_clients =
      R"({"name": "w", "variants": ["lua_owner"], "source": {"doc": "none", "claim": "c"},
    "workload": {"clients": 3, "cycles": 50, "work_ms": {"min": 1, "max": 40},
                 "rest_ms": {"min": 0, "max": 9}, "crash_probability": 0.3,
                 "lose_probability": 0.3, "pause_probability": 0.5,
                 "pause_ms": {"min": 100, "max": 200}, "lost_reply_probability": 0.4},
    "expect": {"lua_owner": "any"}})";
  const Scenario scenario =
      parse_scenario(nlohmann::json::parse(three_clients), "w.json", {"lua_owner"});
  const Plan plan = compile_plan(scenario, 20240601);
  // {client, cycle, work_ms, rest_ms, lose, crash, pause_ms, lost_reply}
  // clang-format off
  const std::vector<PinnedCycle> pinned = {
      {0, 0, 20, 9, 0, 0, 0, 1},
      {0, 1, 39, 5, 0, 0, 170, 0},
      {0, 2, 20, 6, 0, 0, 102, 0},
      {0, 3, 37, 4, 1, 0, 0, 0},
      {0, 4, 36, 5, 0, 1, 172, 0},
      {0, 5, 28, 6, 1, 1, 0, 1},
      {0, 6, 37, 4, 1, 1, 0, 1},
      {0, 7, 1, 7, 0, 1, 175, 0},
      {1, 0, 2, 3, 0, 0, 131, 0},
      {1, 1, 9, 2, 0, 0, 0, 0},
      {1, 2, 37, 7, 0, 0, 0, 0},
      {1, 3, 18, 9, 0, 0, 0, 1},
      {1, 4, 29, 2, 0, 0, 165, 0},
      {1, 5, 34, 4, 0, 0, 0, 0},
      {1, 6, 22, 7, 0, 0, 105, 0},
      {1, 7, 13, 2, 0, 1, 0, 0},
      {2, 0, 40, 0, 1, 1, 0, 0},
      {2, 1, 18, 8, 0, 0, 0, 0},
      {2, 2, 19, 6, 0, 0, 181, 0},
      {2, 3, 37, 9, 1, 0, 0, 0},
      {2, 4, 30, 0, 1, 0, 0, 0},
      {2, 5, 4, 3, 0, 0, 0, 1},
      {2, 6, 27, 5, 1, 0, 0, 0},
      {2, 7, 24, 4, 0, 1, 0, 1},
  };
  // clang-format on
  for (const PinnedCycle& pin : pinned) {
    const CyclePlan p = plan.cycle(pin.client, pin.n);
    const std::string what =
        "client " + std::to_string(pin.client) + ", cycle " + std::to_string(pin.n);
    EXPECT_EQ(p.work_ms, pin.work_ms) << what;
    EXPECT_EQ(p.rest_ms, pin.rest_ms) << what;
    EXPECT_EQ(p.of("lose"), pin.lose) << what;
    EXPECT_EQ(p.of("crash"), pin.crash) << what;
    EXPECT_EQ(p.of("pause"), pin.pause_ms) << what;
    EXPECT_EQ(p.of("lost_reply"), pin.lost_reply) << what;
  }

  // Every draw of longer plans: every kind on; fixed work and pause lengths (which take no draw);
  // no kind on at all.
  const Scenario every = every_fault(kEveryFault);
  EXPECT_EQ(digest(compile_plan(every, 20240601)), 17177617454055335455ULL);
  const Scenario fixed = every_fault(
      R"(, "work_ms": 5, "rest_ms": {"min": 0, "max": 3}, "crash_probability": 0.05,
         "lose_probability": 0.1, "pause_probability": 0.2, "pause_ms": 50,
         "lost_reply_probability": 0.1)");
  EXPECT_EQ(digest(compile_plan(fixed, 7)), 5030593028903631787ULL);
  const Scenario quiet = every_fault(R"(, "work_ms": {"min": 2, "max": 9})");
  EXPECT_EQ(digest(compile_plan(quiet, 99)), 13650550955301576274ULL);
}

// A lost iteration is never also paused: the pause's draws are still made (nothing after them
// moves), and its draw is dropped.
TEST(Plan, ALostIterationIsNeverPaused) {
  const Scenario scenario = every_fault(kEveryFault);
  const Plan plan = compile_plan(scenario, 5);
  int lost = 0;
  for (std::int64_t n = 0; n < 500; ++n) {
    const CyclePlan p = plan.cycle(1, n);
    if (p.of("lose") == 0) continue;
    ++lost;
    EXPECT_EQ(p.of("pause"), 0) << "cycle " << n;
  }
  EXPECT_GT(lost, 100);
}

TEST(Plan, ClientsGetTheirKeysAndOpenLoopPhases) {
  const Scenario scenario = parse_scenario(
      nlohmann::json::parse(R"({"name": "o", "variants": ["lua_owner"], "source": {"doc": "none", "claim": "c"},
        "workload": {"clients": 4, "keys": 2, "duration_ms": 100, "arrival_per_s": 10},
        "expect": {"lua_owner": "any"}})"),
      "o.json", {"lua_owner"});
  const Plan plan = compile_plan(scenario, 1);
  ASSERT_EQ(plan.clients().size(), 4u);
  EXPECT_EQ(plan.clients()[0].key, "lock-0");
  EXPECT_EQ(plan.clients()[1].key, "lock-1");
  EXPECT_EQ(plan.clients()[2].key, "lock-0");
  std::set<std::uint64_t> seeds;
  for (const ClientPlan& client : plan.clients()) {
    EXPECT_GE(client.first_due_ns, 0);
    EXPECT_LE(client.first_due_ns, ms_to_ns(100));  // within one interval of 1/10 s
    seeds.insert(client.seed);
  }
  EXPECT_EQ(seeds.size(), 4u);
}

// A hash-tagged lock key keeps each workload key's index inside its tag, so that a Redis Cluster
// spreads the keys over its slots while a key's own keys ("{lock-1}:notify") share its slot; a
// plain key, or one whose tag is only a part of it, gets the index after it; one key: no index.
TEST(Plan, AHashTaggedKeyKeepsTheIndexInsideItsTag) {
  EXPECT_EQ(workload_key("{lock}", 3, 4), "{lock-1}");
  EXPECT_EQ(workload_key("{lock}", 1, 4), "{lock}");
  EXPECT_EQ(workload_key("lock", 3, 2), "lock-2");
  EXPECT_EQ(workload_key("app:{lock}", 2, 1), "app:{lock}-1");
  EXPECT_EQ(workload_key("{a}x{b}", 2, 1), "{a}x{b}-1");
  EXPECT_EQ(workload_key("{}", 2, 1), "{}-1");
  const Scenario scenario = parse_scenario(
      nlohmann::json::parse(
          R"({"name": "o", "variants": ["lua_owner"], "source": {"doc": "none", "claim": "c"},
        "lock": {"key": "{lock}"}, "workload": {"clients": 4, "keys": 2, "duration_ms": 100},
        "expect": {"lua_owner": "any"}})"),
      "o.json", {"lua_owner"});
  const Plan plan = compile_plan(scenario, 1);
  EXPECT_EQ(plan.clients()[0].key, "{lock-0}");
  EXPECT_EQ(plan.clients()[3].key, "{lock-1}");
}

// A read share draws each cycle's hold from a stream of its own: about that share of the cycles
// read, none without it, all at 1, and no other draw of the cycle moves.
TEST(Plan, AReadShareDrawsReadHoldsAndShiftsNoOtherDraw) {
  const Scenario plain_scenario = workload("");
  const Scenario half_scenario = workload(R"(, "read_share": 0.5)");
  const Scenario all_scenario = workload(R"(, "read_share": 1)");
  const Plan plain = compile_plan(plain_scenario, 7);
  const Plan half = compile_plan(half_scenario, 7);
  const Plan all = compile_plan(all_scenario, 7);
  int reads = 0;
  for (std::size_t c = 0; c < 3; ++c) {
    for (std::int64_t n = 0; n < 50; ++n) {
      const CyclePlan a = plain.cycle(c, n);
      const CyclePlan b = half.cycle(c, n);
      EXPECT_FALSE(a.read);
      EXPECT_TRUE(all.cycle(c, n).read);
      EXPECT_TRUE(same(a, b)) << c << " " << n;
      EXPECT_EQ(b.read, half.cycle(c, n).read);
      reads += b.read ? 1 : 0;
    }
  }
  // 150 cycles at one half: far from none and from all (the binomial's 5 sigma is 31).
  EXPECT_GT(reads, 40);
  EXPECT_LT(reads, 110);
}

}  // namespace
}  // namespace locksim
