// scenario_loader_test: valid scenarios load with their values and defaults, and every kind of bad
// input is rejected with a message naming the file, the JSON path and what was expected.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/scenario/loader.h"
#include "sim/scenario/study.h"

namespace locksim {
namespace {

using nlohmann::json;

const std::vector<std::string> kVariants = {"naive", "set_nx_ex", "lua_owner"};
constexpr const char* kFile = "scenarios/test.json";

// A scripted scenario using every step action and condition kind.
json scripted_document() {
  return json::parse(R"({
    "name": "lease-expires-during-work",
    "description": "A works past its TTL; B gets in.",
    "source": {"doc": "A", "claim": "A lock without fencing lets two clients in."},
    "variants": ["naive", "lua_owner"],
    "lock": {"key": "orders:lock", "ttl_ms": 200, "wait": {"interval_ms": 200}},
    "clients": ["A", "B"],
    "steps": [
      {"id": "a-in", "client": "A", "do": "acquire", "timeout_ms": 0},
      {"client": "A", "do": "work", "until": [{"key_absent": "orders:lock"}, {"inside": "B"}],
       "max_ms": 1000},
      {"client": "B", "do": "acquire", "wait_for": {"done": "a-in"}, "wait_max_ms": 50},
      {"client": "B", "do": "work", "work_ms": 30},
      {"client": "A", "do": "release"},
      {"client": "B", "do": "sleep", "sleep_ms": 5, "wait_for": [{"crashed": "A"}]},
      {"client": "A", "do": "crash"}
    ],
    "expect": {
      "naive": {"verdict": "mutex_violation", "causes": ["lease_expired", "stale_release"]},
      "lua_owner": "mutex_violation"
    }
  })");
}

json workload_document() {
  return json::parse(R"({
    "name": "contention-8",
    "source": {"doc": "none", "claim": "Eight clients share one key."},
    "variants": ["set_nx_ex"],
    "workload": {"clients": 8, "keys": 2, "work_ms": {"min": 1, "max": 5}, "rest_ms": 3,
                 "crash_probability": 0.25},
    "expect": {"set_nx_ex": "ok"}
  })");
}

// Returns the InputError message for `document`, or "" (and a test failure) if it loaded.
std::string error_for(const json& document) {
  try {
    parse_scenario(document, kFile, kVariants);
  } catch (const InputError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no InputError for " << document.dump();
  return "";
}

// Expects `message` to contain each of `parts`.
void expect_contains(const std::string& message, std::initializer_list<std::string> parts) {
  for (const std::string& part : parts) {
    EXPECT_NE(message.find(part), std::string::npos)
        << "message: " << message << "\nmissing: " << part;
  }
}

// Applies `edit` to a copy of `document` and returns the resulting error message.
std::string error_after(json document, const std::function<void(json&)>& edit) {
  edit(document);
  return error_for(document);
}

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
  EXPECT_DOUBLE_EQ(w.crash_probability, 0.25);
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
  EXPECT_EQ(s.workload->crash_probability, 0.0);
  EXPECT_EQ(s.resolved["workload"]["work_ms"], json::parse(R"({"min": 1, "max": 1})"));
}

// `resolved` spells out every default, and is itself a scenario that loads to the same thing.
TEST(ScenarioLoaderTest, ResolvedContainsDefaultsAndReloads) {
  const Scenario s = parse_scenario(scripted_document(), kFile, kVariants);
  const json& r = s.resolved;
  EXPECT_EQ(r["lock"]["acquire_timeout_ms"], 2000);
  EXPECT_EQ(r["lock"]["wait"]["strategy"], "poll");
  EXPECT_EQ(r["check"]["stuck_ms"], 1000);
  EXPECT_EQ(r["time_limit_ms"], 60000);
  EXPECT_EQ(r["steps"][1]["id"], "step-2");
  EXPECT_EQ(r["steps"][2]["wait_for"], json::parse(R"([{"done": "a-in"}])"));
  EXPECT_EQ(r["steps"][5]["wait_max_ms"], 10000);
  EXPECT_FALSE(r["steps"][3].contains("wait_max_ms"));  // only allowed with wait_for
  EXPECT_EQ(r["expect"]["lua_owner"], json::parse(R"({"verdict": "mutex_violation"})"));
  EXPECT_EQ(parse_scenario(r, kFile, kVariants).resolved, r);

  const Scenario w = parse_scenario(workload_document(), kFile, kVariants);
  EXPECT_EQ(w.resolved["workload"]["cycles"], 100);
  EXPECT_EQ(w.resolved["workload"]["rest_ms"], json::parse(R"({"min": 3, "max": 3})"));
  EXPECT_FALSE(w.resolved.contains("clients"));
  EXPECT_EQ(parse_scenario(w.resolved, kFile, kVariants).resolved, w.resolved);
}

// A misspelt key fails at its own path and suggests the key that was meant.
TEST(ScenarioLoaderTest, UnknownKeySuggestsClosestKey) {
  const std::string message =
      error_after(scripted_document(), [](json& d) { d["lock"]["ttll_ms"] = 5; });
  expect_contains(message, {kFile, "$.lock.ttll_ms: unknown key (did you mean \"ttl_ms\"?)"});
  // A case slip counts as close, at any depth.
  expect_contains(error_after(scripted_document(), [](json& d) { d["steps"][0]["Client"] = "A"; }),
                  {"$.steps[0].Client: unknown key (did you mean \"client\"?)"});
}

// An unknown key with nothing close lists the keys that are allowed there.
TEST(ScenarioLoaderTest, UnknownKeyWithoutCloseMatchListsAllowedKeys) {
  expect_contains(error_after(scripted_document(), [](json& d) { d["source"]["banana"] = 1; }),
                  {kFile, "$.source.banana: unknown key; allowed keys: doc, claim"});
}

// A value of the wrong JSON type names the type expected and what was found.
TEST(ScenarioLoaderTest, WrongTypeNamesExpectedType) {
  expect_contains(error_after(scripted_document(), [](json& d) { d["name"] = 5; }),
                  {kFile, "$.name: expected a string, got 5"});
  expect_contains(error_after(scripted_document(), [](json& d) { d["lock"] = json::array(); }),
                  {kFile, "$.lock: expected an object, got an array"});
  expect_contains(error_after(scripted_document(), [](json& d) { d["lock"]["ttl_ms"] = "100"; }),
                  {kFile, "$.lock.ttl_ms: expected an integer number of milliseconds, got \"100\"",
                   "without quotes"});
}

// A negative duration names the allowed range and its unit.
TEST(ScenarioLoaderTest, NegativeDurationNamesRangeAndUnit) {
  expect_contains(
      error_after(scripted_document(), [](json& d) { d["lock"]["ttl_ms"] = -5; }),
      {kFile, "$.lock.ttl_ms: expected a duration in ms between 1 and 3600000, got -5"});
}

// A fractional duration is rejected rather than rounded.
TEST(ScenarioLoaderTest, FloatDurationIsRejected) {
  expect_contains(
      error_after(scripted_document(), [](json& d) { d["steps"][3]["work_ms"] = 1.5; }),
      {kFile, "$.steps[3].work_ms: expected an integer number of milliseconds, got 1.5"});
}

// A crash probability above 1 names the range.
TEST(ScenarioLoaderTest, ProbabilityOutOfRangeNamesRange) {
  expect_contains(
      error_after(workload_document(), [](json& d) { d["workload"]["crash_probability"] = 1.5; }),
      {kFile, "$.workload.crash_probability: expected a probability between 0 and 1, got 1.5"});
}

