// liveness_test: a wait while no live client held the key is a deadlock; a crash, then a recovery.
#include <gtest/gtest.h>

#include <algorithm>
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
using test::deadlocks;
using test::HistoryBuilder;
using test::idle_holds;
using test::ms;
using test::recoveries;

// Proves a crash inside a lock without TTL, then a failed acquire, is a deadlock with the
// uncovered stretch as its stuck time.
TEST(CheckerTest, CrashWithoutTtlThenFailedAcquireIsDeadlock) {
  const History h = HistoryBuilder()
                        .acquire_invoke(ms(5), A)
                        .acquire_ok(ms(10), A)
                        .crash(ms(20), A)
                        .acquire_invoke(ms(25), B)
                        .acquire_end(ms(1525), B, EventType::kFail)
                        .build();
  const CheckResult r = check(h);
  EXPECT_EQ(r.verdict, Verdict::kDeadlock);
  ASSERT_EQ(deadlocks(r).size(), 1u);
  const Finding& d = *deadlocks(r)[0];
  EXPECT_EQ(d.clients[0], B);
  EXPECT_EQ(d.from_ns, ms(25));
  EXPECT_EQ(d.to_ns, ms(1525));
  EXPECT_EQ(d.words,
            "B's acquire of lock failed after 1500.0 ms; for 1500.0 ms (from 25.0 ms) no live "
            "client held it (A crashed at 20.0 ms while holding it and its key has no TTL).");
  EXPECT_EQ(d.cause, "never_recovered");
  ASSERT_EQ(recoveries(r).size(), 1u);
  EXPECT_EQ(recoveries(r)[0]->to_ns, -1);
  EXPECT_EQ(recoveries(r)[0]->clients, std::vector<int>{A});  // nobody came next

  // Below the threshold the same history is not stuck.
  EXPECT_EQ(check(h, ms(1600)).verdict, Verdict::kOk);
}

// Proves the stuck time is the longest uncovered stretch, not the whole wait.
TEST(CheckerTest, DeadlockMeasuresOnlyTheUncoveredStretch) {
  // B waits from 2 to 2000 ms; A possibly held the key until its release completed at 400 ms
  // (deleting nothing): from then on nobody live held it.
  const History h = HistoryBuilder()
                        .acquire_invoke(ms(0), A)
                        .acquire_ok(ms(1), A)
                        .acquire_invoke(ms(2), B)
                        .release(ms(399), ms(400), A, 0)
                        .acquire_end(ms(2000), B, EventType::kFail)
                        .build();
  const CheckResult r = check(h);
  ASSERT_EQ(deadlocks(r).size(), 1u);
  EXPECT_EQ(deadlocks(r)[0]->from_ns, ms(400));
  EXPECT_EQ(deadlocks(r)[0]->to_ns, ms(2000));
  EXPECT_TRUE(contains(deadlocks(r)[0]->words, "for 1600.0 ms"));
  EXPECT_TRUE(contains(deadlocks(r)[0]->words, "A's release at 400.0 ms did not delete"));
}

// crash_then_recovery: A crashes inside under a 300 ms TTL; C gives up while A's lease still
// runs; B gets the lock after it.
History crash_then_recovery() {
  return HistoryBuilder()
      .acquire_invoke(ms(10), A, 300)
      .acquire_ok(ms(20), A, 300)
      .crash(ms(50), A)
      .acquire_invoke(ms(55), C, 300)
      .acquire_end(ms(305), C, EventType::kFail)
      .acquire_invoke(ms(60), B, 300)
      .acquire_ok(ms(320.5), B, 300)
      .release(ms(400), ms(401), B)
      .build();
}

// Proves a crash under a TTL followed by a later acquire is a recovery, not a deadlock, even when
// a waiter gave up while the crashed holder's lease was still running.
TEST(CheckerTest, CrashWithTtlThenLaterAcquireIsRecovery) {
  const History h = crash_then_recovery();
  const CheckResult r = check(h, ms(100));
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_TRUE(deadlocks(r).empty());
  ASSERT_EQ(recoveries(r).size(), 1u);
  const Finding& recovery = *recoveries(r)[0];
  EXPECT_EQ(recovery.clients[0], A);
  EXPECT_EQ(recovery.clients[1], B);
  EXPECT_EQ(recovery.to_ns, ms(320.5));
  EXPECT_EQ(recovery.words,
            "A crashed inside at 50.0 ms; lock was obtainable again at 320.5 ms (recovery 270.5 "
            "ms, B acquired it); A's lease (ttl 300 ms) ran out by 320.0 ms.");
}

