// script_parser_test: clients, steps and conditions load with defaults; bad ones are named by path.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

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

// A scripted scenario keeps every value it gives and fills the defaults it leaves out.
TEST(ScenarioLoaderTest, ScriptedScenarioLoadsValuesAndDefaults) {
  const Scenario s = parse_scenario(scripted_document(), kFile, kVariants);
  EXPECT_TRUE(s.scripted());
  EXPECT_EQ(s.name, "lease-expires-during-work");
  EXPECT_EQ(s.file, kFile);
  EXPECT_EQ(s.source.doc, "A");
  EXPECT_EQ(s.variants, (std::vector<std::string>{"naive", "lua_owner"}));
  EXPECT_EQ(s.lock.key, "orders:lock");
  EXPECT_EQ(s.lock.ttl_ms, 200);
  EXPECT_EQ(s.lock.acquire_timeout_ms, 2000);
  EXPECT_EQ(s.lock.wait.strategy, "poll");
  EXPECT_EQ(s.lock.wait.interval_ms, 200);
  EXPECT_EQ(s.check.stuck_ms, 1000);  // 5 x the 200 ms poll interval beats the 500 ms floor
  EXPECT_EQ(s.time_limit_ms, 60000);
  EXPECT_EQ(s.clients, (std::vector<std::string>{"A", "B"}));
  ASSERT_EQ(s.steps.size(), 7u);

  EXPECT_EQ(s.steps[0].id, "a-in");
  EXPECT_EQ(s.steps[0].action, Step::Action::kAcquire);
  EXPECT_EQ(s.steps[0].acquire_timeout_ms, 0);
  EXPECT_EQ(s.steps[0].json_path, "$.steps[0]");
  EXPECT_TRUE(s.steps[0].wait_for.empty());
  EXPECT_EQ(s.steps[0].wait_max_ms, 10000);

  EXPECT_EQ(s.steps[1].id, "step-2");
  EXPECT_EQ(s.steps[1].action, Step::Action::kWork);
  ASSERT_EQ(s.steps[1].until.size(), 2u);
  EXPECT_EQ(s.steps[1].until[0].kind, Condition::Kind::kKeyAbsent);
  EXPECT_EQ(s.steps[1].until[0].argument, "orders:lock");
  EXPECT_EQ(s.steps[1].until[1].kind, Condition::Kind::kInside);
  EXPECT_EQ(s.steps[1].until[1].argument, "B");
  EXPECT_EQ(s.steps[1].max_ms, 1000);

  EXPECT_EQ(s.steps[2].client, "B");
  EXPECT_FALSE(s.steps[2].acquire_timeout_ms.has_value());
  ASSERT_EQ(s.steps[2].wait_for.size(), 1u);
  EXPECT_EQ(s.steps[2].wait_for[0].kind, Condition::Kind::kDone);
  EXPECT_EQ(s.steps[2].wait_for[0].argument, "a-in");
  EXPECT_EQ(s.steps[2].wait_max_ms, 50);

  EXPECT_EQ(s.steps[3].work_ms, 30);
  EXPECT_TRUE(s.steps[3].until.empty());
  EXPECT_EQ(s.steps[4].action, Step::Action::kRelease);
  EXPECT_EQ(s.steps[5].action, Step::Action::kSleep);
  EXPECT_EQ(s.steps[5].work_ms, 5);
  EXPECT_EQ(s.steps[5].wait_for[0].kind, Condition::Kind::kCrashed);
  EXPECT_EQ(s.steps[6].action, Step::Action::kCrash);
  EXPECT_EQ(s.steps[6].id, "step-7");

  EXPECT_EQ(s.expect.at("naive").verdict, Verdict::kMutexViolation);
  EXPECT_EQ(s.expect.at("naive").causes, (std::set<std::string>{"lease_expired", "stale_release"}));
  EXPECT_EQ(s.expect.at("lua_owner").verdict, Verdict::kMutexViolation);
  EXPECT_FALSE(s.expect.at("lua_owner").causes.has_value());
}

