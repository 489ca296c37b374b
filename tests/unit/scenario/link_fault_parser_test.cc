// Link fault window steps ("do": a kind with a LinkFaultType, here drop_commands): how they load,
// how they are written back, and the errors of a bad one.
#include <gtest/gtest.h>

#include "sim/fault/fault.h"
#include "tests/unit/scenario/scenario_test_support.h"

namespace locksim::test {
namespace {

// A script whose first step is `step` on client A, then A acquires and releases.
json with_link_step(const char* step) {
  json document = scripted_document();
  document["steps"] = json::array({json::parse(step),
                                   json::parse(R"({"id": "a-in", "client": "A", "do": "acquire"})"),
                                   json::parse(R"({"client": "A", "do": "release"})")});
  return document;
}

// The same on a redlock_5 topology, where a client has one link per server.
json with_step_on_topology(const char* step) {
  json document = with_link_step(step);
  document["topology"] = "redlock_5";
  return document;
}

// The step loads as a link fault window of kind drop_commands with its own "every", on the chosen
// links, and needs the proxy.
TEST(LinkFaultStepTest, DropCommandsLoadsAsALinkFaultWindow) {
  const Scenario scenario =
      parse_scenario(with_step_on_topology(R"({"client": "A", "do": "drop_commands", "every": 3,
                                "servers": ["n1", "n2"], "until": {"done": "a-in"},
                                "max_ms": 2000})"),
                     kFile, kVariants);
  const Step& step = scenario.steps[0];
  EXPECT_EQ(step.action, Step::Action::kLinkFault);
  EXPECT_EQ(step.link_fault_kind, FaultKind::kDropCommands);
  EXPECT_EQ(step.link_servers, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(step.max_ms, 2000);
  ASSERT_EQ(step.until.size(), 1u);
  EXPECT_EQ(step.until[0].kind, Condition::Kind::kDone);
  EXPECT_TRUE(scenario.link_faults());
  // The settings make the policy the step asked for: every third command is dropped.
  const std::shared_ptr<CommandPolicy> policy = step.link_fault_settings->make_policy();
  EXPECT_FALSE(policy->next(1, 0).drop_command);
  EXPECT_FALSE(policy->next(2, 0).drop_command);
  EXPECT_TRUE(policy->next(3, 0).drop_command);
  EXPECT_TRUE(policy->next(6, 0).drop_command);
}

// The resolved scenario writes the step back with its kind's keys, and it loads again the same.
TEST(LinkFaultStepTest, ResolvedStepLoadsAgain) {
  const Scenario scenario = parse_scenario(
      with_link_step(R"({"client": "A", "do": "drop_commands", "every": 2, "drop_ms": 150})"),
      kFile, kVariants);
  const json& entry = scenario.resolved["steps"][0];
  EXPECT_EQ(entry["do"], "drop_commands");
  EXPECT_EQ(entry["every"], 2);
  EXPECT_EQ(entry["drop_ms"], 150);
  EXPECT_EQ(scenario.steps[0].work_ms, 150);
  const Scenario again = parse_scenario(scenario.resolved, kFile, kVariants);
  EXPECT_EQ(again.resolved["steps"], scenario.resolved["steps"]);
}

// "every" must be a whole number of commands from 1; each bad value names the file, its path and
// the range expected.
TEST(LinkFaultStepTest, BadEveryIsRejected) {
  for (const char* every : {"0", "-2", "1.5", "\"3\""}) {
    const std::string step =
        std::string(R"({"client": "A", "do": "drop_commands", "drop_ms": 100, "every": )") + every +
        "}";
    const std::string message = error_for(with_link_step(step.c_str()));
    expect_contains(message, {kFile, "$.steps[0].every"});
    const bool integer = std::string(every) == "0" || std::string(every) == "-2";
    if (integer) {
      expect_contains(message, {"a number of commands", "between 1 and 1000000"});
    } else {
      expect_contains(message, {"an integer"});
    }
  }
  expect_contains(
      error_for(with_link_step(R"({"client": "A", "do": "drop_commands", "drop_ms": 100})")),
      {kFile, "$.steps[0]", "missing required key \"every\""});
}

// A window needs "drop_ms" or "until" with "max_ms", as a partition needs "partition_ms".
TEST(LinkFaultStepTest, MissingOrDoubleWindowIsRejected) {
  expect_contains(
      error_for(with_link_step(R"({"client": "A", "do": "drop_commands", "every": 2})")),
      {kFile, "$.steps[0]", "a \"drop_commands\" step needs \"drop_ms\" or \"until\""});
  expect_contains(
      error_for(with_link_step(R"({"client": "A", "do": "drop_commands", "every": 2, "drop_ms": 5,
                                   "until": {"done": "a-in"}, "max_ms": 100})")),
      {kFile, "$.steps[0]", "\"drop_ms\" and \"until\" exclude each other"});
  expect_contains(
      error_for(with_link_step(
          R"({"client": "A", "do": "drop_commands", "every": 2, "until": {"done": "a-in"}})")),
      {kFile, "$.steps[0]", "\"until\" needs \"max_ms\""});
}

// "servers" names servers of the topology, and needs one.
TEST(LinkFaultStepTest, UnknownOrMissingServersAreRejected) {
  expect_contains(error_for(with_step_on_topology(
                      R"({"client": "A", "do": "drop_commands", "every": 2, "drop_ms": 100,
              "servers": ["n9"]})")),
                  {kFile, "$.steps[0].servers[0]", "unknown server \"n9\"", "n1"});
  expect_contains(error_for(with_link_step(R"({"client": "A", "do": "drop_commands", "every": 2,
                                               "drop_ms": 100, "servers": ["n1"]})")),
                  {kFile, "$.steps[0].servers", "needs a top-level \"topology\""});
}

// Its keys belong to it alone, and its word is offered as an action.
TEST(LinkFaultStepTest, KeysAndWordAreKnownToTheOtherSteps) {
  expect_contains(
      error_for(
          with_link_step(R"({"client": "A", "do": "partition", "partition_ms": 5, "every": 2})")),
      {kFile, "$.steps[0].every", "not allowed when \"do\" is \"partition\"", "\"drop_commands\""});
  expect_contains(error_for(with_link_step(R"({"client": "A", "do": "drop_comands", "every": 2})")),
                  {kFile, "$.steps[0].do", "did you mean \"drop_commands\""});
}

}  // namespace
}  // namespace locksim::test
