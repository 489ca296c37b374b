// workload_parser_test: a workload loads its values and defaults; bad ones are named by path.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/scenario/loader.h"
#include "tests/unit/scenario/scenario_test_support.h"

namespace locksim {
namespace {

using nlohmann::json;
using test::drawn_keys;
using test::error_after;
using test::expect_contains;
using test::kFile;
using test::kVariants;
using test::workload_document;

// A workload scenario keeps its values, fills the rest and generates client names c0..cN-1.
TEST(ScenarioLoaderTest, WorkloadScenarioLoadsValuesAndDefaults) {
  const Scenario s = parse_scenario(workload_document(), kFile, kVariants);
  ASSERT_FALSE(s.scripted());
  const Workload& w = *s.workload;
  EXPECT_EQ(w.clients, 8);
  EXPECT_EQ(w.cycles, 100);
  EXPECT_EQ(w.keys, 2);
  EXPECT_EQ(w.work_ms.min_ms, 1);
  EXPECT_EQ(w.work_ms.max_ms, 5);
  EXPECT_EQ(w.rest_ms.min_ms, 3);
  EXPECT_EQ(w.rest_ms.max_ms, 3);
  EXPECT_DOUBLE_EQ(w.drawn_fault("crash").probability(), 0.25);
  EXPECT_EQ(s.clients, (std::vector<std::string>{"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7"}));
  EXPECT_TRUE(s.steps.empty());
  EXPECT_EQ(s.lock.key, "lock");
  EXPECT_EQ(s.lock.ttl_ms, 1000);
  EXPECT_EQ(s.check.stuck_ms, 500);
  EXPECT_EQ(s.description, "");
  EXPECT_EQ(s.expect.at("set_nx_ex").verdict, Verdict::kOk);
}

// An empty workload object means every workload default.
TEST(ScenarioLoaderTest, EmptyWorkloadTakesAllDefaults) {
  json document = workload_document();
  document["workload"] = json::object();
  const Scenario s = parse_scenario(document, kFile, kVariants);
  EXPECT_EQ(s.workload->clients, 4);
  EXPECT_EQ(s.workload->cycles, 100);
  EXPECT_EQ(s.workload->keys, 1);
  EXPECT_EQ(s.workload->work_ms.min_ms, 1);
  EXPECT_EQ(s.workload->work_ms.max_ms, 1);
  EXPECT_EQ(s.workload->rest_ms.max_ms, 0);
  EXPECT_EQ(s.workload->drawn_fault("crash").probability(), 0.0);
  EXPECT_EQ(s.resolved["workload"]["work_ms"], json::parse(R"({"min": 1, "max": 1})"));
}

// A crash probability above 1 names the range.
TEST(ScenarioLoaderTest, ProbabilityOutOfRangeNamesRange) {
  expect_contains(
      error_after(workload_document(), [](json& d) { d["workload"]["crash_probability"] = 1.5; }),
      {kFile, "$.workload.crash_probability: expected a probability between 0 and 1, got 1.5"});
}

// Workload ranges and counts are checked against each other.
TEST(ScenarioLoaderTest, InconsistentWorkloadIsRejected) {
  expect_contains(
      error_after(workload_document(), [](json& d) { d["workload"]["keys"] = 9; }),
      {"$.workload.keys: expected a number of keys (1..clients) between 1 and 8, got 9"});
  expect_contains(error_after(workload_document(),
                              [](json& d) {
                                d["workload"]["work_ms"] = json::parse(R"({"min": 6, "max": 5})");
                              }),
                  {"$.workload.work_ms: \"min\" (6) must not exceed \"max\" (5)"});
  expect_contains(error_after(workload_document(), [](json& d) { d["workload"]["clients"] = 257; }),
                  {"$.workload.clients: expected a number of clients between 1 and 256, got 257"});
}

// Doc D's lost iterations default to never, sleeping three leases when they happen.
TEST(ScenarioLoaderTest, WorkloadLoseDefaults) {
  const Scenario s = parse_scenario(workload_document(), kFile, kVariants);
  EXPECT_EQ(s.workload->drawn_fault("lose").probability(), 0.0);
  EXPECT_EQ(drawn_keys(*s.workload)["lose_sleep_ms"], 3000);  // 3 x the default 1000 ms lease
  EXPECT_EQ(s.resolved["workload"]["lose_sleep_ms"], 3000);
  EXPECT_EQ(s.resolved["workload"]["lose_probability"], 0.0);

  json document = workload_document();
  document["workload"]["lose_probability"] = 0.1;
  document["workload"]["lose_sleep_ms"] = 700;
  const Scenario given = parse_scenario(document, kFile, kVariants);
  EXPECT_DOUBLE_EQ(given.workload->drawn_fault("lose").probability(), 0.1);
  EXPECT_EQ(drawn_keys(*given.workload)["lose_sleep_ms"], 700);
  EXPECT_EQ(parse_scenario(given.resolved, kFile, kVariants).resolved, given.resolved);

  document["workload"]["lose_sleep_ms"] = 0;  // 0 also means the default
  document["lock"] = json::parse(R"({"ttl_ms": 2000000})");
  EXPECT_EQ(drawn_keys(*parse_scenario(document, kFile, kVariants).workload)["lose_sleep_ms"],
            3600000);

  expect_contains(
      error_after(workload_document(), [](json& d) { d["workload"]["lose_probability"] = 2; }),
      {"$.workload.lose_probability: expected a probability between 0 and 1, got 2"});
  expect_contains(
      error_after(workload_document(), [](json& d) { d["workload"]["lose_sleep_ms"] = -1; }),
      {"$.workload.lose_sleep_ms: expected a duration in ms between 0 and 3600000, got -1"});
}

}  // namespace
}  // namespace locksim
