// driver_test: every variant against every core fault on a real redis-server, through the driver
// and the checkers: crash inside the critical section, work outliving the TTL, stale release, and
// a fault-free contended workload that must raise no false alarm; and the three executors
// (threads, one event loop, `locksim worker` processes) and the simulator carrying out the same
// plan alike.
#include "sim/driver/driver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>
#include <tuple>

#include "sim/checker/check.h"
#include "sim/client/fenced_store.h"
#include "sim/client/wait.h"
#include "sim/core/error.h"
#include "sim/explore/confirm.h"
#include "sim/explore/simulated_run.h"
#include "sim/history/transfer.h"
#include "sim/host/worker_protocol.h"
#include "sim/lock/registry.h"
#include "sim/plan/plan.h"
#include "sim/redis/connection.h"
#include "sim/redis/server.h"
#include "sim/report/run_record.h"
#include "sim/scenario/loader.h"
#include "tests/support/shared_server.h"

namespace locksim {
namespace {

RedisServer* server = nullptr;

const ::testing::Environment* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new test_support::SharedServer(&server));

using test_support::catalogue;
using test_support::source_dir;

struct Judged {
  RunOutcome outcome;
  CheckResult result;
};

Judged run(const Scenario& scenario, const std::string& variant, std::uint64_t seed = 1) {
  static int counter = 0;
  StopSignal stop;
  const std::string prefix = "locksim:test" + std::to_string(++counter) + ":" + variant + ":";
  RunRequest request{
      scenario, *find_variant(variant),    seed, server->endpoint(), prefix, stop, {}, true,
      {},       {LOCKSIM_BINARY, "worker"}};
  Judged judged{run_scenario(request), {}};
  EXPECT_TRUE(judged.outcome.harness_error.empty()) << judged.outcome.harness_error;
  judged.result = check_history(judged.outcome.history, check_options(scenario));
  // Whatever happened, the run removed every key under its prefix.
  HiredisConnection connection(server->endpoint(), {});
  const RedisResult keys = connection.command({"KEYS", prefix + "*"});
  EXPECT_TRUE(keys.ok());
  EXPECT_TRUE(keys.reply.elements.empty()) << "keys left under " << prefix;
  return judged;
}

// simulated: `scenario` run on the simulator (sim/explore, its model servers and fibers), judged
// as run() judges a real one.
Judged simulated(const Scenario& scenario, const std::string& variant, std::uint64_t seed) {
  const LockVariant& lock = *find_variant(variant);
  EXPECT_EQ(simulator_refusal(scenario, lock), "");
  StopSignal stop;
  SimulatedRun sim = run_simulated(scenario, lock, seed, stop, "locksim:sim:" + variant + ":");
  EXPECT_EQ(sim.cut_short, "");
  EXPECT_TRUE(sim.outcome.harness_error.empty()) << sim.outcome.harness_error;
  Judged judged{std::move(sim.outcome), {}};
  judged.result = check_history(judged.outcome.history, check_options(scenario));
  return judged;
}

int client(const Judged& j, const std::string& name) {
  return j.outcome.history.client_index(name);
}

// hold_of_client: the first hold window of the named client (the test fails if it has none).
HoldWindow hold_of_client(const Judged& j, const std::string& name) {
  for (const HoldWindow& hold : j.result.holds) {
    if (hold.client == client(j, name)) return hold;
  }
  ADD_FAILURE() << name << " never held the lock";
  return {};
}

// Without a TTL a crash inside the critical section deadlocks B; with one, B gets in after it.
TEST(DriverFaults, CrashInCriticalSection) {
  const Scenario scenario = catalogue("crash-in-critical-section");
  const Judged naive = run(scenario, "naive");
  EXPECT_EQ(naive.result.verdict, Verdict::kDeadlock);
  ASSERT_EQ(naive.result.count(FindingKind::kDeadlock), 1u);
  EXPECT_EQ(naive.result.of(FindingKind::kDeadlock)[0]->clients[0], client(naive, "B"));
  ASSERT_EQ(naive.result.count(FindingKind::kRecovery), 1u);
  EXPECT_EQ(naive.result.of(FindingKind::kRecovery)[0]->to_ns, -1);  // never recovered
  for (const std::string variant : {"set_nx_ex", "lua_owner"}) {
    const Judged j = run(scenario, variant);
    EXPECT_EQ(j.result.verdict, Verdict::kOk) << variant;
    ASSERT_EQ(j.result.count(FindingKind::kRecovery), 1u) << variant;
    const Finding& r = *j.result.of(FindingKind::kRecovery)[0];
    EXPECT_EQ(r.clients[1], client(j, "B"));
    // The key cannot come back before its TTL (300 ms from A's acquire; A crashed ~20 ms in).
    EXPECT_GE(r.to_ns - r.from_ns, ms_to_ns(200)) << variant;
  }
}

// Work outliving the TTL: both TTL variants let B in while A still works; naive does not.
TEST(DriverFaults, TtlExpiryWhileWorking) {
  const Scenario scenario = catalogue("ttl-expiry-while-working");
  EXPECT_EQ(run(scenario, "naive").result.verdict, Verdict::kOk);
  std::map<std::string, Judged> judged;
  for (const std::string variant : {"set_nx_ex", "lua_owner"}) {
    const Judged& j = judged[variant] = run(scenario, variant);
    ASSERT_EQ(j.result.verdict, Verdict::kMutexViolation) << variant;
    ASSERT_EQ(j.result.count(FindingKind::kMutexViolation), 1u) << variant;
    const Finding& v = *j.result.of(FindingKind::kMutexViolation)[0];
    EXPECT_EQ(v.cause, "lease_expired");
    EXPECT_EQ(v.clients[0], client(j, "A"));
    EXPECT_EQ(v.clients[1], client(j, "B"));
    EXPECT_GT(v.to_ns - v.from_ns, 0);
  }
  // set_nx_ex's late DEL removed B's lock even though nobody else came in.
  const Judged& flawed = judged["set_nx_ex"];
  ASSERT_EQ(flawed.result.count(FindingKind::kStaleRelease), 1u);
  EXPECT_EQ(flawed.result.of(FindingKind::kStaleRelease)[0]->clients[0], client(flawed, "A"));
  EXPECT_EQ(flawed.result.of(FindingKind::kStaleRelease)[0]->clients[1], client(flawed, "B"));
  EXPECT_TRUE((judged["lua_owner"].result.count(FindingKind::kStaleRelease) == 0));
}

// Stale release: set_nx_ex's DEL frees B's lock for C; lua_owner refuses A's release.
TEST(DriverFaults, StaleRelease) {
  const Scenario scenario = catalogue("stale-release");
  EXPECT_EQ(run(scenario, "naive").result.verdict, Verdict::kOk);

  const Judged flawed = run(scenario, "set_nx_ex");
  ASSERT_EQ(flawed.result.verdict, Verdict::kMutexViolation);
  EXPECT_EQ(flawed.result.causes(), (std::vector<std::string>{"lease_expired", "stale_release"}));
  bool c_got_in_via_a = false;
  for (const Finding* v : flawed.result.of(FindingKind::kMutexViolation)) {
    if (v->cause == "stale_release") {
      EXPECT_EQ(v->clients[0], client(flawed, "B"));
      EXPECT_EQ(v->clients[1], client(flawed, "C"));
      c_got_in_via_a = v->clients[2] == client(flawed, "A");
    }
  }
  EXPECT_TRUE(c_got_in_via_a);

  const Judged owner = run(scenario, "lua_owner");
  ASSERT_EQ(owner.result.verdict, Verdict::kMutexViolation);
  EXPECT_EQ(owner.result.causes(), std::vector<std::string>{"lease_expired"});
  EXPECT_EQ(owner.result.stats.releases_refused, 1);  // A's late release deleted nothing
}

Scenario workload(
    const std::string& variant, const std::string& extra_workload,
    const std::string& lock =
        R"({"ttl_ms": 5000, "acquire_timeout_ms": 20000, "wait": {"interval_ms": 1}})") {
  const std::string text = R"({"name": "w", "source": {"doc": "none", "claim": "test"},
    "variants": [")" + variant +
                           R"("], "lock": )" + lock + R"(,
    "workload": {"work_ms": {"min": 0, "max": 1})" +
                           extra_workload + R"(},
    "expect": {")" + variant +
                           R"(": "ok"}})";
  return parse_scenario(nlohmann::json::parse(text), "inline.json", variant_names());
}

