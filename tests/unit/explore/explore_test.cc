// explore_test: the schedules `locksim explore` draws, the search over them, and the shrinker,
// on the simulator: drawn scenarios are valid and reproducible, a correct lock shows nothing
// under crashes, the failing built-ins show their bug, workers do not change what is found, and
// a shrunk scenario is minimal (removing any one step loses the finding).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "sim/explore/exercise.h"
#include "sim/explore/judge.h"
#include "sim/explore/schedule.h"
#include "sim/explore/search.h"
#include "sim/explore/shrink.h"
#include "sim/lock/registry.h"
#include "sim/lock/script_variant.h"
#include "sim/scenario/loader.h"

namespace locksim {
namespace {

using Json = nlohmann::json;

const LockVariant& variant(const std::string& name) {
  const LockVariant* v = find_variant(name);
  EXPECT_NE(v, nullptr) << name;
  return *v;
}

// fault_words: what an exercise exercised, without the swarm's draw and the queue's shape.
std::set<std::string> fault_words(const Exercise& exercise) {
  std::set<std::string> words;
  for (const std::string& word : exercise.faults) {
    if (word.rfind("swarm: ", 0) != 0 && word != "waiter queued while held") words.insert(word);
  }
  return words;
}

std::set<std::string> fault_words(const LockVariant& lock, const ExerciseOptions& options,
                                  std::uint64_t seed) {
  ExerciseDrawer drawer(lock, options);
  return fault_words(drawer.draw(seed));
}

TEST(Exercise, TheSameSeedDrawsTheSameScenarioAndEveryOneLoads) {
  const ExerciseOptions options;
  std::set<std::string> distinct;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    const Json doc = draw_exercise(variant("get_then_del"), options, seed);
    EXPECT_EQ(doc, draw_exercise(variant("get_then_del"), options, seed));
    distinct.insert(doc.at("steps").dump());
    EXPECT_NO_THROW(parse_scenario(doc, "drawn", {"get_then_del"})) << doc.dump();
    const std::set<std::string> words = fault_words(variant("get_then_del"), options, seed);
    EXPECT_LE(words.size(), static_cast<std::size_t>(options.max_faults)) << doc.dump();
    // Each client acquires before it works, and releases only what it acquired; a server fault
    // comes with a topology of the lock's own.
    std::map<std::string, bool> holding;
    for (const Json& step : doc.at("steps")) {
      if (!step.contains("client")) {
        EXPECT_EQ(doc.value("topology", ""), "single") << doc.dump();
        continue;
      }
      const std::string client = step.at("client");
      const std::string action = step.at("do");
      if (action == "acquire") {
        EXPECT_FALSE(holding[client]) << doc.dump();
        holding[client] = true;
      } else {
        EXPECT_TRUE(holding[client]) << action << " without holding: " << doc.dump();
        if (action == "release" || action == "crash") holding[client] = false;
      }
    }
  }
  EXPECT_GT(distinct.size(), 150U);
}

// Proves a schedule drawn in memory runs exactly as its written document: for each kind of lock
// (one server, a replica, Redlock, a queue), under every fault of the menu, the history of the
// drawn Scenario and that of the document parsed again are the same event for event, so what
// explore writes for a finding (and --seed replays) is what it ran.
TEST(Exercise, ADrawnScheduleRunsAsItsDocument) {
  ExerciseOptions options;
  options.max_faults = 3;
  for (const std::string name :
       {"get_then_del", "lua_owner_wait", "redlock", "lua_fair_queue", "set_nx_ex"}) {
    ExerciseDrawer drawer(variant(name), options);
    for (std::uint64_t seed = 0; seed < 60; ++seed) {
      const Exercise& drawn = drawer.draw(seed);
      const Json document = drawer.document(drawn);
      const ScheduleRun in_memory = run_schedule(drawn.scenario, variant(name), seed);
      const ScheduleRun parsed = run_schedule(document, variant(name), seed);
      ASSERT_EQ(in_memory.error, "") << name << " " << seed;
      ASSERT_EQ(parsed.error, "") << document.dump();
      EXPECT_EQ(in_memory.signatures, parsed.signatures) << document.dump();
      EXPECT_EQ(in_memory.verdict, parsed.verdict) << document.dump();
      ASSERT_EQ(in_memory.history.events.size(), parsed.history.events.size()) << document.dump();
      for (std::size_t i = 0; i < parsed.history.events.size(); ++i) {
        const Event& a = in_memory.history.events[i];
        const Event& b = parsed.history.events[i];
        EXPECT_TRUE(a.time_ns == b.time_ns && a.type == b.type && a.f == b.f &&
                    a.client == b.client)
            << name << " seed " << seed << " event " << i;
      }
    }
  }
}

// Proves an exercise is its choices: the choices a draw made, replayed, draw it again; with one
// changed they draw a variation that still loads and runs (what steering mutates).
TEST(Exercise, ChoicesReplayedDrawTheSameExercise) {
  ExerciseDrawer drawer(variant("get_then_del"), ExerciseOptions{});
  int varied = 0;
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    Choices first(seed);
    const Json original = drawer.document(drawer.draw(first, seed));
    Choices again(seed + 1000, first.drawn());
    EXPECT_EQ(drawer.document(drawer.draw(again, seed)), original);
    std::vector<std::uint64_t> mutated = first.drawn();
    mutated[mutated.size() / 2] ^= 0x9e3779b97f4a7c15ULL;
    Choices variation(seed + 2000, mutated);
    const Json other = drawer.document(drawer.draw(variation, seed));
    EXPECT_NO_THROW(parse_scenario(other, "drawn", {"get_then_del"})) << other.dump();
    if (other != original) ++varied;
  }
  EXPECT_GT(varied, 25);
}

