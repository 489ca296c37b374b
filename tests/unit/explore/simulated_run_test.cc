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
#include <set>
#include <string>
#include <vector>

#include "sim/checker/check.h"
#include "sim/history/jsonl.h"
#include "sim/lock/registry.h"
#include "sim/report/run_record.h"
#include "sim/scenario/loader.h"
#include "sim/explore/simulated_run.h"

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

// Proves a seed picks its timing profile (seed % 4): a slow network's round trip is at least two
// 200 µs hops, a fast machine's at most two 40 µs ones, and the run's notes name the profile.
TEST(SimulatedRun, TheSeedPicksATimingProfile) {
  const Scenario scenario =
      load_scenario(kScenarios / "crash-after-renewals.json", variant_names());
  std::set<std::string> names;
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    const SimTiming timing = timing_of(seed);
    EXPECT_STREQ(timing.name, timing_of(seed + 4).name);
    names.insert(timing.name);
    StopSignal stop;
    SimulatedRun run =
        run_simulated(scenario, *find_variant("lua_owner_renew"), seed, stop, "locksim:t:");
    EXPECT_NE(
        std::find(run.outcome.notes.begin(), run.outcome.notes.end(),
                  "simulated timing (seed " + std::to_string(seed) + "): " + describe(timing)),
        run.outcome.notes.end());
    int acquires = 0;
    for (const Event& e : run.outcome.history.events) {
      if (e.f != Op::kAcquire || e.type != EventType::kOk || e.acquire().attempts != 1) continue;
      const Nanos round_trip = e.time_ns - e.acquire().sent_ns;
      EXPECT_GE(round_trip, 2 * timing.link.min_ns) << timing.name;
      EXPECT_LE(round_trip, 2 * timing.link.max_ns + 10'000) << timing.name;
      ++acquires;
    }
    EXPECT_GT(acquires, 0);
  }
  EXPECT_EQ(names.size(), static_cast<std::size_t>(kTimingProfiles));
  EXPECT_LT(timing_of(1).link.max_ns, timing_of(2).link.min_ns);  // fast vs slow: no overlap
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
      // Seeds 0 to 3: each of the simulator's timing profiles.
      for (std::uint64_t seed = 0; seed < static_cast<std::uint64_t>(kTimingProfiles); ++seed) {
        StopSignal stop;
        SimulatedRun run = run_simulated(scenario, *variant, seed, stop, "locksim:t:" + name + ":");
        ASSERT_TRUE(run.outcome.harness_error.empty())
            << scenario.name << " / " << name << ": " << run.outcome.harness_error;
        const CheckResult result = check_history(run.outcome.history, check_options(scenario));
        EXPECT_TRUE(matches_expectation(expected, result))
            << scenario.name << " / " << name << " (seed " << seed << ", "
            << describe(timing_of(seed)) << "): observed " << describe_observation(result);
      }
      ++ran;
    }
  }
  std::cout << ran << " outcomes ran on the simulator, " << refused << " refused\n";
  EXPECT_GT(ran, 20) << "refused " << refused;
}

}  // namespace
}  // namespace locksim
