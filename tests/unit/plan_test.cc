// plan_test: compile_plan decides every random choice of a run before it runs, and cycle n of
// client c depends on nothing but (seed, c, n). That every executor carries the plan out alike is
// shown on the real executors: DriverExecutors.CarryOutThePlan in driver_test.
#include "sim/plan/plan.h"

#include <gtest/gtest.h>

#include <set>

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
  return a.work_ms == b.work_ms && a.rest_ms == b.rest_ms && a.lose == b.lose &&
         a.crash == b.crash && a.pause_ms == b.pause_ms &&
         a.lose_acquire_reply == b.lose_acquire_reply;
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
    EXPECT_EQ(q.crash, c.crash);
    EXPECT_EQ(q.pause_ms, 0);
    EXPECT_FALSE(q.lose_acquire_reply);
    if (c.pause_ms > 0) {
      ++pauses;
      EXPECT_GE(c.pause_ms, 100);
      EXPECT_LE(c.pause_ms, 200);
    }
    lost += c.lose_acquire_reply;
  }
  EXPECT_GT(pauses, 10);
  EXPECT_LT(pauses, 40);
  EXPECT_GT(lost, 10);
  EXPECT_LT(lost, 40);
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

}  // namespace
}  // namespace locksim