// Proves the swarm: schedules differ in how many kinds of the menu are on (none to all), and a
// kind can strike several times in one schedule.
TEST(Exercise, TheSwarmDrawsWhichKindsAreOn) {
  ExerciseOptions options;
  options.max_faults = 3;
  ExerciseDrawer drawer(variant("get_then_del"), options);
  std::set<std::string> swarms;
  int several_of_a_kind = 0;
  for (std::uint64_t seed = 0; seed < 400; ++seed) {
    const Exercise& drawn = drawer.draw(seed);
    std::map<std::string, int> kinds;
    for (const std::string& word : drawn.faults) {
      if (word.rfind("swarm: ", 0) == 0) swarms.insert(word);
    }
    for (const Step& step : drawn.scenario.steps) {
      if (step.action == Step::Action::kPause) ++kinds["pause"];
      if (step.action == Step::Action::kPartition) ++kinds["partition"];
      if (step.action == Step::Action::kCrash) ++kinds["crash"];
    }
    for (const auto& [kind, count] : kinds) several_of_a_kind += count > 1 ? 1 : 0;
  }
  EXPECT_TRUE(swarms.count("swarm: 0 kinds on")) << swarms.size();
  EXPECT_TRUE(swarms.count("swarm: 1 kind on"));
  EXPECT_GE(swarms.size(), 6u);
  EXPECT_GT(several_of_a_kind, 10);
}

// Proves a lock with a queue gets queue schedules: waiters that ask while the lock is held,
// waiters that die or are cut off while queued, and barging checked; a lock without one none.
TEST(Exercise, ALockWithAQueueGetsQueueSchedules) {
  ExerciseDrawer queue(variant("lua_fair_queue"), ExerciseOptions{});
  std::set<std::string> seen;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    const Exercise& drawn = queue.draw(seed);
    EXPECT_TRUE(drawn.scenario.check.barging);
    for (const std::string& word : drawn.faults) seen.insert(word);
  }
  EXPECT_TRUE(seen.count("waiter queued while held"));
  EXPECT_TRUE(seen.count("dead_waiter"));
  EXPECT_TRUE(seen.count("cut_waiter"));
  ExerciseDrawer plain(variant("lua_owner"), ExerciseOptions{});
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    const Exercise& drawn = plain.draw(seed);
    EXPECT_FALSE(drawn.scenario.check.barging);
    for (const std::string& word : drawn.faults) {
      EXPECT_TRUE(word != "dead_waiter" && word != "cut_waiter" &&
                  word != "waiter queued while held")
          << word;
    }
  }
}

// Proves a multi-server lock's schedules run on Redlock's five servers, with the server faults of
// the menu, a node killed at most once per schedule, and that every one of them runs.
TEST(Exercise, RedlockIsDrawnOnFiveServersWithServerFaults) {
  ExerciseOptions options;
  options.faults = {ExerciseFault::kRestart, ExerciseFault::kClockJump, ExerciseFault::kNodeDown};
  options.max_faults = 3;
  std::set<std::string> seen;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    const Json doc = draw_exercise(variant("redlock"), options, seed);
    EXPECT_EQ(doc.at("topology"), "redlock_5");
    std::set<std::string> killed;
    for (const Json& step : doc.at("steps")) {
      if (step.at("do") == "kill_server") {
        EXPECT_TRUE(killed.insert(step.at("server").get<std::string>()).second) << doc.dump();
      }
    }
    for (const std::string& fault : fault_words(variant("redlock"), options, seed)) {
      seen.insert(fault);
    }
    if (seed < 40) {
      const ScheduleRun run = run_schedule(doc, variant("redlock"), seed);
      EXPECT_EQ(run.error, "") << doc.dump();
    }
  }
  // One node, or aimed at a majority of the five (a node down: two, a majority still stands).
  EXPECT_EQ(seen,
            (std::set<std::string>{"clock_jump", "clock_jump on a majority", "node_down",
                                   "node_down on two nodes", "restart", "restart on a majority"}));
  // A one-server lock gets a topology only with a server fault.
  EXPECT_FALSE(
      draw_exercise(variant("lua_owner"), ExerciseOptions{.faults = {ExerciseFault::kCrash}}, 1)
          .contains("topology"));
}