// Proves a check without words (explore's search) finds the same recovery, with the same clients
// and times, and only leaves its words out.
TEST(CheckerTest, WithoutWordsTheRecoveryIsTheSameButUnsaid) {
  const History h = crash_then_recovery();
  const CheckResult said = check(h, ms(100));
  const CheckResult unsaid =
      check_history(h, CheckOptions{.stuck_threshold_ns = ms(100), .words = false});
  EXPECT_EQ(unsaid.verdict, said.verdict);
  ASSERT_EQ(unsaid.findings.size(), said.findings.size());
  for (std::size_t i = 0; i < said.findings.size(); ++i) {
    EXPECT_EQ(unsaid.findings[i].kind, said.findings[i].kind);
    EXPECT_EQ(unsaid.findings[i].clients, said.findings[i].clients);
    EXPECT_EQ(unsaid.findings[i].from_ns, said.findings[i].from_ns);
    EXPECT_EQ(unsaid.findings[i].to_ns, said.findings[i].to_ns);
  }
  ASSERT_EQ(recoveries(unsaid).size(), 1u);
  EXPECT_EQ(recoveries(unsaid)[0]->clients, (std::vector<int>{A, B}));
  EXPECT_EQ(recoveries(unsaid)[0]->to_ns, ms(320.5));
  EXPECT_EQ(recoveries(unsaid)[0]->words, "");
  EXPECT_FALSE(recoveries(said)[0]->words.empty());
}

// Proves a waiter that gave up after the crashed holder's lease ran out is a deadlock.
TEST(CheckerTest, FailedAcquireAfterLeaseOfCrashedHolderIsDeadlock) {
  const History h = HistoryBuilder()
                        .acquire_invoke(ms(10), A, 100)
                        .acquire_ok(ms(20), A, 100)
                        .crash(ms(50), A)
                        .acquire_invoke(ms(55), C, 100)
                        .acquire_end(ms(1000), C, EventType::kFail)
                        .build();
  const CheckResult r = check(h);
  ASSERT_EQ(deadlocks(r).size(), 1u);
  EXPECT_EQ(deadlocks(r)[0]->from_ns, ms(120));
  // The history cannot tell why the key outlived its lease, so the words name every possibility.
  EXPECT_TRUE(contains(deadlocks(r)[0]->words,
                       "its lease (ttl 100 ms) ran out by 120.0 ms at the latest, yet the lock "
                       "stayed taken: its TTL was never set, was set longer than requested, or "
                       "was refreshed after the crash"))
      << deadlocks(r)[0]->words;
  EXPECT_FALSE(contains(deadlocks(r)[0]->words, "no TTL"));
}

// Proves an acquire that failed because a live client held the lock is not a deadlock.
TEST(CheckerTest, FailedAcquireWhileLiveClientHeldIsNotDeadlock) {
  const History h = HistoryBuilder()
                        .hold(A, ms(0), ms(10), ms(2000), ms(2001))
                        .acquire_invoke(ms(20), B)
                        .acquire_end(ms(1520), B, EventType::kFail)
                        .build();
  const CheckResult r = check(h);
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_TRUE(deadlocks(r).empty());
  EXPECT_EQ(r.stats.acquires_failed, 1);
}

// Proves an idle key counts as held until the lease end for liveness: a waiter that gives up is
// a deadlock only when the stretch after the lease end is long enough.
TEST(CheckerTest, IdleHoldCoversLivenessUntilLeaseEnd) {
  HistoryBuilder base;
  base.acquire_invoke(ms(0), A, 300).acquire_ok(ms(10), A, 300).release(ms(20), ms(21), A, 0);
  HistoryBuilder gives_up_early = base;
  gives_up_early.acquire_invoke(ms(30), C).acquire_end(ms(700), C, EventType::kFail);
  const CheckResult early = check(gives_up_early.build());
  EXPECT_EQ(early.verdict, Verdict::kOk);  // uncovered only 310..700: 390 ms < 500 ms
  EXPECT_EQ(idle_holds(early).size(), 1u);

  HistoryBuilder gives_up_late = base;
  gives_up_late.acquire_invoke(ms(30), C).acquire_end(ms(1000), C, EventType::kFail);
  const CheckResult late = check(gives_up_late.build());
  EXPECT_EQ(late.verdict, Verdict::kDeadlock);
  ASSERT_EQ(deadlocks(late).size(), 1u);
  EXPECT_EQ(deadlocks(late)[0]->from_ns, ms(310));
  EXPECT_TRUE(contains(deadlocks(late)[0]->words,
                       "A's release at 21.0 ms deleted nothing and its lease ran out at 310.0 ms"))
      << deadlocks(late)[0]->words;
}