// Under contention with no faults, no real lock shows a violation: the conservative timestamps
// never produce a false alarm, and every cycle completes. The no_lock baseline, under the same
// load, must be caught: the checker is not blind. lua_owner_wait is left out: its grants need a
// replica, which this server has not (lua_owner_wait_test runs it with one). zset_semaphore is
// no correct lock (two acquires in one millisecond tie on their score, and the later may rank
// first beside the holder): SemaphoreWorkload runs it.
TEST(DriverWorkload, NoFalseAlarmsUnderContention) {
  for (const LockVariant* variant : all_variants()) {
    const std::string name(variant->name());
    if (name == "lua_owner_wait" || name == "zset_semaphore") continue;
    const Judged j = run(workload(name, R"(, "clients": 6, "cycles": 100)"), name);
    EXPECT_EQ(j.result.stats.acquires_ok, 600) << name;
    if (name == "no_lock") {
      EXPECT_EQ(j.result.verdict, Verdict::kMutexViolation);
      continue;
    }
    EXPECT_EQ(j.result.verdict, Verdict::kOk) << name;
    EXPECT_EQ(j.result.stats.releases_ok, 600) << name;
  }
}

// Proves a semaphore of 3 permits under contention, timed by the server, lets up to 3 clients in
// at once and never more: no false alarm, and the holds do overlap (the permits are used).
TEST(DriverWorkload, SemaphoreSharesItsPermitsUnderContention) {
  const Judged j = run(workload("zset_semaphore_server", R"(, "clients": 6, "cycles": 100)",
                                R"({"ttl_ms": 5000, "permits": 3, "acquire_timeout_ms": 20000,
                                    "wait": {"interval_ms": 1}})"),
                       "zset_semaphore_server");
  EXPECT_EQ(j.outcome.history.permits, 3);
  EXPECT_EQ(j.result.verdict, Verdict::kOk);
  EXPECT_EQ(j.result.stats.acquires_ok, 600);
  std::vector<std::pair<Nanos, int>> edges;
  for (const HoldWindow& w : j.result.holds) {
    edges.emplace_back(w.start_ns, 1);
    edges.emplace_back(w.end_ns, -1);
  }
  std::sort(edges.begin(), edges.end());  // an end before a start at one instant
  int inside = 0;
  int most = 0;
  for (const auto& [t, edge] : edges) most = std::max(most, inside += edge);
  EXPECT_EQ(most, 3);
}

// The history is recorded at the conservative points: enter right after acquire ok, exit right
// before the release invoke, on the same client, in time order.
TEST(DriverWorkload, ConservativeTimestamps) {
  const Judged j = run(workload("lua_owner", R"(, "clients": 3, "cycles": 30)"), "lua_owner");
  const auto& events = j.outcome.history.events;
  std::map<int, std::vector<const Event*>> by_client;
  for (const Event& e : events) by_client[e.client].push_back(&e);
  int pairs = 0;
  for (const auto& [c, list] : by_client) {
    for (std::size_t i = 0; i + 1 < list.size(); ++i) {
      ASSERT_LE(list[i]->time_ns, list[i + 1]->time_ns);
      if (list[i]->f == Op::kAcquire && list[i]->type == EventType::kOk) {
        EXPECT_EQ(list[i + 1]->f, Op::kEnter);
        EXPECT_NE(list[i]->token, 0u);
        ++pairs;
      }
      if (list[i]->f == Op::kExit) {
        EXPECT_EQ(list[i + 1]->f, Op::kRelease);
        EXPECT_EQ(list[i + 1]->type, EventType::kInvoke);
      }
    }
  }
  EXPECT_EQ(pairs, 90);
}

// A workload client that crashes inside leaves a lock without TTL stuck (deadlock for the
// others) but a TTL lock recovers.
TEST(DriverWorkload, CrashInWorkload) {
  const std::string lock =
      R"({"ttl_ms": 200, "acquire_timeout_ms": 1200, "wait": {"interval_ms": 5}})";
  const Judged naive = run(
      workload("naive", R"(, "clients": 2, "cycles": 3, "crash_probability": 1)", lock), "naive");
  EXPECT_EQ(naive.result.verdict, Verdict::kDeadlock);
  const Judged ttl =
      run(workload("set_nx_ex", R"(, "clients": 2, "cycles": 3, "crash_probability": 1)", lock),
          "set_nx_ex");
  EXPECT_EQ(ttl.result.verdict, Verdict::kOk);
  EXPECT_EQ(ttl.result.stats.crashes, 2);
}

// A stop request (Ctrl-C) ends a long run early and says so.
TEST(DriverControl, StopEndsTheRun) {
  const Scenario scenario = workload("lua_owner", R"(, "clients": 2, "cycles": 1000000)");
  StopSignal stop;
  std::thread stopper([&stop] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop.request();
  });
  RunRequest request{
      scenario, *find_variant("lua_owner"), 1, server->endpoint(), "locksim:stop:", stop, {}, true,
      {}};
  const RunOutcome outcome = run_scenario(request);
  stopper.join();
  EXPECT_TRUE(outcome.interrupted);
  EXPECT_GT(outcome.history.events.size(), 0u);
  EXPECT_LT(outcome.history.events.size(), 4000000u);
}

// An unreachable server is a harness error, not a verdict.
TEST(DriverControl, UnreachableServerIsHarnessError) {
  const Scenario scenario = catalogue("ttl-expiry-while-working");
  StopSignal stop;
  Endpoint nowhere = server->endpoint();
  nowhere.port = 1;
  RunRequest request{scenario, *find_variant("lua_owner"), 1, nowhere, "locksim:x:", stop, {}, true,
                     {}};
  const RunOutcome outcome = run_scenario(request);
  EXPECT_NE(outcome.harness_error.find("cannot connect"), std::string::npos)
      << outcome.harness_error;
}

Scenario scripted(const std::string& variant, const std::string& body) {
  const std::string text = R"({"name": "s", "source": {"doc": "none", "claim": "test"},
    "variants": [")" + variant +
                           R"("], )" + body + R"(, "expect": {")" + variant + R"(": "any"}})";
  return parse_scenario(nlohmann::json::parse(text), "inline.json", variant_names());
}

Nanos acquire_latency(const History& history, const std::string& client) {
  const int c = history.client_index(client);
  Nanos invoke = -1;
  for (const Event& e : history.events) {
    if (e.client != c || e.f != Op::kAcquire) continue;
    if (e.type == EventType::kInvoke) invoke = e.time_ns;
    if (e.type == EventType::kOk) return e.time_ns - invoke;
  }
  return -1;
}

// Backoff doubles from its initial pause up to its cap; poll and retry_sleep keep their interval.
TEST(WaitStrategies, Delays) {
  WaitConfig backoff;
  backoff.strategy = "backoff";
  backoff.initial_ms = 100;
  backoff.factor = 2;
  backoff.max_ms = 5000;
  EXPECT_EQ(delay_ns(backoff, 1), ms_to_ns(100));
  EXPECT_EQ(delay_ns(backoff, 2), ms_to_ns(200));
  EXPECT_EQ(delay_ns(backoff, 6), ms_to_ns(3200));
  EXPECT_EQ(delay_ns(backoff, 7), ms_to_ns(5000));
  EXPECT_EQ(delay_ns(backoff, 1000), ms_to_ns(5000));  // no overflow
  WaitConfig poll;
  poll.interval_ms = 7;
  EXPECT_EQ(delay_ns(poll, 1), ms_to_ns(7));
  EXPECT_EQ(delay_ns(poll, 50), ms_to_ns(7));
  WaitConfig retry;
  retry.strategy = "retry_sleep";
  retry.interval_ms = 3000;
  EXPECT_EQ(delay_ns(retry, 3), ms_to_ns(3000));
}

// Jitter draws below the delay: "full" in [0, d], "equal" in [d/2, d]; the same seed draws the
// same pauses, and the draws are spread (not one value).
TEST(WaitStrategies, JitterStaysWithinItsRangeAndIsSeeded) {
  WaitConfig config;
  config.strategy = "backoff";
  const Nanos d = ms_to_ns(100);
  Rng rng(1);
  EXPECT_EQ(jittered_ns(config, d, rng), d);  // "none"
  for (const char* jitter : {"full", "equal"}) {
    config.jitter = jitter;
    Rng a(7), b(7);
    std::set<Nanos> seen;
    for (int i = 0; i < 200; ++i) {
      const Nanos x = jittered_ns(config, d, a);
      EXPECT_EQ(x, jittered_ns(config, d, b));
      EXPECT_LE(x, d);
      EXPECT_GE(x, config.jitter == "full" ? 0 : d / 2);
      seen.insert(x);
    }
    EXPECT_GT(seen.size(), 150u) << jitter;
  }
}