// An unknown variant suggests the nearest known one and lists them all.
TEST(ScenarioLoaderTest, UnknownVariantSuggestsKnownVariant) {
  expect_contains(error_after(scripted_document(), [](json& d) { d["variants"][1] = "lua_ownr"; }),
                  {kFile,
                   "$.variants[1]: unknown variant \"lua_ownr\" (did you mean \"lua_owner\"?); "
                   "known: naive, set_nx_ex, lua_owner"});
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

// A scenario is scripted or a workload: both or neither is an error.
TEST(ScenarioLoaderTest, StepsAndWorkloadAreExclusive) {
  expect_contains(error_after(scripted_document(), [](json& d) { d["workload"] = json::object(); }),
                  {kFile, "$: give either \"steps\" (a scripted scenario) or \"workload\""});
  expect_contains(error_after(scripted_document(), [](json& d) { d.erase("steps"); }),
                  {kFile, "$: missing \"steps\" (a scripted scenario) or \"workload\""});
  expect_contains(error_after(workload_document(), [](json& d) { d["clients"] = {"A"}; }),
                  {kFile, "$.clients: not allowed in a workload scenario"});
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

// Remaining top-level fields: name pattern, source doc, wait strategy, time limit.
TEST(ScenarioLoaderTest, OtherOutOfFormatValuesAreRejected) {
  expect_contains(error_after(scripted_document(), [](json& d) { d["name"] = "Bad Name"; }),
                  {"$.name: expected a name of 1 to 64 lowercase letters"});
  expect_contains(error_after(scripted_document(), [](json& d) { d["source"]["doc"] = "a"; }),
                  {"$.source.doc: unknown doc \"a\" (did you mean \"A\"?)"});
  expect_contains(
      error_after(scripted_document(), [](json& d) { d["lock"]["wait"]["strategy"] = "pol"; }),
      {"$.lock.wait.strategy: unknown strategy \"pol\" (did you mean \"poll\"?); allowed: poll, "
       "backoff, retry_sleep, notify"});
  expect_contains(error_after(scripted_document(), [](json& d) { d["time_limit_ms"] = 999; }),
                  {"$.time_limit_ms: expected a duration in ms between 1000 and 3600000, got 999"});
  expect_contains(error_after(scripted_document(), [](json& d) { d["steps"][0]["do"] = "aquire"; }),
                  {"$.steps[0].do: unknown action \"aquire\" (did you mean \"acquire\"?)"});
}

// The wait object of `strategy` alone, on the scripted document.
Scenario with_wait(const json& wait) {
  json document = scripted_document();
  document["lock"]["wait"] = wait;
  return parse_scenario(document, kFile, kVariants);
}

// Each wait strategy fills its own defaults, writes only its own keys when resolved, and sets
// the deadlock threshold from its longest wait.
TEST(ScenarioLoaderTest, WaitStrategiesLoadWithTheirDefaults) {
  const Scenario poll = with_wait({{"strategy", "poll"}});
  EXPECT_EQ(poll.lock.wait.interval_ms, 10);
  EXPECT_EQ(poll.check.stuck_ms, 500);
  EXPECT_EQ(poll.resolved["lock"]["wait"],
            json::parse(R"({"strategy": "poll", "interval_ms": 10})"));

  const Scenario retry = with_wait({{"strategy", "retry_sleep"}});
  EXPECT_EQ(retry.lock.wait.interval_ms, 3000);  // Doc B's 3 s sleep
  EXPECT_EQ(retry.check.stuck_ms, 15000);
  EXPECT_EQ(retry.resolved["lock"]["wait"],
            json::parse(R"({"strategy": "retry_sleep", "interval_ms": 3000})"));

  const Scenario backoff = with_wait({{"strategy", "backoff"}});
  EXPECT_EQ(backoff.lock.wait.initial_ms, 100);
  EXPECT_DOUBLE_EQ(backoff.lock.wait.factor, 2.0);
  EXPECT_EQ(backoff.lock.wait.max_ms, 5000);
  EXPECT_EQ(backoff.check.stuck_ms, 10000);  // 2 x max_ms
  EXPECT_EQ(
      backoff.resolved["lock"]["wait"],
      json::parse(
          R"({"strategy": "backoff", "initial_ms": 100, "factor": 2.0, "max_ms": 5000, "jitter": "none"})"));
  EXPECT_EQ(with_wait({{"strategy", "backoff"}, {"jitter", "full"}}).lock.wait.jitter, "full");

  const Scenario notify = with_wait({{"strategy", "notify"}});
  EXPECT_EQ(notify.lock.wait.fallback_ms, 100);
  EXPECT_EQ(notify.check.stuck_ms, 500);
  EXPECT_EQ(notify.resolved["lock"]["wait"],
            json::parse(R"({"strategy": "notify", "fallback_ms": 100})"));

  const Scenario tuned = with_wait(
      json::parse(R"({"strategy": "backoff", "initial_ms": 50, "factor": 1.5, "max_ms": 400})"));
  EXPECT_EQ(tuned.lock.wait.initial_ms, 50);
  EXPECT_DOUBLE_EQ(tuned.lock.wait.factor, 1.5);
  EXPECT_EQ(tuned.lock.wait.max_ms, 400);
  EXPECT_EQ(tuned.check.stuck_ms, 800);
  EXPECT_EQ(with_wait({{"strategy", "notify"}, {"fallback_ms", 300}}).check.stuck_ms, 1500);
  const Scenario pubsub = with_wait({{"strategy", "pubsub"}, {"fallback_ms", 200}});
  EXPECT_EQ(pubsub.lock.wait.fallback_ms, 200);
  EXPECT_EQ(pubsub.check.stuck_ms, 1000);
  EXPECT_EQ(pubsub.resolved["lock"]["wait"],
            json::parse(R"({"strategy": "pubsub", "fallback_ms": 200})"));
  // A larger first wait raises the default cap with it.
  EXPECT_EQ(with_wait({{"strategy", "backoff"}, {"initial_ms", 6000}}).lock.wait.max_ms, 6000);
  for (const Scenario* s : {&poll, &retry, &backoff, &notify, &tuned, &pubsub}) {
    EXPECT_EQ(parse_scenario(s->resolved, kFile, kVariants).resolved, s->resolved);
  }
}

// A key that belongs to another strategy is named with the strategy that takes it.
TEST(ScenarioLoaderTest, WaitKeyOfAnotherStrategyIsRejected) {
  expect_contains(
      error_after(
          scripted_document(),
          [](json& d) { d["lock"]["wait"] = json::parse(R"({"strategy": "poll", "factor": 2})"); }),
      {kFile,
       "$.lock.wait.factor: not allowed when \"strategy\" is \"poll\" (only with "
       "\"strategy\": \"backoff\")"});
  // Without "strategy" the strategy is poll.
  expect_contains(
      error_after(scripted_document(),
                  [](json& d) { d["lock"]["wait"] = json::parse(R"({"fallback_ms": 5})"); }),
      {"$.lock.wait.fallback_ms: not allowed when \"strategy\" is \"poll\" (only with "
       "\"strategy\": \"notify\", \"pubsub\")"});
  expect_contains(error_after(scripted_document(),
                              [](json& d) {
                                d["lock"]["wait"] =
                                    json::parse(R"({"strategy": "poll", "jitter": "full"})");
                              }),
                  {"$.lock.wait.jitter: not allowed when \"strategy\" is \"poll\" (only with "
                   "\"strategy\": \"backoff\")"});
  expect_contains(error_after(scripted_document(),
                              [](json& d) {
                                d["lock"]["wait"] =
                                    json::parse(R"({"strategy": "backoff", "interval_ms": 5})");
                              }),
                  {"$.lock.wait.interval_ms: not allowed when \"strategy\" is \"backoff\" (only "
                   "with \"strategy\": \"poll\", \"retry_sleep\")"});
}

// Backoff parameters are range-checked, and the cap cannot be below the first wait.
TEST(ScenarioLoaderTest, BackoffValuesAreRangeChecked) {
  auto backoff_error = [](const char* wait) {
    return error_after(scripted_document(),
                       [&](json& d) { d["lock"]["wait"] = json::parse(wait); });
  };
  expect_contains(backoff_error(R"({"strategy": "backoff", "factor": 11})"),
                  {"$.lock.wait.factor: expected a backoff factor between 1 and 10, got 11"});
  expect_contains(backoff_error(R"({"strategy": "backoff", "factor": 0.5})"),
                  {"$.lock.wait.factor: expected a backoff factor between 1 and 10, got 0.5"});
  expect_contains(backoff_error(R"({"strategy": "backoff", "factor": "2"})"),
                  {"$.lock.wait.factor: expected a backoff factor (a number), got \"2\""});
  expect_contains(backoff_error(R"({"strategy": "backoff", "max_ms": 50})"),
                  {"$.lock.wait.max_ms: expected at least \"initial_ms\" (100)", "got 50"});
  expect_contains(backoff_error(R"({"strategy": "backoff", "max_ms": 600001})"),
                  {"$.lock.wait.max_ms: expected a duration in ms between 1 and 600000"});
  expect_contains(
      backoff_error(R"({"strategy": "notify", "fallback_ms": 0})"),
      {"$.lock.wait.fallback_ms: expected a duration in ms between 1 and 60000, got 0"});
  expect_contains(backoff_error(R"({"strategy": "backoff", "jitter": "half"})"),
                  {"$.lock.wait.jitter: unknown jitter \"half\"", "allowed: none, full, equal"});
  expect_contains(backoff_error(R"({"strategy": "retry_sleep", "interval_ms": 60001})"),
                  {"$.lock.wait.interval_ms: expected a duration in ms between 1 and 60000"});
}

// The renewal period defaults to a third of the lease and must come before the lease ends.
TEST(ScenarioLoaderTest, RenewPeriodDefaultsToAThirdOfTtlAndStaysBelowIt) {
  const Scenario s = parse_scenario(scripted_document(), kFile, kVariants);  // ttl_ms 200
  EXPECT_EQ(s.lock.renew_period_ms, 66);
  EXPECT_EQ(s.resolved["lock"]["renew_period_ms"], 66);
  json document = scripted_document();
  document["lock"]["renew_period_ms"] = 50;
  EXPECT_EQ(parse_scenario(document, kFile, kVariants).lock.renew_period_ms, 50);
  document["lock"]["ttl_ms"] = 1;
  document["lock"].erase("renew_period_ms");
  const Scenario tiny = parse_scenario(document, kFile, kVariants);
  EXPECT_EQ(tiny.lock.renew_period_ms, 1);  // never 0
  EXPECT_EQ(parse_scenario(tiny.resolved, kFile, kVariants).lock.renew_period_ms, 1);

  expect_contains(
      error_after(scripted_document(), [](json& d) { d["lock"]["renew_period_ms"] = 200; }),
      {kFile, "$.lock.renew_period_ms: expected less than lock.ttl_ms (200)", "got 200"});
  expect_contains(
      error_after(scripted_document(), [](json& d) { d["lock"]["renew_period_ms"] = 0; }),
      {"$.lock.renew_period_ms: expected a duration in ms between 1 and 3600000, got 0"});
}

// The queue timeout defaults to max(ttl_ms, 3 x the longest pause of the wait strategy), and an
// explicit one shorter than two pauses is refused only where lua_fair_queue runs.
TEST(ScenarioLoaderTest, QueueTimeoutDefaultsFromTtlAndWaitAndMustOutlastTwoPauses) {
  const std::vector<std::string> known = {"naive", "lua_owner", "lua_fair_queue"};
  // ttl_ms 200, poll interval_ms 200: 3 pauses (600) outweigh the lease.
  const Scenario s = parse_scenario(scripted_document(), kFile, known);
  EXPECT_EQ(s.lock.queue_timeout_ms, 600);
  EXPECT_EQ(s.resolved["lock"]["queue_timeout_ms"], 600);
  EXPECT_EQ(parse_scenario(s.resolved, kFile, known).lock.queue_timeout_ms, 600);
  const auto loaded = [&](const std::function<void(json&)>& edit) {
    json document = scripted_document();
    edit(document);
    return parse_scenario(document, kFile, known).lock.queue_timeout_ms;
  };
  EXPECT_EQ(loaded([](json& d) { d["lock"]["ttl_ms"] = 5000; }), 5000);  // the lease outweighs
  EXPECT_EQ(loaded([](json& d) {
              d["lock"]["wait"] = json::parse(R"({"strategy": "backoff", "max_ms": 800})");
            }),
            2400);
  EXPECT_EQ(loaded([](json& d) {
              d["lock"]["wait"] = json::parse(R"({"strategy": "notify", "fallback_ms": 300})");
            }),
            900);
  EXPECT_EQ(loaded([](json& d) { d["lock"]["queue_timeout_ms"] = 150; }), 150);  // no queue here

  const auto with_fair_queue = [](json& d) {
    d["variants"] = json::parse(R"(["lua_fair_queue"])");
    d["expect"] = json::parse(R"({"lua_fair_queue": "ok"})");
  };
  EXPECT_EQ(loaded([&](json& d) {
              with_fair_queue(d);
              d["lock"]["queue_timeout_ms"] = 400;  // exactly two 200 ms pauses
            }),
            400);
  try {
    json document = scripted_document();
    with_fair_queue(document);
    document["lock"]["queue_timeout_ms"] = 399;
    parse_scenario(document, kFile, known);
    ADD_FAILURE() << "a queue timeout shorter than two pauses loaded";
  } catch (const InputError& error) {
    expect_contains(error.what(),
                    {kFile,
                     "$.lock.queue_timeout_ms: expected at least 400 (2 x the longest pause "
                     "200 ms of the \"poll\" wait) because lua_fair_queue is listed",
                     "loses its place every time; got 399"});
  }
  expect_contains(
      error_after(scripted_document(), [](json& d) { d["lock"]["queue_timeout_ms"] = 0; }),
      {"$.lock.queue_timeout_ms: expected a duration in ms between 1 and 3600000, got 0"});
}

// A scripted scenario over a protected resource, reading and writing it inside the lock.
json resource_document(const char* resource) {
  json document = scripted_document();
  document["resource"] = json::parse(resource);
  document["steps"] = json::parse(R"([
    {"client": "A", "do": "acquire"},
    {"client": "A", "do": "read"},
    {"client": "A", "do": "write"},
    {"client": "A", "do": "release"},
    {"client": "B", "do": "acquire"},
    {"client": "B", "do": "release"}
  ])");
  return document;
}

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

// Doc D's lost iterations default to never, sleeping three leases when they happen.
TEST(ScenarioLoaderTest, WorkloadLoseDefaults) {
  const Scenario s = parse_scenario(workload_document(), kFile, kVariants);
  EXPECT_EQ(s.workload->lose_probability, 0.0);
  EXPECT_EQ(s.workload->lose_sleep_ms, 3000);  // 3 x the default 1000 ms lease
  EXPECT_EQ(s.resolved["workload"]["lose_sleep_ms"], 3000);
  EXPECT_EQ(s.resolved["workload"]["lose_probability"], 0.0);

  json document = workload_document();
  document["workload"]["lose_probability"] = 0.1;
  document["workload"]["lose_sleep_ms"] = 700;
  const Scenario given = parse_scenario(document, kFile, kVariants);
  EXPECT_DOUBLE_EQ(given.workload->lose_probability, 0.1);
  EXPECT_EQ(given.workload->lose_sleep_ms, 700);
  EXPECT_EQ(parse_scenario(given.resolved, kFile, kVariants).resolved, given.resolved);

  document["workload"]["lose_sleep_ms"] = 0;  // 0 also means the default
  document["lock"] = json::parse(R"({"ttl_ms": 2000000})");
  EXPECT_EQ(parse_scenario(document, kFile, kVariants).workload->lose_sleep_ms, 3600000);

  expect_contains(
      error_after(workload_document(), [](json& d) { d["workload"]["lose_probability"] = 2; }),
      {"$.workload.lose_probability: expected a probability between 0 and 1, got 2"});
  expect_contains(
      error_after(workload_document(), [](json& d) { d["workload"]["lose_sleep_ms"] = -1; }),
      {"$.workload.lose_sleep_ms: expected a duration in ms between 0 and 3600000, got -1"});
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

// A TTL/work sweep over a workload with a mean work time of 100 ms.
json sweep_document() {
  return json::parse(R"({
    "name": "doc-e-ttl-ratio",
    "source": {"doc": "E", "claim": "A lease shorter than the work lets two clients in."},
    "variants": ["naive", "lua_owner"],
    "lock": {"wait": {"strategy": "backoff", "initial_ms": 5, "max_ms": 50}},
    "workload": {"clients": 3, "cycles": 20, "work_ms": {"min": 80, "max": 120}},
    "sweep": {"ttl_over_work": [0.5, 2, 30]},
    "expect": {
      "naive": {"0.5": "mutex_violation", "2": "any", "30": "ok"},
      "lua_owner": {"0.5": {"verdict": "mutex_violation", "causes": ["lease_expired"]},
                    "2": "any", "30": {"verdict": "ok", "max_violations_outside_faults": 0}}
    }
  })");
}

std::vector<Scenario> expand(const json& document) {
  return parse_scenarios(document, kFile, kVariants);
}

// Returns the InputError message for expanding `document`, or "" (and a test failure).
std::string sweep_error_after(const std::function<void(json&)>& edit) {
  json document = sweep_document();
  edit(document);
  try {
    expand(document);
  } catch (const InputError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no InputError for " << document.dump();
  return "";
}

// A sweep expands in order into one named scenario per value, each with its lease, point and
// expectations, and a resolved form that is a plain workload document.
TEST(ScenarioLoaderTest, SweepExpandsIntoOneScenarioPerValue) {
  const std::vector<Scenario> points = expand(sweep_document());
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0].name, "doc-e-ttl-ratio-ttl-x0.5");
  EXPECT_EQ(points[1].name, "doc-e-ttl-ratio-ttl-x2");
  EXPECT_EQ(points[2].name, "doc-e-ttl-ratio-ttl-x30");
  EXPECT_EQ(points[0].lock.ttl_ms, 50);
  EXPECT_EQ(points[1].lock.ttl_ms, 200);
  EXPECT_EQ(points[2].lock.ttl_ms, 3000);
  EXPECT_EQ(points[0].lock.renew_period_ms, 16);  // defaults follow each point's lease
  EXPECT_EQ(points[2].workload->lose_sleep_ms, 9000);
  const double values[] = {0.5, 2, 30};
  for (std::size_t i = 0; i < points.size(); ++i) {
    ASSERT_TRUE(points[i].sweep.has_value());
    EXPECT_EQ(points[i].sweep->group, "doc-e-ttl-ratio");
    EXPECT_EQ(points[i].sweep->parameter, "ttl_over_work");
    EXPECT_DOUBLE_EQ(points[i].sweep->value, values[i]);
    EXPECT_EQ(points[i].file, kFile);
    EXPECT_EQ(points[i].lock.wait.strategy, "backoff");
    EXPECT_EQ(points[i].workload->clients, 3);
    EXPECT_FALSE(points[i].resolved.contains("sweep"));
    EXPECT_EQ(points[i].resolved["lock"]["ttl_ms"], points[i].lock.ttl_ms);
    EXPECT_EQ(points[i].resolved["sweep_point"]["group"], "doc-e-ttl-ratio");
    EXPECT_EQ(points[i].resolved["name"], points[i].name);
  }
  EXPECT_EQ(points[0].expect.at("naive").verdict, Verdict::kMutexViolation);
  EXPECT_EQ(points[0].expect.at("lua_owner").causes, (std::set<std::string>{"lease_expired"}));
  EXPECT_TRUE(points[1].expect.at("naive").any);
  EXPECT_TRUE(points[1].expect.at("lua_owner").any);
  EXPECT_EQ(points[2].expect.at("naive").verdict, Verdict::kOk);
  EXPECT_FALSE(points[2].expect.at("naive").any);
  EXPECT_EQ(points[2].expect.at("lua_owner").max_violations_outside_faults, 0);
  EXPECT_EQ(points[2].resolved["expect"]["lua_owner"],
            json::parse(R"({"verdict": "ok", "max_violations_outside_faults": 0})"));

  // A document without "sweep" gives exactly one scenario.
  const std::vector<Scenario> single = expand(workload_document());
  ASSERT_EQ(single.size(), 1u);
  EXPECT_FALSE(single[0].sweep.has_value());
  EXPECT_EQ(single[0].name, "contention-8");
}

