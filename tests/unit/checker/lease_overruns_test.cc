// lease_overruns_test: a holder still inside after its lease had certainly run out is reported,
// whether or not anybody got in meanwhile, and never changes the verdict by itself.
#include <gtest/gtest.h>

#include "sim/checker/check.h"
#include "tests/unit/checker/checker_test_support.h"
#include "tests/unit/history_builder.h"

namespace locksim {
namespace {

using test::A;
using test::B;
using test::check;
using test::HistoryBuilder;
using test::ms;

std::vector<const Finding*> overruns(const CheckResult& r) {
  return r.of(FindingKind::kLeaseOverrun);
}

// Proves an overrun nobody exploited is reported with its interval, while the verdict stays ok:
// the lock did not earn that ok.
TEST(CheckerTest, LeaseOverrunNobodyExploited) {
  // A's 100 ms lease, granted at 2 ms, ran out by 102 ms; A left at 150 ms. B came at 200 ms.
  const History h = HistoryBuilder()
                        .hold(A, ms(0), ms(2), ms(150), ms(151), 100)
                        .hold(B, ms(200), ms(201), ms(210), ms(211), 100)
                        .build();
  const CheckResult r = check(h);
  EXPECT_EQ(r.verdict, Verdict::kOk);
  ASSERT_EQ(overruns(r).size(), 1u);
  const Finding& f = *overruns(r)[0];
  EXPECT_EQ(f.clients, std::vector<int>{A});
  EXPECT_EQ(f.from_ns, ms(102));
  EXPECT_EQ(f.to_ns, ms(150));
  EXPECT_EQ(f.cause, "slow");
  EXPECT_EQ(f.words,
            "A was still inside lock after its lease had run out (by 102.0 ms at the latest: "
            "acquired at 2.0 ms with a 100 ms TTL) and left at 150.0 ms, 48.0 ms unprotected; "
            "nobody else got the lock meanwhile.");
}

// Proves the overrun names who got in, beside the violation the mutual exclusion check reports.
TEST(CheckerTest, LeaseOverrunSomebodyExploited) {
  const History h = HistoryBuilder()
                        .hold(A, ms(0), ms(2), ms(150), ms(151), 100)
                        .hold(B, ms(110), ms(120), ms(160), ms(161), 100)
                        .build();
  const CheckResult r = check(h);
  EXPECT_EQ(r.verdict, Verdict::kMutexViolation);
  ASSERT_EQ(overruns(r).size(), 1u);
  EXPECT_NE(overruns(r)[0]->words.find("; B got in at 120.0 ms."), std::string::npos);
}

// Proves a renewal that came in time, a lock without a TTL, a holder that left within its lease
// and a crash inside are not overruns, and that a fault inside the window is the cause.
TEST(CheckerTest, LeaseOverrunOnlyWhenTheLeaseCertainlyRanOut) {
  HistoryBuilder renewed;
  renewed.acquire_invoke(ms(0), A, 100).acquire_ok(ms(2), A, 100);
  renewed.extend(ms(80), ms(81), A, 100).release(ms(150), ms(151), A);
  EXPECT_TRUE(overruns(check(renewed.build())).empty());

  EXPECT_TRUE(
      overruns(check(HistoryBuilder().hold(A, ms(0), ms(2), ms(500), ms(501)).build())).empty());
  EXPECT_TRUE(
      overruns(check(HistoryBuilder().hold(A, ms(0), ms(2), ms(90), ms(91), 100).build())).empty());

  HistoryBuilder crashed;
  crashed.acquire_invoke(ms(0), A, 100).acquire_ok(ms(2), A, 100).crash(ms(150), A);
  EXPECT_TRUE(overruns(check(crashed.build())).empty());

  HistoryBuilder paused;
  paused.acquire_invoke(ms(0), A, 100).acquire_ok(ms(2), A, 100);
  paused.nemesis(ms(10), B, A, FaultKind::kPause, FaultPhase::kStart);
  paused.nemesis(ms(140), B, A, FaultKind::kPause, FaultPhase::kEnd);
  paused.release(ms(150), ms(151), A);
  const CheckResult r = check(paused.build());
  ASSERT_EQ(overruns(r).size(), 1u);
  EXPECT_EQ(overruns(r)[0]->cause, "faulted");
}

}  // namespace
}  // namespace locksim