// Proves the schedules draw the faults of their menu and no other: over 100 seeds every kind of
// the menu is drawn at least once, and nothing outside it (a draw that never drew fails too).
TEST(Exercise, TheMenuIsRespected) {
  const std::vector<std::set<ExerciseFault>> menus = {
      {ExerciseFault::kCrash},
      {ExerciseFault::kPause, ExerciseFault::kLostReply, ExerciseFault::kPartition}};
  for (const std::set<ExerciseFault>& menu : menus) {
    ExerciseOptions options;
    options.faults = menu;
    options.max_faults = 2;
    std::set<std::string> expected;
    for (const ExerciseFault fault : menu) expected.insert(std::string(to_string(fault)));
    std::set<std::string> drawn;
    for (std::uint64_t seed = 0; seed < 100; ++seed) {
      for (const std::string& fault : fault_words(variant("get_then_del"), options, seed)) {
        drawn.insert(fault);
      }
    }
    EXPECT_EQ(drawn, expected);
  }
}

// Every checkpoint a built-in's source reaches is one it declares, and the other way round.
TEST(Exercise, CheckpointsAreTheOnesTheSourcesReach) {
  const std::filesystem::path lock = std::filesystem::path(LOCKSIM_TEST_SOURCE_DIR) / "sim/lock";
  const std::regex reached(R"re(context\.(at|after_busy)\("([a-z_]+)"\))re");
  for (const std::string& name : variant_names()) {
    const std::filesystem::path source = lock / (name + ".cc");
    if (!std::filesystem::exists(source)) continue;
    std::ifstream in(source);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::set<std::string> in_source;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), reached);
         it != std::sregex_iterator(); ++it) {
      in_source.insert((*it)[2].str());
    }
    std::set<std::string> declared;
    for (const auto& site : variant(name).checkpoints()) declared.insert(std::string(site.point));
    EXPECT_EQ(in_source, declared) << name;
  }
}

ExploreSummary explore_quietly(const std::string& name, std::set<ExerciseFault> faults,
                               std::uint64_t schedules, int jobs = 1) {
  ExploreTarget target;
  target.variant = &variant(name);
  target.exercise.faults = std::move(faults);
  StopSignal stop;
  return explore(target, ExploreBudget{0, schedules, 0, jobs}, stop);
}

// Proves steering's mechanics: schedules that covered something new are kept, every other one is
// a variation of a kept one, and a finding first shown by a variation carries the document that
// ran, which shows it again under its seed (a variation's seed alone does not draw it).
TEST(Explore, SteeringKeepsNewCoverageAndWritesItsVariations) {
  ExploreTarget target;
  target.variant = &variant("get_then_del");
  ExploreBudget budget{0, 600, 0, 1};
  budget.steer = true;
  StopSignal stop;
  const ExploreSummary summary = explore(target, budget, stop);
  EXPECT_GT(summary.kept, 3U);
  EXPECT_GT(summary.variations, 200U);
  ASSERT_FALSE(summary.findings.empty());
  int steered = 0;
  for (const auto& [signature, found] : summary.findings) {
    for (const auto& [seed, document] : found.steered) {
      EXPECT_TRUE(std::count(found.seeds.begin(), found.seeds.end(), seed)) << seed;
      const ScheduleRun run = run_schedule(document, variant("get_then_del"), seed, false);
      EXPECT_TRUE(run.signatures.count(signature)) << signature << " seed " << seed;
      ++steered;
    }
  }
  EXPECT_GT(steered, 0);
  // Without --steer no schedule is a variation.
  const ExploreSummary plain = explore(target, ExploreBudget{0, 600, 0, 1}, stop);
  EXPECT_EQ(plain.variations, 0U);
  for (const auto& [signature, found] : plain.findings) EXPECT_TRUE(found.steered.empty());
}

