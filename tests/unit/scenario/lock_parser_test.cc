// lock_parser_test: wait strategies, renewal period and queue timeout load with defaults or fail.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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

// A client waits 2 s for a reply unless lock.reply_timeout_ms says otherwise; the resolved
// scenario keeps it, and it is range checked.
TEST(ScenarioLoaderTest, ReplyTimeoutDefaultsToTwoSecondsAndIsRangeChecked) {
  const Scenario plain = parse_scenario(scripted_document(), kFile, kVariants);
  EXPECT_EQ(plain.lock.reply_timeout_ms, 2000);
  EXPECT_EQ(plain.resolved["lock"]["reply_timeout_ms"], 2000);
  json document = scripted_document();
  document["lock"]["reply_timeout_ms"] = 250;
  const Scenario short_wait = parse_scenario(document, kFile, kVariants);
  EXPECT_EQ(short_wait.lock.reply_timeout_ms, 250);
  EXPECT_EQ(parse_scenario(short_wait.resolved, kFile, kVariants).lock.reply_timeout_ms, 250);

  expect_contains(
      error_after(scripted_document(), [](json& d) { d["lock"]["reply_timeout_ms"] = 0; }),
      {kFile, "$.lock.reply_timeout_ms: expected a duration in ms between 1 and 600000, got 0"});
  expect_contains(
      error_after(scripted_document(), [](json& d) { d["lock"]["reply_timeout_ms"] = 600001; }),
      {"$.lock.reply_timeout_ms: expected a duration in ms between 1 and 600000"});
  expect_contains(
      error_after(scripted_document(), [](json& d) { d["lock"]["reply_timeout_ms"] = "1s"; }),
      {"$.lock.reply_timeout_ms"});
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

// Proves lock.permits is read (1 by default, kept out of a mutex's resolved lock), and a count
// out of 1..1000 is refused at its path; client_clocks gives each named client its offset either
// way and refuses an unknown client (with a suggestion) or a missing offset.
TEST(ScenarioLoaderTest, PermitsAndClientClocks) {
  json document = scripted_document();
  const Scenario plain = parse_scenario(document, kFile, kVariants);
  EXPECT_EQ(plain.lock.permits, 1);
  EXPECT_FALSE(plain.resolved["lock"].contains("permits"));
  EXPECT_EQ(plain.clock_offset_ms("A"), 0);
  EXPECT_FALSE(plain.resolved.contains("client_clocks"));

  document["lock"]["permits"] = 3;
  document["client_clocks"] = json::parse(R"({"B": {"offset_ms": -2500}})");
  const Scenario semaphore = parse_scenario(document, kFile, kVariants);
  EXPECT_EQ(semaphore.lock.permits, 3);
  EXPECT_EQ(semaphore.resolved["lock"]["permits"], 3);
  EXPECT_EQ(semaphore.clock_offset_ms("B"), -2500);
  EXPECT_EQ(semaphore.clock_offset_ms("A"), 0);
  EXPECT_EQ(parse_scenario(semaphore.resolved, kFile, kVariants).resolved, semaphore.resolved);

  expect_contains(error_after(scripted_document(), [](json& d) { d["lock"]["permits"] = 0; }),
                  {kFile, "$.lock.permits", "1", "1000"});
  expect_contains(error_after(scripted_document(), [](json& d) { d["lock"]["permits"] = 1001; }),
                  {kFile, "$.lock.permits"});
  expect_contains(
      error_after(scripted_document(),
                  [](json& d) { d["client_clocks"] = json::parse(R"({"b": {"offset_ms": 10}})"); }),
      {kFile,
       "$.client_clocks.b: unknown client \"b\" (did you mean \"B\"?); "
       "clients: A, B"});
  expect_contains(error_after(scripted_document(),
                              [](json& d) {
                                d["client_clocks"] = {{"A", json::object()}};
                              }),
                  {kFile, "$.client_clocks.A", "offset_ms"});
  expect_contains(error_after(scripted_document(),
                              [](json& d) {
                                d["client_clocks"] = {{"A", {{"offset_ms", 3600001}}}};
                              }),
                  {kFile, "$.client_clocks.A.offset_ms"});
}

// Proves client_clocks' drift_ms_per_s is read beside or without an offset, written back into the
// resolved scenario (which loads again to itself), and refused at its path, with the range and
// its unit, when it is out of -1000..1000 or not an integer; an entry with neither field says
// both names.
TEST(ScenarioLoaderTest, ClientClockDrift) {
  json document = scripted_document();
  document["client_clocks"] = json::parse(
      R"({"A": {"drift_ms_per_s": 250}, "B": {"offset_ms": -40, "drift_ms_per_s": -1000}})");
  const Scenario drifting = parse_scenario(document, kFile, kVariants);
  EXPECT_EQ(drifting.clock_drift_ms_per_s("A"), 250);
  EXPECT_EQ(drifting.clock_offset_ms("A"), 0);
  EXPECT_EQ(drifting.clock_drift_ms_per_s("B"), -1000);
  EXPECT_EQ(drifting.clock_offset_ms("B"), -40);
  EXPECT_TRUE(drifting.clock_runs_off("A"));
  EXPECT_EQ(drifting.resolved["client_clocks"]["A"], json::parse(R"({"drift_ms_per_s": 250})"));
  EXPECT_EQ(parse_scenario(drifting.resolved, kFile, kVariants).resolved, drifting.resolved);
  EXPECT_FALSE(parse_scenario(scripted_document(), kFile, kVariants).clock_runs_off("A"));

  expect_contains(
      error_after(scripted_document(),
                  [](json& d) {
                    d["client_clocks"] = {{"A", {{"drift_ms_per_s", 1001}}}};
                  }),
      {kFile, "$.client_clocks.A.drift_ms_per_s",
       "expected a drift in ms per second of the run between -1000 and 1000, got 1001"});
  expect_contains(error_after(scripted_document(),
                              [](json& d) {
                                d["client_clocks"] = {{"B", {{"drift_ms_per_s", 0.5}}}};
                              }),
                  {kFile, "$.client_clocks.B.drift_ms_per_s", "integer"});
  expect_contains(error_after(scripted_document(),
                              [](json& d) {
                                d["client_clocks"] = {{"A", {{"drift_ms", 5}}}};
                              }),
                  {kFile, "$.client_clocks.A.drift_ms", "drift_ms_per_s"});
  expect_contains(error_after(scripted_document(),
                              [](json& d) {
                                d["client_clocks"] = {{"A", json::object()}};
                              }),
                  {kFile, "$.client_clocks.A", "offset_ms", "drift_ms_per_s"});
}

}  // namespace
}  // namespace locksim
