// resource_parser_test: every resource kind loads with its defaults; bad ones are named by path.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/scenario/loader.h"
#include "tests/unit/scenario/scenario_test_support.h"

namespace locksim {
namespace {

using nlohmann::json;
using test::error_for;
using test::expect_contains;
using test::kFile;
using test::kVariants;
using test::resource_document;
using test::scripted_document;

// Every resource kind loads with its defaults and resolves with only its own keys.
TEST(ScenarioLoaderTest, ResourceKindsLoadWithDefaults) {
  const Scenario counter =
      parse_scenario(resource_document(R"({"kind": "counter"})"), kFile, kVariants);
  EXPECT_EQ(counter.resource.kind, ResourceConfig::Kind::kCounter);
  EXPECT_EQ(counter.resource.name, "resource");
  EXPECT_EQ(counter.resource.initial, 1);
  EXPECT_EQ(counter.resolved["resource"],
            json::parse(R"({"kind": "counter", "name": "resource", "initial": 1})"));

  const Scenario records =
      parse_scenario(resource_document(R"({"kind": "find_or_create", "name": "users", "ids": 5})"),
                     kFile, kVariants);
  EXPECT_EQ(records.resource.kind, ResourceConfig::Kind::kFindOrCreate);
  EXPECT_EQ(records.resource.name, "users");
  EXPECT_EQ(records.resource.ids, 5);
  EXPECT_EQ(records.resolved["resource"],
            json::parse(R"({"kind": "find_or_create", "name": "users", "ids": 5})"));
  EXPECT_EQ(parse_scenario(records.resolved, kFile, kVariants).resolved, records.resolved);

  const Scenario fenced = parse_scenario(
      resource_document(R"({"kind": "fenced_counter", "name": "stock", "initial": 10})"), kFile,
      kVariants);
  EXPECT_EQ(fenced.resource.kind, ResourceConfig::Kind::kFencedCounter);
  EXPECT_TRUE(fenced.resource.counts());
  EXPECT_EQ(fenced.resource.initial, 10);
  EXPECT_EQ(fenced.resolved["resource"],
            json::parse(R"({"kind": "fenced_counter", "name": "stock", "initial": 10})"));
  EXPECT_EQ(parse_scenario(fenced.resolved, kFile, kVariants).resolved, fenced.resolved);

  const Scenario none = parse_scenario(scripted_document(), kFile, kVariants);
  EXPECT_EQ(none.resource.kind, ResourceConfig::Kind::kNone);
  EXPECT_FALSE(none.resolved.contains("resource"));
}

// A key of the other resource kind, a missing or unknown kind and bad values are rejected.
TEST(ScenarioLoaderTest, BadResourceIsRejected) {
  auto resource_error = [](const char* resource) { return error_for(resource_document(resource)); };
  expect_contains(resource_error(R"({"kind": "counter", "ids": 3})"),
                  {kFile,
                   "$.resource.ids: not allowed when \"kind\" is \"counter\" (only with \"kind\": "
                   "\"find_or_create\")"});
  expect_contains(resource_error(R"({"kind": "find_or_create", "initial": 3})"),
                  {"$.resource.initial: not allowed when \"kind\" is \"find_or_create\" (only "
                   "with \"kind\": \"counter\" or \"fenced_counter\")"});
  expect_contains(resource_error(R"({"kind": "fenced_counter", "ids": 3})"),
                  {"$.resource.ids: not allowed when \"kind\" is \"fenced_counter\""});
  expect_contains(resource_error(R"({"kind": "fenced_countr"})"),
                  {"(did you mean \"fenced_counter\"?)"});
  expect_contains(resource_error(R"({"name": "stock"})"),
                  {"$.resource: missing required key \"kind\""});
  expect_contains(
      resource_error(R"({"kind": "countr"})"),
      {"$.resource.kind: unknown resource kind \"countr\" (did you mean \"counter\"?)"});
  expect_contains(
      resource_error(R"({"kind": "counter", "initial": -1})"),
      {"$.resource.initial: expected an initial stock between 0 and 1000000000, got -1"});
  expect_contains(resource_error(R"({"kind": "find_or_create", "ids": 0})"),
                  {"$.resource.ids: expected a number of record ids between 1 and 1000000, got 0"});
  expect_contains(resource_error(R"({"kind": "counter", "name": "a b"})"),
                  {"$.resource.name: expected a key of 1 to 64"});
}

}  // namespace
}  // namespace locksim