TEST(Explore, ACorrectLockShowsNothingUnderCrashes) {
  for (const char* name : {"lua_owner", "lua_owner_renew", "lua_acquire_owner"}) {
    const ExploreSummary summary =
        explore_quietly(name, {ExerciseFault::kCrash, ExerciseFault::kCheckpoint}, 300);
    EXPECT_EQ(summary.schedules, 300U);
    EXPECT_TRUE(summary.errors.empty()) << summary.errors.front().why;
    EXPECT_TRUE(summary.findings.empty()) << name << ": " << summary.findings.begin()->first;
    EXPECT_GT(summary.exercised.count("crash") ? summary.exercised.at("crash") : 0U, 50U);
  }
}

// Proves every drawn schedule on a Redis Cluster with restarts and failovers runs: p1 is killed
// at most once per schedule (a failover that kills it and a restart drawn for another cycle
// interleaved their kills: "p1 is already down", 3 of these 3,000 schedules could not run).
TEST(Explore, ARestartAndAFailoverNeverKillTheSamePrimaryTwice) {
  const ExploreSummary summary =
      explore_quietly("hash_reentrant", {ExerciseFault::kRestart, ExerciseFault::kFailover}, 3000);
  EXPECT_EQ(summary.schedules, 3000U);
  EXPECT_EQ(summary.could_not_run, 0U)
      << (summary.errors.empty() ? std::string() : summary.errors.front().why);
  EXPECT_GT(summary.exercised.count("failover (p1 killed, r1 elected)")
                ? summary.exercised.at("failover (p1 killed, r1 elected)")
                : 0U,
            100U);
}

// Proves a lock that uses what the model lacks (LPOS) is neither judged nor passed: every
// schedule could not run, with the reason, and nothing is a finding of the lock.
TEST(Explore, ALockTheModelCannotRunIsNeitherAFindingNorAnOk) {
  ScriptVariantSpec spec;
  spec.file = "uses_lpos.json";
  spec.name = "uses_lpos";
  spec.acquire = {
      "redis.call('LPOS', KEYS[1] .. ':seen', ARGV[1]) "
      "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end "
      "return 0",
      {"{key}"},
      {"{token}", "{ttl_ms}"}};
  spec.release = {
      "if redis.call('GET', KEYS[1]) == ARGV[1] then "
      "return redis.call('DEL', KEYS[1]) end return 0",
      {"{key}"},
      {"{token}"}};
  const std::unique_ptr<const LockVariant> lock = make_script_variant(spec);
  ExploreTarget target;
  target.variant = lock.get();
  StopSignal stop;
  const ExploreSummary summary = explore(target, ExploreBudget{0, 40, 0, 1}, stop);
  EXPECT_EQ(summary.schedules, 40U);
  EXPECT_EQ(summary.could_not_run, 40U);
  EXPECT_TRUE(summary.findings.empty()) << summary.findings.begin()->first;
  ASSERT_FALSE(summary.errors.empty());
  EXPECT_EQ(summary.errors.front().seed, 0U);
  EXPECT_NE(summary.errors.front().why.find("lacks what this lock uses (unknown command 'LPOS')"),
            std::string::npos)
      << summary.errors.front().why;
}

TEST(Explore, TheFailingBuiltInsShowTheirBug) {
  const std::set<ExerciseFault> all = {ExerciseFault::kCrash, ExerciseFault::kCheckpoint,
                                       ExerciseFault::kPause, ExerciseFault::kOverrun};
  EXPECT_TRUE(explore_quietly("naive", all, 300).findings.count("deadlock (never_recovered)"));
  EXPECT_TRUE(explore_quietly("setnx_then_expire", {ExerciseFault::kCheckpoint}, 300)
                  .findings.count("deadlock (never_recovered)"));
  EXPECT_TRUE(
      explore_quietly("set_nx_ex", all, 300).findings.count("mutex_violation (stale_release)"));
  EXPECT_TRUE(explore_quietly("get_then_del", {ExerciseFault::kCheckpoint}, 300)
                  .findings.count("mutex_violation (stale_release)"));
}

TEST(Explore, WorkersDoNotChangeWhatIsFound) {
  const std::set<ExerciseFault> all = {ExerciseFault::kCrash, ExerciseFault::kPause};
  const ExploreSummary one = explore_quietly("set_nx_ex", all, 400, 1);
  const ExploreSummary two = explore_quietly("set_nx_ex", all, 400, 2);
  ASSERT_FALSE(one.findings.empty());
  ASSERT_EQ(one.findings.size(), two.findings.size());
  for (const auto& [signature, found] : one.findings) {
    ASSERT_TRUE(two.findings.count(signature)) << signature;
    EXPECT_EQ(two.findings.at(signature).first_seed, found.first_seed) << signature;
    EXPECT_EQ(two.findings.at(signature).schedules, found.schedules) << signature;
  }
}

