// timeline_test: what the per-key timeline reads from a history: window ends, lease ends, waits.
#include <gtest/gtest.h>

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
using test::deadlocks;
using test::HistoryBuilder;
using test::hold_of;
using test::indeterminate;
using test::ms;
using test::stale_releases;
using test::violations;

// Proves an acquire that failed with "crashed" (the client died waiting, after a busy answer)
// holds nothing: unlike an acquire cut short by a crash, no later holder overlaps it, and its wait
// still counts for liveness: a lock left free while it waited is a deadlock.
TEST(CheckerTest, CrashWhileWaitingHoldsNothingButWaited) {
  auto history = [](Nanos a_released) {
    HistoryBuilder b;
    b.hold(A, ms(0), ms(1), a_released, a_released + ms(1));
    b.acquire_invoke(ms(10), B).event(ms(20), B, EventType::kFail, Op::kAcquire);
    b.last().error = ErrorKind::kCrashed;
    b.crash(ms(20), B);
    b.hold(C, ms(30), ms(800), ms(900), ms(901));
    return b.build();
  };
  const CheckResult r = check(history(ms(700)));
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_TRUE(indeterminate(r).empty());
  EXPECT_EQ(r.stats.acquires_failed, 1);
  EXPECT_EQ(r.stats.crashes, 1);

  // B died at 20 ms while waiting: its wait [10, 20] saw the lock free for 9 ms, above a 5 ms
  // threshold, so it is judged like any acquire that waited.
  HistoryBuilder free_lock;
  free_lock.hold(A, ms(0), ms(1), ms(2), ms(3));
  free_lock.acquire_invoke(ms(10), B).event(ms(20), B, EventType::kFail, Op::kAcquire);
  free_lock.last().error = ErrorKind::kCrashed;
  free_lock.crash(ms(20), B);
  const CheckResult stuck = check(free_lock.build(), ms(5));
  EXPECT_EQ(stuck.verdict, Verdict::kDeadlock);
  ASSERT_EQ(deadlocks(stuck).size(), 1u);
  EXPECT_EQ(deadlocks(stuck)[0]->clients[0], B);
}

// Proves hold_windows reports how each window ended.
TEST(CheckerTest, HoldWindowEnds) {
  const History h = HistoryBuilder()
                        .hold(A, ms(0), ms(1), ms(10), ms(11))
                        .acquire_invoke(ms(12), B)
                        .acquire_ok(ms(13), B)
                        .crash(ms(20), B)
                        .acquire_invoke(ms(30), C)
                        .acquire_ok(ms(40), C)
                        .event(ms(50), A, EventType::kInfo, Op::kWork)
                        .build();
  const std::vector<HoldWindow> windows = check(h).holds;
  ASSERT_EQ(windows.size(), 3u);
  EXPECT_EQ(windows[0].end, HoldWindow::End::kExit);
  EXPECT_EQ(windows[1].end, HoldWindow::End::kCrash);
  EXPECT_EQ(windows[1].end_ns, ms(20));
  EXPECT_EQ(windows[2].end, HoldWindow::End::kEndOfHistory);
  EXPECT_EQ(windows[2].end_ns, ms(50));
  EXPECT_EQ(windows[2].acquire_invoke_ns, ms(30));
}

// Proves successful renewals move the lease end: a 300 ms hold under a 100 ms TTL renewed every
// 30 ms keeps its lease (an overlap is racy, not lease_expired), while refused renewals do not.
TEST(CheckerTest, RenewalKeepsTheLease) {
  // A holds 10..300 ms with ttl 100, renewing every 30 ms (oks at 40.5 .. 280.5); B after it.
  HistoryBuilder base;
  base.acquire_invoke(ms(0), A, 100)
      .acquire_ok(ms(10), A, 100)
      .renewals(ms(40), ms(300), ms(30), A, 100);
  HistoryBuilder renewed = base;
  renewed.release(ms(300), ms(301), A).hold(B, ms(50), ms(302), ms(400), ms(401), 100);
  const History h = renewed.build();
  const CheckResult r = check(h);
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_TRUE(stale_releases(r).empty());
  EXPECT_EQ(r.stats.extends_ok, 9);
  EXPECT_EQ(r.stats.extends_failed, 0);
  EXPECT_EQ(r.stats.holds, 2);
  EXPECT_EQ(r.stats.holds_in_violation, 0);
  const std::vector<HoldWindow> windows = check(h).holds;
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_EQ(windows[0].lease_end_ns, ms(280.5) + ms(100));
  EXPECT_FALSE(windows[0].faulted);

  // B inside at 150 ms, while the renewed lease runs until 180.5 ms: both acquires succeeded on a
  // held lock.
  HistoryBuilder racy = base;
  racy.release(ms(300), ms(301), A).hold(B, ms(50), ms(150), ms(400), ms(401), 100);
  const CheckResult rr = check(racy.build());
  ASSERT_EQ(violations(rr).size(), 1u);
  EXPECT_EQ(violations(rr)[0]->cause, "racy_acquire");
  EXPECT_EQ(rr.stats.holds_in_violation, 2);

  // The same renewals refused (count 0) extend nothing: B at 150 ms is after the lease end.
  HistoryBuilder refused;
  refused.acquire_invoke(ms(0), A, 100).acquire_ok(ms(10), A, 100);
  for (int i = 1; i <= 9; ++i) {
    refused.extend(ms(10 + 30 * i), ms(10.5 + 30 * i), A, 100, i == 1 ? 1 : 0);
  }
  refused.release(ms(300), ms(301), A).hold(B, ms(50), ms(150), ms(400), ms(401), 100);
  const CheckResult rf = check(refused.build());
  ASSERT_EQ(violations(rf).size(), 1u);
  EXPECT_EQ(violations(rf)[0]->cause, "lease_expired");
  EXPECT_EQ(hold_of(rf, violations(rf)[0]->clients[0], violations(rf)[0]->from_ns).lease_end_ns,
            ms(140.5));
  EXPECT_EQ(rf.stats.extends_ok, 1);
  EXPECT_EQ(rf.stats.extends_failed, 8);
}

}  // namespace
}  // namespace locksim
