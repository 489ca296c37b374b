// scenario_loader_test: valid scenarios load with their values and defaults, and every kind of bad
// input is rejected with a message naming the file, the JSON path and what was expected.
#include <gtest/gtest.h>
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
       "allowed: ok, mutex_violation, deadlock, resource_corrupted, unknown"});
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
      error_after(scripted_document(), [](json& d) { d["lock"]["wait"]["strategy"] = "notify"; }),
      {"$.lock.wait.strategy: unknown strategy \"notify\"; allowed: poll"});
  expect_contains(error_after(scripted_document(), [](json& d) { d["time_limit_ms"] = 999; }),
                  {"$.time_limit_ms: expected a duration in ms between 1000 and 3600000, got 999"});
  expect_contains(error_after(scripted_document(), [](json& d) { d["steps"][0]["do"] = "aquire"; }),
                  {"$.steps[0].do: unknown action \"aquire\" (did you mean \"acquire\"?)"});
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

}  // namespace
}  // namespace locksim