// removing_any_step_loses: the shrunk scenario is 1-minimal under the seeds it was shrunk with.
void expect_minimal(const ShrinkResult& minimal, const LockVariant& lock,
                    const std::string& signature, std::uint64_t seed) {
  ASSERT_FALSE(minimal.seeds.empty()) << "the minimal scenario no longer shows " << signature;
  EXPECT_GE(static_cast<int>(minimal.seeds.size()), minimal.required_seeds);
  const Json& steps = minimal.document.at("steps");
  for (std::size_t i = 0; i < steps.size(); ++i) {
    Json without = minimal.document;
    without["steps"].erase(i);
    int shown = 0;
    for (std::uint64_t s = seed; s < seed + 4; ++s) {
      const ScheduleRun run = run_schedule(without, lock, s);
      if (run.error.empty() && run.signatures.count(signature) > 0) ++shown;
    }
    EXPECT_LT(shown, minimal.required_seeds)
        << "step " << i << " (" << steps[i].dump() << ") can go: " << minimal.document.dump();
  }
}

TEST(Exercise, ALockThatWaitsForAReplicaIsDrawnOnAPrimaryWithOne) {
  // lua_owner_wait's grant needs a replica's acknowledgement (WAIT): on a lone server every
  // acquire is refused, so each drawn schedule runs on a primary with a replica, and its clients
  // get the lock (40,000 of 40,000 schedules ended never_granted on one server).
  const LockVariant& waits = variant("lua_owner_wait");
  ASSERT_TRUE(waits.needs_replica());
  int granted = 0;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    const Json doc = draw_exercise(waits, ExerciseOptions{}, seed);
    EXPECT_EQ(doc.value("topology", ""), "primary_replica") << doc.dump();
    const ScheduleRun run = run_schedule(doc, waits, seed, false);
    ASSERT_EQ(run.error, "") << doc.dump();
    EXPECT_EQ(run.signatures.count("never_granted"), 0U) << seed;
    for (const Event& e : run.history.events) {
      if (e.f == Op::kAcquire && e.type == EventType::kOk) ++granted;
    }
  }
  EXPECT_GT(granted, 40);
}

TEST(Shrink, AStaleReleaseShrinksToAMinimalScenarioThatStillShowsIt) {
  const ExploreSummary summary =
      explore_quietly("set_nx_ex", {ExerciseFault::kPause, ExerciseFault::kOverrun}, 300);
  const std::string signature = "mutex_violation (stale_release)";
  ASSERT_TRUE(summary.findings.count(signature));
  ExploreTarget target;
  target.variant = &variant("set_nx_ex");
  target.exercise.faults = {ExerciseFault::kPause, ExerciseFault::kOverrun};
  const std::uint64_t seed =
      robust_seed(target, signature, summary.findings.at(signature).first_seed);
  const Json original = exercise_document(target, seed);
  const ShrinkResult minimal = shrink(original, variant("set_nx_ex"), signature, seed);
  EXPECT_LE(minimal.steps_after, minimal.steps_before);
  expect_minimal(minimal, variant("set_nx_ex"), signature, seed);
  // It is a scenario of the catalogue's format, expecting the finding itself and its clients.
  const Scenario scenario = parse_scenario(minimal.document, "minimal", {"set_nx_ex"});
  const Expectation& expected = scenario.expect.at("set_nx_ex");
  ASSERT_TRUE(expected.finding.has_value());
  EXPECT_EQ(expected.finding->signature, signature);
  EXPECT_GE(expected.finding->clients.size(), 2U);
}

TEST(Shrink, ACrashBetweenSetnxAndExpireShrinksToAFewSteps) {
  const std::string signature = "deadlock (never_recovered)";
  const ExploreSummary summary =
      explore_quietly("setnx_then_expire", {ExerciseFault::kCheckpoint}, 300);
  ASSERT_TRUE(summary.findings.count(signature));
  const std::uint64_t seed = summary.findings.at(signature).first_seed;
  ExploreTarget target;
  target.variant = &variant("setnx_then_expire");
  target.exercise.faults = {ExerciseFault::kCheckpoint};
  const ShrinkResult minimal =
      shrink(exercise_document(target, seed), variant("setnx_then_expire"), signature, seed);
  expect_minimal(minimal, variant("setnx_then_expire"), signature, seed);
  // A crashes at after_setnx while another client waits, kept out forever (the shrinker removes,
  // it does not reorder: the waiter's own cycle may stay in front).
  EXPECT_LE(minimal.steps_after, 4U) << minimal.document.dump();
  EXPECT_EQ(minimal.clients_after, 2) << minimal.document.dump();
  EXPECT_NE(minimal.document.dump().find("after_setnx"), std::string::npos);
}