// Proves an acquire that succeeded only after the lock sat free (held by nobody live) for longer
// than the threshold is a deadlock that recovered late; a prompt hand-off is not.
TEST(CheckerTest, LateGrantAfterStuckLockIsDeadlock) {
  auto history = [](Nanos b_sent) {
    HistoryBuilder b;
    b.acquire_invoke(ms(0), A, 100).acquire_ok(ms(1), A, 100).crash(ms(10), A);  // lease to 101
    b.acquire_invoke(ms(5), B, 100).acquire_ok(b_sent + ms(1), B, 100);
    for (Event& e : b.events()) {
      if (e.f == Op::kAcquire && e.type == EventType::kOk && e.client == B) {
        e.acquire().sent_ns = b_sent;
      }
    }
    return b.release(ms(3000), ms(3001), B).build();
  };
  const CheckResult late = check(history(ms(1500)));
  EXPECT_EQ(late.verdict, Verdict::kDeadlock);
  ASSERT_EQ(deadlocks(late).size(), 1u);
  EXPECT_EQ(deadlocks(late)[0]->cause, "recovered_late");
  EXPECT_EQ(deadlocks(late)[0]->from_ns, ms(101));
  EXPECT_EQ(deadlocks(late)[0]->to_ns, ms(1500));
  EXPECT_TRUE(contains(deadlocks(late)[0]->words, "got it only at 1501.0 ms"))
      << deadlocks(late)[0]->words;
  const CheckResult prompt = check(history(ms(110)));
  EXPECT_EQ(prompt.verdict, Verdict::kOk);
}

// A release invoked at `at` whose reply never came: it ends at `lost` with a timeout.
void lost_release(HistoryBuilder& b, Nanos at, Nanos lost, int client) {
  b.event(at, client, EventType::kOk, Op::kExit);
  b.event(at, client, EventType::kInvoke, Op::kRelease);
  b.event(lost, client, EventType::kInfo, Op::kRelease);
  b.last().error = ErrorKind::kTimeout;
}

// Proves a release whose reply never came holds the key until its lease ends, and no longer: a
// waiter who gave up after the lease ran out was stuck from the lease end, not from when the
// release timed out (a release held up on its link past the lease would otherwise hide the
// deadlock), and a waiter held back until the lease end was not stuck at all (the request may
// never have reached the server).
TEST(CheckerTest, LostReleaseHoldsOnlyUntilTheLeaseEnds) {
  HistoryBuilder b;
  b.acquire_invoke(ms(0), A, 300).acquire_ok(ms(10), A, 300);  // lease to 310 ms at the latest
  lost_release(b, ms(100), ms(5000), A);
  b.acquire_invoke(ms(20), B, 300).acquire_end(ms(5300), B, EventType::kFail);
  const CheckResult r = check(b.build());
  EXPECT_EQ(r.verdict, Verdict::kDeadlock);
  ASSERT_EQ(deadlocks(r).size(), 1u);
  EXPECT_EQ(deadlocks(r)[0]->from_ns, ms(310));
  EXPECT_EQ(deadlocks(r)[0]->to_ns, ms(5300));
  EXPECT_TRUE(contains(deadlocks(r)[0]->words, "A's release at 5000.0 ms got no reply"))
      << deadlocks(r)[0]->words;
  // Why the lock stayed taken after the lease: the history cannot tell, so the words name every
  // way (they said only "no reply", and a lock whose key lived 100 s on a lease of 100 ms was a
  // puzzle).
  EXPECT_TRUE(contains(deadlocks(r)[0]->words,
                       "its lease (ttl 300 ms) ran out by 310.0 ms at the latest, yet the lock "
                       "stayed taken: its TTL was never set, was set longer than requested"))
      << deadlocks(r)[0]->words;

  // A release given up on before the lease ended may never have reached the server: the key
  // counts as held until the lease end, so a waiter granted then was not stuck.
  HistoryBuilder early;
  early.acquire_invoke(ms(0), A, 1000).acquire_ok(ms(10), A, 1000);  // lease to 1010 ms
  lost_release(early, ms(30), ms(330), A);
  early.acquire_invoke(ms(20), B, 1000).acquire_ok(ms(1015), B, 1000);
  for (Event& e : early.events()) {
    if (e.f == Op::kAcquire && e.type == EventType::kOk && e.client == B) {
      e.acquire().sent_ns = ms(1014);  // the attempt that got it, after 994 ms of waiting
    }
  }
  early.release(ms(1040), ms(1041), B);
  const CheckResult held = check(early.build());
  EXPECT_EQ(held.verdict, Verdict::kOk);
  EXPECT_TRUE(deadlocks(held).empty());
  HistoryBuilder early_gives_up;
  early_gives_up.acquire_invoke(ms(0), A, 1000).acquire_ok(ms(10), A, 1000);
  lost_release(early_gives_up, ms(30), ms(330), A);
  early_gives_up.acquire_invoke(ms(20), B, 1000).acquire_end(ms(1400), B, EventType::kFail);
  EXPECT_EQ(check(early_gives_up.build()).verdict, Verdict::kOk);  // uncovered 1010..1400 only

  // A key without a TTL may still be there: the hold lasts until the reply was given up on.
  HistoryBuilder no_ttl;
  no_ttl.acquire_invoke(ms(0), A).acquire_ok(ms(10), A);
  lost_release(no_ttl, ms(100), ms(5000), A);
  no_ttl.acquire_invoke(ms(20), B).acquire_end(ms(5300), B, EventType::kFail);
  EXPECT_EQ(check(no_ttl.build()).verdict, Verdict::kOk);  // uncovered 5000..5300 only
}