// Point keys use the shortest form of each value; leases round to the nearest ms, at least 1.
TEST(ScenarioLoaderTest, SweepValuesRoundAndFormat) {
  json document = sweep_document();
  document["workload"]["work_ms"] = json::parse(R"({"min": 1, "max": 2})");  // mean 1.5
  document["sweep"]["ttl_over_work"] = json::parse("[0.1, 3, 1000, 2.5e-1]");
  document["expect"] = json::parse(R"({"naive": {"0.1": "any", "3": "any", "1000": "any",
                                                "0.25": "any"},
                                      "lua_owner": {"0.1": "any", "3": "any", "1000": "any",
                                                    "0.25": "any"}})");
  const std::vector<Scenario> points = expand(document);
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0].name, "doc-e-ttl-ratio-ttl-x0.1");
  EXPECT_EQ(points[0].lock.ttl_ms, 1);  // 0.15 ms rounds to 0, raised to 1
  EXPECT_EQ(points[1].lock.ttl_ms, 5);  // 4.5 rounds half away from zero
  EXPECT_EQ(points[2].name, "doc-e-ttl-ratio-ttl-x1000");
  EXPECT_EQ(points[2].lock.ttl_ms, 1500);
  EXPECT_EQ(points[3].name, "doc-e-ttl-ratio-ttl-x0.25");
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

