// simulated_run_test: scenarios of the catalogue on the simulator: the same seed gives the same
// history byte for byte, another seed another schedule, and every outcome the simulator runs
// meets the expectation the scenario states for the real server.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "sim/checker/check.h"
#include "sim/history/jsonl.h"
#include "sim/lock/registry.h"
#include "sim/report/run_record.h"
#include "sim/scenario/loader.h"
#include "sim/simulate/sim_runtime.h"

namespace locksim {
namespace {

namespace fs = std::filesystem;

const fs::path kScenarios = fs::path(LOCKSIM_TEST_SOURCE_DIR) / "scenarios";

std::string history_text(const History& history) {
  std::string text;
  for (std::size_t i = 0; i < history.events.size(); ++i) {
    text += event_to_json_line(history, history.events[i], i) + "\n";
  }
  return text;
}

std::string simulate(const std::string& file, const std::string& variant, std::uint64_t seed) {
  const Scenario scenario = load_scenario(kScenarios / file, variant_names());
  StopSignal stop;
  SimulatedRun run =
      run_simulated(scenario, *find_variant(variant), seed, stop, "locksim:test:" + variant + ":");
  EXPECT_TRUE(run.outcome.harness_error.empty()) << run.outcome.harness_error;
  EXPECT_GT(run.outcome.history.events.size(), 4U);
  return history_text(run.outcome.history);
}

TEST(SimulatedRun, TheSameSeedGivesTheSameHistoryByteForByte) {
  // A workload (seeded work and rest, four clients contending) and a scripted scenario with a
  // crash and a renewing lock.
  for (const auto& [file, variant] : std::vector<std::pair<std::string, std::string>>{
           {"no-fault-contention.json", "lua_owner"},
           {"crash-after-renewals.json", "lua_owner_renew"}}) {
    const std::string first = simulate(file, variant, 42);
    const std::string second = simulate(file, variant, 42);
    EXPECT_EQ(first, second) << file;
    EXPECT_NE(first, simulate(file, variant, 43)) << file << ": another seed, another schedule";
  }
}

// with_libraries: the built-in variants and every library the catalogue names ("lib:..."), which
// `locksim run` registers from adapters/libraries.json; the simulator refuses them anyway.
std::vector<std::string> with_libraries() {
  std::vector<std::string> names = variant_names();
  const std::regex library(R"re("(lib:[a-z0-9-]+)")re");
  for (const fs::directory_entry& entry : fs::directory_iterator(kScenarios)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (auto it = std::sregex_iterator(text.begin(), text.end(), library);
         it != std::sregex_iterator(); ++it) {
      if (std::find(names.begin(), names.end(), (*it)[1].str()) == names.end()) {
        names.push_back((*it)[1].str());
      }
    }
  }
  return names;
}

TEST(SimulatedRun, TheCatalogueMeetsItsExpectationsOnTheSimulator) {
  const std::vector<Scenario> scenarios = load_scenarios({kScenarios}, with_libraries());
  int ran = 0;
  int refused = 0;
  for (const Scenario& scenario : scenarios) {
    for (const auto& [name, expected] : scenario.expect) {
      const LockVariant* variant = find_variant(name);
      if (variant == nullptr) continue;  // a library: added by `run --library`
      if (!simulator_refusal(scenario, *variant).empty()) {
        ++refused;
        continue;
      }
      StopSignal stop;
      SimulatedRun run = run_simulated(scenario, *variant, 1, stop, "locksim:t:" + name + ":");
      ASSERT_TRUE(run.outcome.harness_error.empty())
          << scenario.name << " / " << name << ": " << run.outcome.harness_error;
      const CheckResult result = check_history(run.outcome.history, check_options(scenario));
      EXPECT_TRUE(matches_expectation(expected, result))
          << scenario.name << " / " << name << ": observed " << describe_observation(result);
      ++ran;
    }
  }
  std::cout << ran << " outcomes ran on the simulator, " << refused << " refused\n";
  EXPECT_GT(ran, 20) << "refused " << refused;
}

}  // namespace
}  // namespace locksim