// Every pubsub waiter is woken by a release (not by its 5 s fallback): A's release wakes B and C;
// one of them gets the lock, the other is woken again by that one's release.
TEST(WaitStrategies, PubSubWakesEveryWaiterOnRelease) {
  const Scenario s = scripted("lua_owner", R"(
    "lock": {"ttl_ms": 10000, "acquire_timeout_ms": 8000, "wait": {"strategy": "pubsub", "fallback_ms": 5000}},
    "clients": ["A", "B", "C"],
    "steps": [
      {"client": "A", "do": "acquire"},
      {"client": "B", "do": "acquire", "wait_for": {"inside": "A"}},
      {"client": "C", "do": "acquire", "wait_for": {"inside": "A"}},
      {"client": "A", "do": "work", "work_ms": 200},
      {"client": "A", "do": "release"},
      {"client": "B", "do": "release"},
      {"client": "C", "do": "release"}])");
  const Judged j = run(s, "lua_owner");
  EXPECT_EQ(j.result.verdict, Verdict::kOk);
  for (const char* waiter : {"B", "C"}) {
    const Nanos waited = acquire_latency(j.outcome.history, waiter);
    EXPECT_GE(waited, ms_to_ns(150)) << waiter;   // it really waited for A
    EXPECT_LT(waited, ms_to_ns(4000)) << waiter;  // and a release woke it, not the fallback
  }
}

// A notify waiter is woken by the release, not by its (here 5 s) fallback.
TEST(WaitStrategies, NotifyWakesTheWaiterOnRelease) {
  const Scenario s = scripted("lua_owner", R"(
    "lock": {"ttl_ms": 10000, "acquire_timeout_ms": 8000, "wait": {"strategy": "notify", "fallback_ms": 5000}},
    "clients": ["A", "B"],
    "steps": [
      {"client": "A", "do": "acquire"},
      {"client": "B", "do": "acquire", "wait_for": {"inside": "A"}},
      {"client": "A", "do": "work", "work_ms": 100},
      {"client": "A", "do": "release"},
      {"client": "B", "do": "release"}])");
  const Judged j = run(s, "lua_owner");
  EXPECT_EQ(j.result.verdict, Verdict::kOk);
  const Nanos waited = acquire_latency(j.outcome.history, "B");
  EXPECT_GE(waited, ms_to_ns(90));    // it really waited for A
  EXPECT_LT(waited, ms_to_ns(2500));  // and was woken long before the 5 s fallback
}

// Renewal keeps the lease alive past its TTL, so B cannot get in; without renewal it can.
TEST(DriverFaults, RenewalKeepsTheLease) {
  const std::string body = R"(
    "lock": {"ttl_ms": 300, "renew_period_ms": 30, "acquire_timeout_ms": 2000},
    "clients": ["A", "B"],
    "steps": [
      {"client": "A", "do": "acquire"},
      {"client": "A", "do": "work", "until": {"inside": "B"}, "max_ms": 800},
      {"client": "B", "do": "sleep", "sleep_ms": 400},
      {"client": "B", "do": "acquire", "timeout_ms": 0},
      {"client": "A", "do": "release"},
      {"client": "B", "do": "release"}])";
  const Judged renewed = run(scripted("lua_owner_renew", body), "lua_owner_renew");
  EXPECT_EQ(renewed.result.verdict, Verdict::kOk);
  EXPECT_EQ(renewed.result.stats.acquires_failed, 1);  // B's single try found it held
  EXPECT_GE(renewed.result.stats.extends_ok, 10);      // ~800 ms / 30 ms
  EXPECT_EQ(renewed.result.stats.extends_failed, 0);
  const Judged plain = run(scripted("lua_owner", body), "lua_owner");
  EXPECT_EQ(plain.result.verdict, Verdict::kMutexViolation);
  EXPECT_EQ(plain.result.causes(), std::vector<std::string>{"lease_expired"});
}

// crash_at on a variant without that checkpoint crashes right after the call, and says so.
TEST(DriverFaults, CrashAtMissingCheckpointCrashesAfterTheCall) {
  const Judged j = run(catalogue("crash-between-setnx-and-expire"), "lua_owner");
  EXPECT_EQ(j.result.verdict, Verdict::kOk);
  EXPECT_EQ(j.result.stats.crashes, 1);
  ASSERT_EQ(j.result.count(FindingKind::kRecovery), 1u);
  bool noted = false;
  for (const std::string& note : j.outcome.notes)
    noted |= note.find("no checkpoint") != std::string::npos;
  EXPECT_TRUE(noted);
  // With the checkpoint, the acquire never completes and the key keeps no TTL: a deadlock.
  const Judged gap = run(catalogue("crash-between-setnx-and-expire"), "setnx_then_expire");
  EXPECT_EQ(gap.result.verdict, Verdict::kDeadlock);
}

// A pause_at stops the client inside the lock's call, and the history shows it as a pause window
// aimed at that client, on threads and on worker processes alike (it stays the stale release it
// was).
TEST(DriverFaults, PauseInsideACallIsAPauseWindow) {
  for (const Executor executor : {Executor::kThreads, Executor::kProcesses}) {
    Scenario scenario = catalogue("get-then-del-race");
    scenario.executor = executor;
    const Judged j = run(scenario, "get_then_del");
    EXPECT_EQ(j.result.causes(), std::vector<std::string>{"stale_release"});
    const int a = client(j, "A");
    int pauses = 0;
    for (const FaultWindow& fault : j.result.faults) {
      if (fault.kind != FaultKind::kPause) continue;
      ++pauses;
      EXPECT_EQ(fault.client, a);
      // A paused after its GET until B was inside: the window spans B's acquire.
      EXPECT_LT(fault.from_ns, hold_of_client(j, "B").start_ns);
      EXPECT_GT(fault.to_ns, hold_of_client(j, "B").start_ns);
    }
    EXPECT_EQ(pauses, 1) << to_string(executor);
  }
}

// An expired lease lets two buyers sell the last item: oversell and a lost update are found.
TEST(DriverResources, StockOversellAndLostUpdate) {
  const Judged j = run(catalogue("stock-deduction"), "set_nx_ex");
  EXPECT_EQ(j.result.verdict, Verdict::kMutexViolation);
  std::set<std::string> kinds;
  for (const Finding* f : j.result.of(FindingKind::kResourceCorrupted)) kinds.insert(f->cause);
  EXPECT_EQ(kinds, (std::set<std::string>{"lost_update", "oversell"}));
  const Judged renewed = run(catalogue("stock-deduction"), "lua_owner_renew");
  EXPECT_EQ(renewed.result.verdict, Verdict::kOk);
  EXPECT_TRUE((renewed.result.count(FindingKind::kResourceCorrupted) == 0));
}

// Two jobs that both found no record both create it when the lease expired: one duplicate.
TEST(DriverResources, FindOrCreateDuplicate) {
  const Judged j = run(catalogue("find-or-create-race"), "lua_owner");
  ASSERT_EQ(j.result.count(FindingKind::kResourceCorrupted), 1u);
  EXPECT_EQ(j.result.of(FindingKind::kResourceCorrupted)[0]->cause, "duplicate");
  EXPECT_EQ(j.result.of(FindingKind::kResourceCorrupted)[0]->record, "1");
}

// The fenced store refuses a write presenting a lower fencing number than one it has accepted,
// changing nothing; it accepts an equal number (the same holder again) and a higher one, and a
// write with no number, which leaves the highest accepted number as it was.
TEST(DriverResources, FencedStoreRefusesALowerNumber) {
  HiredisConnection connection(server->endpoint(), {});
  const std::string key = "locksim:fenced-store:stock";
  auto value = [&connection, &key] { return connection.command({"GET", key}).reply.str; };
  auto highest = [&connection, &key] {
    return connection.command({"GET", key + ":highest_fencing"}).reply.str;
  };
  auto write = [&connection, &key](std::int64_t v, std::int64_t fencing) {
    const RedisResult r = fenced_store_write(connection, key, v, fencing);
    EXPECT_TRUE(r.ok()) << r.describe();
    return r.reply.is_integer(1);
  };
  EXPECT_TRUE(write(9, 34));
  EXPECT_EQ(value(), "9");
  EXPECT_EQ(highest(), "34");
  EXPECT_FALSE(write(8, 33));
  EXPECT_EQ(value(), "9");
  EXPECT_EQ(highest(), "34");
  EXPECT_TRUE(write(7, 34));
  EXPECT_TRUE(write(6, 35));
  EXPECT_EQ(highest(), "35");
  EXPECT_TRUE(write(5, -1));
  EXPECT_EQ(value(), "5");
  EXPECT_EQ(highest(), "35");
  EXPECT_FALSE(write(4, 0));
  EXPECT_EQ(value(), "5");
  connection.command({"DEL", key, key + ":highest_fencing"});
}

