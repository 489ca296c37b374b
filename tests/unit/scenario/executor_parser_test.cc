// executor_parser_test: "clients_run_as" takes threads, processes or event_loop; the workload's
// "client_mode" is its deprecated alias, with a note; what the event loop cannot run is named by
// path, also when --clients asks for it (run_clients_as).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "sim/core/error.h"
#include "sim/scenario/loader.h"
#include "tests/unit/scenario/scenario_test_support.h"

namespace locksim {
namespace {

using nlohmann::json;
using test::error_after;
using test::expect_contains;
using test::kFile;
using test::kVariants;
using test::scripted_document;
using test::workload_document;

// The workload document, run on the event loop.
json loop_document() {
  json document = workload_document();
  document["clients_run_as"] = "event_loop";
  return document;
}

// Each of the three words loads, is resolved at the top level only, and loads again the same.
TEST(ExecutorParserTest, ClientsRunAsTakesThreeWords) {
  json document = workload_document();
  const Scenario threads = parse_scenario(document, kFile, kVariants);
  EXPECT_EQ(threads.executor, Executor::kThreads);
  EXPECT_EQ(threads.resolved["clients_run_as"], "threads");
  for (const Executor executor : {Executor::kThreads, Executor::kProcesses, Executor::kEventLoop}) {
    const std::string word(to_string(executor));
    document["clients_run_as"] = word;
    const Scenario s = parse_scenario(document, kFile, kVariants);
    EXPECT_EQ(s.executor, executor) << word;
    EXPECT_TRUE(s.notes.empty());
    EXPECT_EQ(s.resolved["clients_run_as"], word);
    EXPECT_FALSE(s.resolved["workload"].contains("client_mode"));
    EXPECT_EQ(parse_scenario(s.resolved, kFile, kVariants).resolved, s.resolved);
  }
}

// Any other word is refused with the three allowed.
TEST(ExecutorParserTest, AnUnknownWordNamesTheAllowedOnes) {
  expect_contains(error_after(workload_document(), [](json& d) { d["clients_run_as"] = "fibers"; }),
                  {kFile, "$.clients_run_as: unknown way to run clients \"fibers\"",
                   "allowed: threads, processes, event_loop"});
  expect_contains(
      error_after(workload_document(), [](json& d) { d["workload"]["client_mode"] = "fibers"; }),
      {kFile, "$.workload.client_mode: unknown client mode \"fibers\"",
       "allowed: threads, event_loop"});
}

// The workload's "client_mode" still loads, as "clients_run_as", with a note naming the file,
// the field and the new spelling; the resolved form has only the new spelling.
TEST(ExecutorParserTest, ClientModeIsADeprecatedAlias) {
  json document = workload_document();
  document["workload"]["client_mode"] = "event_loop";
  const Scenario s = parse_scenario(document, kFile, kVariants);
  EXPECT_EQ(s.executor, Executor::kEventLoop);
  ASSERT_EQ(s.notes.size(), 1u);
  expect_contains(s.notes[0], {kFile, "$.workload.client_mode is deprecated",
                               "write \"clients_run_as\": \"event_loop\" at the top level"});
  EXPECT_EQ(s.resolved["clients_run_as"], "event_loop");
  EXPECT_FALSE(s.resolved["workload"].contains("client_mode"));
  // Given both, the same: still noted.
  document["clients_run_as"] = "event_loop";
  const Scenario both = parse_scenario(document, kFile, kVariants);
  EXPECT_EQ(both.executor, Executor::kEventLoop);
  EXPECT_EQ(both.notes.size(), 1u);
}

// Given both and different, the alias is refused, naming the file and both fields.
TEST(ExecutorParserTest, ConflictingSpellingsAreAnError) {
  expect_contains(error_after(workload_document(),
                              [](json& d) {
                                d["clients_run_as"] = "processes";
                                d["workload"]["client_mode"] = "event_loop";
                              }),
                  {kFile,
                   "$.workload.client_mode: \"event_loop\" conflicts with "
                   "$.clients_run_as: \"processes\"",
                   "give only \"clients_run_as\""});
  expect_contains(
      error_after(loop_document(), [](json& d) { d["workload"]["client_mode"] = "threads"; }),
      {kFile,
       "$.workload.client_mode: \"threads\" conflicts with "
       "$.clients_run_as: \"event_loop\""});
}

// What one event loop cannot run is named at its own path; every wait strategy it runs (the
// waking ones on connections of each client's own), a lost iteration (it ends the renewal it
// runs) and a resource (its commands on the client's connection).
TEST(ExecutorParserTest, TheEventLoopRefusesWhatItCannotRun) {
  for (const char* strategy : {"notify", "pubsub", "poll", "backoff", "retry_sleep"}) {
    json d = loop_document();
    d["lock"] = {{"wait", {{"strategy", strategy}}}};
    EXPECT_EQ(parse_scenario(d, kFile, kVariants).executor, Executor::kEventLoop) << strategy;
  }
  json lose = loop_document();
  lose["workload"]["lose_probability"] = 0.5;
  EXPECT_EQ(parse_scenario(lose, kFile, kVariants).executor, Executor::kEventLoop);
  json resource = loop_document();
  resource["resource"] = {{"kind", "counter"}};
  EXPECT_EQ(parse_scenario(resource, kFile, kVariants).executor, Executor::kEventLoop);
  expect_contains(error_after(loop_document(),
                              [](json& d) {
                                d["workload"]["pause_probability"] = 0.5;
                                d["workload"]["pause_ms"] = 10;
                              }),
                  {"$.workload.pause_probability: not supported"});
  expect_contains(
      error_after(loop_document(), [](json& d) { d["workload"]["lost_reply_probability"] = 0.5; }),
      {"$.workload.lost_reply_probability: not supported"});
  expect_contains(
      error_after(scripted_document(), [](json& d) { d["clients_run_as"] = "event_loop"; }),
      {kFile,
       "$.steps: \"clients_run_as\": \"event_loop\" runs the clients of a "
       "workload only"});
}

// --clients: run_clients_as changes what runs the clients and the resolved form, and refuses
// what the executor cannot run as the loader would.
TEST(ExecutorParserTest, RunClientsAsOverridesTheFile) {
  Scenario workload = parse_scenario(loop_document(), kFile, kVariants);
  run_clients_as(workload, Executor::kProcesses);
  EXPECT_EQ(workload.executor, Executor::kProcesses);
  EXPECT_EQ(workload.resolved["clients_run_as"], "processes");
  EXPECT_EQ(parse_scenario(workload.resolved, kFile, kVariants).executor, Executor::kProcesses);
  Scenario scripted = parse_scenario(scripted_document(), kFile, kVariants);
  try {
    run_clients_as(scripted, Executor::kEventLoop);
    ADD_FAILURE() << "a scripted scenario was run on the event loop";
  } catch (const InputError& error) {
    expect_contains(error.what(), {kFile, "$.steps:"});
  }
  EXPECT_EQ(scripted.executor, Executor::kThreads);
  EXPECT_EQ(scripted.resolved["clients_run_as"], "threads");
}

}  // namespace
}  // namespace locksim