// A scripted scenario needs at least one client.
TEST(ScenarioLoaderTest, EmptyClientsIsRejected) {
  expect_contains(error_after(scripted_document(), [](json& d) { d["clients"] = json::array(); }),
                  {kFile, "$.clients: expected a non-empty array"});
}

// Client names are validated: pattern, the reserved name, and uniqueness.
TEST(ScenarioLoaderTest, BadClientNamesAreRejected) {
  expect_contains(error_after(scripted_document(), [](json& d) { d["clients"][1] = "nemesis"; }),
                  {"$.clients[1]: \"nemesis\" is reserved"});
  expect_contains(error_after(scripted_document(), [](json& d) { d["clients"][1] = "A"; }),
                  {"$.clients[1]: duplicate client \"A\" (also at $.clients[0])"});
  expect_contains(error_after(scripted_document(), [](json& d) { d["clients"][1] = "9b"; }),
                  {"$.clients[1]: expected a client name"});
}

// A step naming a client that is not in "clients" suggests the one that was meant.
TEST(ScenarioLoaderTest, StepWithUnknownClientSuggestsClient) {
  expect_contains(error_after(scripted_document(), [](json& d) { d["steps"][4]["client"] = "a"; }),
                  {kFile,
                   "$.steps[4].client: unknown client \"a\" (did you mean \"A\"?); "
                   "clients: A, B"});
}

// A condition naming an unknown client fails at the condition's own path.
TEST(ScenarioLoaderTest, ConditionWithUnknownClientIsRejected) {
  expect_contains(
      error_after(scripted_document(), [](json& d) { d["steps"][1]["until"][1]["inside"] = "C"; }),
      {kFile, "$.steps[1].until[1].inside: unknown client \"C\"; clients: A, B"});
  expect_contains(
      error_after(scripted_document(),
                  [](json& d) { d["steps"][1]["until"] = json::parse(R"({"inside": "Bb"})"); }),
      {"$.steps[1].until.inside: unknown client \"Bb\" (did you mean \"B\"?)"});
}

// A "done" condition must name another step's id, explicit or default.
TEST(ScenarioLoaderTest, ConditionWithUnknownOrOwnStepIdIsRejected) {
  expect_contains(error_after(scripted_document(),
                              [](json& d) { d["steps"][2]["wait_for"]["done"] = "a-inn"; }),
                  {kFile,
                   "$.steps[2].wait_for.done: unknown step id \"a-inn\" (did you mean "
                   "\"a-in\"?); step ids: a-in, step-2,"});
  expect_contains(error_after(scripted_document(),
                              [](json& d) { d["steps"][2]["wait_for"]["done"] = "step-3"; }),
                  {kFile, "$.steps[2].wait_for.done: a step cannot wait for itself"});
}

// A condition object must hold exactly one known kind.
TEST(ScenarioLoaderTest, MalformedConditionIsRejected) {
  expect_contains(error_after(scripted_document(),
                              [](json& d) {
                                d["steps"][2]["wait_for"] =
                                    json::parse(R"({"done": "a-in", "inside": "A"})");
                              }),
                  {"$.steps[2].wait_for: expected a condition: an object with exactly one of"});
  expect_contains(
      error_after(scripted_document(),
                  [](json& d) { d["steps"][2]["wait_for"] = json::parse(R"({"dnoe": "a-in"})"); }),
      {"$.steps[2].wait_for.dnoe: unknown key (did you mean \"done\"?)"});
}

// A work step takes either a fixed duration or a condition, never both.
TEST(ScenarioLoaderTest, WorkWithBothWorkMsAndUntilIsRejected) {
  expect_contains(error_after(scripted_document(), [](json& d) { d["steps"][1]["work_ms"] = 10; }),
                  {kFile, "$.steps[1]: \"work_ms\" and \"until\" exclude each other"});
  expect_contains(error_after(scripted_document(), [](json& d) { d["steps"][3].erase("work_ms"); }),
                  {"$.steps[3]: a \"work\" step needs \"work_ms\" or \"until\""});
}