// A sweep needs a workload, sets the lease itself, and takes 1..20 distinct values in range.
TEST(ScenarioLoaderTest, BadSweepIsRejected) {
  expect_contains(sweep_error_after([](json& d) {
                    d.erase("workload");
                    d["clients"] = {"A"};
                    d["steps"] = json::parse(R"([{"client": "A", "do": "acquire"}])");
                  }),
                  {kFile, "$.sweep: only allowed in a workload scenario"});
  expect_contains(sweep_error_after([](json& d) { d["lock"]["ttl_ms"] = 100; }),
                  {kFile, "$.lock.ttl_ms: not allowed with \"sweep\""});
  expect_contains(sweep_error_after([](json& d) { d["sweep"]["ttl_over_work"][1] = 0.5; }),
                  {"$.sweep.ttl_over_work[1]: duplicate value 0.5 (also at "
                   "$.sweep.ttl_over_work[0])"});
  expect_contains(sweep_error_after([](json& d) { d["sweep"]["ttl_over_work"][0] = 0; }),
                  {"$.sweep.ttl_over_work[0]: expected a ratio of TTL to mean work time above 0 "
                   "and at most 1000, got 0"});
  expect_contains(sweep_error_after([](json& d) { d["sweep"]["ttl_over_work"][0] = 1000.5; }),
                  {"$.sweep.ttl_over_work[0]: expected a ratio"});
  expect_contains(sweep_error_after([](json& d) { d["sweep"]["ttl_over_work"] = json::array(); }),
                  {"$.sweep.ttl_over_work: expected a non-empty array"});
  expect_contains(sweep_error_after([](json& d) {
                    d["sweep"]["ttl_over_work"] = json::array();
                    for (int i = 1; i <= 21; ++i) d["sweep"]["ttl_over_work"].push_back(i);
                  }),
                  {"$.sweep.ttl_over_work: expected 1 to 20 values, got 21"});
  expect_contains(sweep_error_after([](json& d) { d["sweep"]["ttl_over_wrk"] = {1}; }),
                  {"$.sweep.ttl_over_wrk: unknown key (did you mean \"ttl_over_work\"?)"});
  // An explicit renewal period must fit every point's lease; the message names the point.
  expect_contains(sweep_error_after([](json& d) { d["lock"]["renew_period_ms"] = 60; }),
                  {"$.lock.renew_period_ms: expected less than lock.ttl_ms (50, set by sweep "
                   "point 0.5)"});
  expect_contains(sweep_error_after([](json& d) { d["workload"]["work_ms"] = 3600000; }),
                  {"$.sweep.ttl_over_work[1]: gives lock.ttl_ms 7200000 (2 x mean work_ms "
                   "3600000), above the maximum 3600000"});
  expect_contains(sweep_error_after([](json& d) { d["workload"]["work_ms"] = 0; }),
                  {"$.workload.work_ms: a \"ttl_over_work\" sweep needs a mean work time above 0"});
  expect_contains(sweep_error_after([](json& d) {
                    d["sweep_point"] =
                        json::parse(R"({"group": "x", "parameter": "ttl_over_work", "value": 1})");
                  }),
                  {"$.sweep_point: not allowed together with \"sweep\""});
}