// A duration the finding needs within a fifth of its value keeps a margin: A's pause, halved from
// 224 to 112 ms, outlives the 100 ms lease by 12 ms, so that its release deletes the key of the
// client that got in after the lease (B or C, polling every 5 ms), which the simulator's timing
// shows under every seed and a real machine only now and then (a pause of 104 ms shows it under 5
// of 8 seeds); the minimal scenario keeps half as much again (168 ms). (The finding is the stale
// release: an overlap needs no pause at all, as A, inside until the history ends, is inside when
// the next client enters; C takes the key after B's lease, for the release at 224 ms to find.)
TEST(Shrink, ADurationAtTheEdgeOfTheFindingKeepsAMargin) {
  const Json edge = Json::parse(R"({
    "name": "edge", "source": {"doc": "none", "claim": "an edge"},
    "variants": ["set_nx_ex"], "clients": ["A", "B", "C"],
    "lock": {"ttl_ms": 100, "acquire_timeout_ms": 1000, "reply_timeout_ms": 200,
             "wait": {"strategy": "poll", "interval_ms": 5}},
    "steps": [{"client": "A", "do": "acquire"}, {"client": "B", "do": "acquire"},
              {"client": "C", "do": "acquire"}, {"client": "A", "do": "pause", "pause_ms": 224},
              {"client": "A", "do": "release"}],
    "expect": {"set_nx_ex": "any"}})");
  const std::string signature = "stale_release";
  ASSERT_GT(run_schedule(edge, variant("set_nx_ex"), 0).signatures.count(signature), 0U);
  const ShrinkResult shrunk = shrink(edge, variant("set_nx_ex"), signature, 0);
  std::int64_t pause_ms = -1;
  for (const Json& step : shrunk.document.at("steps")) {
    if (step.value("do", "") == "pause") pause_ms = step.at("pause_ms").get<std::int64_t>();
  }
  EXPECT_GE(pause_ms, 120) << shrunk.document.dump();  // a fifth past the lease, at least
  EXPECT_LT(pause_ms, 224) << shrunk.document.dump();  // and shrunk
}

// Proves the cap of a wait for a condition is not shrunk: A's pause at after_get lasts until B is
// inside (about 100 ms here, when A's lease runs out), capped at 300 ms; halving the cap to what
// the simulator's quick timing needs (get_then_del's 160 ms) ended the pause before B got in on a
// loaded real server, and the minimal scenario then did not show its stale release there.
TEST(Shrink, TheCapOfAWaitForAConditionIsNotShrunk) {
  const Json paused = Json::parse(R"({
    "name": "capped", "source": {"doc": "none", "claim": "a capped pause"},
    "variants": ["get_then_del"], "clients": ["A", "B"],
    "lock": {"ttl_ms": 100, "acquire_timeout_ms": 1000, "reply_timeout_ms": 200,
             "wait": {"strategy": "poll", "interval_ms": 5}},
    "steps": [{"client": "A", "do": "acquire"}, {"client": "B", "do": "acquire"},
              {"client": "A", "do": "release",
               "pause_at": {"point": "after_get", "until": {"inside": "B"}, "max_ms": 300}},
              {"client": "B", "do": "work", "work_ms": 40}, {"client": "B", "do": "release"}],
    "expect": {"get_then_del": "any"}})");
  const std::string signature = "stale_release";
  ASSERT_GT(run_schedule(paused, variant("get_then_del"), 0).signatures.count(signature), 0U);
  const ShrinkResult shrunk = shrink(paused, variant("get_then_del"), signature, 0);
  std::int64_t cap_ms = -1;
  for (const Json& step : shrunk.document.at("steps")) {
    if (step.contains("pause_at")) cap_ms = step.at("pause_at").at("max_ms").get<std::int64_t>();
  }
  EXPECT_EQ(cap_ms, 300) << shrunk.document.dump();
}