// Proves an extension without a reply may have set a new lease as late as it was given up on:
// the lost release then holds until that lease ends; with an extension still in flight it holds
// until the release was given up on.
TEST(CheckerTest, LostExtensionMovesTheLeaseALostReleaseHolds) {
  auto history = [](bool extension_answered) {
    HistoryBuilder b;
    b.acquire_invoke(ms(0), A, 300).acquire_ok(ms(10), A, 300);
    b.event(ms(200), A, EventType::kInvoke, Op::kExtend);
    b.last().ttl_ms = 300;
    if (extension_answered) {
      b.event(ms(4000), A, EventType::kInfo, Op::kExtend);  // lease to 4300 ms at the latest
      b.last().error = ErrorKind::kTimeout;
    }
    lost_release(b, ms(100), ms(5000), A);
    b.acquire_invoke(ms(20), B, 300).acquire_end(ms(4700), B, EventType::kFail);
    return b.build();
  };
  // Uncovered 4300..4700: 400 ms, under the threshold.
  EXPECT_EQ(check(history(true)).verdict, Verdict::kOk);
  // In flight at the release's timeout: covered until 5000 ms, after B gave up.
  EXPECT_EQ(check(history(false)).verdict, Verdict::kOk);
  // The same lost extension, and B waits on until 5500 ms: stuck from 4300 ms.
  HistoryBuilder longer;
  longer.acquire_invoke(ms(0), A, 300).acquire_ok(ms(10), A, 300);
  longer.event(ms(200), A, EventType::kInvoke, Op::kExtend);
  longer.last().ttl_ms = 300;
  longer.event(ms(4000), A, EventType::kInfo, Op::kExtend);
  longer.last().error = ErrorKind::kTimeout;
  lost_release(longer, ms(100), ms(5000), A);
  longer.acquire_invoke(ms(20), B, 300).acquire_end(ms(5500), B, EventType::kFail);
  const CheckResult r = check(longer.build());
  ASSERT_EQ(deadlocks(r).size(), 1u);
  EXPECT_EQ(deadlocks(r)[0]->from_ns, ms(4300));
}

// refused_after_release: A holds from 1 ms and releases at 10 ms (the reply says it deleted
// the key, or `deleted`); B, polling every 5 ms from 2 ms, is granted at 101 ms after `attempts`
// attempts, its last one sent at 100 ms. With `c_waits`, C asks too from 20 to 90 ms and gives up.
History refused_after_release(int attempts, std::int64_t deleted = 1, bool c_waits = false) {
  HistoryBuilder b;
  b.acquire_invoke(ms(0), A, 100).acquire_ok(ms(1), A, 100);
  b.acquire_invoke(ms(2), B, 100);
  b.release(ms(10), ms(10.5), A, deleted);
  if (c_waits) b.acquire_invoke(ms(20), C, 100).acquire_end(ms(90), C, EventType::kFail);
  b.acquire_ok(ms(101), B, 100).sent_at(ms(100));
  for (auto it = b.events().rbegin(); it != b.events().rend(); ++it) {
    if (it->f == Op::kAcquire && it->type == EventType::kOk) {
      it->acquire().attempts = attempts;
      break;
    }
  }
  b.release(ms(102), ms(103), B, 1);
  return b.build();
}