// Kleppmann's pause, run: A stalls past its lease after reading the stock, B gets in and sells one,
// A writes from its stale read. Both locks let the windows overlap (lease_expired). The renewing
// lock hands out no fencing numbers, so the fenced store accepts A's write and B's sale is lost;
// lua_owner_fenced's grants carry 1 and 2, the writes present them, and the store refuses A's.
TEST(DriverResources, FencingSavesTheResource) {
  Scenario scenario = catalogue("fencing-saves-the-resource");
  scenario.executor = Executor::kThreads;  // here; faults_test runs it as worker processes
  const Judged renewing = run(scenario, "lua_owner_renew");
  EXPECT_EQ(renewing.result.verdict, Verdict::kMutexViolation);
  EXPECT_EQ(renewing.result.causes(), std::vector<std::string>{"lease_expired"});
  EXPECT_FALSE(renewing.result.resource_intact());
  ASSERT_EQ(renewing.result.count(FindingKind::kResourceCorrupted), 1u);
  EXPECT_EQ(renewing.result.of(FindingKind::kResourceCorrupted)[0]->cause, "lost_update");
  EXPECT_EQ(renewing.result.stats.stale_writes_accepted, 1);
  EXPECT_EQ(renewing.result.stats.stale_writes_rejected, 0);

  const Judged fenced = run(scenario, "lua_owner_fenced");
  EXPECT_EQ(fenced.result.verdict, Verdict::kMutexViolation);
  EXPECT_EQ(fenced.result.causes(), std::vector<std::string>{"lease_expired"});
  EXPECT_TRUE(fenced.result.resource_intact());
  EXPECT_EQ(fenced.result.stats.resource_writes, 1);
  EXPECT_EQ(fenced.result.stats.stale_writes_accepted, 0);
  EXPECT_EQ(fenced.result.stats.stale_writes_rejected, 1);
  ASSERT_EQ(fenced.result.count(FindingKind::kStaleWrite), 1u);
  const Finding& stale = *fenced.result.of(FindingKind::kStaleWrite)[0];
  EXPECT_EQ(stale.clients, (std::vector<int>{client(fenced, "A"), client(fenced, "B")}));
  // Every grant and write carries its number: A's grant 1, B's grant 2.
  std::map<std::pair<int, Op>, std::int64_t> numbers;
  for (const Event& e : fenced.outcome.history.events) {
    if (e.f == Op::kAcquire && e.type == EventType::kOk) {
      numbers[{e.client, e.f}] = e.acquire().fencing;
    }
    if (e.f == Op::kWrite) {
      numbers[{e.client, e.f}] = e.resource().fencing;
      EXPECT_EQ(e.type == EventType::kFail, e.client == client(fenced, "A"));
      if (e.type == EventType::kFail) {
        EXPECT_EQ(e.error, ErrorKind::kFenced);
      }
    }
  }
  EXPECT_EQ((numbers[{client(fenced, "A"), Op::kAcquire}]), 1);
  EXPECT_EQ((numbers[{client(fenced, "A"), Op::kWrite}]), 1);
  EXPECT_EQ((numbers[{client(fenced, "B"), Op::kAcquire}]), 2);
  EXPECT_EQ((numbers[{client(fenced, "B"), Op::kWrite}]), 2);
}

// Doc D's log artifact: naive timestamps show overlaps on a correct lock, the history none.
TEST(DriverWorkload, NaiveTimestampsShowFalseOverlaps) {
  const Judged j = run(catalogue("doc-d-log-timing"), "lua_owner");
  EXPECT_EQ(j.result.verdict, Verdict::kOk);
  EXPECT_TRUE((j.result.count(FindingKind::kMutexViolation) == 0));
  EXPECT_GT(j.result.naive_timestamp_overlaps, 0);
}

// A paused client renews nothing: its lease runs out while it is frozen, B gets in, and the
// renewal that fell due runs only after the resume (where an owner-checked one is refused).
TEST(DriverFaults, PauseFreezesTheRenewal) {
  const Judged j = run(catalogue("renewal-after-pause"), "lua_owner_renew");
  EXPECT_EQ(j.result.verdict, Verdict::kMutexViolation);
  EXPECT_EQ(j.result.causes(), std::vector<std::string>{"lease_expired"});
  EXPECT_EQ(j.result.count(FindingKind::kStolenRenewal), 0u);
  const History& h = j.outcome.history;
  const int a = client(j, "A");
  // The nemesis records the pause window, aimed at A.
  Nanos paused = -1, resumed = -1;
  for (const Event& e : h.events) {
    if (e.f != Op::kFault || e.fault().target != a || e.fault().kind != FaultKind::kPause) continue;
    EXPECT_EQ(h.clients.at(static_cast<std::size_t>(e.client)), "nemesis");
    (e.fault().phase == FaultPhase::kStart ? paused : resumed) = e.time_ns;
  }
  ASSERT_GE(paused, 0);
  ASSERT_GT(resumed, paused);
  int extends_after_resume = 0;
  for (const Event& e : h.events) {
    if (e.client != a || e.f != Op::kExtend || e.type != EventType::kInvoke) continue;
    EXPECT_FALSE(e.time_ns > paused && e.time_ns < resumed) << "renewed while frozen";
    if (e.time_ns >= resumed) ++extends_after_resume;
  }
  EXPECT_GE(extends_after_resume, 1);
  // A's window holds the pause: it is a faulted window, so the violation is not counted
  // "outside faults".
  EXPECT_EQ(j.result.violations_outside_faults, 0);
}

// A renewing holder that crashes after renewing frees the lock one TTL after its last renewal.
TEST(DriverFaults, CrashAfterRenewalsRecoversByTheTtl) {
  const Judged j = run(catalogue("crash-after-renewals"), "lua_owner_renew");
  EXPECT_EQ(j.result.verdict, Verdict::kOk);
  EXPECT_GE(j.result.stats.extends_ok, 3);
  ASSERT_EQ(j.result.count(FindingKind::kRecovery), 1u);
  const Finding& recovery = *j.result.of(FindingKind::kRecovery)[0];
  EXPECT_GE(recovery.to_ns, 0);
  EXPECT_NE(recovery.words.find("last renewed at"), std::string::npos) << recovery.words;
}

// A waiter that dies in lua_fair_queue's queue (crash_at "queued") is recorded as an acquire that
// failed ("crashed"), not one that may hold the lock; the next waiter gets the free lock only
// after the dead one's queue timeout, which the checker accepts below stuck_ms and reports as a
// deadlock (recovered late) when stuck_ms is shorter than that wait.
TEST(DriverFaults, DeadWaiterBlocksTheFairQueueForOneQueueTimeout) {
  Scenario scenario = catalogue("fair-queue-dead-waiter");
  const Judged j = run(scenario, "lua_fair_queue");
  EXPECT_EQ(j.result.verdict, Verdict::kOk);
  EXPECT_EQ(j.result.count(FindingKind::kIndeterminate), 0u);
  EXPECT_EQ(j.result.stats.crashes, 1);
  const History& h = j.outcome.history;
  bool b_failed_crashed = false;
  for (const Event& e : h.events) {
    if (e.client == client(j, "B") && e.f == Op::kAcquire && e.type == EventType::kFail) {
      b_failed_crashed = e.error == ErrorKind::kCrashed;
    }
  }
  EXPECT_TRUE(b_failed_crashed);
  // C queued behind B before A released; B's place, taken right after A's acquire, lasted 400 ms.
  const Nanos c_waited = acquire_latency(h, "C");
  EXPECT_GE(c_waited, ms_to_ns(300));
  EXPECT_LT(c_waited, ms_to_ns(scenario.check.stuck_ms));

  scenario.check.stuck_ms = 100;
  const CheckResult strict = check_history(h, check_options(scenario));
  EXPECT_EQ(strict.verdict, Verdict::kDeadlock);
  ASSERT_EQ(strict.count(FindingKind::kDeadlock), 1u);
  EXPECT_EQ(strict.of(FindingKind::kDeadlock)[0]->cause, "recovered_late");
  EXPECT_EQ(strict.of(FindingKind::kDeadlock)[0]->clients[0], client(j, "C"));
}

// A run stopped by its time limit records the stop in its history and is unknown, never ok.
TEST(DriverControl, TimeLimitIsRecordedAndUnknown) {
  Scenario s = scripted("lua_owner", R"(
    "lock": {"ttl_ms": 500},
    "clients": ["A", "B"],
    "steps": [
      {"client": "A", "do": "acquire"},
      {"client": "A", "do": "work", "until": {"crashed": "B"}, "max_ms": 100000},
      {"client": "A", "do": "release"}])");
  s.time_limit_ms = 1000;
  const Judged j = run(s, "lua_owner");
  EXPECT_TRUE(j.outcome.timed_out);
  EXPECT_EQ(j.result.verdict, Verdict::kUnknown);
  ASSERT_EQ(j.result.count(FindingKind::kIncomplete), 1u);
  EXPECT_EQ(j.result.of(FindingKind::kIncomplete)[0]->cause, "time_limit");
  EXPECT_EQ(j.outcome.history.clients.back(), kHarnessClient);
}

