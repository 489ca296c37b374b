// Server fault steps ("do": a kind of sim/fault/server_fault.cc's table): every kind loads with
// exactly its keys, writes back into a step that loads again the same, and sets the topology
// facts it needs; a bad one is refused naming the file, the path and what was expected.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/fault/server_fault.h"
#include "tests/unit/scenario/scenario_test_support.h"

namespace locksim::test {
namespace {

// kExamples: steps of every kind on a "sentinel" topology (a primary, a replica, Sentinel), or
// for a Redis Cluster's own kinds on a "cluster" (p1..p3, r1..r3), together using each of the
// kind's keys. A new kind adds its own here.
const std::map<std::string, std::vector<const char*>> kExamples = {
    {"kill_server", {R"({"do": "kill_server", "server": "primary"})"}},
    {"restart_server", {R"({"do": "restart_server", "server": "replica"})"}},
    {"pause_server",
     {R"({"do": "pause_server", "server": "primary", "pause_ms": 150})",
      R"({"do": "pause_server", "server": "replica", "until": {"done": "a-in"}, "max_ms": 900})"}},
    {"clock_jump", {R"({"do": "clock_jump", "server": "primary", "jump_ms": 20000})"}},
    {"cut_replication", {R"({"do": "cut_replication", "server": "replica"})"}},
    {"heal_replication", {R"({"do": "heal_replication", "server": "replica"})"}},
    {"promote", {R"({"do": "promote", "server": "replica"})"}},
    {"failover", {R"({"do": "failover"})", R"({"do": "failover", "max_ms": 5000})"}},
    {"cluster_failover",
     {R"({"do": "cluster_failover", "server": "r1"})",
      R"({"do": "cluster_failover", "server": "r2", "mode": "takeover", "max_ms": 3000})"}},
    {"migrate_slot",
     {R"({"do": "migrate_slot", "server": "p1", "to": "p2", "migrating_ms": 100})",
      R"({"do": "migrate_slot", "server": "p1", "to": "p3", "until": {"done": "a-in"},
          "max_ms": 900})"}},
    {"partition_server",
     {R"({"do": "partition_server", "server": "p1", "partition_ms": 3000})",
      R"({"do": "partition_server", "server": "r1", "until": {"done": "a-in"}, "max_ms": 900})"}},
};

// topology_for: where a step of its kind can run: a cluster's own kinds on a cluster.
const char* topology_for(const json& step) {
  const std::string word = step.value("do", "");
  return word == "cluster_failover" || word == "migrate_slot" || word == "partition_server"
             ? "cluster"
             : "sentinel";
}

// with_step: a script on `topology` whose second step is `step`, between A's acquire and release.
json with_step(const json& step, const char* topology = nullptr) {
  json document = scripted_document();
  document["topology"] = topology != nullptr ? topology : topology_for(step);
  document["steps"] = json::array({json::parse(R"({"id": "a-in", "client": "A", "do": "acquire"})"),
                                   step, json::parse(R"({"client": "A", "do": "release"})")});
  return document;
}

Scenario load(const json& step, const char* topology = nullptr) {
  return parse_scenario(with_step(step, topology), kFile, kVariants);
}

// every_step_key: every key some step may have, as the parser lists them for an unknown one.
std::vector<std::string> every_step_key() {
  const std::string message = error_for(with_step(json::parse(R"({"do": "kill_server",
                                                                  "server": "primary", "x": 1})")));
  const std::string marker = "allowed keys: ";
  const std::size_t at = message.find(marker);
  EXPECT_NE(at, std::string::npos) << message;
  std::vector<std::string> keys;
  std::string rest = message.substr(at + marker.size());
  for (std::size_t comma; (comma = rest.find(", ")) != std::string::npos;
       rest.erase(0, comma + 2)) {
    keys.push_back(rest.substr(0, comma));
  }
  keys.push_back(rest);
  return keys;
}

// Proves every kind of the table has examples, each loads as a server fault step of its kind,
// and together they use exactly the kind's keys.
TEST(ServerFaultStepTest, EveryKindLoadsWithItsKeys) {
  for (const ServerFaultType* type : server_fault_types()) {
    const std::string word(type->word);
    ASSERT_TRUE(kExamples.contains(word)) << "add an example step of \"" << word << "\"";
    std::set<std::string> used;
    for (const char* text : kExamples.at(word)) {
      const json step = json::parse(text);
      const Scenario scenario = load(step);
      const Step& loaded = scenario.steps[1];
      EXPECT_EQ(loaded.action, Step::Action::kServerFault) << text;
      ASSERT_NE(loaded.server_fault, nullptr) << text;
      EXPECT_EQ(&loaded.server_fault->type(), type) << text;
      EXPECT_EQ(loaded.server, step.value("server", "")) << text;
      EXPECT_TRUE(loaded.client.empty()) << text;
      EXPECT_TRUE(scenario.server_faults()) << text;
      for (const auto& [key, value] : step.items()) {
        if (key != "do") used.insert(key);
      }
    }
    const std::vector<std::string> keys = server_fault_keys(*type);
    EXPECT_EQ(used, std::set<std::string>(keys.begin(), keys.end())) << word;
  }
}

// Proves the parser accepts no other key with any kind: each other key of any step is refused,
// saying which actions allow it.
TEST(ServerFaultStepTest, NoOtherKeyIsAccepted) {
  const std::vector<std::string> common = {"client", "do", "id", "wait_for", "wait_max_ms"};
  const std::vector<std::string> all = every_step_key();
  EXPECT_GT(all.size(), common.size() + 10);
  for (const ServerFaultType* type : server_fault_types()) {
    // A kind without an example fails EveryKindLoadsWithItsKeys.
    if (!kExamples.contains(std::string(type->word))) continue;
    const std::vector<std::string> keys = server_fault_keys(*type);
    for (const std::string& key : all) {
      if (std::find(common.begin(), common.end(), key) != common.end() ||
          std::find(keys.begin(), keys.end(), key) != keys.end()) {
        continue;
      }
      json step = json::parse(kExamples.at(std::string(type->word)).front());
      step[key] = 1;
      expect_contains(error_for(with_step(step)),
                      {kFile, "$.steps[1]." + key,
                       "not allowed when \"do\" is \"" + std::string(type->word) + "\""});
    }
  }
}

// Proves every example writes back into the resolved scenario with its defaults filled in, and
// the resolved scenario loads again into the same.
TEST(ServerFaultStepTest, ResolvedStepsLoadAgain) {
  for (const auto& [word, texts] : kExamples) {
    for (const char* text : texts) {
      const Scenario scenario = load(json::parse(text));
      const json& entry = scenario.resolved["steps"][1];
      EXPECT_EQ(entry["do"], word);
      EXPECT_FALSE(entry.contains("client")) << text;
      const Scenario again = parse_scenario(scenario.resolved, kFile, kVariants);
      EXPECT_EQ(again.resolved, scenario.resolved) << text;
      EXPECT_EQ(&again.steps[1].server_fault->type(), &scenario.steps[1].server_fault->type());
    }
  }
  // What each kind writes, exactly: the server, the window, its own keys with their defaults.
  EXPECT_EQ(load(json::parse(kExamples.at("pause_server")[1])).resolved["steps"][1],
            json::parse(R"({"id": "step-2", "do": "pause_server", "server": "replica",
                            "until": [{"done": "a-in"}], "max_ms": 900})"));
  EXPECT_EQ(load(json::parse(kExamples.at("clock_jump")[0])).resolved["steps"][1],
            json::parse(R"({"id": "step-2", "do": "clock_jump", "server": "primary",
                            "jump_ms": 20000})"));
  EXPECT_EQ(load(json::parse(R"({"do": "failover"})")).resolved["steps"][1],
            json::parse(R"({"id": "step-2", "do": "failover", "max_ms": 30000})"));
}

// Proves the kinds' traits reach the scenario: a clock jump runs the servers with the shift, and
// promote, failover and cluster_failover move the primary; the other kinds do neither.
TEST(ServerFaultStepTest, KindsSetTheTopologyFactsTheyNeed) {
  for (const auto& [word, texts] : kExamples) {
    const Scenario scenario = load(json::parse(texts.front()));
    EXPECT_EQ(scenario.topology->clock_shift, word == "clock_jump") << word;
    EXPECT_EQ(scenario.changes_primary(),
              word == "promote" || word == "failover" || word == "cluster_failover")
        << word;
  }
}

// Proves a step is checked against the topology, each message naming the file and the field.
TEST(ServerFaultStepTest, TopologyNeedsAreChecked) {
  json document = with_step(json::parse(R"({"do": "kill_server", "server": "n1"})"));
  document.erase("topology");
  expect_contains(error_for(document),
                  {kFile, "$.steps[1].do: \"kill_server\" needs a top-level \"topology\""});
  expect_contains(
      error_for(with_step(json::parse(R"({"do": "promote", "server": "n1"})"), "single")),
      {kFile, "$.steps[1].server: \"promote\" needs a replica; \"n1\" is a primary"});
  expect_contains(error_for(with_step(json::parse(R"({"do": "failover"})"), "primary_replica")),
                  {kFile, "$.steps[1].do: \"failover\" waits for Sentinel"});
  expect_contains(error_for(with_step(json::parse(R"({"do": "restart_server", "server": "n9"})"))),
                  {kFile, "$.steps[1].server: unknown server \"n9\"", "primary, replica"});
  expect_contains(
      error_for(with_step(json::parse(R"({"client": "A", "do": "kill_server", "server": "n1"})"))),
      {kFile, "$.steps[1].client: a server fault (\"kill_server\") has no client"});
  expect_contains(error_for(with_step(json::parse(R"({"do": "cut_replication"})"))),
                  {kFile, "$.steps[1]: missing required key \"server\""});
}

// Proves a window kind needs its duration or "until" with "max_ms", as every window step does,
// and a kind's own key is checked by its own file.
TEST(ServerFaultStepTest, WindowsAndOwnKeysAreChecked) {
  expect_contains(
      error_for(with_step(json::parse(R"({"do": "pause_server", "server": "primary"})"))),
      {kFile, "$.steps[1]: a \"pause_server\" step needs \"pause_ms\" or \"until\""});
  expect_contains(
      error_for(with_step(json::parse(
          R"({"do": "pause_server", "server": "primary", "until": {"done": "a-in"}})"))),
      {kFile,
       "$.steps[1]: \"until\" needs \"max_ms\", the upper bound of the "
       "pause_server in ms"});
  expect_contains(error_for(with_step(json::parse(R"({"do": "clock_jump", "server": "primary",
                                          "jump_ms": 0})"))),
                  {kFile, "$.steps[1].jump_ms: expected a duration in ms between 1 and 3600000"});
  expect_contains(error_for(with_step(json::parse(R"({"do": "kil_server", "server": "n1"})"))),
                  {kFile, "$.steps[1].do", "did you mean \"kill_server\""});
}

}  // namespace
}  // namespace locksim::test
