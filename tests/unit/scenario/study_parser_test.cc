// study_parser_test: a study's client_mode reaches every point, which refuses blocking waits.
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

// A study's client_mode reaches every point; a blocking strategy in an event-loop study is named
// at its place in the study.
TEST(StudyLoaderTest, ClientModeReachesEveryPointAndBlockingWaitsAreRefused) {
  json study = json::parse(R"({
    "name": "s", "variants": ["lua_owner", "set_nx_ex"], "clients": [1, 4], "keys": "per_client",
    "strategies": [{"strategy": "poll", "interval_ms": 1}], "client_mode": "event_loop"})");
  const Study loaded = parse_study(study, kFile, kVariants);
  ASSERT_EQ(loaded.points.size(), 4u);
  for (const StudyPoint& point : loaded.points) EXPECT_TRUE(point.scenario.workload->event_loop);
  EXPECT_EQ(loaded.resolved["client_mode"], "event_loop");
  study["strategies"].push_back({{"strategy", "notify"}});
  try {
    parse_study(study, kFile, kVariants);
    ADD_FAILURE() << "notify accepted in an event-loop study";
  } catch (const InputError& error) {
    expect_contains(error.what(), {kFile, "$.strategies[1].strategy", "blocks a connection"});
  }
  study.erase("client_mode");
  for (const StudyPoint& point : parse_study(study, kFile, kVariants).points) {
    EXPECT_FALSE(point.scenario.workload->event_loop);
  }
}

}  // namespace
}  // namespace locksim
