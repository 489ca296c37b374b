// model_gap_test: the model notes every gap it meets (a command or Lua library it lacks) on the
// server, even when a script catches the error with redis.pcall or pcall and its reply carries
// no marker; and a simulated run of a lock that does so is no run ("could not run"), not a
// verdict. docs/model.md, "What it is".
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "sim/lock/registry.h"
#include "sim/lock/script_variant.h"
#include "sim/model/model_server.h"
#include "sim/scenario/loader.h"
#include "sim/explore/simulated_run.h"
#include "tests/support/reply_text.h"

namespace locksim {
namespace {

using test_support::show;

// Proves redis.pcall of a command the model lacks answers as Redis does (the script goes on and
// returns 1) and yet the server notes the gap: on Redis the key would be "1.5", here nil.
TEST(ModelGaps, ARedisPcallThatCaughtAnUnmodelledCommandIsNoted) {
  ModelServer server;
  EXPECT_EQ(server.first_gap(), "");
  EXPECT_EQ(show(server.execute(
                {"EVAL", "redis.pcall('INCRBYFLOAT', KEYS[1], '1.5') return 1", "1", "k"}, 0)),
            ":1");
  EXPECT_EQ(server.first_gap(), "unknown command 'INCRBYFLOAT'");
  // The first gap stays, and a restart keeps it: it is a fact about the run.
  server.execute({"XADD", "s", "*", "f", "v"}, 0);
  server.restart();
  EXPECT_EQ(server.first_gap(), "unknown command 'INCRBYFLOAT'");
}

// Proves Lua's pcall around a library the model lacks (cjson) leaves the gap noted.
TEST(ModelGaps, ALuaPcallThatCaughtAnUnmodelledLibraryIsNoted) {
  ModelServer server;
  EXPECT_EQ(show(server.execute({"EVAL",
                                 "local ok = pcall(function() return cjson.encode({1}) end) "
                                 "if ok then return 2 end return 1",
                                 "0"},
                                0)),
            ":1");
  EXPECT_EQ(server.first_gap(), "Lua library 'cjson' is not modelled");
}

// Proves what the model has, and the lock's own errors, note nothing: only gaps do.
TEST(ModelGaps, ErrorsOfRedisItselfAreNoGap) {
  ModelServer server;
  server.execute({"SET", "k", "v"}, 0);
  server.execute({"INCR", "k"}, 0);
  server.execute({"FOO"}, 0);
  server.execute({"EVAL", "return redis.pcall('LPUSH', KEYS[1], 'x')", "1", "k"}, 0);
  server.execute({"EVAL", "return redis.error_reply('MINE no gap')", "0"}, 0);
  server.execute({"EVAL", "return pcall(error, 'x')", "0"}, 0);
  EXPECT_EQ(server.first_gap(), "");
  // A gap seen in a client's reply is noted as well.
  server.execute({"SELECT", "1"}, 0);
  EXPECT_EQ(server.first_gap(), "only database 0 is modelled");
}

// Proves a simulated run of a lock whose acquire script hides a gap behind redis.pcall is no run:
// the runner gets the reason, never a verdict of the lock.
TEST(ModelGaps, ASimulatedRunOfALockThatHidesAGapCouldNotRun) {
  ScriptVariantSpec spec;
  spec.file = "pcall_incrbyfloat.json";
  spec.name = "pcall_incrbyfloat";
  spec.acquire = {
      "redis.pcall('INCRBYFLOAT', KEYS[1] .. ':n', '1.5') "
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
  const Scenario scenario =
      load_scenario(std::filesystem::path(LOCKSIM_TEST_SOURCE_DIR) / "scenarios/stale-release.json",
                    variant_names());
  StopSignal stop;
  const SimulatedRun run = run_simulated(scenario, *lock, 5, stop, "locksim:gap:");
  EXPECT_NE(run.outcome.harness_error.find(
                "lacks what this lock uses (unknown command 'INCRBYFLOAT'): it runs on a real "
                "redis-server only"),
            std::string::npos)
      << run.outcome.harness_error;
}

}  // namespace
}  // namespace locksim