// A server that dies while a client waits stops the run, is recorded, and makes it an error.
TEST(DriverControl, LostServerIsRecordedAndAnError) {
  RedisServer doomed = RedisServer::start({});
  const Scenario s = scripted("lua_owner", R"(
    "lock": {"ttl_ms": 10000, "acquire_timeout_ms": 20000},
    "clients": ["A", "B"],
    "steps": [
      {"client": "A", "do": "acquire"},
      {"client": "B", "do": "acquire"},
      {"client": "A", "do": "work", "work_ms": 15000},
      {"client": "A", "do": "release"},
      {"client": "B", "do": "release"}])");
  StopSignal stop;
  RunRequest request{
      s, *find_variant("lua_owner"), 1, doomed.endpoint(), "locksim:lost:", stop, {}, true, {}};
  std::thread killer([&doomed] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    kill_server_now(doomed.pid());
  });
  const auto started = std::chrono::steady_clock::now();
  const RunOutcome outcome = run_scenario(request);
  killer.join();
  EXPECT_TRUE(outcome.server_lost);
  // The watch noticed within a few of its 200 ms checks, not at the end of A's 15 s of work.
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  const CheckResult r = check_history(outcome.history, check_options(s));
  EXPECT_EQ(r.verdict, Verdict::kError);
  EXPECT_EQ(r.count(FindingKind::kServerLost), 1u);
}

// A looping Lua script on the private server is ended (SCRIPT KILL) and recorded as the lock's
// error; the server answers again for the next run.
TEST(DriverControl, LoopingScriptIsKilledAndTheServerRecovers) {
  const Scenario s = workload("lua_owner", R"(, "clients": 1, "cycles": 1)");
  HiredisConnection admin(server->endpoint(), {});
  // Stand-in for a user lock's looping script: another connection runs it, the run's client then
  // meets a BUSY server.
  std::thread looping([] {
    HiredisConnection c(server->endpoint(), ConnectionOptions{std::chrono::milliseconds(2000),
                                                              std::chrono::milliseconds(4000)});
    c.command({"EVAL", "while true do end", "0"});
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const Judged j = run(s, "lua_owner");
  looping.join();
  EXPECT_FALSE(j.outcome.server_lost);
  EXPECT_EQ(j.result.verdict, Verdict::kError);  // BUSY replies to the lock's own calls
  EXPECT_TRUE(admin.command({"PING"}).ok());
  bool killed = false;
  for (const std::string& note : j.outcome.notes)
    killed |= note.find("SCRIPT KILL") != std::string::npos;
  EXPECT_TRUE(killed);
}

// --- the executors: threads, one event loop, worker processes -------------------------------

// on: `scenario` with its clients run on `executor`, as `run --clients` would run it.
Scenario on(Executor executor, Scenario scenario) {
  run_clients_as(scenario, executor);
  return scenario;
}

constexpr Executor kExecutors[] = {Executor::kThreads, Executor::kEventLoop, Executor::kProcesses};

// Counts: how many events of each kind (client, op, type) a history has.
using Counts = std::map<std::tuple<std::string, int, int>, int>;

Counts counts(const History& h) {
  Counts c;
  for (const Event& e : h.events) {
    c[{h.clients[static_cast<std::size_t>(e.client)], static_cast<int>(e.f),
       static_cast<int>(e.type)}] += 1;
  }
  return c;
}

// Every host records what the threads record: for the same workload and seed, the same counts
// of every event type per client, and no false alarm under contention for every variant that has
// a one-command form (the event loop runs no other), on each executor and on the simulator.
TEST(DriverExecutors, RecordWhatTheThreadsRecord) {
  for (const LockVariant* variant : all_variants()) {
    if (!variant->one_command()) continue;
    const std::string name(variant->name());
    const Scenario scenario = workload(name, R"(, "clients": 6, "cycles": 80)");
    std::optional<Counts> on_threads;
    for (const Executor executor : kExecutors) {
      const std::string what = name + " on " + std::string(to_string(executor));
      const Judged j = run(on(executor, scenario), name, 7);
      EXPECT_EQ(j.result.verdict, Verdict::kOk) << what;
      EXPECT_EQ(j.result.stats.acquires_ok, 480) << what;
      EXPECT_EQ(j.result.stats.releases_ok, 480) << what;
      if (!on_threads) on_threads = counts(j.outcome.history);  // kExecutors starts with threads
      EXPECT_EQ(counts(j.outcome.history), *on_threads) << what;
    }
    const Judged sim = simulated(scenario, name, 7);
    EXPECT_EQ(sim.result.verdict, Verdict::kOk) << name << " on the simulator";
    EXPECT_EQ(counts(sim.outcome.history), *on_threads) << name << " on the simulator";
  }
}

// The waking wait strategies run on every executor and on the simulator: the event loop sends
// each client's BLPOP ("notify") or SUBSCRIBE ("pubsub") on a connection of the client's own, and
// the release's signal on its own connection. The fallback (60 s) is far beyond the acquire timeout
// (15 s), so a waiter that a release did not wake gives up and the acquire counts fail: every
// acquire granted means every waiter was woken. The counts of every event type per client are the
// threads' own.
TEST(DriverExecutors, WakingWaitsRunOnEveryExecutor) {
  for (const std::string strategy : {"notify", "pubsub"}) {
    const std::string lock =
        R"({"ttl_ms": 5000, "acquire_timeout_ms": 15000, "wait": {"strategy": ")" + strategy +
        R"(", "fallback_ms": 60000}})";
    const Scenario scenario = workload("lua_owner", R"(, "clients": 4, "cycles": 40)", lock);
    std::optional<Counts> on_threads;
    for (const Executor executor : kExecutors) {
      const std::string what = strategy + " on " + std::string(to_string(executor));
      const Judged j = run(on(executor, scenario), "lua_owner", 3);
      EXPECT_EQ(j.result.verdict, Verdict::kOk) << what;
      EXPECT_EQ(j.result.stats.acquires_ok, 160) << what;
      EXPECT_EQ(j.result.stats.acquires_failed, 0) << what;
      EXPECT_EQ(j.result.stats.releases_ok, 160) << what;
      if (!on_threads) on_threads = counts(j.outcome.history);  // kExecutors starts with threads
      EXPECT_EQ(counts(j.outcome.history), *on_threads) << what;
    }
    const Judged sim = simulated(scenario, "lua_owner", 3);
    EXPECT_EQ(sim.result.verdict, Verdict::kOk) << strategy << " on the simulator";
    EXPECT_EQ(sim.result.stats.acquires_failed, 0) << strategy << " on the simulator";
    EXPECT_EQ(counts(sim.outcome.history), *on_threads) << strategy << " on the simulator";
  }
}

// Renewal runs on every host: lua_owner_renew holds each lock 1.2-1.3 s on a 1 s lease renewed
// every 100 ms while another client polls for it, on threads, the event loop (a renewal timer and
// a connection of each client's own), worker processes and the simulator. Without renewal the
// lease expires inside every hold and the poller takes the lock (lua_owner, the control, is
// caught); with it no hold is violated and every hold was extended.
TEST(DriverExecutors, RenewalRunsOnEveryExecutor) {
  const std::string lock = R"({"ttl_ms": 1000, "renew_period_ms": 100,
      "acquire_timeout_ms": 20000, "wait": {"interval_ms": 1}})";
  const std::string body = R"(, "clients": 2, "cycles": 2, "work_ms": {"min": 1200, "max": 1300})";
  const Judged control = run(workload("lua_owner", body, lock), "lua_owner", 5);
  EXPECT_EQ(control.result.verdict, Verdict::kMutexViolation);
  const Scenario scenario = workload("lua_owner_renew", body, lock);
  const auto judged_ok = [](const Judged& j, const std::string& what) {
    EXPECT_EQ(j.result.verdict, Verdict::kOk) << what;
    EXPECT_EQ(j.result.stats.acquires_ok, 4) << what;
    EXPECT_EQ(j.result.stats.releases_ok, 4) << what;
    EXPECT_GE(j.result.stats.extends_ok, 4) << what;  // about 11 per hold
    EXPECT_EQ(j.result.stats.extends_failed, 0) << what;
  };
  for (const Executor executor : kExecutors) {
    judged_ok(run(on(executor, scenario), "lua_owner_renew", 5),
              "lua_owner_renew on " + std::string(to_string(executor)));
  }
  judged_ok(simulated(scenario, "lua_owner_renew", 5), "lua_owner_renew on the simulator");
}

