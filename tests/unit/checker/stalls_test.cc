// stalls_test: a renewal on a schedule that keeps the lease, or an acquire, answered after the
// lease with no fault planned, is an unplanned stall; a renewal refused in time, a schedule too
// slow for its TTL and a planned pause are not.
#include <gtest/gtest.h>

#include <vector>

#include "sim/checker/check.h"
#include "tests/unit/checker/checker_test_support.h"
#include "tests/unit/history_builder.h"

namespace locksim {
namespace {

using test::A;
using test::B;
using test::contains;
using test::HistoryBuilder;
using test::ms;

CheckResult check_renewing(const History& history, std::int64_t renew_period_ms) {
  return check_history(
      history, CheckOptions{.stuck_threshold_ns = ms(500), .renew_period_ms = renew_period_ms});
}

// A renews every 20 ms with a 200 ms TTL; its renewal sent at 80 ms is answered at 400 ms (the
// server stopped answering), after B took the expired key at 390 ms.
HistoryBuilder server_stall() {
  HistoryBuilder builder;
  builder.acquire_invoke(ms(0), A, 200)
      .acquire_ok(ms(1), A, 200)
      .renewals(ms(20), ms(61), ms(20), A, 200)  // last one sent at 60, answered at 60.5
      .acquire_invoke(ms(70), B, 200)
      .extend(ms(80.5), ms(400), A, 200, /*count=*/0)
      .acquire_ok(ms(390), B, 200)
      .release(ms(420), ms(421), B, 1)
      .release(ms(430), ms(431), A, 0);
  return builder;
}

// Proves a renewal due in time but answered after the lease ran out, with no fault planned, is
// reported as the machine's stall, names the late answer, and changes no verdict.
TEST(CheckerTest, RenewalAnsweredAfterTheLeaseIsAnUnplannedStall) {
  const CheckResult r = check_renewing(server_stall().build(), 20);
  EXPECT_EQ(r.verdict, Verdict::kMutexViolation);
  const std::vector<const Finding*> stalls = r.of(FindingKind::kUnplannedStall);
  ASSERT_EQ(stalls.size(), 1u);
  EXPECT_EQ(stalls[0]->cause, "late_reply");
  EXPECT_EQ(stalls[0]->clients, (std::vector<int>{A}));
  EXPECT_EQ(stalls[0]->from_ns, ms(60.5));
  EXPECT_EQ(stalls[0]->to_ns, ms(400));
  EXPECT_TRUE(contains(stalls[0]->words, "answered only at 400.0 ms")) << stalls[0]->words;
  EXPECT_TRUE(contains(stalls[0]->words, "could have run out (260.0 ms")) << stalls[0]->words;
}

// Proves a renewal sent long after it fell due (locksim's own process stalled) is a late send.
TEST(CheckerTest, RenewalSentLongAfterItWasDueIsALateSend) {
  HistoryBuilder builder;
  builder.acquire_invoke(ms(0), A, 200)
      .acquire_ok(ms(1), A, 200)
      .extend(ms(21), ms(21.5), A, 200)
      .extend(ms(330), ms(330.5), A, 200, /*count=*/0)
      .release(ms(340), ms(341), A, 0);
  const CheckResult r = check_renewing(builder.build(), 20);
  const std::vector<const Finding*> stalls = r.of(FindingKind::kUnplannedStall);
  ASSERT_EQ(stalls.size(), 1u);
  EXPECT_EQ(stalls[0]->cause, "late_send");
  EXPECT_TRUE(contains(stalls[0]->words, "was sent only at 330.0 ms")) << stalls[0]->words;
}

// Proves a renewing holder that left after its lease ran out, with no renewal sent since the last
// one, is a late send too (its renewal thread did not run: doc-d-renewal-demo on a loaded
// machine, a 450 ms work that took 1,079 ms), while a holder that never renewed (a lock without
// renewal) is not judged so.
TEST(CheckerTest, ARenewalNeverSentBeforeTheHolderLeftIsALateSend) {
  HistoryBuilder builder;
  builder.acquire_invoke(ms(0), A, 200)
      .acquire_ok(ms(1), A, 200)
      .extend(ms(21), ms(21.5), A, 200)
      .acquire_invoke(ms(30), B, 200)
      .acquire_ok(ms(222), B, 200)
      .release(ms(400), ms(401), A, 0);
  const CheckResult r = check_renewing(builder.build(), 20);
  const std::vector<const Finding*> stalls = r.of(FindingKind::kUnplannedStall);
  ASSERT_EQ(stalls.size(), 1u);
  EXPECT_EQ(stalls[0]->cause, "late_send");
  EXPECT_EQ(stalls[0]->clients, (std::vector<int>{A}));
  EXPECT_TRUE(
      contains(stalls[0]->words, "due at 41.5 ms, was never sent before it left at 400.0 ms"))
      << stalls[0]->words;

  HistoryBuilder never;
  never.acquire_invoke(ms(0), A, 200)
      .acquire_ok(ms(1), A, 200)
      .acquire_invoke(ms(30), B, 200)
      .acquire_ok(ms(202), B, 200)
      .release(ms(400), ms(401), A, 0);
  EXPECT_TRUE(check_renewing(never.build(), 20).of(FindingKind::kUnplannedStall).empty());
}

// Proves no stall is claimed where the lock or the plan explains the loss: a renewal refused in
// time (another client deleted the key), a period too long for the TTL, a pause planned by the
// scenario, and a run judged without the renewal period.
TEST(CheckerTest, NoStallWhereTheLockOrThePlanExplainsIt) {
  {
    HistoryBuilder builder;  // refused at once: the key was gone, nobody stalled
    builder.acquire_invoke(ms(0), A, 200)
        .acquire_ok(ms(1), A, 200)
        .extend(ms(21), ms(21.5), A, 200)
        .extend(ms(41.5), ms(42), A, 200, /*count=*/0)
        .release(ms(50), ms(51), A, 0);
    EXPECT_EQ(check_renewing(builder.build(), 20).count(FindingKind::kUnplannedStall), 0u);
  }
  {
    HistoryBuilder builder;  // a renewal every 250 ms cannot keep a 200 ms lease
    builder.acquire_invoke(ms(0), A, 200)
        .acquire_ok(ms(1), A, 200)
        .extend(ms(251), ms(251.5), A, 200, /*count=*/0)
        .release(ms(260), ms(261), A, 0);
    EXPECT_EQ(check_renewing(builder.build(), 250).count(FindingKind::kUnplannedStall), 0u);
  }
  {
    HistoryBuilder builder = server_stall();  // the same late answer, inside a planned pause
    builder.nemesis(ms(75), B, A, FaultKind::kPause, FaultPhase::kStart)
        .nemesis(ms(380), B, A, FaultKind::kPause, FaultPhase::kEnd);
    EXPECT_EQ(check_renewing(builder.build(), 20).count(FindingKind::kUnplannedStall), 0u);
  }
  EXPECT_EQ(check_renewing(server_stall().build(), 0).count(FindingKind::kUnplannedStall), 0u);
}

// Proves a call that timed out with no fault planned is the machine's stall (reply_timeout), and
// one whose reply a planned fault dropped (a lost reply, armed just before the call) is not.
TEST(CheckerTest, TimeoutWithNoFaultPlannedIsAnUnplannedStall) {
  const auto history = [](bool lost_reply_armed) {
    HistoryBuilder builder;
    builder.hold(A, ms(0), ms(1), ms(10), ms(11), 200);
    if (lost_reply_armed) {
      builder.nemesis(ms(15), B, A, FaultKind::kLoseReply, FaultPhase::kInstant);
    }
    builder.acquire_invoke(ms(20), A, 200).acquire_end(ms(2020), A, EventType::kInfo);
    return builder.build();
  };
  const CheckResult r = check_renewing(history(false), 0);
  const std::vector<const Finding*> stalls = r.of(FindingKind::kUnplannedStall);
  ASSERT_EQ(stalls.size(), 1u);
  EXPECT_EQ(stalls[0]->cause, "reply_timeout");
  EXPECT_TRUE(contains(stalls[0]->words,
                       "A's acquire of lock at 20.0 ms got no reply until it "
                       "timed out at 2020.0 ms"))
      << stalls[0]->words;
  EXPECT_EQ(check_renewing(history(true), 0).count(FindingKind::kUnplannedStall), 0u);
}

// Proves an acquire answered only after the lease it set could have run out, with no fault
// planned, is the machine's stall (late_acquire: a server stopped between running the SET and
// answering it), and that an answer inside the lease, a planned pause around it, or an unknown
// send time (a library retrying inside one call) claims nothing.
TEST(CheckerTest, AcquireAnsweredAfterItsLeaseIsAnUnplannedStall) {
  const auto history = [](Nanos ok_ns, Nanos sent_ns, bool paused) {
    HistoryBuilder builder;
    builder.acquire_invoke(ms(0), A, 200).acquire_ok(ok_ns, A, 200);
    if (sent_ns >= 0) builder.sent_at(sent_ns);
    if (paused) {
      builder.nemesis(ms(0.1), B, A, FaultKind::kPause, FaultPhase::kStart)
          .nemesis(ms(350), B, A, FaultKind::kPause, FaultPhase::kEnd);
    }
    builder.acquire_invoke(ms(370), B, 200)
        .acquire_ok(ms(398), B, 200)
        .release(ms(410), ms(411), B, 1)
        .release(ms(420), ms(421), A, 0);
    return builder.build();
  };
  const CheckResult r = check_renewing(history(ms(363), ms(0.3), false), 0);
  const std::vector<const Finding*> stalls = r.of(FindingKind::kUnplannedStall);
  ASSERT_EQ(stalls.size(), 1u);
  EXPECT_EQ(stalls[0]->cause, "late_acquire");
  EXPECT_EQ(stalls[0]->clients, (std::vector<int>{A}));
  EXPECT_EQ(stalls[0]->from_ns, ms(0.3));
  EXPECT_EQ(stalls[0]->to_ns, ms(363));
  EXPECT_TRUE(contains(stalls[0]->words, "sent at 0.3 ms, was answered only at 363.0 ms"))
      << stalls[0]->words;
  EXPECT_TRUE(contains(stalls[0]->words, "could have run out (200.3 ms")) << stalls[0]->words;
  EXPECT_TRUE(contains(stalls[0]->words, "no fault was planned there")) << stalls[0]->words;
  EXPECT_EQ(check_renewing(history(ms(150), ms(0.3), false), 0).count(FindingKind::kUnplannedStall),
            0u);
  EXPECT_EQ(check_renewing(history(ms(363), ms(0.3), true), 0).count(FindingKind::kUnplannedStall),
            0u);
  EXPECT_EQ(check_renewing(history(ms(363), -1, false), 0).count(FindingKind::kUnplannedStall), 0u);
}

// Proves a waiter that made far fewer attempts than the others waiting with it is the machine's
// stall (stalled_waiter: its thread did not run; a fair queue waits for its head meanwhile), and
// that the deadlock the gap shows stays beside it; waiters that all tried at one pace (a dead
// waiter ahead of them, or a library's slow own pace) claim no stall, nor does a planned pause.
TEST(CheckerTest, AWaiterThatStoppedTryingIsAnUnplannedStall) {
  // C (head of a fair queue) waits from 0 to 1300 ms and tries `c_attempts` times; A and B wait
  // from 100 ms and are let in after C, each after `others` attempts; the last holder (D) left
  // at 50 ms, so nobody held the lock from 50 ms to 1300 ms.
  const auto history = [](int c_attempts, int others, bool paused) {
    HistoryBuilder builder({"A", "B", "C", "D"});
    builder.hold(3, ms(0), ms(1), ms(40), ms(50), 5000);
    builder.acquire_invoke(ms(0), 2, 5000).acquire_ok(ms(1300), 2, 5000).sent_at(ms(1299));
    for (Event& e : builder.events()) {
      if (e.f == Op::kAcquire && e.type == EventType::kOk && e.client == 2) {
        e.acquire().attempts = c_attempts;
      }
    }
    builder.release(ms(1301), ms(1302), 2, 1);
    for (int client = 0; client < 2; ++client) {
      const Nanos ok_ns = ms(1303 + 3 * client);
      builder.acquire_invoke(ms(100), client, 5000)
          .acquire_ok(ok_ns, client, 5000)
          .sent_at(ok_ns - ms(0.5));
      for (Event& e : builder.events()) {
        if (e.f == Op::kAcquire && e.type == EventType::kOk && e.client == client) {
          e.acquire().attempts = others;
        }
      }
      builder.release(ok_ns + ms(1), ok_ns + ms(1.5), client, 1);
    }
    if (paused) {
      builder.nemesis(ms(200), 3, 2, FaultKind::kPause, FaultPhase::kStart)
          .nemesis(ms(1200), 3, 2, FaultKind::kPause, FaultPhase::kEnd);
    }
    return builder.build();
  };
  const CheckResult r = check_renewing(history(9, 300, false), 0);
  const std::vector<const Finding*> stalls = r.of(FindingKind::kUnplannedStall);
  ASSERT_EQ(stalls.size(), 1u);
  EXPECT_EQ(stalls[0]->cause, "stalled_waiter");
  EXPECT_EQ(stalls[0]->clients, (std::vector<int>{2}));
  EXPECT_EQ(stalls[0]->from_ns, ms(0));
  EXPECT_EQ(stalls[0]->to_ns, ms(1299));
  EXPECT_TRUE(contains(stalls[0]->words, "made 9 attempts, one every 144.3 ms"))
      << stalls[0]->words;
  EXPECT_TRUE(contains(stalls[0]->words, "the other waiters tried every 4.0 ms"))
      << stalls[0]->words;
  // The gap is a deadlock all the same: the stall finding is what lets `locksim run` run it again.
  EXPECT_GE(r.count(FindingKind::kDeadlock), 1u);
  // One pace for all (9 attempts each): a lock that keeps everyone out is not excused.
  EXPECT_EQ(check_renewing(history(9, 9, false), 0).count(FindingKind::kUnplannedStall), 0u);
  // 20 times sparser is the line: 300 / 16 attempts is not a stalled waiter.
  EXPECT_EQ(check_renewing(history(300 / 16, 300, false), 0).count(FindingKind::kUnplannedStall),
            0u);
  // A planned pause of C explains its silence: not the machine's.
  EXPECT_EQ(check_renewing(history(9, 300, true), 0).count(FindingKind::kUnplannedStall), 0u);
}

}  // namespace
}  // namespace locksim