// Proves the simulator's timing decides a race between two waiting clients both ways across seeds
// (its timing profiles, the drawn lateness of every sleep), and that the shrinker measures such a
// finding as racy on fresh seeds (fresh_shown < fresh_runs) rather than calling it certain from
// the seeds it was picked under; a finding that does not hang on a race shows under every one.
TEST(Shrink, FreshSeedsTellARaceFromACertainty) {
  // A's lease runs out; B and C poll for the lock; whoever gets it second has its key deleted by
  // the first one's late release (a stale release) only if C got it first.
  const Json racy = Json::parse(R"({
    "name": "race", "source": {"doc": "none", "claim": "a race"},
    "variants": ["setnx_then_expire"], "clients": ["A", "B", "C"],
    "lock": {"ttl_ms": 100, "acquire_timeout_ms": 1000, "reply_timeout_ms": 200,
             "wait": {"strategy": "poll", "interval_ms": 5}},
    "steps": [{"client": "A", "do": "acquire"}, {"client": "C", "do": "acquire"},
              {"client": "B", "do": "acquire"},
              {"client": "A", "do": "partition", "partition_ms": 226, "mode": "reset"},
              {"client": "A", "do": "release"}, {"client": "C", "do": "release"},
              {"client": "C", "do": "acquire"}, {"client": "C", "do": "release"}],
    "expect": {"setnx_then_expire": "any"}})");
  const std::string signature = "mutex_violation (stale_release)";
  int shown = 0;
  for (std::uint64_t seed = 0; seed < 32; ++seed) {
    shown += static_cast<int>(
        run_schedule(racy, variant("setnx_then_expire"), seed).signatures.count(signature));
  }
  EXPECT_GT(shown, 0);
  EXPECT_LT(shown, 32);
  const ShrinkResult shrunk =
      shrink(racy, variant("setnx_then_expire"), signature, 8, kSeedsPerCandidate, 40);
  EXPECT_EQ(shrunk.fresh_runs, kFreshSeeds);
  EXPECT_LT(shrunk.fresh_shown, kFreshSeeds);

  // A crash while holding a lock without a TTL: every schedule deadlocks.
  const Json certain = Json::parse(R"({
    "name": "certain", "source": {"doc": "none", "claim": "a certainty"},
    "variants": ["naive"], "clients": ["A", "B"],
    "lock": {"ttl_ms": 100, "acquire_timeout_ms": 1000, "reply_timeout_ms": 200,
             "wait": {"strategy": "poll", "interval_ms": 5}},
    "steps": [{"client": "A", "do": "acquire"}, {"client": "A", "do": "crash"},
              {"client": "B", "do": "acquire"}],
    "expect": {"naive": "any"}})");
  const ShrinkResult sure = shrink(certain, variant("naive"), "deadlock (never_recovered)", 0);
  EXPECT_EQ(sure.fresh_shown, kFreshSeeds);
}

// Proves a minimal scenario's steps say what its finding may hang on (a blind test read "A
// acquire / nemesis restart_server n1 / B acquire" where B made one try once the lock was held,
// and "A acquire / B acquire" where A never gave it back): a single try, what a step waits for and
// until when, and an acquire with no release after it.
TEST(Shrink, AMinimalScenariosStepsSayWhatTheyWaitFor) {
  const Json document = Json::parse(R"({"steps": [
    {"client": "A", "do": "acquire"},
    {"do": "restart_server", "server": "n1"},
    {"client": "B", "do": "acquire", "timeout_ms": 0, "wait_for": [{"key_present": "lock"}],
     "wait_max_ms": 200},
    {"client": "A", "do": "work", "until": {"inside": "B"}, "max_ms": 150},
    {"client": "C", "do": "acquire", "mode": "read",
     "wait_for": [{"done": "a-out"}, {"outside": "A"}]},
    {"client": "A", "do": "release"}]})");
  EXPECT_EQ(
      describe_steps(document),
      "    A acquire\n"
      "    nemesis restart_server n1\n"
      "    B acquire, trying once, once the lock is held (or after 200 ms), no release after "
      "it\n"
      "    A work until B is inside (at most 150 ms)\n"
      "    C acquire (read), once step a-out is done and A is outside (or after 10000 ms), no "
      "release after it\n"
      "    A release\n");
  // On a cluster the lock's key has a hash tag, and conditions name it so.
  const Json tagged = Json::parse(R"({"lock": {"key": "{lock}"}, "steps": [
    {"client": "B", "do": "acquire", "wait_for": [{"key_present": "{lock}"}], "wait_max_ms": 200},
    {"client": "B", "do": "release"}]})");
  EXPECT_EQ(describe_steps(tagged),
            "    B acquire, once the lock is held (or after 200 ms)\n    B release\n");
}