// A lost iteration (Doc D's drawn "lose") runs on every host: each holder of lua_owner_renew stops
// renewing its 300 ms lease at once and stays inside 900 ms instead of working. Every client
// records one lose_lock per cycle, none of its extensions is sent between a lose_lock and its
// release, and the lease expires inside the hold while the other client polls: it takes the
// lock (mutex_violation) on threads, the event loop (until 2026-11-29 it refused the kind),
// worker processes and the simulator.
TEST(DriverExecutors, LoseRunsOnEveryExecutor) {
  const std::string lock = R"({"ttl_ms": 300, "renew_period_ms": 100,
      "acquire_timeout_ms": 20000, "wait": {"interval_ms": 1}})";
  const std::string body = R"(, "clients": 2, "cycles": 2, "lose_probability": 1,
      "lose_sleep_ms": 900)";
  const Scenario scenario = workload("lua_owner_renew", body, lock);
  const auto judged = [](const Judged& j, const std::string& what) {
    EXPECT_EQ(j.result.verdict, Verdict::kMutexViolation) << what;
    EXPECT_EQ(j.result.stats.acquires_ok, 4) << what;
    const History& h = j.outcome.history;
    std::map<std::string, int> lost;       // lose_lock events by client
    std::map<std::string, bool> renewing;  // by client: no lose_lock since its last release
    for (const Event& e : h.events) {
      const std::string& client = h.clients[static_cast<std::size_t>(e.client)];
      if (e.f == Op::kFault && e.fault().kind == FaultKind::kLoseLock) {
        ++lost[client];
        renewing[client] = false;
      } else if (e.f == Op::kRelease && e.type == EventType::kInvoke) {
        renewing[client] = true;
      } else if (e.f == Op::kExtend && e.type == EventType::kInvoke) {
        EXPECT_NE(renewing.count(client) != 0 && !renewing[client], true)
            << what << ": " << client << " extended after its lose_lock";
      }
    }
    EXPECT_EQ(lost, (std::map<std::string, int>{{"c0", 2}, {"c1", 2}})) << what;
  };
  for (const Executor executor : kExecutors) {
    judged(run(on(executor, scenario), "lua_owner_renew", 9),
           "lua_owner_renew on " + std::string(to_string(executor)));
  }
  judged(simulated(scenario, "lua_owner_renew", 9), "lua_owner_renew on the simulator");
}

// The protected resource runs on every host: each client of a workload reads it inside and, as
// the application logic says, sells one of the stock (a counter; a fenced counter, shown
// lua_owner_fenced's fencing numbers) or creates a record it did not find, and the event loop
// sends the same commands on its connection (until 2026-11-29 it refused a resource). The stock
// never runs out, so every cycle of a counter reads and writes and the counts of every event type
// per client are the threads'; the records are created once each, whoever creates them. No host
// corrupts the resource or shows a violation.
TEST(DriverExecutors, ResourceRunsOnEveryExecutor) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"lua_owner", R"({"kind": "counter", "name": "stock", "initial": 100000})"},
      {"lua_owner_fenced", R"({"kind": "fenced_counter", "name": "stock", "initial": 100000})"},
      {"lua_owner", R"({"kind": "find_or_create", "name": "projects", "ids": 3})"}};
  for (const auto& [name, resource] : cases) {
    const std::string text = R"({"name": "r", "source": {"doc": "none", "claim": "test"},
      "variants": [")" + name +
                             R"("],
      "lock": {"ttl_ms": 5000, "acquire_timeout_ms": 20000, "wait": {"interval_ms": 1}},
      "resource": )" + resource +
                             R"(,
      "workload": {"work_ms": {"min": 0, "max": 1}, "clients": 4, "cycles": 30},
      "expect": {")" + name + R"(": {"verdict": "ok", "resource": "intact"}}})";
    const Scenario scenario =
        parse_scenario(nlohmann::json::parse(text), "inline.json", variant_names());
    const bool counts_stock = scenario.resource.kind != ResourceConfig::Kind::kFindOrCreate;
    // per_op: events of each (client, op, type); for records, of each (op, type) over all.
    const auto per_op = [counts_stock](const History& h) {
      Counts c = counts(h);
      if (counts_stock) return c;
      Counts all;
      for (const auto& [key, n] : c) all[{"", std::get<1>(key), std::get<2>(key)}] += n;
      return all;
    };
    std::optional<Counts> on_threads;
    const auto judged = [&](const Judged& j, const std::string& what) {
      EXPECT_EQ(j.result.verdict, Verdict::kOk) << what;
      EXPECT_EQ(j.result.stats.acquires_ok, 120) << what;
      int reads = 0;
      int writes = 0;
      for (const Event& e : j.outcome.history.events) {
        if (e.type != EventType::kOk) continue;
        reads += e.f == Op::kRead ? 1 : 0;
        writes += e.f == Op::kWrite ? 1 : 0;
      }
      EXPECT_EQ(reads, 120) << what;
      EXPECT_EQ(writes, counts_stock ? 120 : 3) << what;
      if (!on_threads) on_threads = per_op(j.outcome.history);  // kExecutors starts with threads
      EXPECT_EQ(per_op(j.outcome.history), *on_threads) << what;
    };
    for (const Executor executor : kExecutors) {
      judged(run(on(executor, scenario), name, 4),
             name + " with a " + resource + " on " + std::string(to_string(executor)));
    }
    judged(simulated(scenario, name, 4), name + " with a " + resource + " on the simulator");
  }
}

// An extend step runs on every host that runs scripted steps (extend_call): threads, worker
// processes and the simulator record the same events. A extends its 3 s lease twice inside a
// 0.5 s hold (its renewal, due 2.999 s after the grant, never fires), and B, polling, gets the lock
// only after A's release. Until 2026-11-29 an extend step ran in client processes only.
TEST(DriverExecutors, ExtendStepsRunOnEveryScriptedExecutor) {
  const Scenario scenario = parse_scenario(nlohmann::json::parse(R"({
    "name": "e", "source": {"doc": "none", "claim": "test"}, "variants": ["lua_owner_renew"],
    "lock": {"ttl_ms": 3000, "renew_period_ms": 2999, "acquire_timeout_ms": 10000,
             "wait": {"interval_ms": 5}},
    "clients": ["A", "B"],
    "steps": [
      {"client": "A", "do": "acquire"},
      {"client": "B", "do": "acquire", "wait_for": {"inside": "A"}},
      {"client": "A", "do": "work", "work_ms": 200},
      {"client": "A", "do": "extend"},
      {"client": "A", "do": "work", "work_ms": 200},
      {"client": "A", "do": "extend"},
      {"client": "A", "do": "work", "work_ms": 100},
      {"client": "A", "do": "release"},
      {"client": "B", "do": "release", "wait_for": {"inside": "B"}}],
    "expect": {"lua_owner_renew": "ok"}})"),
                                           "inline.json", variant_names());
  std::optional<Counts> on_threads;
  const auto judged = [&](const Judged& j, const std::string& what) {
    EXPECT_EQ(j.result.verdict, Verdict::kOk) << what;
    EXPECT_EQ(j.result.stats.acquires_ok, 2) << what;
    EXPECT_EQ(j.result.stats.extends_ok, 2) << what;
    EXPECT_EQ(j.result.stats.extends_failed, 0) << what;
    if (!on_threads) on_threads = counts(j.outcome.history);
    EXPECT_EQ(counts(j.outcome.history), *on_threads) << what;
  };
  for (const Executor executor : {Executor::kThreads, Executor::kProcesses}) {
    judged(run(on(executor, scenario), "lua_owner_renew", 2),
           "extend steps on " + std::string(to_string(executor)));
  }
  judged(simulated(scenario, "lua_owner_renew", 2), "extend steps on the simulator");
}

// ByClient: a sequence per client name.
using ByClient = std::map<std::string, std::vector<std::string>>;

// planned_draws: what `plan` decided for each client, as its history shows it: the planned work
// of each cycle, up to and including the first cycle that crashes.
ByClient planned_draws(const Plan& plan) {
  ByClient draws;
  for (std::size_t c = 0; c < plan.clients().size(); ++c) {
    std::vector<std::string>& client = draws[plan.clients()[c].name];
    for (std::int64_t n = 0; n < plan.scenario().workload->cycles; ++n) {
      const CyclePlan cycle = plan.cycle(c, n);
      client.push_back("work " + std::to_string(cycle.work_ms));
      if (cycle.of("crash") != 0) {
        client.push_back("crash");
        break;
      }
    }
  }
  return draws;
}

