// semaphore_test: a semaphore of N permits (History::permits) is held to N holders at once, names
// the N+1 when there are more with the cause, and a waiter kept out while fewer than N held it is
// stuck.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/checker/check.h"
#include "sim/core/error.h"
#include "sim/history/jsonl.h"
#include "tests/unit/checker/checker_test_support.h"
#include "tests/unit/history_builder.h"

namespace locksim {
namespace {

using test::A;
using test::B;
using test::C;
using test::check;
using test::contains;
using test::deadlocks;
using test::HistoryBuilder;
using test::ms;
using test::violations;

constexpr int kSemaphoreNemesis = 3;

// with_permits: `history` as a semaphore of `permits` permits would record it.
History with_permits(History history, int permits) {
  history.permits = permits;
  return history;
}

// three_holders: A from 1 ms, B from 11 ms, C from 21 ms, all inside until 200 ms, leases of
// `ttl_ms`.
HistoryBuilder three_holders(std::int64_t ttl_ms = 1000) {
  HistoryBuilder builder({"A", "B", "C", "nemesis"});
  builder.hold(A, ms(0), ms(1), ms(200), ms(201), ttl_ms)
      .hold(B, ms(10), ms(11), ms(200), ms(202), ttl_ms)
      .hold(C, ms(20), ms(21), ms(200), ms(203), ttl_ms);
  return builder;
}

// Proves two holders of a 2-permit semaphore are no violation, where the same history of a
// mutex is one.
TEST(Semaphore, HoldersUpToThePermitsShareIt) {
  HistoryBuilder builder;
  builder.hold(A, ms(0), ms(1), ms(200), ms(201), 1000)
      .hold(B, ms(10), ms(11), ms(200), ms(202), 1000);
  EXPECT_EQ(check(with_permits(builder.build(), 2)).verdict, Verdict::kOk);
  EXPECT_EQ(check(builder.build()).verdict, Verdict::kMutexViolation);
}

// Proves a third holder of two permits, every lease running, is a violation naming the three
// holders (the two inside, then the one that entered), over the time all three were inside.
TEST(Semaphore, AHolderPastThePermitsIsAViolationNamingEveryHolder) {
  const CheckResult r = check(with_permits(three_holders().build(), 2));
  EXPECT_EQ(r.verdict, Verdict::kMutexViolation);
  ASSERT_EQ(violations(r).size(), 1u);
  const Finding& v = *violations(r)[0];
  EXPECT_EQ(v.clients, (std::vector<int>{A, B, C}));
  EXPECT_EQ(v.cause, "racy_acquire");
  EXPECT_EQ(v.from_ns, ms(21));
  EXPECT_EQ(v.to_ns, ms(200));
  EXPECT_TRUE(contains(v.words,
                       "C acquired lock at 21.0 ms while 2 holders were inside, A (since "
                       "1.0 ms), B (since 11.0 ms): 3 holders of a 2-permit semaphore"))
      << v.words;
  EXPECT_EQ(r.stats.holds_in_violation, 3);
  // Three permits admit them all.
  EXPECT_EQ(check(with_permits(three_holders().build(), 3)).verdict, Verdict::kOk);
}

// Proves a one-permit semaphore is judged as one: a release removes its own permit, never another
// holder's, so where a mutex's history blames A's release for C getting in beside B (a stale
// release), the semaphore's shows racy acquires only (zset_semaphore's ties at a millisecond).
TEST(Semaphore, AOnePermitSemaphoresReleaseIsNoStaleRelease) {
  HistoryBuilder builder;
  builder.hold(A, ms(0), ms(1), ms(10), ms(11), 1000)
      .hold(B, ms(4), ms(5), ms(40), ms(41), 1000)
      .hold(C, ms(14), ms(15), ms(30), ms(31), 1000);
  const CheckResult mutex = check(builder.build());
  EXPECT_EQ(mutex.causes(), (std::vector<std::string>{"racy_acquire", "stale_release"}));
  const CheckResult semaphore = check(with_permits(builder.build(), 1));
  EXPECT_EQ(semaphore.causes(), std::vector<std::string>{"racy_acquire"});
  EXPECT_TRUE(test::stale_releases(semaphore).empty());
  ASSERT_EQ(violations(semaphore).size(), 2u);
  EXPECT_TRUE(contains(violations(semaphore)[1]->words, "2 holders of a 1-permit semaphore"))
      << violations(semaphore)[1]->words;
}

// Proves a client whose own clock ran off the others' before the overflow is its cause when the
// semaphore reads its clients' clocks (History::client_clocks: it trusted them, its own bug), and
// is no excuse for one that reads none (a blind test's server-timed semaphore with an off-by-one
// was blamed on a clock it never read): that overflow is a racy acquire.
TEST(Semaphore, AClientClockBeforeTheOverflowIsItsCauseOnlyIfTheLockReadsIt) {
  HistoryBuilder builder = three_holders();
  builder.nemesis(ms(0), kSemaphoreNemesis, C, FaultKind::kClientClock, FaultPhase::kInstant);
  History timed = with_permits(builder.build(), 2);
  timed.client_clocks = true;
  const CheckResult r = check(timed);
  ASSERT_EQ(violations(r).size(), 1u);
  EXPECT_EQ(violations(r)[0]->cause, "client_clock");
  EXPECT_TRUE(contains(violations(r)[0]->words, "C's own clock ran off the others'"))
      << violations(r)[0]->words;

  const CheckResult untimed = check(with_permits(builder.build(), 2));
  ASSERT_EQ(violations(untimed).size(), 1u);
  EXPECT_EQ(violations(untimed)[0]->cause, "racy_acquire");
  EXPECT_FALSE(contains(violations(untimed)[0]->words, "clock")) << violations(untimed)[0]->words;
}

// Proves one holder inside is said so ("while 1 holder was inside"), not "1 holders were".
TEST(Semaphore, OneHolderInsideIsSaidInTheSingular) {
  HistoryBuilder builder;
  builder.hold(A, ms(0), ms(1), ms(200), ms(201), 1000)
      .hold(B, ms(10), ms(11), ms(200), ms(202), 1000);
  const CheckResult r = check(with_permits(builder.build(), 1));
  ASSERT_EQ(violations(r).size(), 1u);
  EXPECT_TRUE(contains(violations(r)[0]->words,
                       "B acquired lock at 11.0 ms while 1 holder was inside, A (since 1.0 ms)"))
      << violations(r)[0]->words;
}

// Proves a server fault between the grants explains an overflow before a client's clock does:
// a server that forgot permits is the limit of every lease, whatever the semaphore times them by
// (zset_semaphore_server seed 912: a clock jump with A's clock offset too).
TEST(Semaphore, AServerFaultBeforeTheOverflowIsALostLockNotAClientClock) {
  HistoryBuilder builder = three_holders();
  builder.nemesis(ms(0), kSemaphoreNemesis, A, FaultKind::kClientClock, FaultPhase::kInstant)
      .server_fault(ms(15), kSemaphoreNemesis, FaultKind::kClockJump, "n1");
  const CheckResult r = check(with_permits(builder.build(), 2));
  ASSERT_EQ(violations(r).size(), 1u);
  EXPECT_EQ(violations(r)[0]->cause, "lock_lost");
}

// Proves a permit whose lease ran out while its holder worked explains the overflow (the limit
// of every lease), even with a client clock fault in the history.
TEST(Semaphore, AnExpiredPermitIsTheLimitOfItsLease) {
  HistoryBuilder builder({"A", "B", "C", "nemesis"});
  builder
      .hold(A, ms(0), ms(1), ms(200), ms(201), 10)  // A's lease ran out at 11 ms
      .hold(B, ms(10), ms(11), ms(200), ms(202), 1000)
      .hold(C, ms(20), ms(21), ms(200), ms(203), 1000)
      .nemesis(ms(0), kSemaphoreNemesis, C, FaultKind::kClientClock, FaultPhase::kInstant);
  const CheckResult r = check(with_permits(builder.build(), 2));
  ASSERT_EQ(violations(r).size(), 1u);
  EXPECT_EQ(violations(r)[0]->cause, "lease_expired");
  EXPECT_TRUE(
      contains(violations(r)[0]->words, "A's permit's lease (ttl 10 ms) ran out at 11.0 ms"))
      << violations(r)[0]->words;
}

// Proves a holder of a semaphore that overflowed while it held, whose release then removed
// nothing, left no permit idle (the acquire that overflowed it may have removed its permit);
// without an overflow, the same release is an idle hold.
TEST(Semaphore, AReleaseAfterAnOverflowFindingNothingIsNoIdleHold) {
  HistoryBuilder overflowed({"A", "B", "C", "nemesis"});
  overflowed.acquire_invoke(ms(0), A, 1000)
      .acquire_ok(ms(1), A, 1000)
      .hold(B, ms(10), ms(11), ms(200), ms(202), 1000)
      .hold(C, ms(20), ms(21), ms(200), ms(203), 1000)
      .release(ms(300), ms(301), A, 0);
  const CheckResult r = check(with_permits(overflowed.build(), 2));
  EXPECT_EQ(violations(r).size(), 1u);
  EXPECT_TRUE(test::idle_holds(r).empty());

  HistoryBuilder alone;
  alone.acquire_invoke(ms(0), A, 1000).acquire_ok(ms(1), A, 1000).release(ms(300), ms(301), A, 0);
  EXPECT_EQ(test::idle_holds(check(with_permits(alone.build(), 2))).size(), 1u);
}

// Proves a waiter kept out while fewer than the permits were possibly held is stuck: A crashed
// holding a permit with no lease, B holds the other; C's wait is a deadlock for a 2-permit
// semaphore and none for a mutex (B held it throughout).
TEST(Semaphore, AWaiterKeptOutWhileFewerThanThePermitsHeldIsStuck) {
  HistoryBuilder builder;
  builder.acquire_invoke(ms(0), A)
      .acquire_ok(ms(1), A)
      .crash(ms(5), A)
      .acquire_invoke(ms(10), B)
      .acquire_ok(ms(11), B)
      .acquire_invoke(ms(20), C)
      .acquire_end(ms(1520), C, EventType::kFail)
      .release(ms(1600), ms(1601), B);
  const CheckResult semaphore = check(with_permits(builder.build(), 2));
  EXPECT_EQ(semaphore.verdict, Verdict::kDeadlock);
  ASSERT_EQ(deadlocks(semaphore).size(), 1u);
  EXPECT_EQ(deadlocks(semaphore)[0]->from_ns, ms(20));
  EXPECT_EQ(check(builder.build()).verdict, Verdict::kOk);
}

// Proves history.jsonl keeps a semaphore's permits (a mutex's header has none) and refuses a
// count out of range, naming the line and the field.
TEST(Semaphore, HistoryJsonlKeepsThePermits) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "locksim-permits";
  std::filesystem::create_directories(dir);
  write_history_jsonl(dir / "h.jsonl", with_permits(three_holders().build(), 2));
  EXPECT_EQ(read_history_jsonl(dir / "h.jsonl").permits, 2);
  write_history_jsonl(dir / "m.jsonl", three_holders().build());
  EXPECT_EQ(read_history_jsonl(dir / "m.jsonl").permits, 0);
  EXPECT_FALSE(read_history_jsonl(dir / "m.jsonl").semaphore());
  {
    std::ifstream in(dir / "m.jsonl");
    std::string header;
    std::getline(in, header);
    EXPECT_FALSE(contains(header, "permits")) << header;
  }
  std::ofstream(dir / "bad.jsonl") << R"({"history_schema": 5, "clients": ["A"], "permits": 0})"
                                   << "\n";
  try {
    read_history_jsonl(dir / "bad.jsonl");
    ADD_FAILURE() << "a history of 0 permits was read";
  } catch (const InputError& error) {
    EXPECT_TRUE(contains(error.what(),
                         "bad.jsonl:1: $.permits: expected the lock's permits, 1 "
                         "to 1000, got 0"))
        << error.what();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace locksim