// Loading a point's resolved document gives the same scenario, sweep point included.
TEST(ScenarioLoaderTest, ResolvedSweepPointReloadsToTheSameScenario) {
  for (const Scenario& point : expand(sweep_document())) {
    const Scenario again = parse_scenario(point.resolved, kFile, kVariants);
    EXPECT_EQ(again.name, point.name);
    EXPECT_EQ(again.lock.ttl_ms, point.lock.ttl_ms);
    EXPECT_EQ(again.lock.renew_period_ms, point.lock.renew_period_ms);
    EXPECT_EQ(again.lock.wait.max_ms, point.lock.wait.max_ms);
    EXPECT_EQ(again.workload->lose_sleep_ms, point.workload->lose_sleep_ms);
    EXPECT_EQ(again.workload->work_ms.max_ms, point.workload->work_ms.max_ms);
    ASSERT_TRUE(again.sweep.has_value());
    EXPECT_EQ(again.sweep->group, point.sweep->group);
    EXPECT_EQ(again.sweep->parameter, point.sweep->parameter);
    EXPECT_DOUBLE_EQ(again.sweep->value, point.sweep->value);
    for (const auto& [variant, expectation] : point.expect) {
      EXPECT_EQ(again.expect.at(variant).any, expectation.any);
      EXPECT_EQ(again.expect.at(variant).verdict, expectation.verdict);
      EXPECT_EQ(again.expect.at(variant).causes, expectation.causes);
    }
    EXPECT_EQ(again.resolved, point.resolved);
    EXPECT_EQ(expand(point.resolved).size(), 1u);
  }
}

// "sweep_point" is checked, and only it allows the longer expanded names.
TEST(ScenarioLoaderTest, BadSweepPointIsRejected) {
  json document = expand(sweep_document())[0].resolved;
  document["sweep_point"]["parameter"] = "TTL";
  expect_contains(error_for(document),
                  {"$.sweep_point.parameter: expected a parameter name of 1 to 32 lowercase "
                   "letters, digits or '_', starting with a letter, got \"TTL\""});
  document["sweep_point"]["parameter"] = "pause_ms";
  document["sweep_point"]["value"] = 1e-300;
  expect_contains(error_for(document), {"$.sweep_point.value: expected a number of at most 20"});
  document["sweep_point"]["value"] = 5;
  document["sweep_point"]["unit"] = "";
  expect_contains(error_for(document), {"$.sweep_point.unit: expected a non-empty string"});
  document = expand(sweep_document())[0].resolved;
  document["sweep_point"]["value"] = -1;
  expect_contains(error_for(document), {"$.sweep_point.value: expected a ratio"});
  document = expand(sweep_document())[0].resolved;
  document.erase("sweep_point");
  expect_contains(error_for(document), {"$.name: expected a name of 1 to 64"});
}

// A general sweep over a scripted scenario: a holder's pause, with a unit.
json pause_sweep_document() {
  return json::parse(R"({
    "name": "pause-sweep",
    "source": {"doc": "none", "claim": "A holder paused past its lease lets another in."},
    "variants": ["naive", "lua_owner"],
    "lock": {"ttl_ms": 1000, "acquire_timeout_ms": 5000},
    "clients": ["A", "B"],
    "steps": [
      {"client": "A", "do": "acquire"},
      {"client": "A", "do": "pause", "pause_ms": 1},
      {"client": "B", "do": "acquire"},
      {"client": "A", "do": "release"},
      {"client": "B", "do": "release"}
    ],
    "sweep": {"parameter": "pause_ms", "set": ["/steps/1/pause_ms"], "values": [100, 500, 1500],
              "unit": "ms"},
    "expect": {
      "naive": {"100": "ok", "500": "ok", "1500": "ok"},
      "lua_owner": {"100": "ok", "500": "any",
                    "1500": {"verdict": "mutex_violation", "causes": ["lease_expired"]}}
    }
  })");
}