// recorded_draws: per client, each work event's planned time and each crash, in history order.
ByClient recorded_draws(const History& h) {
  ByClient draws;
  for (const Event& e : h.events) {
    const std::string& client = h.clients[static_cast<std::size_t>(e.client)];
    if (e.f == Op::kWork) draws[client].push_back("work " + std::to_string(e.work().planned_ms));
    if (e.f == Op::kCrash) draws[client].push_back("crash");
  }
  return draws;
}

// tokens: per client, the token of each granted acquire, in order.
ByClient tokens(const History& h) {
  ByClient by_client;
  for (const Event& e : h.events) {
    if (e.f == Op::kAcquire && e.type == EventType::kOk) {
      by_client[h.clients[static_cast<std::size_t>(e.client)]].emplace_back(h.token(e));
    }
  }
  return by_client;
}

// Every executor carries out the plan, and only the plan: without contention (a key per client)
// each client's history shows the work its plan drew for each cycle and crashes in the cycle its
// plan crashes it, and every attempt succeeds, so each client makes the same random draws in the
// same order on every executor: its tokens are the same sequence.
TEST(DriverExecutors, CarryOutThePlan) {
  const std::string common = R"(, "cycles": 25, "work_ms": {"min": 0, "max": 3})";
  const std::string crashing = R"(, "clients": 8, "keys": 8, "crash_probability": 0.3)";
  for (const std::string& body : {R"(, "clients": 4, "keys": 4)" + common, crashing + common}) {
    const Scenario scenario = workload("lua_owner", body);
    const Plan plan = compile_plan(scenario, 9);
    const ByClient planned = planned_draws(plan);
    const auto crashes = std::count_if(planned.begin(), planned.end(), [](const auto& client) {
      return client.second.back() == "crash";
    });
    EXPECT_EQ(crashes > 0, body.starts_with(crashing)) << "the plan crashes " << crashes;
    std::optional<ByClient> on_threads;
    for (const Executor executor : kExecutors) {
      const std::string what = body + " on " + std::string(to_string(executor));
      const Judged j = run(on(executor, scenario), "lua_owner", 9);
      EXPECT_EQ(j.result.verdict, Verdict::kOk) << what;
      EXPECT_EQ(recorded_draws(j.outcome.history), planned) << what;
      if (!on_threads) on_threads = tokens(j.outcome.history);  // kExecutors starts with threads
      EXPECT_EQ(tokens(j.outcome.history), *on_threads) << what;
    }
    ASSERT_EQ(on_threads->size(), scenario.clients.size()) << body;
  }
}

// Every executor records the fencing number of every lua_owner_fenced grant: in history order
// the numbers are exactly 1, 2, 3... (the grants of a correct lock follow each other).
TEST(DriverExecutors, RecordFencingNumbers) {
  const Scenario scenario = workload("lua_owner_fenced", R"(, "clients": 4, "cycles": 25)");
  for (const Executor executor : kExecutors) {
    const Judged j = run(on(executor, scenario), "lua_owner_fenced");
    EXPECT_EQ(j.result.verdict, Verdict::kOk) << to_string(executor);
    std::int64_t expected = 1;
    for (const Event& e : j.outcome.history.events) {
      if (e.f == Op::kAcquire && e.type == EventType::kOk) {
        EXPECT_EQ(e.acquire().fencing, expected++) << to_string(executor);
      }
    }
    EXPECT_EQ(expected, 101) << to_string(executor);
  }
}

// worker_session: what `locksim worker` answers to `requests` (one JSON object per line, all
// written at once, as a harness that sends "stop" early would), once `replies` replies (lines
// with an id) have come; stdin stays open until then, as a harness's does.
std::vector<nlohmann::json> worker_session(const std::vector<nlohmann::json>& requests,
                                           std::size_t replies_expected) {
  const std::filesystem::path out = std::filesystem::temp_directory_path() /
                                    ("locksim-driver-test-" + std::to_string(::getpid()) + ".out");
  const std::string command = std::string(LOCKSIM_BINARY) + " worker > " + out.string();
  FILE* worker = ::popen(command.c_str(), "w");
  EXPECT_NE(worker, nullptr) << command;
  if (worker == nullptr) return {};
  for (const nlohmann::json& request : requests)
    std::fputs((request.dump() + "\n").c_str(), worker);
  std::fflush(worker);
  std::vector<nlohmann::json> replies;
  for (int round = 0; round < 600 && replies.size() < replies_expected; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    replies.clear();
    std::ifstream file(out);
    for (std::string line; std::getline(file, line);) {
      nlohmann::json reply = nlohmann::json::parse(line, nullptr, false);
      // Progress lines ("cycles") come and go with the machine's speed; replies have an id.
      if (reply.is_object() && reply.contains("id")) replies.push_back(std::move(reply));
    }
  }
  EXPECT_EQ(::pclose(worker), 0);  // end of input ends the worker
  std::filesystem::remove(out);
  return replies;
}

// workload_request: a "workload" request for client A of `scenario`, recording into `history`.
nlohmann::json workload_request(const Scenario& scenario, const std::filesystem::path& history) {
  return {{"v", 1},
          {"id", 3},
          {"op", "workload"},
          {"scenario", scenario.resolved},
          {"client", 0},
          {"seed", 5},
          {"key_prefix", "locksim:worker-test:" + std::to_string(::getpid()) + ":"},
          {"origin_ns", real_clock().now_ns()},
          {"history", history.string()}};
}

std::vector<nlohmann::json> hello_and_connect(const std::string& variant) {
  return {{{"v", 1}, {"id", 1}, {"op", "hello"}},
          {{"v", 1},
           {"id", 2},
           {"op", "connect"},
           {"redis", {{"host", "127.0.0.1"}, {"port", server->endpoint().port}}},
           {"client", "A"},
           {"variant", variant},
           {"seed", 1},
           {"lock", lock_to_json(LockConfig{})}}};
}

// locksim's own worker runs a client's whole workload itself (no round trip to the harness per
// call) and hands over the client's history on the run's clock: every cycle, in order.
TEST(DriverExecutors, AWorkerRunsAWholeWorkload) {
  const Scenario scenario = workload("lua_owner_renew", R"(, "clients": 1, "cycles": 20)");
  const std::filesystem::path history_file =
      std::filesystem::temp_directory_path() /
      ("locksim-driver-test-" + std::to_string(::getpid()) + ".history");
  std::vector<nlohmann::json> requests = hello_and_connect("lua_owner_renew");
  requests.push_back(workload_request(scenario, history_file));
  const std::vector<nlohmann::json> replies = worker_session(requests, 3);
  ASSERT_EQ(replies.size(), 3u);
  EXPECT_EQ(replies[2].value("result", ""), "ok") << replies[2].dump();
  EXPECT_EQ(replies[2].value("cycles_done", -1), 20);
  EXPECT_FALSE(replies[2].value("stopped_early", true));
  const History history = read_history_transfer(history_file);
  std::filesystem::remove(history_file);
  int granted = 0;
  int released = 0;
  Nanos last = 0;
  for (const Event& e : history.events) {
    EXPECT_EQ(history.clients.at(static_cast<std::size_t>(e.client)), scenario.clients[0]);
    EXPECT_GE(e.time_ns, last);
    last = e.time_ns;
    granted += e.f == Op::kAcquire && e.type == EventType::kOk;
    released += e.f == Op::kRelease && e.type == EventType::kOk;
  }
  EXPECT_EQ(granted, 20);
  EXPECT_EQ(released, 20);
  EXPECT_EQ(check_history(history, check_options(scenario)).verdict, Verdict::kOk);
}

// "stop" (Ctrl-C, the time limit, a lost server in the harness) ends a workload running in the
// worker at its next cycle, and what it did so far still comes back; so does a request it
// cannot run (a scripted scenario).
TEST(DriverExecutors, AWorkerStopsItsWorkloadWhenTold) {
  const Scenario scenario =
      workload("lua_owner", R"(, "clients": 1, "cycles": 1000000, "work_ms": 1)");
  const std::filesystem::path history_file =
      std::filesystem::temp_directory_path() /
      ("locksim-driver-test-" + std::to_string(::getpid()) + ".stopped.history");
  std::vector<nlohmann::json> requests = hello_and_connect("lua_owner");
  requests.push_back(workload_request(scenario, history_file));
  requests.push_back({{"v", 1}, {"op", "stop"}});
  nlohmann::json scripted = workload_request(scenario, history_file);
  scripted["id"] = 4;
  scripted["scenario"] = nlohmann::json::parse(R"({"name": "s", "source": {"doc": "none",
    "claim": "test"}, "variants": ["lua_owner"], "clients": ["A"],
    "steps": [{"client": "A", "do": "acquire"}], "expect": {"lua_owner": "any"}})");
  requests.push_back(scripted);
  const std::vector<nlohmann::json> replies = worker_session(requests, 4);
  ASSERT_EQ(replies.size(), 4u);
  EXPECT_EQ(replies[2].value("result", ""), "ok") << replies[2].dump();
  EXPECT_TRUE(replies[2].value("stopped_early", false));
  EXPECT_LT(replies[2].value("cycles_done", 1000000), 1000000);
  EXPECT_TRUE(std::filesystem::exists(history_file));
  std::filesystem::remove(history_file);
  EXPECT_EQ(replies[3].value("result", ""), "fail") << replies[3].dump();
  EXPECT_EQ(replies[3].value("error", ""), "protocol");
}