// "until" without a bound could wait forever, so "max_ms" is required with it.
TEST(ScenarioLoaderTest, UntilWithoutMaxMsIsRejected) {
  expect_contains(error_after(scripted_document(), [](json& d) { d["steps"][1].erase("max_ms"); }),
                  {kFile, "$.steps[1]: \"until\" needs \"max_ms\""});
}

// A key that belongs to another action says it is not allowed for this one.
TEST(ScenarioLoaderTest, KeyOfAnotherActionIsRejected) {
  expect_contains(error_after(scripted_document(), [](json& d) { d["steps"][0]["work_ms"] = 5; }),
                  {kFile,
                   "$.steps[0].work_ms: not allowed when \"do\" is \"acquire\" (only with \"do\": "
                   "\"work\")"});
  expect_contains(
      error_after(scripted_document(), [](json& d) { d["steps"][3]["wait_max_ms"] = 5; }),
      {"$.steps[3].wait_max_ms: only allowed together with \"wait_for\""});
}

// Step ids are unique, including the default "step-<n>" ids.
TEST(ScenarioLoaderTest, DuplicateStepIdIsRejected) {
  expect_contains(error_after(scripted_document(), [](json& d) { d["steps"][0]["id"] = "step-2"; }),
                  {"$.steps[1]: default step id \"step-2\" is also used at $.steps[0].id"});
  expect_contains(error_after(scripted_document(), [](json& d) { d["steps"][3]["id"] = "a-in"; }),
                  {"$.steps[3].id: duplicate step id \"a-in\" is also used at $.steps[0].id"});
}

// read and write steps load against a resource and are refused without one.
TEST(ScenarioLoaderTest, ReadAndWriteStepsNeedAResource) {
  const Scenario s = parse_scenario(resource_document(R"({"kind": "counter"})"), kFile, kVariants);
  EXPECT_EQ(s.steps[1].action, Step::Action::kRead);
  EXPECT_EQ(s.steps[2].action, Step::Action::kWrite);
  EXPECT_EQ(s.resolved["steps"][1],
            json::parse(R"({"id": "step-2", "client": "A", "do": "read"})"));

  json document = resource_document(R"({"kind": "counter"})");
  document.erase("resource");
  expect_contains(error_for(document),
                  {kFile, "$.steps[1].do: \"read\" needs a top-level \"resource\""});
  document["steps"].erase(1);
  expect_contains(error_for(document), {"$.steps[1].do: \"write\" needs a top-level \"resource\""});
}

// record_id belongs to find_or_create reads and writes only, and has a bounded length.
TEST(ScenarioLoaderTest, RecordIdOnlyForFindOrCreate) {
  json document = resource_document(R"({"kind": "find_or_create", "ids": 3})");
  document["steps"][2]["record_id"] = "42";
  const Scenario s = parse_scenario(document, kFile, kVariants);
  EXPECT_EQ(s.steps[1].record_id, "1");
  EXPECT_EQ(s.steps[2].record_id, "42");
  EXPECT_EQ(s.resolved["steps"][1]["record_id"], "1");
  EXPECT_EQ(s.resolved["steps"][2]["record_id"], "42");

  document["resource"] = json::parse(R"({"kind": "counter"})");
  expect_contains(error_for(document),
                  {kFile, "$.steps[2].record_id: only for a \"find_or_create\" resource"});
  document["resource"] = json::parse(R"({"kind": "fenced_counter"})");
  expect_contains(error_for(document), {"$.resource.kind is \"fenced_counter\""});
  document["resource"] = json::parse(R"({"kind": "find_or_create"})");
  document["steps"][2]["record_id"] = std::string(33, 'x');
  expect_contains(error_for(document),
                  {"$.steps[2].record_id: expected a record id of 1 to 32 characters"});
  document["steps"][2]["record_id"] = "";
  expect_contains(error_for(document), {"$.steps[2].record_id: expected a non-empty string"});
  document["steps"][2].erase("record_id");
  document["steps"][0]["record_id"] = "1";
  expect_contains(error_for(document),
                  {"$.steps[0].record_id: not allowed when \"do\" is \"acquire\" (only with "
                   "\"do\": \"read\", \"write\")"});
}