// Returns the InputError message for expanding `document` after `edit`, or "" (and a failure).
std::string expand_error_after(json document, const std::function<void(json&)>& edit) {
  edit(document);
  try {
    expand(document);
  } catch (const InputError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no InputError for " << document.dump();
  return "";
}

// A general sweep writes each value at its pointer and loads the result like any file: one
// scripted scenario per value, named <name>-<parameter>-<value>, with its point (unit included)
// and expectations; the resolved form of a point loads again to the same point.
TEST(ScenarioLoaderTest, GeneralSweepSetsAPointerInAScriptedScenario) {
  const std::vector<Scenario> points = expand(pause_sweep_document());
  ASSERT_EQ(points.size(), 3u);
  const std::int64_t values[] = {100, 500, 1500};
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Scenario& point = points[i];
    EXPECT_EQ(point.name, "pause-sweep-pause_ms-" + std::to_string(values[i]));
    EXPECT_TRUE(point.scripted());
    EXPECT_EQ(point.steps[1].action, Step::Action::kPause);
    EXPECT_EQ(point.steps[1].work_ms, values[i]);
    EXPECT_EQ(point.lock.ttl_ms, 1000);  // untouched: only the pointer's target changes
    ASSERT_TRUE(point.sweep.has_value());
    EXPECT_EQ(point.sweep->group, "pause-sweep");
    EXPECT_EQ(point.sweep->parameter, "pause_ms");
    EXPECT_EQ(point.sweep->unit, "ms");
    EXPECT_DOUBLE_EQ(point.sweep->value, static_cast<double>(values[i]));
    json expected_point =
        json::parse(R"({"group": "pause-sweep", "parameter": "pause_ms", "unit": "ms"})");
    expected_point["value"] = static_cast<double>(values[i]);
    EXPECT_EQ(point.resolved["sweep_point"], expected_point);
    EXPECT_FALSE(point.resolved.contains("sweep"));
    EXPECT_EQ(point.resolved["steps"][1]["pause_ms"], values[i]);
    const Scenario again = parse_scenario(point.resolved, kFile, kVariants);
    EXPECT_EQ(again.name, point.name);
    EXPECT_EQ(again.steps[1].work_ms, values[i]);
    ASSERT_TRUE(again.sweep.has_value());
    EXPECT_EQ(again.sweep->unit, "ms");
    EXPECT_EQ(again.resolved, point.resolved);
  }
  EXPECT_EQ(points[0].expect.at("lua_owner").verdict, Verdict::kOk);
  EXPECT_TRUE(points[1].expect.at("lua_owner").any);
  EXPECT_EQ(points[2].expect.at("lua_owner").causes, (std::set<std::string>{"lease_expired"}));
  EXPECT_EQ(points[2].expect.at("naive").verdict, Verdict::kOk);
}

// Several pointers take the same value: both ends of a workload's pause_ms range (a RangeMs), so
// each point pauses exactly that long; an integer value stays an integer where it is written.
TEST(ScenarioLoaderTest, GeneralSweepSetsEveryPointerOfAWorkload) {
  json document = workload_document();
  document["workload"]["pause_probability"] = 0.5;
  document["workload"]["pause_ms"] = json::parse(R"({"min": 1, "max": 2})");
  document["sweep"] = json::parse(R"({"parameter": "pause_ms",
      "set": ["/workload/pause_ms/min", "/workload/pause_ms/max"], "values": [10, 250]})");
  document["expect"] = json::parse(R"({"set_nx_ex": {"10": "ok", "250": "any"}})");
  const std::vector<Scenario> points = expand(document);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].name, "contention-8-pause_ms-10");
  EXPECT_EQ(points[0].workload->pause_ms.min_ms, 10);
  EXPECT_EQ(points[0].workload->pause_ms.max_ms, 10);
  EXPECT_EQ(points[1].name, "contention-8-pause_ms-250");
  EXPECT_EQ(points[1].workload->pause_ms.min_ms, 250);
  EXPECT_EQ(points[1].workload->pause_ms.max_ms, 250);
  EXPECT_EQ(points[1].workload->work_ms.max_ms, 5);  // the rest of the file as written
  EXPECT_EQ(points[1].sweep->unit, "");
  EXPECT_FALSE(points[1].resolved["sweep_point"].contains("unit"));
  EXPECT_TRUE(points[1].expect.at("set_nx_ex").any);
  // A pointer may name the lease, which the ttl_over_work form forbids setting by hand.
  document["sweep"]["set"] = json::parse(R"(["/lock/ttl_ms"])");
  document["lock"] = json::parse(R"({"ttl_ms": 100})");
  document["sweep"]["parameter"] = "ttl_ms";
  const std::vector<Scenario> leases = expand(document);
  EXPECT_EQ(leases[0].name, "contention-8-ttl_ms-10");
  EXPECT_EQ(leases[0].lock.ttl_ms, 10);
  EXPECT_EQ(leases[1].lock.ttl_ms, 250);
  EXPECT_EQ(leases[1].lock.renew_period_ms, 83);  // defaults follow the value written
}

// A pointer must name a number in the file: each way it can fail is named at $.sweep.set[i],
// with the file and what was expected.
TEST(ScenarioLoaderTest, GeneralSweepPointersMustNameANumber) {
  const auto error = [](const std::function<void(json&)>& edit) {
    return expand_error_after(pause_sweep_document(), edit);
  };
  expect_contains(error([](json& d) { d["sweep"]["set"][0] = "/steps/9/pause_ms"; }),
                  {kFile,
                   ": $.sweep.set[0]: \"/steps/9/pause_ms\" names nothing in this file ($.steps "
                   "has 5 elements; expected an index from 0 to 4, got \"9\"); expected a JSON "
                   "Pointer to a number in this file"});
  expect_contains(error([](json& d) { d["sweep"]["set"][0] = "/steps/1/pause"; }),
                  {kFile,
                   ": $.sweep.set[0]: \"/steps/1/pause\" names nothing in this file "
                   "($.steps[1] has no key \"pause\")"});
  expect_contains(error([](json& d) { d["sweep"]["set"][0] = "/steps/1"; }),
                  {kFile,
                   ": $.sweep.set[0]: \"/steps/1\" names $.steps[1], which is an object; expected "
                   "a JSON Pointer to a number (the value each point replaces)"});
  expect_contains(error([](json& d) { d["sweep"]["set"][0] = "/steps/1/client"; }),
                  {kFile,
                   ": $.sweep.set[0]: \"/steps/1/client\" names $.steps[1].client, which "
                   "is \"A\"; expected a JSON Pointer to a number"});
  expect_contains(error([](json& d) { d["sweep"]["set"][0] = "/steps/1/pause_ms/x"; }),
                  {"$.sweep.set[0]: \"/steps/1/pause_ms/x\" names nothing in this file "
                   "($.steps[1].pause_ms is a number, not an object or array"});
  expect_contains(error([](json& d) { d["sweep"]["set"][0] = "steps/1/pause_ms"; }),
                  {"$.sweep.set[0]: \"steps/1/pause_ms\" names nothing in this file (expected a "
                   "JSON Pointer (RFC 6901) starting with '/'"});
  expect_contains(error([](json& d) { d["sweep"]["set"][0] = ""; }),
                  {"$.sweep.set[0]: \"\" names $, which is an object; expected a JSON Pointer to "
                   "a number"});
  expect_contains(error([](json& d) { d["sweep"]["set"][0] = "/sweep/values/0"; }),
                  {"$.sweep.set[0]: \"/sweep/values/0\" points into $.sweep itself"});
  expect_contains(error([](json& d) { d["sweep"]["set"][0] = 3; }),
                  {"$.sweep.set[0]: expected a JSON Pointer (RFC 6901) to a number in this file, "
                   "e.g. \"/lock/ttl_ms\", got 3"});
  expect_contains(error([](json& d) { d["sweep"]["set"].push_back("/steps/1/pause_ms"); }),
                  {"$.sweep.set[1]: \"/steps/1/pause_ms\" names $.steps[1].pause_ms again (also "
                   "at $.sweep.set[0])"});
  expect_contains(error([](json& d) { d["sweep"]["set"] = json::array(); }),
                  {"$.sweep.set: expected a non-empty array"});
  expect_contains(error([](json& d) {
                    for (int i = 0; i < 16; ++i) d["sweep"]["set"].push_back("/lock/ttl_ms");
                  }),
                  {"$.sweep.set: expected 1 to 16 JSON Pointers, got 17"});
  expect_contains(error([](json& d) { d["sweep"].erase("set"); }),
                  {"$.sweep: missing required key \"set\""});
}

