// simulation_bounds_test: a simulated run that does not end by itself is cut short by its bounds
// (scheduler events, the machine's time, a stop request) and says which, and a simulated run of a
// scenario cut short is a harness error naming its seed (or an interruption), never a hang.
#include <gtest/gtest.h>

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/core/stop.h"
#include "sim/lock/registry.h"
#include "sim/scenario/loader.h"
#include "sim/explore/simulated_run.h"
#include "sim/simulate/simulation.h"

namespace locksim {
namespace {

namespace fs = std::filesystem;

// livelock: two fibers that wake each other for ever, a microsecond apart.
void livelock(Simulation& sim) {
  for (int i = 0; i < 2; ++i) {
    sim.spawn([&sim] {
      while (true) sim.sleep_until(sim.now() + 1'000);
    });
  }
}

// cut_short: what run() threw (its why and words); fails if it returned.
SimulationCutShort cut_short(Simulation& sim) {
  try {
    sim.run();
  } catch (const SimulationCutShort& e) {
    return e;
  }
  ADD_FAILURE() << "run() returned";
  return SimulationCutShort(SimulationCutShort::Why::kEvents, "");
}

// Proves a livelock passes its bound of events and is cut short exactly there, in words.
TEST(SimulationBounds, ALivelockIsCutShortAtItsBoundOfEvents) {
  Simulation sim(1);
  sim.set_bounds({.max_events = 10'000});
  livelock(sim);
  const SimulationCutShort e = cut_short(sim);
  EXPECT_EQ(e.why, SimulationCutShort::Why::kEvents);
  EXPECT_EQ(sim.events_run(), 10'000U);
  EXPECT_NE(std::string(e.what()).find("bound of 10000 scheduler events"), std::string::npos)
      << e.what();
}

// Proves a livelock with no bound of events is cut short by its bound of the machine's time.
TEST(SimulationBounds, ALivelockIsCutShortAtItsBoundOfTheMachinesTime) {
  Simulation sim(2);
  sim.set_bounds({.max_wall_ns = ms_to_ns(20)});
  livelock(sim);
  const SimulationCutShort e = cut_short(sim);
  EXPECT_EQ(e.why, SimulationCutShort::Why::kWallTime);
  EXPECT_NE(std::string(e.what()).find("20 ms of the machine's time"), std::string::npos)
      << e.what();
}

// Proves a stop request cuts a livelock short once its grace has passed.
TEST(SimulationBounds, AStopRequestCutsARunShortAfterItsGrace) {
  StopSignal stop;
  stop.request();
  Simulation sim(3);
  sim.set_bounds({.stop = &stop, .stop_grace_wall_ns = ms_to_ns(5)});
  livelock(sim);
  EXPECT_EQ(cut_short(sim).why, SimulationCutShort::Why::kStopped);
}

// Proves a run within its bounds is not cut short: the bounds change nothing of what it does.
TEST(SimulationBounds, ARunWithinItsBoundsEnds) {
  StopSignal stop;
  Simulation sim(4);
  sim.set_bounds({.max_events = 3, .max_wall_ns = ms_to_ns(60'000), .stop = &stop});
  sim.spawn([&sim] { sim.sleep_until(ms_to_ns(5)); });
  sim.run();
  EXPECT_EQ(sim.now(), ms_to_ns(5));
  EXPECT_EQ(sim.events_run(), 2U);
}

// DestroyedIn: an object on a fiber's stack that notes its name in `log` when it is destroyed.
struct DestroyedIn {
  std::vector<std::string>& log;
  std::string name;
  ~DestroyedIn() { log.push_back(name); }
};

// Proves a run cut short unwinds its fibers, newest first, so the destructors on their stacks
// run (a started thread's before its starter's), through a VirtualClock wait and a thread
// handle's join, and that no catch of std::exception stops the unwinding.
TEST(SimulationBounds, ARunCutShortUnwindsItsFibersSoTheirDestructorsRun) {
  std::vector<std::string> log;
  bool caught_as_std_exception = false;
  {
    Simulation sim(5);
    sim.set_bounds({.max_events = 1'000});
    SimThreads threads(sim);
    const VirtualClock clock(sim);
    sim.spawn([&] {
      const DestroyedIn parent{log, "parent"};
      const Thread child(threads, [&] {
        const DestroyedIn guard{log, "child"};
        try {
          while (true) sim.sleep_until(sim.now() + 1'000);
        } catch (const std::exception&) {
          caught_as_std_exception = true;
        }
      });
      std::mutex mutex;
      std::condition_variable cv;
      std::unique_lock<std::mutex> lock(mutex);
      clock.wait(cv, lock, [] { return false; });  // for ever: the child keeps the run going
      log.push_back("parent went on");
    });
    EXPECT_EQ(cut_short(sim).why, SimulationCutShort::Why::kEvents);
    EXPECT_EQ(log, (std::vector<std::string>{"child", "parent"}));
    EXPECT_EQ(sim.fibers_alive(), 0U);
    EXPECT_EQ(sim.events_run(), 1'000U);  // unwinding runs no event
  }
  EXPECT_FALSE(caught_as_std_exception);
}

// Proves a fiber cut short while a destructor of its stack joins another fiber finishes that
// destructor (the joined fiber, newer, was unwound first), and its next wait throws.
TEST(SimulationBounds, AJoinInADestructorEndsWhenTheRunIsCutShort) {
  std::vector<std::string> log;
  Simulation sim(6);
  sim.set_bounds({.max_events = 1'000});
  SimThreads threads(sim);
  sim.spawn([&] {
    {
      const Thread child(threads, [&] {
        const DestroyedIn guard{log, "child"};
        while (true) sim.sleep_until(sim.now() + 1'000);
      });
    }  // the handle's destructor joins the child: the run is cut short in that join
    log.push_back("joined");
    sim.sleep_until(sim.now() + 1'000);
    log.push_back("slept");
  });
  cut_short(sim);
  EXPECT_EQ(log, (std::vector<std::string>{"child", "joined"}));
}

// Proves a stalled run and a run a fiber's exception ends unwind the fibers left as well, before
// run() throws.
TEST(SimulationBounds, AStalledOrFailedRunUnwindsTheFibersLeft) {
  std::vector<std::string> log;
  {
    Simulation sim(7);
    sim.spawn([&] {
      const DestroyedIn guard{log, "parked"};
      sim.park();
    });
    EXPECT_THROW(sim.run(), SimulationStalled);
    EXPECT_EQ(log, (std::vector<std::string>{"parked"}));
  }
  {
    Simulation sim(8);
    sim.spawn([&] {
      const DestroyedIn guard{log, "sleeping"};
      sim.sleep_until(ms_to_ns(10));
      log.push_back("woke");
    });
    sim.spawn([&] {
      sim.sleep_until(ms_to_ns(1));
      throw std::runtime_error("failed");
    });
    EXPECT_THROW(sim.run(), std::runtime_error);
    EXPECT_EQ(log, (std::vector<std::string>{"parked", "sleeping"}));
  }
}

// Proves a simulated scenario that passes its bounds is no history but a harness error naming
// its seed, and one cut short by a stop request is an interruption.
TEST(SimulationBounds, ARunOfAScenarioCutShortIsAHarnessErrorNamingItsSeed) {
  const Scenario scenario =
      load_scenario(fs::path(LOCKSIM_TEST_SOURCE_DIR) / "scenarios" / "crash-after-renewals.json",
                    variant_names());
  const LockVariant& variant = *find_variant("lua_owner_renew");
  StopSignal stop;
  const SimulatedRun bounded =
      run_simulated(scenario, variant, 17, stop, "locksim:t:", SimulationBounds{.max_events = 50});
  EXPECT_NE(bounded.cut_short.find("seed 17"), std::string::npos) << bounded.cut_short;
  EXPECT_EQ(bounded.outcome.harness_error, bounded.cut_short);
  EXPECT_TRUE(bounded.outcome.history.events.empty());

  StopSignal stopped;
  stopped.request();
  const SimulatedRun interrupted = run_simulated(
      scenario, variant, 17, stop, "locksim:t:",
      SimulationBounds{.stop = &stopped, .stop_grace_wall_ns = 0});
  EXPECT_TRUE(interrupted.outcome.interrupted);
  EXPECT_TRUE(interrupted.outcome.harness_error.empty()) << interrupted.outcome.harness_error;
  EXPECT_NE(interrupted.cut_short.find("stop"), std::string::npos) << interrupted.cut_short;

  // The default bounds leave the catalogue's runs alone (the largest takes under 50,000 events).
  const SimulationBounds defaults = simulated_bounds(scenario, variant, &stop);
  EXPECT_GE(defaults.max_events, kSimulatedEventsMin);
  EXPECT_EQ(defaults.max_wall_ns, kSimulatedWallMaxNs);
  const SimulatedRun whole = run_simulated(scenario, variant, 17, stop, "locksim:t:");
  EXPECT_TRUE(whole.cut_short.empty()) << whole.cut_short;
  EXPECT_FALSE(whole.outcome.history.events.empty());
}

}  // namespace
}  // namespace locksim
