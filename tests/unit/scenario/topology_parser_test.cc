// topology_parser_test: a server named as its own replica_of is refused as such; a Redis
// Cluster's shape gives its servers and loads again from its resolved form; the conditions that
// name a topology's server or a server fault's window.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/unit/scenario/scenario_test_support.h"

namespace locksim {
namespace {

using nlohmann::json;
using test::error_for;
using test::expect_contains;
using test::kFile;
using test::kVariants;
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

// Proves a cluster's shape names its servers (primaries, then their replicas), "cluster" is three
// primaries with a replica each, the resolved form loads again as the same topology, and bad
// shapes are refused naming the field and the range.
TEST(ScenarioLoaderTest, AClusterShapeGivesItsServers) {
  json document = scripted_document();
  document["topology"] = json::parse(R"({"cluster": {"primaries": 4, "replicas_per_primary": 2,
                                  "node_timeout_ms": 500}, "persistence": "aof_always"})");
  const Scenario scenario = parse_scenario(document, kFile, kVariants);
  ASSERT_TRUE(scenario.topology && scenario.topology->cluster);
  EXPECT_EQ(scenario.topology->cluster->primaries, 4);
  EXPECT_EQ(scenario.topology->cluster->node_timeout_ms, 500);
  std::vector<std::string> names;
  for (const ServerSpec& server : scenario.topology->servers) {
    names.push_back(server.name + ":" + server.replica_of + ":" + server.persistence);
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"p1::aof_always", "p2::aof_always", "p3::aof_always",
                                      "p4::aof_always", "r1:p1:aof_always", "r2:p2:aof_always",
                                      "r3:p3:aof_always", "r4:p4:aof_always", "s1:p1:aof_always",
                                      "s2:p2:aof_always", "s3:p3:aof_always", "s4:p4:aof_always"}));
  json again = scripted_document();
  again["topology"] = scenario.resolved["topology"];
  const Scenario reloaded = parse_scenario(again, kFile, kVariants);
  EXPECT_EQ(reloaded.resolved["topology"], scenario.resolved["topology"]);
  EXPECT_EQ(reloaded.topology->servers.size(), 12u);

  json named = scripted_document();
  named["topology"] = "cluster";
  const Scenario three = parse_scenario(named, kFile, kVariants);
  EXPECT_EQ(three.topology->servers.size(), 6u);
  EXPECT_EQ(three.topology->servers[3].name, "r1");

  const auto bad = [](const char* topology) {
    json doc = scripted_document();
    doc["topology"] = json::parse(topology);
    return error_for(doc);
  };
  expect_contains(bad(R"({"cluster": {"primaries": 2}})"),
                  {"$.topology.cluster.primaries", "3", "5"});
  expect_contains(bad(R"({"cluster": {"replicas_per_primary": 3}})"),
                  {"$.topology.cluster.replicas_per_primary"});
  expect_contains(bad(R"({"cluster": {}, "name": "single"})"), {"$.topology", "give one of"});
  expect_contains(bad(R"({"cluster": {}, "sentinel": true})"),
                  {"$.topology.sentinel", "elects its own replicas"});
}

// Proves the "primary" condition names a server of the topology (and needs one), and "open" a
// step id, not its own.
TEST(ScenarioLoaderTest, PrimaryAndOpenConditionsNameWhatTheyWaitFor) {
  json document = scripted_document();
  document["topology"] = "cluster";
  document["steps"] = json::parse(R"([
    {"id": "cut", "do": "partition_server", "server": "p1", "until": {"primary": "r1"},
     "max_ms": 5000},
    {"client": "A", "do": "acquire", "wait_for": {"open": "cut"}}])");
  const Scenario scenario = parse_scenario(document, kFile, kVariants);
  EXPECT_EQ(scenario.steps[0].until.at(0).kind, Condition::Kind::kPrimary);
  EXPECT_EQ(scenario.steps[0].until.at(0).argument, "r1");
  EXPECT_EQ(scenario.steps[1].wait_for.at(0).kind, Condition::Kind::kOpen);
  json unknown = document;
  unknown["steps"][0]["until"] = json::parse(R"({"primary": "r9"})");
  expect_contains(error_for(unknown), {"$.steps[0].until.primary", "unknown server \"r9\""});
  json own = document;
  own["steps"][0]["until"] = json::parse(R"({"open": "cut"})");
  expect_contains(error_for(own), {"its own window"});
  json none = scripted_document();
  none["steps"] =
      json::parse(R"([{"client": "A", "do": "acquire", "wait_for": {"primary": "n1"}}])");
  expect_contains(error_for(none), {"\"primary\" names a server of the scenario's \"topology\""});
}

}  // namespace
}  // namespace locksim
