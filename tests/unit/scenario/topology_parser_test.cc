// topology_parser_test: a server named as its own replica_of is refused as such.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/unit/scenario/scenario_test_support.h"

namespace locksim {
namespace {

using nlohmann::json;
using test::error_for;
using test::expect_contains;
using test::scripted_document;

// A server named as its own replica_of is said to be so (not "unknown server" with an empty list
// of choices); another unknown name still gets the list of servers it may name.
TEST(ScenarioLoaderTest, AServerCannotBeAReplicaOfItself) {
  json alone = scripted_document();
  alone["topology"] = json::parse(R"({"servers": [{"name": "a", "replica_of": "a"}]})");
  expect_contains(error_for(alone), {"$.topology.servers[0].replica_of", "\"a\" cannot be a replica of itself",
                                     "(this list has no other)"});
  json pair = scripted_document();
  pair["topology"] =
      json::parse(R"({"servers": [{"name": "p"}, {"name": "r", "replica_of": "r"}]})");
  expect_contains(error_for(pair), {"$.topology.servers[1].replica_of",
                                    "\"r\" cannot be a replica of itself", "another server of the list: p"});
  json unknown = scripted_document();
  unknown["topology"] =
      json::parse(R"({"servers": [{"name": "p"}, {"name": "r", "replica_of": "q"}]})");
  expect_contains(error_for(unknown), {"$.topology.servers[1].replica_of", "unknown server \"q\"", "p"});
}

}  // namespace
}  // namespace locksim