// Proves a minimal scenario that shows its finding under its seeds is never replaced by a later
// schedule's that lost it (shrink_robustly, b_sem_seconds of a blind test: its idle_hold was
// shrunk from seed 41384, hanging on a race, then replaced by seed 41385's unshrunk document,
// which never showed it under its own seeds, and reported "not shrunk"), however many fresh
// seeds the lost one shows it under or however few steps it has; between two that show it, more
// fresh seeds win, then fewer steps.
TEST(Shrink, AMinimalScenarioThatLostItsFindingIsNeverTheBetter) {
  ShrinkResult kept;
  kept.seeds = {41384};
  kept.fresh_shown = 2;
  kept.steps_after = 6;
  ShrinkResult lost;
  lost.fresh_shown = 9;
  lost.steps_after = 3;
  EXPECT_FALSE(better_minimal(lost, kept));
  EXPECT_TRUE(better_minimal(kept, lost));
  ShrinkResult surer = kept;
  surer.fresh_shown = 3;
  surer.steps_after = 9;
  EXPECT_TRUE(better_minimal(surer, kept));
  ShrinkResult shorter = kept;
  shorter.steps_after = 5;
  EXPECT_TRUE(better_minimal(shorter, kept));
  EXPECT_FALSE(better_minimal(kept, kept));
}

}  // namespace
}  // namespace locksim

namespace locksim {
namespace {

// Proves the cluster's faults are out of the default menu, and asked for they put a schedule on a
// Redis Cluster (the lock on p1, its replica r1) that runs as its document does, with failovers
// of each way and slot moves drawn.
TEST(Exercise, ClusterFaultsAreDrawnOnACluster) {
  EXPECT_EQ(all_exercise_faults().count(ExerciseFault::kFailover), 0U);
  EXPECT_EQ(all_exercise_faults().count(ExerciseFault::kSlotMove), 0U);
  ExerciseOptions options;
  options.faults = {ExerciseFault::kFailover, ExerciseFault::kSlotMove};
  options.ttl_ms = 2000;
  std::map<std::string, int> words;
  for (const std::string name : {"lua_owner", "lua_owner_wait"}) {
    ExerciseDrawer drawer(variant(name), options);
    for (std::uint64_t seed = 0; seed < 40; ++seed) {
      const Exercise& drawn = drawer.draw(seed);
      const Json document = drawer.document(drawn);
      bool cluster_fault = false;
      for (const std::string& word : drawn.faults) {
        ++words[word];
        cluster_fault = cluster_fault || word.starts_with("failover") || word == "slot_move";
      }
      if (cluster_fault) {
        ASSERT_TRUE(document.at("topology").is_object()) << document.dump();
        EXPECT_TRUE(document.at("topology").contains("cluster")) << document.dump();
      }
      const ScheduleRun in_memory = run_schedule(drawn.scenario, variant(name), seed);
      const ScheduleRun parsed = run_schedule(document, variant(name), seed);
      ASSERT_EQ(in_memory.error, "") << name << " " << seed;
      ASSERT_EQ(parsed.error, "") << document.dump();
      EXPECT_EQ(in_memory.signatures, parsed.signatures) << document.dump();
      EXPECT_EQ(in_memory.history.events.size(), parsed.history.events.size()) << document.dump();
    }
  }
  EXPECT_GT(words["failover (p1 killed, r1 elected)"], 0);
  EXPECT_GT(words["failover (CLUSTER FAILOVER TAKEOVER)"], 0);
  EXPECT_GT(words["failover (CLUSTER FAILOVER FORCE)"], 0);
  EXPECT_GT(words["slot_move"], 0);
}

// Proves the reference lock shows nothing of its own under a cluster's faults: a failover that
// loses its grant (lock_lost) or its release (a deadlock recovered late) is a limit of every lease,
// and it is found.
TEST(Explore, OnAClusterTheReferenceShowsOnlyTheLimitsOfALease) {
  ExploreTarget target;
  target.variant = &variant("lua_owner");
  target.exercise.faults = {ExerciseFault::kFailover, ExerciseFault::kSlotMove};
  target.exercise.ttl_ms = 2000;
  StopSignal stop;
  const ExploreSummary summary = explore(target, ExploreBudget{0, 400, 0, 1}, stop);
  EXPECT_TRUE(summary.errors.empty()) << summary.errors.front().why;
  for (const auto& [signature, found] : summary.findings) {
    std::vector<ScenarioSeeds> where;
    for (const std::uint64_t seed : found.seeds) {
      where.push_back({draw_exercise(*target.variant, target.exercise, seed), {seed}});
    }
    const Judgement judgement = judge_finding(*target.variant, signature, where);
    EXPECT_TRUE(judgement.limit) << signature << ": " << judgement.why;
  }
  EXPECT_GT(summary.findings.count("mutex_violation (lock_lost)"), 0U);
}

}  // namespace
}  // namespace locksim