// The general form's other keys: the parameter's name, the unit, the values, the two forms not
// mixed, and expectations keyed by the values. Each message names the file and the path.
TEST(ScenarioLoaderTest, BadGeneralSweepIsRejected) {
  const auto error = [](const std::function<void(json&)>& edit) {
    return expand_error_after(pause_sweep_document(), edit);
  };
  expect_contains(error([](json& d) { d["sweep"]["parameter"] = "Pause ms"; }),
                  {kFile,
                   ": $.sweep.parameter: expected a parameter name of 1 to 32 lowercase "
                   "letters, digits or '_', starting with a letter, got \"Pause ms\""});
  expect_contains(error([](json& d) { d["sweep"]["parameter"] = "ttl_over_work"; }),
                  {"$.sweep.parameter: \"ttl_over_work\" is the name of the form"});
  expect_contains(error([](json& d) { d["sweep"].erase("parameter"); }),
                  {"$.sweep: missing required key \"parameter\""});
  expect_contains(error([](json& d) { d["sweep"] = json::object(); }),
                  {"$.sweep: expected {\"parameter\": name, \"set\": [JSON Pointers], \"values\": "
                   "[numbers]} or {\"ttl_over_work\": [ratios]}"});
  expect_contains(error([](json& d) {
                    d["sweep"]["ttl_over_work"] = {1, 2};
                  }),
                  {"$.sweep.parameter: not allowed with \"ttl_over_work\""});
  expect_contains(error([](json& d) { d["sweep"]["vaules"] = {1}; }),
                  {"$.sweep.vaules: unknown key (did you mean \"values\"?)"});
  expect_contains(error([](json& d) { d["sweep"]["unit"] = ""; }),
                  {"$.sweep.unit: expected a non-empty string"});
  expect_contains(error([](json& d) { d["sweep"]["unit"] = "ms|s"; }),
                  {"$.sweep.unit: expected a unit of printable characters without '|'"});
  expect_contains(error([](json& d) { d["sweep"]["unit"] = "seventeen letters"; }),
                  {"$.sweep.unit: expected a string of at most 16 characters"});
  expect_contains(error([](json& d) { d["sweep"]["values"] = json::array(); }),
                  {"$.sweep.values: expected a non-empty array"});
  expect_contains(error([](json& d) {
                    d["sweep"]["values"] = json::array();
                    for (int i = 1; i <= 21; ++i) d["sweep"]["values"].push_back(i);
                  }),
                  {"$.sweep.values: expected 1 to 20 values, got 21"});
  expect_contains(error([](json& d) { d["sweep"]["values"][2] = 100.0; }),
                  {"$.sweep.values[2]: duplicate value 100 (also at $.sweep.values[0])"});
  expect_contains(
      error([](json& d) { d["sweep"]["values"][0] = "100"; }),
      {"$.sweep.values[0]: expected a value of the swept parameter (a number), got \"100\""});
  expect_contains(error([](json& d) { d["sweep"]["values"][0] = 1e-300; }),
                  {"$.sweep.values[0]: expected a number of at most 20 characters written "
                   "without an exponent"});
  expect_contains(error([](json& d) { d["expect"]["naive"].erase("1500"); }),
                  {kFile,
                   ": $.expect.naive: missing an entry for sweep point \"1500\"; every "
                   "value of $.sweep.values needs an expectation"});
  expect_contains(error([](json& d) { d["expect"]["naive"]["150"] = "ok"; }),
                  {"$.expect.naive[\"150\"]: \"150\" is not a value of $.sweep.values (did you "
                   "mean \"100\"?); values: 100, 500, 1500"});
  expect_contains(error([](json& d) {
                    d["sweep_point"] =
                        json::parse(R"({"group": "x", "parameter": "pause_ms", "value": 1})");
                  }),
                  {"$.sweep_point: not allowed together with \"sweep\""});
}

// A value is checked by the field it is written to, with that field's own message, and the
// message says which sweep point it came from; so is a point's name.
TEST(ScenarioLoaderTest, GeneralSweepValueIsCheckedByItsField) {
  const auto error = [](const std::function<void(json&)>& edit) {
    return expand_error_after(pause_sweep_document(), edit);
  };
  // set_value: value `index` replaced, with an expectation keyed by it.
  const auto set_value = [](json& d, std::size_t index, const json& value) {
    d["sweep"]["values"][index] = value;
    for (const char* variant : {"naive", "lua_owner"}) {
      json entries = json::object();
      for (const json& each : d["sweep"]["values"]) {
        entries[json::parse(each.dump()).dump()] = "any";
      }
      d["expect"][variant] = entries;
    }
  };
  expect_contains(error([&](json& d) { set_value(d, 2, 5000000); }),
                  {kFile,
                   ": $.steps[1].pause_ms: expected a duration in ms between 0 and 3600000, got "
                   "5000000 (in sweep point pause_ms = 5000000: $.sweep.values[2] written at each "
                   "pointer of $.sweep.set)"});
  expect_contains(error([&](json& d) { set_value(d, 1, 2.5); }),
                  {": $.steps[1].pause_ms: expected an integer number of milliseconds, got 2.5 "
                   "(in sweep point pause_ms = 2.5: $.sweep.values[1]"});
  expect_contains(error([&](json& d) {
                    d["sweep"]["set"] = {"/lock/ttl_ms"};
                    set_value(d, 0, 0);
                  }),
                  {": $.lock.ttl_ms: expected a duration in ms between 1 and 3600000, got 0 (in "
                   "sweep point pause_ms = 0"});
  expect_contains(error([](json& d) {
                    d["name"] = std::string(60, 'p');
                    d["sweep"]["parameter"] = "a_long_parameter_name";
                  }),
                  {": $.sweep.values[0]: the point's scenario name \"" + std::string(60, 'p') +
                   "-a_long_parameter_name-100\" is longer than 80 characters"});
}

// The singular parse refuses a sweep: it would silently drop all but one point.
TEST(ScenarioLoaderTest, ParseScenarioRefusesSweep) {
  EXPECT_EQ(error_for(sweep_document()),
            std::string(kFile) +
                ": $.sweep: a sweep expands into several scenarios; load it with load_scenarios");
}

// Free text copied into every report is capped: a description of 10000 characters and a claim of
// 2000 load, one more character is an error naming the path, the cap and the length.
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

TEST(ScenarioLoaderTest, DescriptionAndClaimAreCapped) {
  json document = workload_document();
  document["description"] = std::string(10000, 'd');
  document["source"]["claim"] = std::string(2000, 'c');
  EXPECT_EQ(parse_scenario(document, kFile, kVariants).description.size(), 10000u);
  document["description"] = std::string(10001, 'd');
  expect_contains(error_for(document), {"$.description: expected a string of at most 10000 "
                                        "characters, got 10001 characters"});
  document = workload_document();
  document["source"]["claim"] = std::string(2001, 'c');
  expect_contains(error_for(document), {"$.source.claim: expected a string of at most 2000 "
                                        "characters, got 2001 characters"});
}