// Acquire and release steps take crash and pause checkpoints; release takes unsaved_token.
TEST(ScenarioLoaderTest, FaultPointsLoadOnAcquireAndRelease) {
  json document = scripted_document();
  document["steps"][0]["crash_at"] = "after_setnx";
  document["steps"][4]["pause_at"] =
      json::parse(R"({"point": "after_get", "until": {"inside": "B"}, "max_ms": 500})");
  document["steps"][4]["unsaved_token"] = true;
  const Scenario s = parse_scenario(document, kFile, kVariants);
  EXPECT_EQ(s.steps[0].crash_at, "after_setnx");
  EXPECT_TRUE(s.steps[0].pause_at.empty());
  EXPECT_EQ(s.steps[4].pause_at, "after_get");
  ASSERT_EQ(s.steps[4].pause_until.size(), 1u);
  EXPECT_EQ(s.steps[4].pause_until[0].kind, Condition::Kind::kInside);
  EXPECT_EQ(s.steps[4].pause_until[0].argument, "B");
  EXPECT_EQ(s.steps[4].pause_max_ms, 500);
  EXPECT_TRUE(s.steps[4].unsaved_token);
  EXPECT_EQ(s.resolved["steps"][0]["crash_at"], "after_setnx");
  EXPECT_EQ(s.resolved["steps"][4]["pause_at"],
            json::parse(R"({"point": "after_get", "until": [{"inside": "B"}], "max_ms": 500})"));
  EXPECT_EQ(s.resolved["steps"][4]["unsaved_token"], true);
  EXPECT_EQ(parse_scenario(s.resolved, kFile, kVariants).resolved, s.resolved);

  // Defaults: no checkpoint, and a release with the saved token.
  const Scenario plain = parse_scenario(scripted_document(), kFile, kVariants);
  EXPECT_TRUE(plain.steps[4].crash_at.empty());
  EXPECT_FALSE(plain.steps[4].unsaved_token);
  EXPECT_EQ(plain.resolved["steps"][4]["unsaved_token"], false);
  EXPECT_FALSE(plain.resolved["steps"][0].contains("crash_at"));
}

// Acquire, release and extend steps take cancel_after_ms, in client processes only; it round-trips
// through the resolved document, and is refused elsewhere and out of range.
TEST(ScenarioLoaderTest, CancellationsLoadOnCallsInClientProcesses) {
  json document = scripted_document();
  document["clients_run_as"] = "processes";
  document["steps"][0]["cancel_after_ms"] = 100;
  document["steps"][4]["cancel_after_ms"] = 0;
  document["steps"].insert(document["steps"].begin() + 1,
                           json::parse(R"({"client": "A", "do": "extend", "cancel_after_ms": 7})"));
  const Scenario s = parse_scenario(document, kFile, kVariants);
  EXPECT_EQ(s.steps[0].cancel_after_ms, 100);
  EXPECT_EQ(s.steps[1].action, Step::Action::kExtend);
  EXPECT_EQ(s.steps[1].cancel_after_ms, 7);
  EXPECT_EQ(s.steps[5].cancel_after_ms, 0);
  EXPECT_EQ(s.steps[2].cancel_after_ms, -1);
  EXPECT_EQ(s.resolved["steps"][1]["do"], "extend");
  EXPECT_EQ(s.resolved["steps"][1]["cancel_after_ms"], 7);
  EXPECT_FALSE(s.resolved["steps"][2].contains("cancel_after_ms"));
  EXPECT_EQ(parse_scenario(s.resolved, kFile, kVariants).resolved, s.resolved);

  expect_contains(error_after(document, [](json& d) { d["clients_run_as"] = "threads"; }),
                  {kFile,
                   "$.steps[0].cancel_after_ms: a cancellation is asked of a library's "
                   "adapter, in client processes only"});
  // An extend step runs on threads too (extend_call), without a cancellation.
  json on_threads = document;
  on_threads["clients_run_as"] = "threads";
  on_threads["steps"][0].erase("cancel_after_ms");
  on_threads["steps"][1].erase("cancel_after_ms");
  on_threads["steps"][5].erase("cancel_after_ms");
  EXPECT_EQ(parse_scenario(on_threads, kFile, kVariants).executor, Executor::kThreads);
  expect_contains(error_after(document, [](json& d) { d["steps"][4]["cancel_after_ms"] = 5; }),
                  {"$.steps[4].cancel_after_ms: not allowed when \"do\" is \"work\""});
  expect_contains(error_after(document, [](json& d) { d["steps"][0]["cancel_after_ms"] = -1; }),
                  {"$.steps[0].cancel_after_ms:"});
  expect_contains(
      error_after(document, [](json& d) { d["steps"][0]["cancel_after_ms"] = 3600001; }),
      {"$.steps[0].cancel_after_ms:"});
}