// --- the event loop --------------------------------------------------------------------------

// A known failure is reproduced in the event-loop mode exactly as on threads: set_nx_ex with a
// lease shorter than the work lets a second client in (lease_expired) and the stale release
// deletes the new holder's lock; lua_owner, same timings, refuses the stale release.
TEST(DriverEventLoop, ReproducesTheLeaseExpiryFailure) {
  const std::string lock =
      R"({"ttl_ms": 20, "acquire_timeout_ms": 5000, "wait": {"strategy": "poll", "interval_ms": 2}})";
  const std::string body = R"(, "clients": 3, "cycles": 6, "work_ms": 50)";
  Scenario s = on(Executor::kEventLoop, workload("set_nx_ex", body, lock));
  s.workload->work_ms = {50, 50};
  const Judged broken = run(s, "set_nx_ex");
  EXPECT_EQ(broken.result.verdict, Verdict::kMutexViolation);
  const std::vector<std::string> causes = broken.result.causes();
  EXPECT_NE(std::find(causes.begin(), causes.end(), "lease_expired"), causes.end());
  Scenario owner = on(Executor::kEventLoop, workload("lua_owner", body, lock));
  owner.workload->work_ms = {50, 50};
  const Judged checked = run(owner, "lua_owner");
  EXPECT_EQ(checked.result.verdict, Verdict::kMutexViolation);
  for (const std::string& cause : checked.result.causes()) EXPECT_NE(cause, "stale_release");
}

// A crash in the event-loop mode closes the client's connection and leaves its lock: naive stays
// stuck (deadlock), a TTL lock recovers.
TEST(DriverEventLoop, CrashLeavesTheLock) {
  const std::string lock =
      R"({"ttl_ms": 200, "acquire_timeout_ms": 1200, "wait": {"interval_ms": 5}})";
  const std::string body = R"(, "clients": 2, "cycles": 3, "crash_probability": 1)";
  EXPECT_EQ(run(on(Executor::kEventLoop, workload("naive", body, lock)), "naive").result.verdict,
            Verdict::kDeadlock);
  const Judged ttl = run(on(Executor::kEventLoop, workload("set_nx_ex", body, lock)), "set_nx_ex");
  EXPECT_EQ(ttl.result.verdict, Verdict::kOk);
  EXPECT_EQ(ttl.result.stats.crashes, 2);
}

// Time-bounded and open-loop workloads end on time; a stop (time limit) is unknown, never ok.
TEST(DriverEventLoop, TimeBoundedOpenLoopAndTimeLimit) {
  const Judged timed = run(
      on(Executor::kEventLoop,
         workload("lua_owner",
                  R"(, "clients": 4, "warmup_ms": 100, "duration_ms": 400, "arrival_per_s": 200)")),
      "lua_owner");
  EXPECT_EQ(timed.result.verdict, Verdict::kOk);
  EXPECT_FALSE(timed.outcome.timed_out);
  // At most 4 clients x 200/s x 0.5 s, give or take the random phase of each schedule; how many
  // of them a slow machine (a sanitizer build) completes is not a property of the schedule.
  EXPECT_GT(timed.result.stats.acquires_ok, 0);
  EXPECT_LE(timed.result.stats.acquires_ok, 404);
  // Every acquire follows the schedule: it has an intended start, never after it was sent, and
  // each client's intended starts are 5 ms apart on average (200/s), in order.
  std::map<int, std::vector<Nanos>> intended;
  for (const Event& e : timed.outcome.history.events) {
    if (e.f != Op::kAcquire || e.type != EventType::kInvoke) continue;
    ASSERT_GE(e.schedule().intended_ns, 0);
    EXPECT_LE(e.schedule().intended_ns, e.time_ns);
    intended[e.client].push_back(e.schedule().intended_ns);
  }
  ASSERT_EQ(intended.size(), 4u);
  for (const auto& [client, starts] : intended) {
    EXPECT_TRUE(std::is_sorted(starts.begin(), starts.end())) << "client " << client;
  }

  Scenario endless =
      on(Executor::kEventLoop, workload("lua_owner", R"(, "clients": 3, "cycles": 1000000)"));
  endless.time_limit_ms = 1000;
  const Judged limited = run(endless, "lua_owner");
  EXPECT_TRUE(limited.outcome.timed_out);
  EXPECT_EQ(limited.result.verdict, Verdict::kUnknown);
}

// A variant that needs several commands per call is refused with the reason, before any client
// starts; so are the blocking wait strategies (by the loader's check, run_clients_as).
TEST(DriverEventLoop, RefusesWhatItCannotRun) {
  const Scenario s =
      on(Executor::kEventLoop, workload("setnx_then_expire", R"(, "clients": 2, "cycles": 2)"));
  StopSignal stop;
  RunRequest request{s,
                     *find_variant("setnx_then_expire"),
                     1,
                     server->endpoint(),
                     "locksim:refused:",
                     stop,
                     {},
                     true,
                     {}};
  const RunOutcome refused = run_scenario(request);
  EXPECT_NE(refused.harness_error.find("needs several commands"), std::string::npos)
      << refused.harness_error;
  EXPECT_TRUE(refused.history.events.empty());
  try {
    on(Executor::kEventLoop,
       workload("lua_owner", R"(, "clients": 2, "pause_probability": 0.5, "pause_ms": 10)"));
    ADD_FAILURE() << "a paused holder (the nemesis) in the event-loop mode was accepted";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("$.workload.pause_probability"), std::string::npos)
        << error.what();
  }
}

// The server dying under the event loop stops the run and is recorded (the replies that never
// come do not hang it).
TEST(DriverEventLoop, LostServerStopsTheLoop) {
  RedisServer doomed = RedisServer::start({});
  const Scenario s =
      on(Executor::kEventLoop, workload("lua_owner", R"(, "clients": 8, "cycles": 1000000)"));
  StopSignal stop;
  RunRequest request{
      s, *find_variant("lua_owner"), 1, doomed.endpoint(), "locksim:lost:", stop, {}, true, {}};
  std::thread killer([&doomed] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    kill_server_now(doomed.pid());
  });
  const RunOutcome outcome = run_scenario(request);
  killer.join();
  EXPECT_TRUE(outcome.server_lost);
  const CheckResult r = check_history(outcome.history, check_options(s));
  EXPECT_EQ(r.verdict, Verdict::kError);
}

// Proves a confirmation that shows the finding's signature between other clients than the
// minimal scenario names (who won a race went the other way) says so, with those clients,
// instead of "not reproduced": A holds to the end and B gets in after A's lease, every run,
// while the expectation names A and C.
TEST(Confirm, TheSameFindingBetweenOtherClientsIsConfirmedAsSuch) {
  const nlohmann::json document = nlohmann::json::parse(R"json({
    "name": "other", "source": {"doc": "none", "claim": "a race"},
    "variants": ["set_nx_ex"], "clients": ["A", "B", "C"],
    "lock": {"ttl_ms": 100, "acquire_timeout_ms": 1000, "reply_timeout_ms": 200,
             "wait": {"strategy": "poll", "interval_ms": 5}},
    "steps": [{"client": "A", "do": "acquire"}, {"client": "B", "do": "acquire"},
              {"client": "C", "do": "work", "work_ms": 1}],
    "expect": {"set_nx_ex": {"verdict": "any", "finding": {
      "signature": "mutex_violation (lease_expired)", "clients": ["A", "C"]}}}})json");
  StopSignal stop;
  const Confirmation c = confirm(document, *find_variant("set_nx_ex"), 2, stop);
  ASSERT_TRUE(c.error.empty()) << c.error;
  EXPECT_EQ(c.runs, 2);
  EXPECT_EQ(c.reproduced, 0);
  EXPECT_EQ(c.other_clients, 2);
  EXPECT_EQ(c.other_clients_seen, "A and B");
}

}  // namespace
}  // namespace locksim
