// run_findings_test: nothing run, lock errors, early stops, lost servers keep a run from being ok.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/checker/check.h"
#include "tests/unit/checker/checker_test_support.h"
#include "tests/unit/history_builder.h"

namespace locksim {
namespace {

using test::A;
using test::B;
using test::C;
using test::check;
using test::contains;
using test::HistoryBuilder;
using test::ms;

// Proves a run in which no client asked for the lock is unknown, never ok: it tested nothing.
TEST(CheckerTest, NothingRanIsUnknown) {
  History empty = HistoryBuilder().build();
  CheckResult r = check(empty);
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  ASSERT_EQ(r.count(FindingKind::kIncomplete), 1u);
  EXPECT_EQ(r.of(FindingKind::kIncomplete)[0]->cause, "nothing_ran");
  // One acquire asked for is enough to be judged.
  r = check(HistoryBuilder().hold(A, ms(0), ms(1), ms(10), ms(11)).build());
  EXPECT_EQ(r.verdict, Verdict::kOk);
}

// Proves a lock whose calls answered outside the contract makes the run an error, naming the
// count and the first message, and that a definite violation still outweighs it.
TEST(CheckerTest, LockErrorsMakeTheRunAnError) {
  HistoryBuilder builder;
  builder.hold(A, ms(0), ms(1), ms(10), ms(11), 100);
  for (int i = 0; i < 3; ++i) {
    builder.acquire_invoke(ms(20 + i * 10), B, 100)
        .acquire_end(ms(21 + i * 10), B, EventType::kInfo);
    builder.last().error = ErrorKind::kUnexpectedReply;
    builder.last().message = builder.str("script my.acquire returned the string \"yes\"");
  }
  const CheckResult r = check(builder.build());
  EXPECT_EQ(r.verdict, Verdict::kError);
  const std::vector<const Finding*> errors = r.of(FindingKind::kLockError);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0]->amount, 3);
  EXPECT_EQ(errors[0]->cause, "unexpected_reply");
  EXPECT_TRUE(contains(errors[0]->words, "returned the string \"yes\"")) << errors[0]->words;
  EXPECT_EQ(r.stats.lock_errors, 3);

  builder.hold(C, ms(5), ms(6), ms(50), ms(51), 100);  // overlaps A: a definite violation
  EXPECT_EQ(check(builder.build()).verdict, Verdict::kMutexViolation);
}

// Proves the harness's records of an early stop and of a lost server keep a run from being ok:
// a time limit makes it unknown, a lost server an error.
TEST(CheckerTest, HarnessStopsAndLostServersAreNotOk) {
  HistoryBuilder stopped;
  stopped.hold(A, ms(0), ms(1), ms(10), ms(11), 100);
  stopped.event(ms(60000), 0, EventType::kInfo, Op::kStop, "");
  stopped.last().stop().reason = StopReason::kTimeLimit;
  const CheckResult r = check(stopped.build());
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  ASSERT_EQ(r.count(FindingKind::kIncomplete), 1u);
  EXPECT_EQ(r.of(FindingKind::kIncomplete)[0]->cause, "time_limit");

  HistoryBuilder lost;
  lost.hold(A, ms(0), ms(1), ms(10), ms(11), 100);
  lost.event(ms(20), 0, EventType::kInfo, Op::kServerLost, "");
  lost.last().message = lost.str("connection refused");
  const CheckResult l = check(lost.build());
  EXPECT_EQ(l.verdict, Verdict::kError);
  ASSERT_EQ(l.count(FindingKind::kServerLost), 1u);
  EXPECT_TRUE(contains(l.of(FindingKind::kServerLost)[0]->words, "connection refused"));
}

// Proves an unplanned server death says what the lock did afterwards: each later grant with the
// servers that granted it, in words made from the typed grant (the ok has no message).
TEST(CheckerTest, ServerDiedNamesTheLaterGrantsServersFromTypedGrants) {
  constexpr int kHarness = C;
  HistoryBuilder b({"A", "B", "harness"});
  b.servers({"n1", "n2", "n3", "n4", "n5"});
  b.hold(A, ms(0), ms(1), ms(10), ms(11), 10000).granted_on({0, 1, 2, 3, 4});
  b.event(ms(12), kHarness, EventType::kInfo, Op::kServerDied, "");
  b.last().server().server = b.str("n3");
  b.hold(B, ms(20), ms(21), ms(30), ms(31), 10000).granted_on({0, 1, 3, 4});
  const CheckResult r = check(b.build());
  ASSERT_EQ(r.count(FindingKind::kServerDied), 1u);
  const std::string& words = r.of(FindingKind::kServerDied)[0]->words;
  EXPECT_TRUE(contains(words, "n3 was found dead at 12.0 ms")) << words;
  EXPECT_TRUE(contains(words,
                       "Afterwards B was granted the lock at 21.0 ms (granted by n1, n2, n4, n5 "
                       "of 5)."))
      << words;
}

// Proves a run whose topology server died without the scenario killing it is unknown, not the
// deadlock (or the error) the death may have caused, its findings still reported; a violation
// observed all the same is still a violation. Before, a Redlock node killed from outside gave the
// verdict deadlock beside a server_died finding saying the run decides nothing.
TEST(CheckerTest, AServerThatDiedUnplannedMakesADeadlockOrAnErrorUnknown) {
  constexpr int kHarness = C;
  const auto died = [](HistoryBuilder& b, Nanos at) {
    b.event(at, kHarness, EventType::kInfo, Op::kServerDied, "");
    b.last().server().server = b.str("n2");
  };
  // A crashed holder without a TTL, and a waiter that gave up: a deadlock.
  HistoryBuilder deadlock({"A", "B", "harness"});
  deadlock.acquire_invoke(ms(5), A)
      .acquire_ok(ms(10), A)
      .crash(ms(20), A)
      .acquire_invoke(ms(25), B)
      .acquire_end(ms(1525), B, EventType::kFail);
  EXPECT_EQ(check(deadlock.build()).verdict, Verdict::kDeadlock);
  died(deadlock, ms(1600));
  const CheckResult unknown = check(deadlock.build());
  EXPECT_EQ(unknown.verdict, Verdict::kUnknown);
  EXPECT_EQ(unknown.count(FindingKind::kDeadlock), 1u);  // still reported
  EXPECT_EQ(unknown.count(FindingKind::kServerDied), 1u);

  // Wanted and never granted: an error, unknown beside the death.
  HistoryBuilder never({"A", "B", "harness"});
  never.acquire_invoke(ms(5), A).acquire_end(ms(6), A, EventType::kFail);
  never.last().error = ErrorKind::kRefused;
  EXPECT_EQ(check(never.build()).verdict, Verdict::kError);
  died(never, ms(1));
  EXPECT_EQ(check(never.build()).verdict, Verdict::kUnknown);

  // Two holders at once: a violation stands.
  HistoryBuilder overlap({"A", "B", "harness"});
  overlap.hold(A, ms(0), ms(1), ms(50), ms(51)).hold(B, ms(10), ms(11), ms(20), ms(21));
  died(overlap, ms(5));
  EXPECT_EQ(check(overlap.build()).verdict, Verdict::kMutexViolation);
}

}  // namespace
}  // namespace locksim
