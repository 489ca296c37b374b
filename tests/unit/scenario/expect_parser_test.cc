// expect_parser_test: expectations per variant and sweep point load; bad ones are named by path.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/scenario/loader.h"
#include "tests/unit/scenario/scenario_test_support.h"

namespace locksim {
namespace {

using nlohmann::json;
using test::error_after;
using test::error_for;
using test::expect_contains;
using test::kFile;
using test::kVariants;
using test::resource_document;
using test::scripted_document;
using test::sweep_error_after;

// Every variant needs an expectation; a missing one is named.
TEST(ScenarioLoaderTest, MissingExpectEntryIsNamed) {
  expect_contains(error_after(scripted_document(), [](json& d) { d["expect"].erase("lua_owner"); }),
                  {kFile, "$.expect: missing an entry for variant \"lua_owner\""});
}

// An expectation for a variant the scenario does not run is named, with a suggestion.
TEST(ScenarioLoaderTest, ExtraExpectEntryIsNamed) {
  expect_contains(
      error_after(scripted_document(), [](json& d) { d["expect"]["set_nx_ex"] = "ok"; }),
      {kFile, "$.expect.set_nx_ex: \"set_nx_ex\" is not in $.variants"});
  expect_contains(error_after(scripted_document(), [](json& d) { d["expect"]["naiv"] = "ok"; }),
                  {"$.expect.naiv: \"naiv\" is not in $.variants (did you mean \"naive\"?)"});
}

// A verdict must be one of the verdict words.
TEST(ScenarioLoaderTest, BadVerdictWordIsRejected) {
  expect_contains(
      error_after(scripted_document(), [](json& d) { d["expect"]["lua_owner"] = "oke"; }),
      {kFile,
       "$.expect.lua_owner: unknown verdict \"oke\" (did you mean \"ok\"?); "
       "allowed: ok, mutex_violation, deadlock, resource_corrupted, error, unknown"});
}

// Causes must be known, unique, and only accompany a mutex_violation.
TEST(ScenarioLoaderTest, BadCauseIsRejected) {
  expect_contains(error_after(scripted_document(),
                              [](json& d) { d["expect"]["naive"]["causes"][1] = "stale-release"; }),
                  {kFile,
                   "$.expect.naive.causes[1]: unknown cause \"stale-release\" (did you mean "
                   "\"stale_release\"?)"});
  expect_contains(error_after(scripted_document(),
                              [](json& d) { d["expect"]["naive"]["causes"][1] = "lease_expired"; }),
                  {"$.expect.naive.causes[1]: duplicate cause \"lease_expired\""});
  expect_contains(error_after(scripted_document(),
                              [](json& d) { d["expect"]["naive"]["verdict"] = "deadlock"; }),
                  {"$.expect.naive.causes: causes describe a mutual-exclusion violation"});
}

// "any" reports without asserting; objects add resource state and a bound on violations.
TEST(ScenarioLoaderTest, ExpectAnyResourceAndViolationBound) {
  json document = resource_document(R"({"kind": "counter"})");
  document["expect"] = json::parse(R"({
    "naive": {"verdict": "resource_corrupted", "resource": "corrupted",
              "max_violations_outside_faults": 0},
    "lua_owner": "any"
  })");
  const Scenario s = parse_scenario(document, kFile, kVariants);
  const Expectation& naive = s.expect.at("naive");
  EXPECT_FALSE(naive.any);
  EXPECT_EQ(naive.verdict, Verdict::kResourceCorrupted);
  EXPECT_EQ(naive.resource_intact, false);
  EXPECT_EQ(naive.max_violations_outside_faults, 0);
  EXPECT_TRUE(s.expect.at("lua_owner").any);
  EXPECT_FALSE(s.expect.at("lua_owner").resource_intact.has_value());
  EXPECT_EQ(s.resolved["expect"]["lua_owner"], json::parse(R"({"verdict": "any"})"));
  EXPECT_EQ(s.resolved["expect"]["naive"]["resource"], "corrupted");
  EXPECT_EQ(parse_scenario(s.resolved, kFile, kVariants).resolved, s.resolved);

  document["expect"]["lua_owner"] = json::parse(R"({"verdict": "any", "resource": "intact"})");
  const Scenario object_any = parse_scenario(document, kFile, kVariants);
  EXPECT_TRUE(object_any.expect.at("lua_owner").any);
  EXPECT_EQ(object_any.expect.at("lua_owner").resource_intact, true);
}

// Resource expectations need a resource and must agree with the verdict; bounds are >= 0.
TEST(ScenarioLoaderTest, BadExpectationExtensionsAreRejected) {
  expect_contains(error_after(scripted_document(),
                              [](json& d) {
                                d["expect"]["lua_owner"] =
                                    json::parse(R"({"verdict": "ok", "resource": "intact"})");
                              }),
                  {kFile, "$.expect.lua_owner.resource: needs a top-level \"resource\""});
  json document = resource_document(R"({"kind": "counter"})");
  document["expect"]["lua_owner"] = json::parse(R"({"verdict": "ok", "resource": "corrupted"})");
  expect_contains(error_for(document),
                  {"$.expect.lua_owner.resource: a corrupted resource makes the verdict"});
  document["expect"]["lua_owner"] =
      json::parse(R"({"verdict": "resource_corrupted", "resource": "intact"})");
  expect_contains(error_for(document), {"$.expect.lua_owner.resource: contradicts"});
  document["expect"]["lua_owner"] = json::parse(R"({"verdict": "ok", "resource": "broken"})");
  expect_contains(error_for(document),
                  {"$.expect.lua_owner.resource: unknown resource state \"broken\"; allowed: "
                   "intact, corrupted"});
  expect_contains(error_after(scripted_document(),
                              [](json& d) {
                                d["expect"]["lua_owner"] = json::parse(
                                    R"({"verdict": "ok", "max_violations_outside_faults": -1})");
                              }),
                  {"$.expect.lua_owner.max_violations_outside_faults: expected a number of "
                   "violations (an integer >= 0), got -1"});
  expect_contains(
      error_after(scripted_document(), [](json& d) { d["expect"]["naive"]["verdict"] = "any"; }),
      {"$.expect.naive.causes: causes describe a mutual-exclusion violation"});
  expect_contains(error_after(scripted_document(), [](json& d) { d["expect"]["naive"] = "anyy"; }),
                  {"$.expect.naive: unknown verdict \"anyy\" (did you mean \"any\"?)"});
}

// Every sweep value needs an entry under every variant, and nothing else is accepted there.
TEST(ScenarioLoaderTest, SweepExpectationsMustMatchTheValues) {
  expect_contains(sweep_error_after([](json& d) { d["expect"]["naive"].erase("30"); }),
                  {kFile, "$.expect.naive: missing an entry for sweep point \"30\""});
  expect_contains(sweep_error_after([](json& d) { d["expect"]["lua_owner"]["3"] = "ok"; }),
                  {kFile,
                   "$.expect.lua_owner[\"3\"]: \"3\" is not a value of $.sweep.ttl_over_work (did "
                   "you mean \"30\"?); values: 0.5, 2, 30"});
  expect_contains(sweep_error_after([](json& d) { d["expect"]["naive"] = "ok"; }),
                  {"$.expect.naive: expected an object keyed by the sweep values (0.5, 2, 30)"});
  expect_contains(sweep_error_after([](json& d) { d["expect"]["naive"]["2"] = "fine"; }),
                  {"$.expect.naive[\"2\"]: unknown verdict \"fine\""});
}

}  // namespace
}  // namespace locksim