CheckResult check_polled(const History& h, Nanos spacing = ms(5)) {
  return check_history(h,
                       CheckOptions{.stuck_threshold_ns = ms(500), .attempt_spacing_ns = spacing});
}

// Proves a waiter answered busy while nobody held the lock (the release before said it deleted
// the key) is an idle hold, refused_while_free: with polls 5 ms apart, its 18th of 19 attempts
// was sent no earlier than 87 ms, long after the release; and that it is not one when the polls'
// spacing is unknown, when the attempts could all have come before the release, when another
// client asked meanwhile (a queue may keep the key for it), or when the release is that of a lock
// whose key may have outlived it (its reply unknown: a possible hold until its lease).
TEST(CheckerTest, AWaiterRefusedWhileNobodyHeldTheLockIsAnIdleHold) {
  const CheckResult r = check_polled(refused_after_release(19));
  ASSERT_EQ(idle_holds(r).size(), 1u);
  const Finding& f = *idle_holds(r)[0];
  EXPECT_EQ(f.cause, "refused_while_free");
  EXPECT_EQ(f.clients, std::vector<int>{B});
  EXPECT_EQ(f.from_ns, ms(10.5));  // idle from A's release
  EXPECT_EQ(f.to_ns, ms(95));      // to its last busy answer, at the latest
  EXPECT_TRUE(contains(f.words, "the lock refused a free key")) << f.words;
  EXPECT_EQ(r.verdict, Verdict::kOk);  // a fact: nobody was harmed but the waiter's time

  EXPECT_TRUE(idle_holds(check_polled(refused_after_release(19), 0)).empty());
  EXPECT_TRUE(idle_holds(check_polled(refused_after_release(2))).empty());  // sent at 2 ms
  EXPECT_TRUE(idle_holds(check_polled(refused_after_release(19, 1, true))).empty());
  History unknown = refused_after_release(19);
  for (Event& e : unknown.events) {
    if (e.client == A && e.f == Op::kRelease && e.type == EventType::kOk) {
      e.type = EventType::kInfo;
      e.error = ErrorKind::kTimeout;
    }
  }
  EXPECT_TRUE(idle_holds(check_polled(unknown)).empty());

  // A release that deleted nothing leaves the key until its lease ends, and a server's expiry is
  // in whole milliseconds: a key set at 1 ms for 86 ms may still be there at 87.9 ms, when B's
  // 18th attempt may have been answered (sent at 87 ms at the earliest): no refusal while free
  // (the release's own idle hold is another finding).
  HistoryBuilder idle;
  idle.acquire_invoke(ms(0), A, 86).acquire_ok(ms(1), A, 86);
  idle.acquire_invoke(ms(2), B, 100);
  idle.release(ms(10), ms(10.5), A, 0);
  idle.acquire_ok(ms(101), B, 100).sent_at(ms(100));
  for (auto it = idle.events().rbegin(); it != idle.events().rend(); ++it) {
    if (it->f == Op::kAcquire && it->type == EventType::kOk) {
      it->acquire().attempts = 19;
      break;
    }
  }
  const CheckResult after_idle = check_polled(idle.build());
  EXPECT_TRUE(std::none_of(after_idle.findings.begin(), after_idle.findings.end(),
                           [](const Finding& x) { return x.cause == "refused_while_free"; }));
  // And nothing after a crash: a renewal whose reply was on its way may have kept its key.
  History crashed = refused_after_release(19);
  crashed.events.insert(crashed.events.begin() + 3, crashed.events[2]);
  crashed.events[3].f = Op::kCrash;
  crashed.events[3].type = EventType::kInfo;
  crashed.events[3].client = C;
  crashed.events[3].time_ns = ms(1.5);
  EXPECT_TRUE(idle_holds(check_polled(crashed)).empty());
}

}  // namespace
}  // namespace locksim