// Fault points are refused on other actions, validated, and exclusive.
TEST(ScenarioLoaderTest, BadFaultPointsAreRejected) {
  expect_contains(
      error_after(scripted_document(), [](json& d) { d["steps"][3]["crash_at"] = "after_get"; }),
      {kFile,
       "$.steps[3].crash_at: not allowed when \"do\" is \"work\" (only with \"do\": \"acquire\", "
       "\"release\")"});
  expect_contains(
      error_after(scripted_document(), [](json& d) { d["steps"][0]["unsaved_token"] = true; }),
      {"$.steps[0].unsaved_token: not allowed when \"do\" is \"acquire\" (only with \"do\": "
       "\"release\")"});
  expect_contains(
      error_after(scripted_document(), [](json& d) { d["steps"][4]["unsaved_token"] = "yes"; }),
      {"$.steps[4].unsaved_token: expected true or false, got \"yes\""});
  expect_contains(
      error_after(scripted_document(), [](json& d) { d["steps"][0]["crash_at"] = "After-Set"; }),
      {"$.steps[0].crash_at: expected a checkpoint name of 1 to 32 lowercase letters or '_'"});
  expect_contains(error_after(scripted_document(),
                              [](json& d) {
                                d["steps"][0]["pause_at"] = json::parse(
                                    R"({"point": "after_get", "until": {"inside": "B"}})");
                              }),
                  {"$.steps[0].pause_at: missing required key \"max_ms\""});
  expect_contains(error_after(scripted_document(),
                              [](json& d) {
                                d["steps"][0]["pause_at"] = json::parse(
                                    R"({"point": "after_get", "until": {"inside": "Z"},
                                        "max_ms": 10})");
                              }),
                  {"$.steps[0].pause_at.until.inside: unknown client \"Z\""});
  expect_contains(error_after(scripted_document(),
                              [](json& d) {
                                d["steps"][0]["pause_at"] = json::parse(
                                    R"({"point": "after_get", "until": {"done": "a-in"},
                                        "max_ms": 10})");
                              }),
                  {"$.steps[0].pause_at.until.done: a step cannot wait for itself"});
  expect_contains(error_after(scripted_document(),
                              [](json& d) {
                                d["steps"][0]["pause_at"] = json::parse(
                                    R"({"point": "after_get", "until": {"inside": "B"},
                                        "max_ms": 0})");
                              }),
                  {"$.steps[0].pause_at.max_ms: expected a duration in ms between 1 and 3600000"});
  expect_contains(error_after(scripted_document(),
                              [](json& d) {
                                d["steps"][0]["crash_at"] = "after_setnx";
                                d["steps"][0]["pause_at"] = json::parse(
                                    R"({"point": "after_get", "until": {"inside": "B"},
                                        "max_ms": 10})");
                              }),
                  {"$.steps[0]: \"crash_at\" and \"pause_at\" exclude each other"});
}

}  // namespace
}  // namespace locksim
