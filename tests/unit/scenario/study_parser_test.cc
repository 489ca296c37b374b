// study_parser_test: a study's clients_run_as reaches every point, whatever its wait strategy;
// its "client_mode" is a deprecated alias.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/core/error.h"
#include "sim/scenario/study.h"
#include "tests/unit/scenario/scenario_test_support.h"

namespace locksim {
namespace {

using nlohmann::json;
using test::expect_contains;
using test::kFile;
using test::kVariants;

// A study's clients_run_as reaches every point, the waking strategies' points included.
TEST(StudyLoaderTest, ClientsRunAsReachesEveryPoint) {
  json study = json::parse(R"({
    "name": "s", "variants": ["lua_owner", "set_nx_ex"], "clients": [1, 4], "keys": "per_client",
    "strategies": [{"strategy": "poll", "interval_ms": 1}], "clients_run_as": "event_loop"})");
  const Study loaded = parse_study(study, kFile, kVariants);
  EXPECT_EQ(loaded.executor, Executor::kEventLoop);
  EXPECT_TRUE(loaded.notes.empty());
  ASSERT_EQ(loaded.points.size(), 4u);
  for (const StudyPoint& point : loaded.points) {
    EXPECT_EQ(point.scenario.executor, Executor::kEventLoop);
  }
  EXPECT_EQ(loaded.resolved["clients_run_as"], "event_loop");
  EXPECT_FALSE(loaded.resolved.contains("client_mode"));
  // The waking strategies run on the loop too (each client's waiter or subscriber connection).
  study["strategies"].push_back({{"strategy", "notify"}});
  study["strategies"].push_back({{"strategy", "pubsub"}});
  const Study waking = parse_study(study, kFile, kVariants);
  ASSERT_EQ(waking.points.size(), 12u);  // 2 variants x 2 client counts x 3 strategies
  for (const StudyPoint& point : waking.points) {
    EXPECT_EQ(point.scenario.executor, Executor::kEventLoop);
  }
  study.erase("clients_run_as");
  for (const StudyPoint& point : parse_study(study, kFile, kVariants).points) {
    EXPECT_EQ(point.scenario.executor, Executor::kThreads);
  }
}

// A study's "client_mode" loads as clients_run_as, with a note naming the file and field; given
// both, they must agree.
TEST(StudyLoaderTest, ClientModeIsADeprecatedAlias) {
  json study = json::parse(R"({
    "name": "s", "variants": ["lua_owner"], "clients": [1],
    "strategies": [{"strategy": "poll", "interval_ms": 1}], "client_mode": "processes"})");
  const Study loaded = parse_study(study, kFile, kVariants);
  EXPECT_EQ(loaded.executor, Executor::kProcesses);
  EXPECT_EQ(loaded.points.front().scenario.executor, Executor::kProcesses);
  EXPECT_EQ(loaded.resolved["clients_run_as"], "processes");
  ASSERT_EQ(loaded.notes.size(), 1u);
  expect_contains(loaded.notes[0], {kFile, "$.client_mode is deprecated",
                                    "write \"clients_run_as\": \"processes\""});
  study["clients_run_as"] = "threads";
  try {
    parse_study(study, kFile, kVariants);
    ADD_FAILURE() << "conflicting clients_run_as and client_mode accepted";
  } catch (const InputError& error) {
    expect_contains(error.what(), {kFile, "$.client_mode: \"processes\" conflicts with "
                                          "$.clients_run_as: \"threads\""});
  }
}

}  // namespace
}  // namespace locksim
