// faults_test: the faults beyond the documents, through the driver and the checkers, on a real
// redis-server with real worker processes and locksim's link proxy: a holder paused (SIGSTOP)
// past its lease, a crash that is a real SIGKILL, a lost acquire reply, a partition while
// holding, a release delayed past the lease, a release request lost (drop_commands); the same
// scenario on both executors; and no worker left behind by a run.
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "sim/checker/check.h"
#include "sim/driver/driver.h"
#include "sim/lock/registry.h"
#include "sim/plan/plan.h"
#include "sim/redis/connection.h"
#include "sim/redis/server.h"
#include "sim/report/run_record.h"
#include "sim/scenario/loader.h"
#include "sim/topology/topology.h"
#include "tests/support/shared_server.h"

namespace locksim {
namespace {

RedisServer* server = nullptr;

const ::testing::Environment* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new test_support::SharedServer(&server));

using test_support::catalogue;

Scenario load_scenario_text(const std::string& text) {
  return parse_scenario(nlohmann::json::parse(text), "inline.json", variant_names());
}

Scenario as_threads(Scenario scenario) {
  scenario.executor = Executor::kThreads;
  return scenario;
}

struct Judged {
  RunOutcome outcome;
  CheckResult result;
  int client(const std::string& name) const { return outcome.history.client_index(name); }
};

Judged run(const Scenario& scenario, const std::string& variant, std::uint64_t seed = 1) {
  static int counter = 0;
  StopSignal stop;
  const std::string prefix = "locksim:faults" + std::to_string(++counter) + ":" + variant + ":";
  RunRequest request{scenario, *find_variant(variant), seed, server->endpoint(), prefix, stop,
                     {}, true, {}, {LOCKSIM_BINARY, "worker"}};
  Judged judged{run_scenario(request), {}};
  EXPECT_TRUE(judged.outcome.harness_error.empty()) << judged.outcome.harness_error;
  judged.result = check_history(judged.outcome.history, check_options(scenario));
  return judged;
}

// workers: `locksim worker` processes whose parent is this test program (its redis-server is not
// one).
int workers() {
  int count = 0;
  DIR* proc = opendir("/proc");
  while (dirent* entry = readdir(proc)) {
    const std::string name = entry->d_name;
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat("/proc/" + name + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const std::size_t paren = text.rfind(')');
    if (paren == std::string::npos) continue;
    // After ") S " comes the parent pid.
    if (std::atoi(text.c_str() + paren + 4) != getpid()) continue;
    std::ifstream cmdline("/proc/" + name + "/cmdline");
    std::string args((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
    if (args.find(std::string("worker") + '\0') != std::string::npos) ++count;
  }
  closedir(proc);
  return count;
}

// The nemesis's window of kind `fault` on `target`: [start, end].
std::pair<Nanos, Nanos> window(const Judged& j, FaultKind fault, int target) {
  for (const FaultWindow& w : j.result.faults) {
    if (w.client == target && w.kind == fault) return {w.from_ns, w.to_ns};
  }
  ADD_FAILURE() << "no " << traits(fault).word << " window";
  return {-1, -1};
}

// A paused process renews nothing: no renewal of A is heard between the pause and the resume,
// B gets in when the lease runs out, and the violation is inside a fault window.
TEST(ProcessClients, PauseIsSigstopAndFreezesTheRenewal) {
  const Judged j = run(catalogue("gc-pause-past-lease"), "lua_owner_renew");
  EXPECT_EQ(j.result.verdict, Verdict::kMutexViolation);
  EXPECT_EQ(j.result.causes(), std::vector<std::string>{"lease_expired"});
  EXPECT_EQ(j.result.violations_outside_faults, 0);
  const int a = j.client("A");
  const auto [paused, resumed] = window(j, FaultKind::kPause, a);
  ASSERT_GT(resumed, paused + ms_to_ns(200));  // at least the rest of A's 300 ms lease
  int renewals_before = 0;
  for (const Event& e : j.outcome.history.events) {
    if (e.client != a || e.f != Op::kExtend || e.type != EventType::kInvoke) continue;
    EXPECT_FALSE(e.time_ns > paused + ms_to_ns(5) && e.time_ns < resumed) << "renewed while stopped";
    renewals_before += e.time_ns < paused;
  }
  EXPECT_GE(renewals_before, 2);  // the watchdog ran while A was not paused
  EXPECT_EQ(workers(), 0) << "a worker outlived its run";
}

// The same scenario on threads: the same verdict, the pause recorded by the same nemesis.
TEST(ProcessClients, ThreadsAndProcessesAgree) {
  const Judged j = run(as_threads(catalogue("gc-pause-past-lease")), "lua_owner_renew");
  EXPECT_EQ(j.result.verdict, Verdict::kMutexViolation);
  EXPECT_EQ(j.result.causes(), std::vector<std::string>{"lease_expired"});
  const auto [paused, resumed] = window(j, FaultKind::kPause, j.client("A"));
  EXPECT_GT(resumed, paused);
}

// A crash is SIGKILL: the kernel closes the worker's connection, the key outlives the process
// until its TTL, and without a TTL it never comes back.
TEST(ProcessClients, CrashIsSigkill) {
  Scenario scenario = catalogue("crash-in-critical-section");
  scenario.executor = Executor::kProcesses;
  const Judged naive = run(scenario, "naive");
  EXPECT_EQ(naive.result.verdict, Verdict::kDeadlock);
  const Judged ttl = run(scenario, "set_nx_ex");
  EXPECT_EQ(ttl.result.verdict, Verdict::kOk);
  ASSERT_EQ(ttl.result.count(FindingKind::kRecovery), 1u);
  const Finding& recovery = *ttl.result.of(FindingKind::kRecovery)[0];
  EXPECT_GE(recovery.to_ns - recovery.from_ns, ms_to_ns(200));
  EXPECT_EQ(workers(), 0);
}

// Fencing across the worker protocol: the fenced grant's number comes back in the acquire reply,
// each write presents it, and the store refuses paused A's write after B's: a real SIGSTOP past
// the lease still overlaps the windows, but the stock stays intact. Without numbers it is lost.
TEST(ProcessClients, FencedStoreRefusesThePausedWorkersWrite) {
  const Scenario scenario = catalogue("fencing-saves-the-resource");
  ASSERT_EQ(scenario.executor, Executor::kProcesses);
  const Judged fenced = run(scenario, "lua_owner_fenced");
  EXPECT_EQ(fenced.result.verdict, Verdict::kMutexViolation);
  EXPECT_TRUE(fenced.result.resource_intact());
  EXPECT_EQ(fenced.result.stats.stale_writes_rejected, 1);
  EXPECT_EQ(fenced.result.stats.stale_writes_accepted, 0);
  const int a = fenced.client("A");
  int refused = 0;
  for (const Event& e : fenced.outcome.history.events) {
    if (e.f == Op::kAcquire && e.type == EventType::kOk) {
      EXPECT_EQ(e.acquire().fencing, e.client == a ? 1 : 2);
    }
    if (e.f == Op::kWrite) {
      EXPECT_EQ(e.resource().fencing, e.client == a ? 1 : 2);
      if (e.type == EventType::kFail) {
        EXPECT_EQ(e.client, a);
        EXPECT_EQ(e.error, ErrorKind::kFenced);
        ++refused;
      }
    }
  }
  EXPECT_EQ(refused, 1);
  const Judged unfenced = run(scenario, "lua_owner_renew");
  EXPECT_FALSE(unfenced.result.resource_intact());
  EXPECT_EQ(unfenced.result.stats.stale_writes_accepted, 1);
  EXPECT_EQ(workers(), 0);
}

// A time-bounded workload starts its clock when its clients start, not when the first worker was
// spawned: four workers that take 400 ms each to start (a slow runtime) would otherwise use up
// the 100 + 300 ms of the run before any client began, and the run would record nothing.
TEST(ProcessClients, SlowWorkersDoNotEatATimeBoundedRun) {
  const Scenario scenario = load_scenario_text(R"({"name": "slow-start",
    "source": {"doc": "none", "claim": "test"}, "variants": ["lua_owner"],
    "clients_run_as": "processes",
    "lock": {"ttl_ms": 5000, "acquire_timeout_ms": 5000, "wait": {"interval_ms": 1}},
    "workload": {"clients": 4, "cycles": 1000000, "work_ms": {"min": 1, "max": 1},
                 "warmup_ms": 100, "duration_ms": 300},
    "expect": {"lua_owner": "ok"}})");
  StopSignal stop;
  RunRequest request{scenario, *find_variant("lua_owner"), 1, server->endpoint(),
                     "locksim:faults-slow:", stop, {}, true, {},
                     {"/bin/sh", "-c", "sleep 0.4; exec \"$0\" worker", LOCKSIM_BINARY}};
  const RunOutcome outcome = run_scenario(request);
  ASSERT_TRUE(outcome.harness_error.empty()) << outcome.harness_error;
  const CheckResult result = check_history(outcome.history, check_options(scenario));
  EXPECT_EQ(result.verdict, Verdict::kOk);
  EXPECT_GT(result.stats.acquires_ok, 4);
  EXPECT_EQ(workers(), 0);
}

// A renewal's invoke is recorded when locksim's own worker sent it (its "monotonic_ns"), not when
// the line arrived: on a loaded machine the line can come milliseconds late, and a late invoke
// puts the lease's earliest end past the truth (a lease_expired violation then read as a racy
// acquire). The stand-in worker sends the line 300 ms after the instant it names.
TEST(ProcessClients, RenewalInvokeIsStampedWhenTheWorkerSentIt) {
  const Scenario scenario = load_scenario_text(R"({"name": "late-line",
    "source": {"doc": "none", "claim": "test"}, "variants": ["lua_owner_renew"],
    "clients_run_as": "processes", "lock": {"ttl_ms": 5000},
    "clients": ["A"],
    "steps": [{"client": "A", "do": "acquire"},
              {"client": "A", "do": "work", "until": {"renewed": {"client": "A", "times": 1}},
               "max_ms": 3000},
              {"client": "A", "do": "release"}],
    "expect": {"lua_owner_renew": "any"}})");
  StopSignal stop;
  RunRequest request{scenario, *find_variant("lua_owner_renew"), 1, server->endpoint(),
                     "locksim:faults-late:", stop, {}, true, {},
                     {"/usr/bin/python3",
                      std::string(LOCKSIM_TEST_SOURCE_DIR) + "/tests/adapters/broken_adapter.py",
                      "late"}};
  const RunOutcome outcome = run_scenario(request);
  ASSERT_TRUE(outcome.harness_error.empty()) << outcome.harness_error;
  Nanos invoke = -1;
  Nanos ok = -1;
  for (const Event& e : outcome.history.events) {
    if (e.f != Op::kExtend) continue;
    if (e.type == EventType::kInvoke) invoke = e.time_ns;
    if (e.type == EventType::kOk) ok = e.time_ns;
  }
  ASSERT_GE(invoke, 0);
  ASSERT_GE(ok, 0);
  // Both lines arrived together; the invoke is stamped 300 ms before.
  EXPECT_GE(ok - invoke, ms_to_ns(250)) << "invoke at " << invoke << ", ok at " << ok;
}

// The server took the lock for A, A never heard: A's acquire is info (timeout), B had to wait
// for A's key to expire (so the acquire did run: its lease outlasts A's 2 s timeout), and the
// verdict is unknown, never ok.
TEST(LinkFaults, LostAcquireReplyIsUnknownNeverOk) {
  for (const Scenario& scenario :
       {catalogue("lost-acquire-reply"), as_threads(catalogue("lost-acquire-reply"))}) {
    const Judged j = run(scenario, "lua_owner");
    EXPECT_EQ(j.result.verdict, Verdict::kUnknown);
    EXPECT_EQ(j.result.count(FindingKind::kIndeterminate), 1u);
    bool a_info = false;
    int b_attempts = 0;
    for (const Event& e : j.outcome.history.events) {
      if (e.f != Op::kAcquire) continue;
      if (e.client == j.client("A") && e.type == EventType::kInfo) {
        a_info = e.error == ErrorKind::kTimeout;
      }
      if (e.client == j.client("B") && e.type == EventType::kOk) b_attempts = e.acquire().attempts;
    }
    EXPECT_TRUE(a_info) << "A's acquire is not recorded as info/timeout";
    EXPECT_GT(b_attempts, 1) << "B was not held back by the key A's lost acquire set";
  }
}

// The scenario sets how long a lost reply costs: with lock.reply_timeout_ms 300, A's call ends
// after 300 ms on every host, not after hiredis's 2 s, and the history says which deadline ran out.
TEST(LinkFaults, LostReplyCostsTheScenariosReplyTimeout) {
  Scenario scenario = catalogue("lost-acquire-reply");
  scenario.lock.reply_timeout_ms = 300;
  for (const Scenario& on_host : {scenario, as_threads(scenario)}) {
    const Judged j = run(on_host, "lua_owner");
    EXPECT_EQ(j.result.verdict, Verdict::kUnknown);
    std::string message;
    for (const Event& e : j.outcome.history.events) {
      if (e.f == Op::kAcquire && e.client == j.client("A") && e.type == EventType::kInfo) {
        message = std::string(j.outcome.history.message(e));
      }
    }
    EXPECT_TRUE(message.starts_with("no reply within 300 ms")) << "A's lost acquire: " << message;
  }
}

// Cut off while holding: the renewals cannot reach the server (none is answered while the link
// is cut), the lease expires there, B gets in while A works.
TEST(LinkFaults, PartitionWhileHoldingLetsTheLeaseExpire) {
  const Judged j = run(catalogue("partition-while-holding"), "lua_owner_renew");
  EXPECT_EQ(j.result.verdict, Verdict::kMutexViolation);
  EXPECT_EQ(j.result.causes(), std::vector<std::string>{"lease_expired"});
  const int a = j.client("A");
  const auto [cut, healed] = window(j, FaultKind::kPartition, a);
  // A renewal was sent while A was cut off, and nothing came back before the heal.
  int sent_while_cut = 0;
  for (const Event& e : j.outcome.history.events) {
    if (e.client != a || e.f != Op::kExtend || e.time_ns <= cut || e.time_ns >= healed) continue;
    if (e.type == EventType::kInvoke) {
      ++sent_while_cut;
    } else {
      ADD_FAILURE() << "an extend completed while A's link was cut, at " << e.time_ns;
    }
  }
  EXPECT_GE(sent_while_cut, 1);
}

// A release held in the network until B holds the lock: the unconditional DEL deletes B's key
// (C gets in beside B); the owner-checked release deletes nothing.
TEST(LinkFaults, DelayedReleaseDeletesOnlyWithoutOwnerCheck) {
  const Scenario scenario = catalogue("delayed-release");
  const Judged unchecked = run(scenario, "set_nx_ex");
  EXPECT_EQ(unchecked.result.verdict, Verdict::kMutexViolation);
  EXPECT_EQ(unchecked.result.causes(), std::vector<std::string>{"stale_release"});
  const Judged checked = run(scenario, "lua_owner");
  EXPECT_EQ(checked.result.verdict, Verdict::kOk);
  for (const Event& e : checked.outcome.history.events) {
    if (e.client == checked.client("A") && e.f == Op::kRelease && e.type == EventType::kOk) {
      EXPECT_EQ(e.release().deleted, 0);
    }
  }
}

// A lost request (drop_commands, every 2, through the real proxy and driver): A's acquire, the
// first command on its link inside the window, is granted; its release, the second, never
// reaches the server: A times out on it (info), the key stays, and B is held back until A's
// lease ends, never inside it. On threads and processes alike, the window is recorded around both
// calls.
TEST(LinkFaults, DroppedReleaseRequestLeavesTheKeyUntilItsTtl) {
  for (const Scenario& scenario :
       {catalogue("drop-every-nth-command"), as_threads(catalogue("drop-every-nth-command"))}) {
    const Judged j = run(scenario, "lua_owner");
    EXPECT_EQ(j.result.verdict, Verdict::kOk);
    const int a = j.client("A");
    const int b = j.client("B");
    const auto [opened, closed] = window(j, FaultKind::kDropCommands, a);
    Nanos a_granted = -1;
    Nanos b_granted = -1;
    bool a_release_lost = false;
    int b_attempts = 0;
    for (const Event& e : j.outcome.history.events) {
      // The lease began when the SET ran, after the successful attempt was sent and before its
      // reply was read (a process client reads it late under load): B may get in from then on.
      if (e.client == a && e.f == Op::kAcquire && e.type == EventType::kOk) {
        a_granted = e.acquire().sent_ns >= 0 ? e.acquire().sent_ns : e.time_ns;
      }
      if (e.client == a && e.f == Op::kRelease && e.type == EventType::kInfo) {
        a_release_lost = e.error == ErrorKind::kTimeout;
        EXPECT_LT(e.time_ns, closed) << "the window closes after the lost release";
      }
      if (e.client == b && e.f == Op::kAcquire && e.type == EventType::kOk) {
        b_granted = e.time_ns;
        b_attempts = e.acquire().attempts;
      }
    }
    ASSERT_GT(a_granted, opened) << "A's acquire was not granted inside the window";
    EXPECT_TRUE(a_release_lost) << "A's release is not recorded as info/timeout";
    EXPECT_GT(b_attempts, 1) << "B was not held back by the key A's lost release left";
    // Redis expires in whole milliseconds: a key set at t is gone from t + ttl - 1 ms on at most.
    EXPECT_GE(b_granted, a_granted + ms_to_ns(scenario.lock.ttl_ms) - ms_to_ns(1))
        << "B got in before A's lease ended";
  }
}

// The random nemesis carries out the plan: every lost reply the plan drew for the seed is armed,
// on threads and on processes alike, and every TTL lock breaks under the pauses.
TEST(Nemesis, RandomFaultsFollowThePlanAndBreakTtlLocks) {
  const Scenario scenario = catalogue("nemesis-workload");
  // The first seed whose plan loses at least one reply.
  std::uint64_t seed = 1;
  std::int64_t planned = 0;
  for (; planned == 0; ++seed) {
    const Plan plan = compile_plan(scenario, seed);
    planned = 0;
    for (std::size_t c = 0; c < plan.clients().size(); ++c) {
      for (int n = 0; n < scenario.workload->cycles; ++n) {
        planned += plan.cycle(c, n).of("lost_reply");
      }
    }
  }
  --seed;
  const auto lost_replies = [](const Judged& j) {
    return std::count_if(j.result.faults.begin(), j.result.faults.end(),
                         [](const FaultWindow& w) { return w.kind == FaultKind::kLoseReply; });
  };
  const Judged processes = run(scenario, "lua_owner", seed);
  EXPECT_EQ(processes.result.verdict, Verdict::kMutexViolation);
  EXPECT_EQ(lost_replies(processes), planned);
  const Judged threads = run(as_threads(scenario), "lua_owner", seed);
  EXPECT_EQ(threads.result.verdict, Verdict::kMutexViolation);
  EXPECT_EQ(lost_replies(threads), planned);
}

// Proves a restart of a real server moves the topology's generation when it kills the process as
// well as when the server is back (as SimTopology's restart does, which kills first), so that a
// client waiting through the restart reconnects before its next try instead of sending it on the
// connection that died with the process: a waiter polling through a restart ended its acquire
// without an answer (Server closed the connection) on a real server where the simulator granted
// it the lock the server forgot (a blind test's lock, m03). The old connection is indeed dead.
TEST(Topology, ARestartMovesTheGenerationAtTheKillAndAtTheReturn) {
  TopologySpec spec;
  spec.name = "single";
  spec.servers.push_back({"n1", "none", ""});
  std::unique_ptr<Topology> topology = Topology::start(spec);
  HiredisConnection before_restart(topology->endpoint(0), ConnectionOptions{});
  ASSERT_TRUE(before_restart.command({"SET", "k", "v"}).ok());
  const std::uint64_t before = topology->primary_generation();
  ASSERT_EQ(topology->restart(0), "");
  EXPECT_GE(topology->primary_generation() - before, 2U);
  EXPECT_EQ(before_restart.command({"GET", "k"}).error, RedisErrorKind::kClosed);
  HiredisConnection after_restart(topology->endpoint(0), ConnectionOptions{});
  const RedisResult forgotten = after_restart.command({"GET", "k"});
  ASSERT_TRUE(forgotten.ok()) << forgotten.describe();
  EXPECT_TRUE(forgotten.reply.is_nil());
}

}  // namespace
}  // namespace locksim
