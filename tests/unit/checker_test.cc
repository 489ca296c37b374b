// checker_test: check_history on hand-built histories that must pass and histories that must fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "sim/checker/check.h"
#include "tests/unit/history_builder.h"

namespace locksim {
namespace {

using test::HistoryBuilder;
using test::ms;

constexpr int A = 0;
constexpr int B = 1;
constexpr int C = 2;

std::vector<const Finding*> violations(const CheckResult& r) {
  return r.of(FindingKind::kMutexViolation);
}
std::vector<const Finding*> stale_releases(const CheckResult& r) {
  return r.of(FindingKind::kStaleRelease);
}
std::vector<const Finding*> deadlocks(const CheckResult& r) { return r.of(FindingKind::kDeadlock); }
std::vector<const Finding*> recoveries(const CheckResult& r) {
  return r.of(FindingKind::kRecovery);
}
std::vector<const Finding*> indeterminate(const CheckResult& r) {
  return r.of(FindingKind::kIndeterminate);
}
std::vector<const Finding*> idle_holds(const CheckResult& r) {
  return r.of(FindingKind::kIdleHold);
}
std::vector<const Finding*> resource_findings(const CheckResult& r) {
  return r.of(FindingKind::kResourceCorrupted);
}
Nanos overlap_of(const Finding& f) { return f.to_ns - f.from_ns; }
// hold_of: the hold window of `client` that contains instant `t`.
const HoldWindow& hold_of(const CheckResult& r, int client, Nanos t) {
  for (const HoldWindow& w : r.holds) {
    if (w.client == client && w.start_ns <= t && t <= w.end_ns) return w;
  }
  static const HoldWindow kNone;
  ADD_FAILURE() << "no hold of client " << client << " at " << t;
  return kNone;
}

CheckResult check(const History& history, Nanos stuck_threshold_ns = ms(500)) {
  return check_history(history, CheckOptions{.stuck_threshold_ns = stuck_threshold_ns});
}

CheckResult check(const History& history, const ResourceSpec& resource) {
  return check_history(history, CheckOptions{.stuck_threshold_ns = ms(500), .resource = resource});
}

ResourceSpec counter(std::int64_t initial) {
  return ResourceSpec{.kind = ResourceSpec::Kind::kCounter, .name = "stock", .initial = initial};
}

ResourceSpec fenced_counter(std::int64_t initial) {
  return ResourceSpec{
      .kind = ResourceSpec::Kind::kFencedCounter, .name = "stock", .initial = initial};
}

std::vector<const Finding*> stale_writes(const CheckResult& r) {
  return r.of(FindingKind::kStaleWrite);
}

ResourceSpec records() {
  return ResourceSpec{.kind = ResourceSpec::Kind::kFindOrCreate, .name = "records", .initial = 0};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

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

// Proves sequential holds by different clients are accepted.
TEST(CheckerTest, SequentialHoldsPass) {
  const History h = HistoryBuilder()
                        .hold(A, ms(0), ms(1), ms(100), ms(101))
                        .hold(B, ms(50), ms(102), ms(200), ms(201))
                        .hold(C, ms(150), ms(202), ms(300), ms(301))
                        .build();
  const CheckResult r = check(h);
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_TRUE(violations(r).empty());
  EXPECT_EQ(check(h).holds.size(), 3u);
}

// Proves a hold starting 1 ns after the previous exit passes and 1 ns before it fails.
TEST(CheckerTest, NearMissByOneNanosecond) {
  const Nanos exit = ms(100);
  const History near_miss = HistoryBuilder()
                                .hold(A, ms(0), ms(1), exit, exit + 5)
                                .hold(B, ms(50), exit + 1, ms(200), ms(201))
                                .build();
  EXPECT_EQ(check(near_miss).verdict, Verdict::kOk);

  const History overlap = HistoryBuilder()
                              .hold(A, ms(0), ms(1), exit, exit + 5)
                              .hold(B, ms(50), exit - 1, ms(200), ms(201))
                              .build();
  const CheckResult r = check(overlap);
  ASSERT_EQ(violations(r).size(), 1u);
  EXPECT_EQ(overlap_of(*violations(r)[0]), 1);
}

// Proves windows that only touch (next enter == previous exit) share no time and pass.
TEST(CheckerTest, ExactlyTouchingWindowsPass) {
  const History h = HistoryBuilder()
                        .hold(A, ms(0), ms(1), ms(100), ms(101))
                        .hold(B, ms(50), ms(100), ms(200), ms(201))
                        .build();
  const CheckResult r = check(h);
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_TRUE(violations(r).empty());
}

// Proves an overlap after the first holder's TTL ran out is blamed on the expired lease, with the
// exact wording reports show.
TEST(CheckerTest, LeaseExpiredOverlap) {
  const History h = HistoryBuilder()
                        .hold(A, ms(10), ms(12), ms(412.1), ms(413), 200)
                        .hold(B, ms(100), ms(215.3), ms(500), ms(501), 200)
                        .build();
  const CheckResult r = check(h);
  EXPECT_EQ(r.verdict, Verdict::kMutexViolation);
  ASSERT_EQ(violations(r).size(), 1u);
  const Finding& v = *violations(r)[0];
  EXPECT_EQ(v.cause, "lease_expired");
  EXPECT_EQ(v.clients[0], A);
  EXPECT_EQ(v.clients[1], B);
  EXPECT_EQ(overlap_of(v), ms(412.1) - ms(215.3));
  EXPECT_EQ(v.words,
            "B acquired lock at 215.3 ms while A was still inside (A held it since 12.0 ms, until "
            "412.1 ms): overlap 196.8 ms. A's lease (ttl 200 ms) ran out at 212.0 ms while A was "
            "still working.");
  EXPECT_EQ(r.causes(), std::vector<std::string>{"lease_expired"});
}

// Proves a third client's late release that deleted the holder's key is named as the cause, and
// that it is also reported as a stale release with its victim.
TEST(CheckerTest, StaleReleaseCauseWithThreeClients) {
  // A's lease runs out at 110 ms; B gets in at 150 (lease_expired); A's release at 300 deletes
  // B's key; C gets in at 310 although B's own lease (ttl 1000) is still valid.
  const History h = HistoryBuilder()
                        .hold(A, ms(0), ms(10), ms(300), ms(301), 100)
                        .hold(B, ms(20), ms(150), ms(400), ms(401), 1000)
                        .hold(C, ms(200), ms(310), ms(500), ms(501), 1000)
                        .build();
  const CheckResult r = check(h);
  EXPECT_EQ(r.verdict, Verdict::kMutexViolation);
  ASSERT_EQ(violations(r).size(), 2u);
  EXPECT_EQ(violations(r)[0]->cause, "lease_expired");  // A, B
  const Finding& v = *violations(r)[1];                 // B, C
  EXPECT_EQ(v.clients[0], B);
  EXPECT_EQ(v.clients[1], C);
  EXPECT_EQ(v.cause, "stale_release");
  EXPECT_EQ(v.clients[2], A);
  EXPECT_TRUE(contains(v.words, "A's release at 300.0 ms")) << v.words;
  EXPECT_TRUE(contains(v.words, "deleted B's lock and let C in")) << v.words;
  EXPECT_EQ(r.causes(), (std::vector<std::string>{"lease_expired", "stale_release"}));

  ASSERT_EQ(stale_releases(r).size(), 1u);
  EXPECT_EQ(stale_releases(r)[0]->clients[0], A);
  EXPECT_EQ(stale_releases(r)[0]->clients[1], B);
  EXPECT_EQ(stale_releases(r)[0]->from_ns, ms(300));
}

// Proves a two-step release (GET, then DEL; Doc B3) invoked while its lease was valid but
// returning after the lease ran out is judged a stale release when it let a third client in,
// while a hand-off where the next holder merely entered before the releaser read its reply is not.
TEST(CheckerTest, StaleReleaseThatDeletedAfterItsLeaseRanOut) {
  // A: lease 0..100 ms, exits and invokes its release at 10 ms, which returns at 160 ms (its
  // DEL ran after B took the expired lock at 150). C gets in at 170 while B is inside.
  const History late = HistoryBuilder()
                           .hold(A, ms(0), ms(0), ms(10), ms(160), 100)
                           .acquire_invoke(ms(20), B, 1000)
                           .acquire_ok(ms(150), B, 1000)
                           .release(ms(600), ms(601), B, 0)  // C's key was gone by then too
                           .hold(C, ms(30), ms(170), ms(500), ms(501), 1000)
                           .build();
  const CheckResult r = check(late);
  ASSERT_EQ(violations(r).size(), 1u);
  const Finding& v = *violations(r)[0];
  EXPECT_EQ(v.clients[0], B);
  EXPECT_EQ(v.clients[1], C);
  EXPECT_EQ(v.cause, "stale_release");
  EXPECT_EQ(v.clients[2], A);
  EXPECT_TRUE(contains(v.words, "returned at 160.0 ms, after its own lease had run out"))
      << v.words;
  ASSERT_EQ(stale_releases(r).size(), 1u);
  EXPECT_EQ(stale_releases(r)[0]->clients[1], B);

  // B's own release later deletes nothing (its key was A's victim): that is no idle hold.
  EXPECT_TRUE(idle_holds(r).empty());

  // A normal hand-off: A's DEL frees the key, B enters at 12 ms before A's reply at 13 ms.
  const History handoff = HistoryBuilder()
                              .hold(A, ms(0), ms(0), ms(10), ms(13), 100)
                              .hold(B, ms(5), ms(12), ms(20), ms(21), 100)
                              .build();
  const CheckResult ok = check(handoff);
  EXPECT_EQ(ok.verdict, Verdict::kOk);
  EXPECT_TRUE(stale_releases(ok).empty());
}

// Proves a racy acquire is claimed only when the earlier lease was certainly valid: A's acquire
// reply was read late (sent at 0, read at 50 ms, ttl 100), so its lease ended between 100 and
// 150 ms; B getting in at 120 ms is lease_expired. Sent at 40 ms instead, the lease ran until at
// least 140 ms, and B at 120 ms is a racy acquire.
TEST(CheckerTest, LateAcquireReplyIsNotARacyAcquire) {
  auto history = [](std::optional<std::int64_t> sent_ns) {
    HistoryBuilder b;
    b.acquire_invoke(ms(0), A, 100).acquire_ok(ms(50), A, 100);
    for (Event& e : b.events()) {
      if (e.f == Op::kAcquire && e.type == EventType::kOk)
        e.acquire().sent_ns = sent_ns.value_or(-1);
    }
    return b.release(ms(300), ms(301), A).hold(B, ms(5), ms(120), ms(400), ms(401), 100).build();
  };
  const CheckResult late = check(history(std::nullopt));
  ASSERT_EQ(violations(late).size(), 1u);
  EXPECT_EQ(violations(late)[0]->cause, "lease_expired");
  EXPECT_TRUE(contains(violations(late)[0]->words, "ran out between 100.0 ms and 150.0 ms"))
      << violations(late)[0]->words;
  const CheckResult racy = check(history(ms(40)));
  ASSERT_EQ(violations(racy).size(), 1u);
  EXPECT_EQ(violations(racy)[0]->cause, "racy_acquire");
}

// Proves an overlap while the first lease was still valid (or absent) is a racy acquire.
TEST(CheckerTest, RacyAcquire) {
  const History no_ttl = HistoryBuilder()
                             .hold(A, ms(0), ms(10), ms(200), ms(201))
                             .hold(B, ms(5), ms(100), ms(300), ms(301))
                             .build();
  CheckResult r = check(no_ttl);
  ASSERT_EQ(violations(r).size(), 1u);
  EXPECT_EQ(violations(r)[0]->cause, "racy_acquire");
  EXPECT_EQ(overlap_of(*violations(r)[0]), ms(100));
  EXPECT_TRUE(contains(violations(r)[0]->words, "A's lock has no TTL"));

  const History valid_ttl = HistoryBuilder()
                                .hold(A, ms(0), ms(10), ms(200), ms(201), 1000)
                                .hold(B, ms(5), ms(100), ms(300), ms(301), 1000)
                                .build();
  r = check(valid_ttl);
  ASSERT_EQ(violations(r).size(), 1u);
  EXPECT_EQ(violations(r)[0]->cause, "racy_acquire");
  EXPECT_TRUE(contains(violations(r)[0]->words, "still valid until 1010.0 ms"));
}

// Proves keys are checked independently: overlapping holds of different keys pass, of one key
// fail.
TEST(CheckerTest, PerKeyIndependence) {
  const History two_keys = HistoryBuilder()
                               .hold(A, ms(0), ms(10), ms(200), ms(201), -1, "x")
                               .hold(B, ms(5), ms(50), ms(150), ms(151), -1, "y")
                               .build();
  EXPECT_EQ(check(two_keys).verdict, Verdict::kOk);

  const History one_key = HistoryBuilder()
                              .hold(A, ms(0), ms(10), ms(200), ms(201), -1, "x")
                              .hold(B, ms(5), ms(50), ms(150), ms(151), -1, "x")
                              .build();
  const CheckResult r = check(one_key);
  ASSERT_EQ(violations(r).size(), 1u);
  EXPECT_EQ(violations(r)[0]->key, "x");
  EXPECT_EQ(overlap_of(*violations(r)[0]), ms(100));
}

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

// Proves a crash under a TTL followed by a later acquire is a recovery, not a deadlock, even when
// a waiter gave up while the crashed holder's lease was still running.
TEST(CheckerTest, CrashWithTtlThenLaterAcquireIsRecovery) {
  const History h = HistoryBuilder()
                        .acquire_invoke(ms(10), A, 300)
                        .acquire_ok(ms(20), A, 300)
                        .crash(ms(50), A)
                        .acquire_invoke(ms(55), C, 300)
                        .acquire_end(ms(305), C, EventType::kFail)
                        .acquire_invoke(ms(60), B, 300)
                        .acquire_ok(ms(320.5), B, 300)
                        .release(ms(400), ms(401), B)
                        .build();
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

// Proves an info acquire whose possible hold overlaps another client's window makes the verdict
// unknown, and one that overlaps nothing leaves it ok.
TEST(CheckerTest, InfoAcquireOverlappingHoldIsUnknown) {
  const History overlapping = HistoryBuilder()
                                  .hold(A, ms(0), ms(10), ms(200), ms(201))
                                  .acquire_invoke(ms(50), B)
                                  .acquire_end(ms(60), B, EventType::kInfo)
                                  .build();
  const CheckResult r = check(overlapping);
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  ASSERT_EQ(indeterminate(r).size(), 1u);
  EXPECT_EQ(indeterminate(r)[0]->clients[0], B);
  EXPECT_EQ(indeterminate(r)[0]->from_ns, ms(50));
  EXPECT_TRUE(contains(indeterminate(r)[0]->words, "B's acquire of lock at 50.0 ms"));

  const History apart = HistoryBuilder()
                            .hold(A, ms(0), ms(10), ms(200), ms(201))
                            .acquire_invoke(ms(300), B)
                            .acquire_end(ms(310), B, EventType::kInfo)
                            .build();
  const CheckResult ok = check(apart);
  EXPECT_EQ(ok.verdict, Verdict::kOk);
  EXPECT_TRUE(indeterminate(ok).empty());
  EXPECT_EQ(ok.stats.acquires_indeterminate, 1);
}

// Proves an acquire cut short by a crash is indeterminate for as long as its key could live: with
// no TTL, a later holder overlaps it.
TEST(CheckerTest, CrashDuringAcquireIsIndeterminate) {
  const History h = HistoryBuilder()
                        .acquire_invoke(ms(10), A)
                        .crash(ms(20), A)
                        .hold(B, ms(30), ms(40), ms(100), ms(101))
                        .build();
  const CheckResult r = check(h);
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  ASSERT_EQ(indeterminate(r).size(), 1u);
  EXPECT_EQ(indeterminate(r)[0]->clients[0], A);

  // With a 5 ms TTL the interrupted SET could not outlive 25 ms: B at 40 ms is clear.
  const History with_ttl = HistoryBuilder()
                               .acquire_invoke(ms(10), A, 5)
                               .crash(ms(20), A)
                               .hold(B, ms(30), ms(40), ms(100), ms(101), 5)
                               .build();
  EXPECT_EQ(check(with_ttl).verdict, Verdict::kOk);
}

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

// Proves a definite violation outweighs an indeterminate acquire.
TEST(CheckerTest, ViolationPlusInfoIsMutexViolation) {
  const History h = HistoryBuilder()
                        .hold(A, ms(0), ms(10), ms(200), ms(201))
                        .hold(B, ms(5), ms(100), ms(300), ms(301))
                        .acquire_invoke(ms(50), C)
                        .acquire_end(ms(60), C, EventType::kInfo)
                        .build();
  const CheckResult r = check(h);
  EXPECT_EQ(r.verdict, Verdict::kMutexViolation);
  EXPECT_FALSE(indeterminate(r).empty());
}

// Proves the verdict precedence: violation > deadlock > unknown > ok, across keys.
TEST(CheckerTest, VerdictPrecedence) {
  HistoryBuilder builder;
  // Key "stuck": A crashes holding it (no TTL), B gives up after 1 s.
  builder.acquire_invoke(ms(0), A, -1, "stuck")
      .acquire_ok(ms(1), A, -1, "stuck")
      .crash(ms(2), A)
      .acquire_invoke(ms(3), B, -1, "stuck")
      .acquire_end(ms(1003), B, EventType::kFail, "stuck");
  // Key "maybe": C's acquire got no reply while B held it.
  builder.hold(B, ms(1100), ms(1101), ms(1200), ms(1201), -1, "maybe")
      .acquire_invoke(ms(1150), C, -1, "maybe")
      .acquire_end(ms(1160), C, EventType::kInfo, "maybe");
  const CheckResult deadlock = check(builder.build());
  EXPECT_EQ(deadlock.verdict, Verdict::kDeadlock);
  EXPECT_EQ(deadlocks(deadlock).size(), 1u);
  EXPECT_EQ(indeterminate(deadlock).size(), 1u);

  // Key "racy": B and C both inside.
  builder.hold(B, ms(1300), ms(1301), ms(1400), ms(1401), -1, "racy")
      .hold(C, ms(1300), ms(1350), ms(1450), ms(1451), -1, "racy");
  EXPECT_EQ(check(builder.build()).verdict, Verdict::kMutexViolation);
}

// Proves a release after the releaser's lease ran out that deleted the key while another client
// was inside is reported even when nobody else got in (and is not itself a violation).
TEST(CheckerTest, StaleReleaseWithoutOverlap) {
  HistoryBuilder builder;
  builder.hold(B, ms(20), ms(150), ms(400), ms(401), 100);
  // A left at 140 ms (its lease ended at 110 ms) but its release was only sent at 160 ms.
  builder.acquire_invoke(ms(0), A, 100).acquire_ok(ms(10), A, 100);
  builder.event(ms(140), A, EventType::kOk, Op::kExit)
      .event(ms(160), A, EventType::kInvoke, Op::kRelease)
      .event(ms(161), A, EventType::kOk, Op::kRelease)
      .last()
      .release()
      .deleted = 1;
  const CheckResult r = check(builder.build());
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_TRUE(violations(r).empty());
  ASSERT_EQ(stale_releases(r).size(), 1u);
  EXPECT_EQ(stale_releases(r)[0]->clients[0], A);
  EXPECT_EQ(stale_releases(r)[0]->clients[1], B);
  EXPECT_EQ(
      stale_releases(r)[0]->words,
      "A's release of lock at 160.0 ms came after its lease had run out (from 100.0 ms on) and "
      "deleted the lock while B was inside (since 150.0 ms).");

  // The same release made while A's lease was still valid is not stale.
  HistoryBuilder fresh;
  fresh.hold(B, ms(20), ms(150), ms(400), ms(401), 100);
  fresh.acquire_invoke(ms(0), A, 1000).acquire_ok(ms(10), A, 1000);
  fresh.event(ms(140), A, EventType::kOk, Op::kExit)
      .event(ms(160), A, EventType::kInvoke, Op::kRelease)
      .event(ms(161), A, EventType::kOk, Op::kRelease)
      .last()
      .release()
      .deleted = 1;
  EXPECT_TRUE(stale_releases(check(fresh.build())).empty());
}

// Proves the counts and latency percentiles of CheckStats.
TEST(CheckerTest, StatsValues) {
  HistoryBuilder builder;
  builder
      .hold(A, ms(0), ms(1), ms(10), ms(11))         // latency 1 ms
      .hold(B, ms(5), ms(13), ms(20), ms(21))        // 8 ms
      .hold(A, ms(20), ms(23), ms(30), ms(31))       // 3 ms
      .hold(C, ms(25), ms(35), ms(40), ms(41), -1);  // 10 ms
  builder.acquire_invoke(ms(50), B).acquire_end(ms(60), B, EventType::kFail);
  builder.acquire_invoke(ms(61), B).acquire_end(ms(62), B, EventType::kInfo);
  builder.acquire_invoke(ms(70), C).acquire_ok(ms(72), C);  // 2 ms
  builder.release(ms(80), ms(81), C, 0);                    // refused: deleted nothing
  builder.acquire_invoke(ms(90), A).acquire_ok(ms(91), A);  // 1 ms
  builder.event(ms(95), A, EventType::kOk, Op::kExit)
      .event(ms(95), A, EventType::kInvoke, Op::kRelease)
      .event(ms(96), A, EventType::kFail, Op::kRelease)
      .last()
      .error = ErrorKind::kReplyError;
  builder.acquire_invoke(ms(100), A).acquire_ok(ms(101), A);
  builder.event(ms(105), A, EventType::kOk, Op::kExit)
      .event(ms(105), A, EventType::kInvoke, Op::kRelease)
      .event(ms(106), A, EventType::kInfo, Op::kRelease)
      .last()
      .error = ErrorKind::kTimeout;
  builder.acquire_invoke(ms(110), B).crash(ms(120), B);
  const History h = builder.build();
  const CheckStats s = check(h).stats;
  EXPECT_EQ(s.events, static_cast<std::int64_t>(h.events.size()));
  EXPECT_EQ(s.acquires_ok, 7);
  EXPECT_EQ(s.acquires_failed, 1);
  EXPECT_EQ(s.acquires_indeterminate, 2);  // the info and the one cut short by B's crash
  EXPECT_EQ(s.releases_ok, 4);
  EXPECT_EQ(s.releases_refused, 2);  // count 0 and the reply error; not the timeout
  EXPECT_EQ(s.crashes, 1);
  EXPECT_EQ(s.holds_per_client, (std::vector<std::int64_t>{4, 1, 2}));
  // Latencies sorted: 1 1 1 2 3 8 10 ms; nearest rank p50 = 4th. Seven samples cannot tell a
  // p99 from the maximum, so no p99 is stated.
  EXPECT_EQ(s.latency_samples, 7);
  EXPECT_EQ(s.acquire_latency_p50_ns, ms(2));
  EXPECT_EQ(s.acquire_latency_p99_ns, -1);
  EXPECT_EQ(s.acquire_latency_max_ns, ms(10));
  EXPECT_EQ(s.duration_ns, ms(120));
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

// CycleTimes: where one generated hold's events lie.
struct CycleTimes {
  std::size_t ok_event = 0;  // index of the acquire ok (the enter follows it)
  Nanos invoke_ns = 0;
  Nanos exit_ns = 0;
};

// correct_history: `cycles` holds handed between `clients` clients, each next client waiting
// during the previous hold and entering 1..1000 ns after the previous release completed.
History correct_history(int cycles, int clients, std::uint32_t seed,
                        std::vector<CycleTimes>* times) {
  std::vector<std::string> names;
  for (int c = 0; c < clients; ++c) names.push_back("c" + std::to_string(c));
  HistoryBuilder builder(names);
  std::mt19937 rng(seed);
  Nanos enter_ns = 1000;
  Nanos invoke_ns = 0;
  int holder = 0;
  for (int i = 0; i < cycles; ++i) {
    const Nanos exit_ns = enter_ns + 10'000 + static_cast<Nanos>(rng() % 100'000);
    const Nanos released_ns = exit_ns + 1 + static_cast<Nanos>(rng() % 1000);
    const int next = (holder + 1 + static_cast<int>(rng() % std::uint32_t(clients - 1))) % clients;
    // The next client asks while this hold is on, at least 2 ns before its exit.
    const Nanos next_invoke_ns = enter_ns + static_cast<Nanos>(rng() % 9'000);
    times->push_back({0, invoke_ns, exit_ns});
    builder.acquire_invoke(invoke_ns, holder);
    builder.acquire_ok(enter_ns, holder);
    builder.event(enter_ns, holder, EventType::kInfo, Op::kWork);
    builder.release(exit_ns, released_ns, holder);
    invoke_ns = next_invoke_ns;
    holder = next;
    enter_ns = released_ns + 1 + static_cast<Nanos>(rng() % 1000);
  }
  History h = builder.build();
  // Locate each cycle's ok after sorting (stable: an ok precedes its enter).
  std::size_t cycle = 0;
  for (std::size_t i = 0; i < h.events.size(); ++i) {
    if (h.events[i].f == Op::kAcquire && h.events[i].type == EventType::kOk) {
      (*times)[cycle++].ok_event = i;
    }
  }
  return h;
}

// Proves a long correct history passes, and that moving one enter 1 ns into the previous window
// is found.
TEST(CheckerTest, RandomizedLongHistory) {
  std::vector<CycleTimes> times;
  History h = correct_history(10'000, 8, 7, &times);
  const CheckResult ok = check(h);
  EXPECT_EQ(ok.verdict, Verdict::kOk);
  EXPECT_EQ(ok.stats.acquires_ok, 10'000);
  EXPECT_EQ(check(h).holds.size(), 10'000u);

  std::mt19937 rng(11);
  const std::size_t cycle = 1 + rng() % (times.size() - 1);
  const Nanos moved_ns = times[cycle - 1].exit_ns - 1;
  ASSERT_LT(times[cycle].invoke_ns, moved_ns);
  h.events[times[cycle].ok_event].time_ns = moved_ns;      // acquire ok
  h.events[times[cycle].ok_event + 1].time_ns = moved_ns;  // enter
  std::stable_sort(h.events.begin(), h.events.end(),
                   [](const Event& a, const Event& b) { return a.time_ns < b.time_ns; });
  const CheckResult bad = check(h);
  EXPECT_EQ(bad.verdict, Verdict::kMutexViolation);
  ASSERT_EQ(violations(bad).size(), 1u);
  EXPECT_EQ(overlap_of(*violations(bad)[0]), 1);
  EXPECT_EQ(violations(bad)[0]->from_ns, moved_ns);
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

// Proves a hold of 300 ms under a 100 ms TTL without renewal is lease_expired when B enters at
// 150 ms, and counts outside faults (no fault was recorded).
TEST(CheckerTest, NoRenewalLeaseExpiredOutsideFaults) {
  const History h = HistoryBuilder()
                        .hold(A, ms(0), ms(10), ms(300), ms(301), 100)
                        .hold(B, ms(50), ms(150), ms(400), ms(401), 100)
                        .build();
  const CheckResult r = check(h);
  EXPECT_EQ(r.verdict, Verdict::kMutexViolation);
  ASSERT_EQ(violations(r).size(), 1u);
  EXPECT_EQ(violations(r)[0]->cause, "lease_expired");
  const HoldWindow& earlier = hold_of(r, violations(r)[0]->clients[0], violations(r)[0]->from_ns);
  EXPECT_FALSE(earlier.faulted);
  EXPECT_EQ(earlier.lease_end_ns, ms(110));
  EXPECT_EQ(r.violations_outside_faults, 1);
  EXPECT_EQ(r.stats.holds_in_violation, 2);
}

// Proves renewals that stop at a lose_lock fault let the lease run out, and that the violation
// is counted as inside a fault (violations_outside_faults 0), with the last renewal named.
TEST(CheckerTest, ViolationInFaultedWindow) {
  HistoryBuilder builder;
  builder.acquire_invoke(ms(0), A, 100)
      .acquire_ok(ms(1), A, 100)
      .renewals(ms(30), ms(100), ms(30), A, 100)  // oks at 30.5, 60.5, 90.5
      .fault(ms(100), A)
      .release(ms(400), ms(401), A, 0)
      .hold(B, ms(60), ms(250), ms(500), ms(501), 100);
  const CheckResult r = check(builder.build());
  EXPECT_EQ(r.verdict, Verdict::kMutexViolation);
  ASSERT_EQ(violations(r).size(), 1u);
  const Finding& v = *violations(r)[0];
  EXPECT_EQ(v.cause, "lease_expired");
  EXPECT_TRUE(hold_of(r, v.clients[0], v.from_ns).faulted);
  EXPECT_FALSE(hold_of(r, v.clients[1], v.from_ns).faulted);
  EXPECT_EQ(hold_of(r, v.clients[0], v.from_ns).lease_end_ns, ms(190.5));
  EXPECT_TRUE(contains(v.words,
                       "A's lease (ttl 100 ms, last renewed at 90.5 ms) ran out at "
                       "190.5 ms"))
      << v.words;
  EXPECT_EQ(r.violations_outside_faults, 0);
  EXPECT_TRUE(idle_holds(r).empty());  // A's refused release came after its lease ran out

  // A fault before the window (the previous hold) does not mark it.
  HistoryBuilder earlier_fault;
  earlier_fault.fault(ms(0.5), A)
      .hold(A, ms(1), ms(2), ms(300), ms(301), 100)
      .hold(B, ms(60), ms(250), ms(500), ms(501), 100);
  EXPECT_EQ(check(earlier_fault.build()).violations_outside_faults, 1);
}

// Proves a nemesis fault counts for the client it was aimed at, not for the nemesis: A paused
// (a window from start to end) while holding is a faulted window; B, not aimed at, is not; and
// the fault windows pair each start with its end, an instant being a window of no length.
TEST(CheckerTest, NemesisFaultMarksTheTargetsWindow) {
  constexpr int kNemesis = 3;
  HistoryBuilder builder({"A", "B", "C", "nemesis"});
  builder.hold(A, ms(0), ms(1), ms(400), ms(401), 100)
      .nemesis(ms(50), kNemesis, A, "pause", FaultPhase::kStart)
      .hold(B, ms(60), ms(250), ms(500), ms(501), 100)
      .nemesis(ms(300), kNemesis, A, "pause", FaultPhase::kEnd)
      .nemesis(ms(450), kNemesis, C, "lose_reply", FaultPhase::kInstant);
  const CheckResult r = check(builder.build());
  ASSERT_EQ(violations(r).size(), 1u);
  const Finding& v = *violations(r)[0];
  EXPECT_EQ(v.clients[0], A);
  EXPECT_EQ(v.cause, "lease_expired");
  EXPECT_TRUE(hold_of(r, A, v.from_ns).faulted);
  EXPECT_FALSE(hold_of(r, B, v.from_ns).faulted);
  EXPECT_EQ(r.violations_outside_faults, 0);
  ASSERT_EQ(r.faults.size(), 2u);
  EXPECT_EQ(r.faults[0].client, A);
  EXPECT_EQ(r.faults[0].from_ns, ms(50));
  EXPECT_EQ(r.faults[0].to_ns, ms(300));
  EXPECT_EQ(r.faults[1].client, C);
  EXPECT_EQ(r.faults[1].from_ns, r.faults[1].to_ns);

  // The same pause aimed at B leaves A's window unfaulted: the violation is outside faults.
  HistoryBuilder aimed_elsewhere({"A", "B", "C", "nemesis"});
  aimed_elsewhere.hold(A, ms(0), ms(1), ms(400), ms(401), 100)
      .nemesis(ms(50), kNemesis, C, "pause", FaultPhase::kStart)
      .hold(B, ms(60), ms(250), ms(500), ms(501), 100)
      .nemesis(ms(300), kNemesis, C, "pause", FaultPhase::kEnd);
  EXPECT_EQ(check(aimed_elsewhere.build()).violations_outside_faults, 1);
}

// Proves an unanswered acquire that may have held the key while another client waited and gave
// up makes the run unknown (kept out by a holder that does not know it holds, or by nobody);
// an acquire that failed without waiting (the server refused the connection) is no such doubt.
TEST(CheckerTest, UnansweredAcquireThatKeptOthersOutIsUnknown) {
  HistoryBuilder builder;
  builder.acquire_invoke(ms(0), A, 100)
      .acquire_end(ms(2000), A, EventType::kInfo)
      .acquire_invoke(ms(1), B, 100)
      .acquire_end(ms(2050), B, EventType::kFail);
  builder.last().error = ErrorKind::kGaveUp;
  const CheckResult r = check(builder.build());
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  ASSERT_EQ(r.count(FindingKind::kIndeterminate), 1u);
  EXPECT_TRUE(contains(r.of(FindingKind::kIndeterminate)[0]->words, "gave up at 2050.0 ms"))
      << r.of(FindingKind::kIndeterminate)[0]->words;

  HistoryBuilder refused;
  refused.acquire_invoke(ms(0), A, 100)
      .acquire_end(ms(2000), A, EventType::kInfo)
      .acquire_invoke(ms(1), B, 100)
      .acquire_end(ms(2), B, EventType::kFail);
  refused.last().error = ErrorKind::kRefused;
  EXPECT_EQ(check(refused.build()).count(FindingKind::kIndeterminate), 0u);
}

// Proves a window the run never closed (the nemesis stopped mid-pause) ends with the history.
TEST(CheckerTest, UnclosedFaultWindowEndsWithTheHistory) {
  HistoryBuilder builder({"A", "B", "C", "nemesis"});
  builder.hold(A, ms(0), ms(1), ms(400), ms(401), 100)
      .nemesis(ms(50), 3, A, "partition", FaultPhase::kStart);
  const CheckResult r = check(builder.build());
  ASSERT_EQ(r.faults.size(), 1u);
  EXPECT_EQ(r.faults[0].to_ns, ms(401));
}

// Proves the counter check is independent of the windows: two sequential sales of the last item,
// the second computed from a stale read, are an oversell and a lost update (resource_corrupted);
// with overlapping windows the violation outweighs it; without a resource spec it is not judged.
TEST(CheckerTest, CounterStaleReadOversellsAndLosesUpdate) {
  HistoryBuilder sequential;
  sequential.hold(A, ms(0), ms(1), ms(10), ms(11))
      .read(ms(2), A, "stock", 1)
      .write(ms(5), A, "stock", 0, 1)
      .hold(B, ms(3), ms(20), ms(30), ms(31))
      .read(ms(22), B, "stock", 1)  // the harness's stale copy
      .write(ms(25), B, "stock", 0, 1);
  const History h = sequential.build();
  const CheckResult r = check(h, counter(1));
  EXPECT_EQ(r.verdict, Verdict::kResourceCorrupted);
  EXPECT_TRUE(violations(r).empty());
  EXPECT_EQ(r.stats.resource_writes, 2);
  ASSERT_EQ(resource_findings(r).size(), 2u);
  const Finding& oversell = *resource_findings(r)[0];
  EXPECT_EQ(oversell.cause, "oversell");
  EXPECT_EQ(oversell.key, "stock");
  EXPECT_EQ(oversell.amount, 1);
  EXPECT_EQ(oversell.words, "stock: 2 sales from an initial 1: oversold by 1.");
  const Finding& lost = *resource_findings(r)[1];
  EXPECT_EQ(lost.cause, "lost_update");
  EXPECT_EQ(lost.amount, 1);
  EXPECT_EQ(lost.words,
            "stock ends at 0 but 2 sales from 1 should leave -1: 1 update lost (B wrote 0 at "
            "25.0 ms computed from a stale read of 1).");

  EXPECT_EQ(check(h).verdict, Verdict::kOk);  // no resource spec: only the lock is judged

  HistoryBuilder overlapping;
  overlapping.hold(A, ms(0), ms(1), ms(10), ms(11))
      .read(ms(2), A, "stock", 1)
      .hold(B, ms(1), ms(3), ms(30), ms(31))
      .read(ms(4), B, "stock", 1)
      .write(ms(5), A, "stock", 0, 1)
      .write(ms(25), B, "stock", 0, 1);
  const CheckResult both = check(overlapping.build(), counter(1));
  EXPECT_EQ(both.verdict, Verdict::kMutexViolation);
  EXPECT_EQ(resource_findings(both).size(), 2u);
}

// Proves a clean sequence of sales passes, and that one more correctly-based sale than the stock
// (a write of -1) is an oversell but no lost update.
TEST(CheckerTest, CounterCleanSalesPass) {
  HistoryBuilder builder;
  for (int i = 0; i < 3; ++i) {
    const double t = 10.0 * i;
    builder.hold(i % 2 == 0 ? A : B, ms(t), ms(t + 1), ms(t + 5), ms(t + 6))
        .read(ms(t + 2), i % 2 == 0 ? A : B, "stock", 3 - i)
        .write(ms(t + 3), i % 2 == 0 ? A : B, "stock", 2 - i, 3 - i);
  }
  const CheckResult ok = check(builder.build(), counter(3));
  EXPECT_EQ(ok.verdict, Verdict::kOk);
  EXPECT_TRUE(resource_findings(ok).empty());
  EXPECT_EQ(ok.stats.resource_writes, 3);

  builder.hold(C, ms(40), ms(41), ms(45), ms(46))
      .read(ms(42), C, "stock", 0)
      .write(ms(43), C, "stock", -1, 0);
  const CheckResult bad = check(builder.build(), counter(3));
  EXPECT_EQ(bad.verdict, Verdict::kResourceCorrupted);
  ASSERT_EQ(resource_findings(bad).size(), 1u);
  EXPECT_EQ(resource_findings(bad)[0]->cause, "oversell");
  EXPECT_EQ(resource_findings(bad)[0]->amount, 1);

  // A write below zero is an oversell even when the sales count does not show it.
  const History negative = HistoryBuilder().write(ms(1), A, "stock", -2, 0).build();
  const CheckResult neg = check(negative, counter(5));
  ASSERT_EQ(resource_findings(neg).size(), 1u);
  EXPECT_EQ(resource_findings(neg)[0]->cause, "oversell");
  EXPECT_EQ(resource_findings(neg)[0]->amount, 2);
  EXPECT_EQ(resource_findings(neg)[0]->words, "stock: A wrote -2 at 1.0 ms: oversold by 2.");
}

// kleppmann_pause: Kleppmann's example with a stock of 10. A is granted the lock (TTL 100 ms) and
// reads 10, then stalls past its lease; B is granted it at 150 ms, reads 10 and sells one (9);
// A resumes at 300 ms and writes 9 from its stale read, then both release. With `fenced`, the
// grants carry fencing numbers 1 and 2, the writes present them and the store refuses A's.
History kleppmann_pause(bool fenced) {
  HistoryBuilder h;
  h.acquire_invoke(ms(0), A, 100).acquire_ok(ms(1), A, 100).read(ms(2), A, "stock", 10);
  if (fenced) h.grant_fencing(1);
  h.acquire_invoke(ms(5), B, 100).acquire_ok(ms(150), B, 100).read(ms(151), B, "stock", 10);
  if (fenced) {
    h.grant_fencing(2)
        .fenced_write(ms(152), B, "stock", 9, 10, 2, true)
        .fenced_write(ms(300), A, "stock", 9, 10, 1, false);
  } else {
    h.write(ms(152), B, "stock", 9, 10).write(ms(300), A, "stock", 9, 10);
  }
  return h.release(ms(301), ms(302), A, 0).release(ms(310), ms(311), B).build();
}

// Proves a fenced store that refused the paused holder's stale write keeps the stock intact: the
// windows still overlap (mutex_violation, lease_expired), the resource is judged from the write it
// accepted, and the refused write is reported as a stale write, rejected.
TEST(CheckerTest, FencedStoreRejectsTheStaleWrite) {
  const CheckResult r = check(kleppmann_pause(true), fenced_counter(10));
  EXPECT_EQ(r.verdict, Verdict::kMutexViolation);
  EXPECT_EQ(r.causes(), std::vector<std::string>{"lease_expired"});
  EXPECT_TRUE(r.resource_intact());
  EXPECT_EQ(r.stats.resource_writes, 1);
  ASSERT_EQ(stale_writes(r).size(), 1u);
  const Finding& stale = *stale_writes(r)[0];
  EXPECT_EQ(stale.cause, "rejected");
  EXPECT_EQ(stale.key, "stock");
  EXPECT_EQ(stale.clients, (std::vector<int>{A, B}));
  EXPECT_EQ(stale.from_ns, ms(150));
  EXPECT_EQ(stale.to_ns, ms(300));
  EXPECT_EQ(stale.words,
            "A wrote 9 to stock at 300.0 ms under its grant of lock at 1.0 ms (fencing 1), "
            "superseded by B's at 150.0 ms (fencing 2): the fenced store rejected it (it had "
            "accepted fencing 2), so it changed nothing.");
  EXPECT_EQ(r.stats.stale_writes_accepted, 0);
  EXPECT_EQ(r.stats.stale_writes_rejected, 1);
  EXPECT_EQ(verdict_of(FindingKind::kStaleWrite), Verdict::kOk);
}

// Proves the same pause against a store that takes every write loses B's sale: resource_corrupted
// (lost_update) beside the overlap, and A's write is a stale write the store accepted. A fenced
// store shown no numbers (a lock without fencing) accepts it too: an unfenced client cannot be
// protected.
TEST(CheckerTest, UnfencedStoreAcceptsTheStaleWrite) {
  const History h = kleppmann_pause(false);
  for (const ResourceSpec& store : {counter(10), fenced_counter(10)}) {
    const CheckResult r = check(h, store);
    EXPECT_EQ(r.verdict, Verdict::kMutexViolation);
    EXPECT_FALSE(r.resource_intact());
    ASSERT_EQ(resource_findings(r).size(), 1u);
    const Finding& lost = *resource_findings(r)[0];
    EXPECT_EQ(lost.cause, "lost_update");
    EXPECT_EQ(lost.amount, 1);
    EXPECT_EQ(lost.words,
              "stock ends at 9 but 2 sales from 10 should leave 8: 1 update lost (A wrote 9 at "
              "300.0 ms computed from a stale read of 10).");
    ASSERT_EQ(stale_writes(r).size(), 1u);
    EXPECT_EQ(stale_writes(r)[0]->cause, "accepted");
    EXPECT_EQ(stale_writes(r)[0]->words,
              "A wrote 9 to stock at 300.0 ms under its grant of lock at 1.0 ms, superseded by "
              "B's at 150.0 ms: the store accepted it.");
    EXPECT_EQ(r.stats.stale_writes_accepted, 1);
    EXPECT_EQ(r.stats.stale_writes_rejected, 0);
  }
}

// Proves the near misses are not stale writes: a holder writing twice under one fencing number (the
// store accepts equal numbers), a holder superseded only by its own later grant, a write that
// failed on a timeout (no evidence either way), and a write under a grant that fencing numbers
// show to be the newer one although it was recorded first.
TEST(CheckerTest, NearMissesAreNotStaleWrites) {
  HistoryBuilder same_holder;
  same_holder.hold(A, ms(0), ms(1), ms(10), ms(11))
      .grant_fencing(1)
      .read(ms(2), A, "stock", 10)
      .fenced_write(ms(3), A, "stock", 9, 10, 1, true)
      .hold(B, ms(5), ms(12), ms(30), ms(31))
      .grant_fencing(2)
      .read(ms(13), B, "stock", 9)
      .fenced_write(ms(14), B, "stock", 8, 9, 2, true)
      .read(ms(15), B, "stock", 8)
      .fenced_write(ms(16), B, "stock", 7, 8, 2, true)
      .hold(A, ms(32), ms(33), ms(40), ms(41))
      .grant_fencing(3)
      .hold(A, ms(42), ms(43), ms(50), ms(51))
      .grant_fencing(4)
      .read(ms(44), A, "stock", 7)
      .fenced_write(ms(45), A, "stock", 6, 7, 4, true);
  const CheckResult ok = check(same_holder.build(), fenced_counter(10));
  EXPECT_EQ(ok.verdict, Verdict::kOk);
  EXPECT_TRUE(stale_writes(ok).empty());
  EXPECT_EQ(ok.stats.resource_writes, 4);

  // A's write timed out after B was granted the lock: it may or may not have happened.
  HistoryBuilder timed_out;
  timed_out.acquire_invoke(ms(0), A, 100).acquire_ok(ms(1), A, 100).read(ms(2), A, "stock", 10);
  timed_out.acquire_invoke(ms(5), B, 100)
      .acquire_ok(ms(150), B, 100)
      .write(ms(300), A, "stock", 9, 10);
  timed_out.last().type = EventType::kFail;
  timed_out.last().error = ErrorKind::kTimeout;
  EXPECT_TRUE(stale_writes(check(timed_out.build(), counter(10))).empty());

  // B's grant was recorded after A's but carries the lower number (its reply was read late): A's
  // is the newer grant, so B's write is the stale one and A's is not.
  HistoryBuilder reordered;
  reordered.acquire_invoke(ms(0), A, 100).acquire_ok(ms(10), A, 100).grant_fencing(2);
  reordered.acquire_invoke(ms(0), B, 100).acquire_ok(ms(12), B, 100).grant_fencing(1);
  reordered.fenced_write(ms(20), A, "stock", 9, 10, 2, true)
      .fenced_write(ms(21), B, "stock", 9, 10, 1, false);
  const CheckResult by_number = check(reordered.build(), fenced_counter(10));
  ASSERT_EQ(stale_writes(by_number).size(), 1u);
  EXPECT_EQ(stale_writes(by_number)[0]->clients, (std::vector<int>{B, A}));
  EXPECT_EQ(stale_writes(by_number)[0]->cause, "rejected");
}

// Proves find-or-create reports a record created twice with its id and creators, and passes when
// the second client found it.
TEST(CheckerTest, FindOrCreateDuplicate) {
  const History dup = HistoryBuilder()
                          .read(ms(10), A, "records", 0, "1")
                          .read(ms(11), B, "records", 0, "1")
                          .write(ms(12), A, "records", 1, std::nullopt, "1")
                          .write(ms(14.1), B, "records", 1, std::nullopt, "1")
                          .read(ms(15), C, "records", 0, "2")
                          .write(ms(16), C, "records", 1, std::nullopt, "2")
                          .build();
  const CheckResult r = check(dup, records());
  EXPECT_EQ(r.verdict, Verdict::kResourceCorrupted);
  ASSERT_EQ(resource_findings(r).size(), 1u);
  const Finding& f = *resource_findings(r)[0];
  EXPECT_EQ(f.cause, "duplicate");
  EXPECT_EQ(f.key, "records");
  EXPECT_EQ(f.record, "1");
  EXPECT_EQ(f.amount, 1);
  EXPECT_EQ(f.words, "record 1 created 2 times (by A at 12.0 ms and B at 14.1 ms): 1 duplicate.");

  const History clean = HistoryBuilder()
                            .read(ms(10), A, "records", 0, "1")
                            .write(ms(12), A, "records", 1, std::nullopt, "1")
                            .read(ms(14), B, "records", 1, "1")
                            .read(ms(15), C, "records", 0, "2")
                            .write(ms(16), C, "records", 1, std::nullopt, "2")
                            .build();
  const CheckResult ok = check(clean, records());
  EXPECT_EQ(ok.verdict, Verdict::kOk);
  EXPECT_TRUE(resource_findings(ok).empty());
  EXPECT_EQ(ok.stats.resource_writes, 2);
}

// Proves a release that deleted nothing while its lease ran is an idle hold lasting until the
// lease end (the next holder came after), and that the verdict stays ok.
TEST(CheckerTest, IdleHoldUntilLeaseEnd) {
  const History h = HistoryBuilder()
                        .acquire_invoke(ms(0), A, 300)
                        .acquire_ok(ms(30.2), A, 300)
                        .release(ms(32.4), ms(33), A, 0)
                        .hold(B, ms(40), ms(331), ms(400), ms(401), 300)
                        .build();
  const CheckResult r = check(h);
  EXPECT_EQ(r.verdict, Verdict::kOk);
  ASSERT_EQ(idle_holds(r).size(), 1u);
  const Finding& idle = *idle_holds(r)[0];
  EXPECT_EQ(idle.clients[0], A);
  EXPECT_EQ(idle.from_ns, ms(32.4));
  EXPECT_EQ(idle.to_ns, ms(330.2));
  EXPECT_EQ(idle.words,
            "A's release of lock at 32.4 ms deleted nothing though its lease ran until 330.2 ms: "
            "the lock sat idle, held by nobody, for 297.8 ms (B got it at 331.0 ms).");
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

// Proves a refused release is not an idle hold when the lease had run out, or when another client
// was inside (a stale release refused, as it should be).
TEST(CheckerTest, RefusedReleaseThatIsNotAnIdleHold) {
  const History expired = HistoryBuilder()
                              .acquire_invoke(ms(0), A, 20)
                              .acquire_ok(ms(10), A, 20)
                              .release(ms(40), ms(41), A, 0)
                              .build();
  EXPECT_TRUE(idle_holds(check(expired)).empty());

  HistoryBuilder other_inside;
  other_inside.acquire_invoke(ms(0), A, 300).acquire_ok(ms(10), A, 300);
  other_inside.event(ms(20), A, EventType::kOk, Op::kExit)
      .event(ms(100), A, EventType::kInvoke, Op::kRelease)
      .event(ms(101), A, EventType::kOk, Op::kRelease)
      .last()
      .release()
      .deleted = 0;
  other_inside.hold(B, ms(30), ms(50), ms(200), ms(201), 300);
  const CheckResult r = check(other_inside.build());
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_TRUE(idle_holds(r).empty());
}

// Proves the naive [acquire invoke, release completed] windows overlap on a polled hand-off whose
// definite windows are disjoint, and do not when each acquire starts after the previous release.
TEST(CheckerTest, NaiveTimestampOverlaps) {
  const History polled = HistoryBuilder()
                             .hold(A, ms(0), ms(1), ms(100), ms(101))
                             .hold(B, ms(50), ms(102), ms(200), ms(201))
                             .hold(C, ms(150), ms(202), ms(300), ms(301))
                             .hold(A, ms(160), ms(302), ms(400), ms(401))
                             .build();
  const CheckResult r = check(polled);
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_TRUE(violations(r).empty());
  // A1-B, B-C, B-A2, C-A2.
  EXPECT_EQ(r.naive_timestamp_overlaps, 4);

  const History gaps = HistoryBuilder()
                           .hold(A, ms(0), ms(1), ms(100), ms(101))
                           .hold(B, ms(110), ms(111), ms(200), ms(201))
                           .hold(C, ms(201), ms(202), ms(300), ms(301))
                           .build();
  EXPECT_EQ(check(gaps).naive_timestamp_overlaps, 0);
}

// Proves the naive-overlap sweep counts exactly what a pairwise comparison counts, on a long
// contended history.
TEST(CheckerTest, NaiveTimestampOverlapsMatchPairwiseCount) {
  std::vector<CycleTimes> times;
  const History h = correct_history(2'000, 5, 3, &times);
  struct Naive {
    int client;
    Nanos start_ns;
    Nanos end_ns;
  };
  std::vector<Naive> naive;
  std::vector<Nanos> invoke_ns(h.clients.size(), -1);
  std::vector<Nanos> start_ns(h.clients.size(), -1);
  for (const Event& e : h.events) {
    const auto c = static_cast<std::size_t>(e.client);
    if (e.f == Op::kAcquire && e.type == EventType::kInvoke) invoke_ns[c] = e.time_ns;
    if (e.f == Op::kAcquire && e.type == EventType::kOk) start_ns[c] = invoke_ns[c];
    if (e.f == Op::kRelease && e.type != EventType::kInvoke && start_ns[c] >= 0) {
      naive.push_back({e.client, start_ns[c], e.time_ns});
      start_ns[c] = -1;
    }
  }
  std::int64_t pairs = 0;
  for (std::size_t i = 0; i < naive.size(); ++i) {
    for (std::size_t j = i + 1; j < naive.size(); ++j) {
      if (naive[i].client == naive[j].client) continue;
      const Nanos overlap = std::min(naive[i].end_ns, naive[j].end_ns) -
                            std::max(naive[i].start_ns, naive[j].start_ns);
      if (overlap > 0) ++pairs;
    }
  }
  const CheckResult r = check(h);
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_GT(pairs, 0);
  EXPECT_EQ(r.naive_timestamp_overlaps, pairs);
}

// Proves a renewal that succeeded after another client took the expired lock is a stolen
// renewal: it extended the new holder's key. It does not count as renewing the extender's own
// lease, so the overlap is still blamed on the extender's expired lease.
TEST(CheckerTest, StolenRenewalIsFlagged) {
  HistoryBuilder builder;
  builder.acquire_invoke(ms(0), A, 100)
      .acquire_ok(ms(1), A, 100)  // lease until 101 ms; A pauses, renewing nothing
      .hold(B, ms(50), ms(110), ms(400), ms(401), 100)
      .extend(ms(200), ms(201), A, 100)  // A resumes: its extend finds B's key and extends it
      .release(ms(300), ms(301), A, 0);
  const CheckResult r = check(builder.build());
  EXPECT_EQ(r.verdict, Verdict::kMutexViolation);
  ASSERT_EQ(violations(r).size(), 1u);
  EXPECT_EQ(violations(r)[0]->cause, "lease_expired");
  const std::vector<const Finding*> stolen = r.of(FindingKind::kStolenRenewal);
  ASSERT_EQ(stolen.size(), 1u);
  EXPECT_EQ(stolen[0]->clients, (std::vector<int>{A, B}));
  EXPECT_EQ(stolen[0]->from_ns, ms(200));
  EXPECT_TRUE(contains(stolen[0]->words, "it extended B's lock, not A's")) << stolen[0]->words;
  EXPECT_EQ(hold_of(r, A, ms(150)).lease_end_ns, ms(101));  // not moved by the stolen extend
}

// Proves an owner-checked renewal that found someone else's key (extended 0), and renewals of the
// extender's own lease, are not stolen.
TEST(CheckerTest, RefusedAndOwnRenewalsAreNotStolen) {
  HistoryBuilder builder;
  builder.acquire_invoke(ms(0), A, 100)
      .acquire_ok(ms(1), A, 100)
      .renewals(ms(30), ms(90), ms(30), A, 100)  // its own lease, while nobody else is inside
      .hold(B, ms(50), ms(200), ms(400), ms(401), 100)
      .extend(ms(250), ms(251), A, 100, /*count=*/0)  // refused: B's key has B's token
      .release(ms(300), ms(301), A, 0);
  const CheckResult r = check(builder.build());
  EXPECT_EQ(r.count(FindingKind::kStolenRenewal), 0u);
}

// Proves that when a client's own late release (from an earlier hold) deleted the holder's key
// and it then walked in, the cause is stale_release, not racy_acquire.
TEST(CheckerTest, OwnEarlierStaleReleaseIsTheCause) {
  // C holds with ttl 100 from 0 ms; its lease runs out at 100; B gets in at 120; C's release at
  // 200 deletes B's key; C acquires again at 210 while B is inside (B's ttl 1000).
  const History h = HistoryBuilder()
                        .hold(C, ms(0), ms(0), ms(200), ms(201), 100)
                        .hold(B, ms(10), ms(120), ms(600), ms(601), 1000)
                        .hold(C, ms(205), ms(210), ms(300), ms(301), 1000)
                        .build();
  const CheckResult r = check(h);
  ASSERT_EQ(violations(r).size(), 2u);
  const Finding& v = *violations(r)[1];  // B (earlier), C (later)
  EXPECT_EQ(v.clients[0], B);
  EXPECT_EQ(v.clients[1], C);
  EXPECT_EQ(v.cause, "stale_release");
  EXPECT_EQ(v.clients[2], C);
  EXPECT_TRUE(contains(v.words, "C's own earlier release")) << v.words;
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

// Proves a key that was wanted but never granted is an error, while an acquire that may have
// succeeded (info) counts as possibly granted.
TEST(CheckerTest, NeverGrantedIsAnError) {
  HistoryBuilder never;
  never.acquire_invoke(ms(0), A, 100).acquire_end(ms(5), A, EventType::kFail);
  never.acquire_invoke(ms(1), B, 100).acquire_end(ms(6), B, EventType::kFail);
  const CheckResult r = check(never.build());
  EXPECT_EQ(r.verdict, Verdict::kError);
  ASSERT_EQ(r.count(FindingKind::kNeverGranted), 1u);
  EXPECT_EQ(r.of(FindingKind::kNeverGranted)[0]->amount, 2);

  HistoryBuilder maybe;
  maybe.acquire_invoke(ms(0), A, 100).acquire_end(ms(5), A, EventType::kInfo);
  maybe.acquire_invoke(ms(1), B, 100).acquire_end(ms(6), B, EventType::kFail);
  EXPECT_EQ(check(maybe.build()).count(FindingKind::kNeverGranted), 0u);
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

// Proves a p99 is stated from 100 samples on, and is the nearest-rank value.
TEST(CheckerTest, P99NeedsAHundredSamples) {
  HistoryBuilder builder;
  for (int i = 0; i < 100; ++i) {
    const Nanos t = ms(10.0 * i);
    builder.hold(A, t, t + ms(i == 99 ? 5 : 1), t + ms(6), t + ms(7));
  }
  const CheckStats s = check(builder.build()).stats;
  EXPECT_EQ(s.latency_samples, 100);
  EXPECT_EQ(s.acquire_latency_p50_ns, ms(1));
  EXPECT_EQ(s.acquire_latency_p99_ns, ms(1));  // the 99th of 100 is still 1 ms
  EXPECT_EQ(s.acquire_latency_max_ns, ms(5));
}

// Proves every finding kind has a word and a verdict, and the verdicts are ordered as documented.
TEST(CheckerTest, FindingKindsAndVerdictOrder) {
  for (const FindingKind kind : all_finding_kinds()) EXPECT_FALSE(to_string(kind).empty());
  EXPECT_EQ(strongest(Verdict::kError, Verdict::kUnknown), Verdict::kError);
  EXPECT_EQ(strongest(Verdict::kError, Verdict::kDeadlock), Verdict::kDeadlock);
  EXPECT_EQ(verdict_of(FindingKind::kStolenRenewal), Verdict::kOk);
  EXPECT_EQ(verdict_of(FindingKind::kNeverGranted), Verdict::kError);
  EXPECT_EQ(verdict_of(FindingKind::kIncomplete), Verdict::kUnknown);
}

}  // namespace
}  // namespace locksim