// Scenario files on disk, in a fresh directory per test.
class ScenarioFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    directory_ = std::filesystem::temp_directory_path() /
                 ("locksim-scenario-test-" + std::to_string(::getpid()) + "-" + info->name());
    std::filesystem::remove_all(directory_);
    std::filesystem::create_directories(directory_);
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }

  std::filesystem::path write(const std::string& name, const std::string& text) {
    const std::filesystem::path path = directory_ / name;
    std::ofstream(path) << text;
    return path;
  }

  std::filesystem::path write_scenario(const std::string& file_name, const std::string& name) {
    json document = workload_document();
    document["name"] = name;
    return write(file_name, document.dump(2));
  }

  std::string load_error(const std::filesystem::path& path) {
    try {
      load_scenarios({path}, kVariants);
    } catch (const InputError& error) {
      return error.what();
    }
    return "";
  }

  std::filesystem::path directory_;
};

// A syntax error names the file and the line and column where parsing stopped.
TEST_F(ScenarioFilesTest, SyntaxErrorNamesLineAndColumn) {
  const auto path =
      write("broken.json", "{\n  \"name\": \"x\",\n  \"variants\": [\"naive\",]\n}\n");
  try {
    load_scenario(path, kVariants);
    FAIL() << "no InputError";
  } catch (const InputError& error) {
    expect_contains(error.what(), {path.string() + ": line 3, column 24: invalid JSON"});
  }
}

// A key given twice in one object is an error, not a silent "last one wins".
TEST_F(ScenarioFilesTest, DuplicateJsonKeyIsRejected) {
  const auto path = write("twice.json", R"({"lock": {"ttl_ms": 5, "ttl_ms": 6}})");
  try {
    load_scenario(path, kVariants);
    FAIL() << "no InputError";
  } catch (const InputError& error) {
    expect_contains(error.what(), {path.string() + ": $.lock.ttl_ms: duplicate key"});
  }
}

// A scenario file over the size cap, or nested too deep, or with a number beyond a double, is
// refused with the file and the reason; none of them aborts or exhausts memory.
TEST_F(ScenarioFilesTest, HostileFilesAreInputErrors) {
  const auto huge = write("huge.json", "{\"description\": \"" + std::string(2 << 20, 'x') + "\"}");
  expect_contains(load_error(huge), {huge.string() + ": 2097171 bytes is larger than the limit for "
                                                     "a scenario file (1048576 bytes)"});
  const auto deep = write("deep.json", std::string(100000, '[') + std::string(100000, ']'));
  expect_contains(load_error(deep), {deep.string() + ": $[0][0]", "nested more than 64 levels"});
  const auto overflow = write("overflow.json", R"({"name": 1e400})");
  expect_contains(load_error(overflow),
                  {overflow.string() + ": line 1, column 10: number 1e400 is out of range"});
  const auto fifo = directory_ / "fifo.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expect_contains(load_error(fifo), {fifo.string() + ": not a regular file (a FIFO)"});
}

// A missing file is an InputError naming it.
TEST_F(ScenarioFilesTest, MissingFileIsInputError) {
  const auto path = directory_ / "absent.json";
  try {
    load_scenario(path, kVariants);
    FAIL() << "no InputError";
  } catch (const InputError& error) {
    expect_contains(error.what(), {path.string() + ": cannot open ("});
  }
  EXPECT_THROW(load_scenarios({path}, kVariants), InputError);
}

// A directory loads its *.json files in name order, skipping other files; a single file works too.
TEST_F(ScenarioFilesTest, DirectoryLoadsJsonFilesInNameOrder) {
  write_scenario("b.json", "second");
  write_scenario("a.json", "first");
  write_scenario("c.json", "third");
  write("notes.txt", "not a scenario");
  const auto extra = write_scenario("extra.json.disabled", "extra");
  const std::vector<Scenario> all = load_scenarios({directory_}, kVariants);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].name, "first");
  EXPECT_EQ(all[1].name, "second");
  EXPECT_EQ(all[2].name, "third");
  EXPECT_EQ(all[0].file, (directory_ / "a.json").string());
  EXPECT_EQ(load_scenarios({extra}, kVariants).at(0).name, "extra");
}

// A directory without scenarios is an error rather than a silently empty run.
TEST_F(ScenarioFilesTest, EmptyDirectoryIsRejected) {
  write("notes.txt", "not a scenario");
  try {
    load_scenarios({directory_}, kVariants);
    FAIL() << "no InputError";
  } catch (const InputError& error) {
    expect_contains(error.what(), {directory_.string(), "no *.json scenario files"});
  }
}

// Two files defining the same scenario name are both named in the error.
TEST_F(ScenarioFilesTest, DuplicateNamesAcrossFilesAreRejected) {
  const auto first = write_scenario("a.json", "same");
  const auto second = write_scenario("b.json", "same");
  try {
    load_scenarios({directory_}, kVariants);
    FAIL() << "no InputError";
  } catch (const InputError& error) {
    expect_contains(error.what(), {second.string() + ": $.name: scenario name \"same\"",
                                   "already used by " + first.string()});
  }
}

// load_scenarios expands a sweep file in place; load_scenario refuses it.
TEST_F(ScenarioFilesTest, SweepFileExpandsWhenLoaded) {
  write_scenario("a.json", "first");
  const auto sweep = write("b.json", sweep_document().dump(2));
  const std::vector<Scenario> all = load_scenarios({directory_}, kVariants);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].name, "first");
  EXPECT_EQ(all[1].name, "doc-e-ttl-ratio-ttl-x0.5");
  EXPECT_EQ(all[3].name, "doc-e-ttl-ratio-ttl-x30");
  EXPECT_EQ(all[3].file, sweep.string());
  try {
    load_scenario(sweep, kVariants);
    FAIL() << "no InputError";
  } catch (const InputError& error) {
    expect_contains(error.what(), {sweep.string() + ": $.sweep: a sweep expands into several"});
  }
}

// An expanded name is checked for duplicates like any other.
TEST_F(ScenarioFilesTest, DuplicateExpandedNameIsRejected) {
  write("a.json", sweep_document().dump(2));
  const auto plain = write_scenario("b.json", "doc-e-ttl-ratio-ttl-x2");
  try {
    load_scenarios({directory_}, kVariants);
    FAIL() << "no InputError";
  } catch (const InputError& error) {
    expect_contains(error.what(),
                    {plain.string() + ": $.name: scenario name \"doc-e-ttl-ratio-ttl-x2\""});
  }
}

// "client_mode": "event_loop" loads, is resolved, and what it cannot run is refused by path.
TEST(ScenarioLoaderTest, EventLoopClientMode) {
  json document = workload_document();
  document["workload"]["crash_probability"] = 0;
  EXPECT_FALSE(parse_scenario(document, kFile, kVariants).workload->event_loop);
  document["workload"]["client_mode"] = "event_loop";
  const Scenario loop = parse_scenario(document, kFile, kVariants);
  EXPECT_TRUE(loop.workload->event_loop);
  EXPECT_EQ(loop.resolved["workload"]["client_mode"], "event_loop");
  EXPECT_EQ(parse_scenario(loop.resolved, kFile, kVariants).resolved, loop.resolved);
  expect_contains(error_after(document, [](json& d) { d["workload"]["client_mode"] = "fibers"; }),
                  {"$.workload.client_mode: unknown client mode \"fibers\"",
                   "allowed: threads, event_loop"});
  expect_contains(error_after(document,
                              [](json& d) { d["lock"] = {{"wait", {{"strategy", "pubsub"}}}}; }),
                  {"$.lock.wait.strategy: \"pubsub\" blocks a connection per waiter"});
  expect_contains(error_after(document, [](json& d) { d["workload"]["lose_probability"] = 0.5; }),
                  {"$.workload.lose_probability: expected 0"});
}

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
