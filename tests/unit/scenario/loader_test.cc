// loader_test: top-level fields, the resolved form, error wording and files on disk load or fail.
#include "sim/scenario/loader.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "tests/unit/scenario/scenario_test_support.h"

namespace locksim {
namespace {

using nlohmann::json;
using test::error_after;
using test::error_for;
using test::expect_contains;
using test::kFile;
using test::kVariants;
using test::scripted_document;
using test::sweep_document;
using test::workload_document;

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

// check.barging: off unless asked (and then absent from the resolved form, so older resolved
// scenarios read the same); on, it survives a reload.
TEST(ScenarioLoaderTest, CheckBargingIsOptInAndResolved) {
  const Scenario off = parse_scenario(scripted_document(), kFile, kVariants);
  EXPECT_FALSE(off.check.barging);
  EXPECT_FALSE(off.resolved["check"].contains("barging"));
  json document = scripted_document();
  document["check"] = {{"barging", true}};
  const Scenario on = parse_scenario(document, kFile, kVariants);
  EXPECT_TRUE(on.check.barging);
  EXPECT_EQ(on.resolved["check"]["barging"], true);
  EXPECT_TRUE(parse_scenario(on.resolved, kFile, kVariants).check.barging);
  expect_contains(error_after(scripted_document(),
                              [](json& d) {
                                d["check"] = {{"barging", 1}};
                              }),
                  {kFile, "$.check.barging"});
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

// An unknown variant suggests the nearest known one and lists them all.
TEST(ScenarioLoaderTest, UnknownVariantSuggestsKnownVariant) {
  expect_contains(error_after(scripted_document(), [](json& d) { d["variants"][1] = "lua_ownr"; }),
                  {kFile,
                   "$.variants[1]: unknown variant \"lua_ownr\" (did you mean \"lua_owner\"?); "
                   "known: naive, set_nx_ex, lua_owner"});
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

// The singular parse refuses a sweep: it would silently drop all but one point.
TEST(ScenarioLoaderTest, ParseScenarioRefusesSweep) {
  EXPECT_EQ(error_for(sweep_document()),
            std::string(kFile) +
                ": $.sweep: a sweep expands into several scenarios; load it with load_scenarios");
}

// Free text copied into every report is capped: a description of 10000 characters and a claim of
// 2000 load, one more character is an error naming the path, the cap and the length.
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

}  // namespace
}  // namespace locksim
