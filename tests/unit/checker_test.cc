// checker_test: check_history on hand-built histories that must pass and histories that must fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "sim/checker/check.h"

namespace locksim {
namespace {

constexpr int A = 0;
constexpr int B = 1;
constexpr int C = 2;

Nanos ms(double value) { return static_cast<Nanos>(std::llround(value * 1e6)); }

// HistoryBuilder: appends events in any order; build() sorts them by time as History promises.
class HistoryBuilder {
 public:
  explicit HistoryBuilder(std::vector<std::string> clients = {"A", "B", "C"}) {
    history_.clients = std::move(clients);
  }

  HistoryBuilder& event(Nanos t, int client, EventType type, Op f, std::string key = "lock") {
    Event e;
    e.time_ns = t;
    e.client = client;
    e.type = type;
    e.f = f;
    e.key = std::move(key);
    history_.events.push_back(std::move(e));
    return *this;
  }
  Event& last() { return history_.events.back(); }

  HistoryBuilder& acquire_invoke(Nanos t, int client, std::int64_t ttl_ms = -1,
                                 const std::string& key = "lock") {
    event(t, client, EventType::kInvoke, Op::kAcquire, key);
    last().ttl_ms = ttl_ms;
    return *this;
  }
  // acquire_ok: the ok and the enter right after it.
  HistoryBuilder& acquire_ok(Nanos t, int client, std::int64_t ttl_ms = -1,
                             const std::string& key = "lock") {
    event(t, client, EventType::kOk, Op::kAcquire, key);
    last().ttl_ms = ttl_ms;
    last().token = "token-" + std::to_string(history_.events.size());
    last().count = 1;
    return event(t, client, EventType::kOk, Op::kEnter, key);
  }
  HistoryBuilder& acquire_end(Nanos t, int client, EventType type,
                              const std::string& key = "lock") {
    event(t, client, type, Op::kAcquire, key);
    last().error = type == EventType::kInfo ? "timeout: no reply" : "timeout: gave up";
    return *this;
  }
  // release: exit, release invoke at the same instant, release ok with `count` at `done`.
  HistoryBuilder& release(Nanos exit, Nanos done, int client, std::int64_t count = 1,
                          const std::string& key = "lock") {
    event(exit, client, EventType::kOk, Op::kExit, key);
    event(exit, client, EventType::kInvoke, Op::kRelease, key);
    event(done, client, EventType::kOk, Op::kRelease, key);
    last().count = count;
    return *this;
  }
  // hold: a whole successful cycle.
  HistoryBuilder& hold(int client, Nanos invoke, Nanos ok, Nanos exit, Nanos done,
                       std::int64_t ttl_ms = -1, const std::string& key = "lock") {
    acquire_invoke(invoke, client, ttl_ms, key);
    acquire_ok(ok, client, ttl_ms, key);
    return release(exit, done, client, 1, key);
  }
  HistoryBuilder& crash(Nanos t, int client) {
    return event(t, client, EventType::kInfo, Op::kCrash, "");
  }

  History build() const {
    History h = history_;
    std::stable_sort(h.events.begin(), h.events.end(),
                     [](const Event& a, const Event& b) { return a.time_ns < b.time_ns; });
    for (std::size_t i = 0; i < h.events.size(); ++i) h.events[i].index = std::int64_t(i);
    return h;
  }

 private:
  History history_;
};

CheckResult check(const History& history, Nanos stuck_threshold_ns = ms(500)) {
  return check_history(history, CheckOptions{.stuck_threshold_ns = stuck_threshold_ns});
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
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
  EXPECT_TRUE(r.violations.empty());
  EXPECT_EQ(hold_windows(h).size(), 3u);
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
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].overlap_ns, 1);
}

// Proves windows that only touch (next enter == previous exit) share no time and pass.
TEST(CheckerTest, ExactlyTouchingWindowsPass) {
  const History h = HistoryBuilder()
                        .hold(A, ms(0), ms(1), ms(100), ms(101))
                        .hold(B, ms(50), ms(100), ms(200), ms(201))
                        .build();
  const CheckResult r = check(h);
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_TRUE(r.violations.empty());
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
  ASSERT_EQ(r.violations.size(), 1u);
  const MutexViolation& v = r.violations[0];
  EXPECT_EQ(v.cause, "lease_expired");
  EXPECT_EQ(v.earlier.client, A);
  EXPECT_EQ(v.later.client, B);
  EXPECT_EQ(v.overlap_ns, ms(412.1) - ms(215.3));
  EXPECT_EQ(v.explanation,
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
  ASSERT_EQ(r.violations.size(), 2u);
  EXPECT_EQ(r.violations[0].cause, "lease_expired");  // A, B
  const MutexViolation& v = r.violations[1];          // B, C
  EXPECT_EQ(v.earlier.client, B);
  EXPECT_EQ(v.later.client, C);
  EXPECT_EQ(v.cause, "stale_release");
  EXPECT_EQ(v.stale_releaser, A);
  EXPECT_EQ(v.stale_release_ns, ms(300));
  EXPECT_TRUE(contains(v.explanation, "A's release at 300.0 ms")) << v.explanation;
  EXPECT_TRUE(contains(v.explanation, "deleted B's lock and let C in")) << v.explanation;
  EXPECT_EQ(r.causes(), (std::vector<std::string>{"lease_expired", "stale_release"}));

  ASSERT_EQ(r.stale_releases.size(), 1u);
  EXPECT_EQ(r.stale_releases[0].releaser, A);
  EXPECT_EQ(r.stale_releases[0].victim, B);
  EXPECT_EQ(r.stale_releases[0].release_ns, ms(300));
}

// Proves an overlap while the first lease was still valid (or absent) is a racy acquire.
TEST(CheckerTest, RacyAcquire) {
  const History no_ttl = HistoryBuilder()
                             .hold(A, ms(0), ms(10), ms(200), ms(201))
                             .hold(B, ms(5), ms(100), ms(300), ms(301))
                             .build();
  CheckResult r = check(no_ttl);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].cause, "racy_acquire");
  EXPECT_EQ(r.violations[0].overlap_ns, ms(100));
  EXPECT_TRUE(contains(r.violations[0].explanation, "A's lock has no TTL"));

  const History valid_ttl = HistoryBuilder()
                                .hold(A, ms(0), ms(10), ms(200), ms(201), 1000)
                                .hold(B, ms(5), ms(100), ms(300), ms(301), 1000)
                                .build();
  r = check(valid_ttl);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].cause, "racy_acquire");
  EXPECT_TRUE(contains(r.violations[0].explanation, "still valid until 1010.0 ms"));
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
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].key, "x");
  EXPECT_EQ(r.violations[0].overlap_ns, ms(100));
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
  ASSERT_EQ(r.deadlocks.size(), 1u);
  const Deadlock& d = r.deadlocks[0];
  EXPECT_EQ(d.waiter, B);
  EXPECT_EQ(d.stuck_from_ns, ms(25));
  EXPECT_EQ(d.stuck_to_ns, ms(1525));
  EXPECT_EQ(d.explanation,
            "B's acquire of lock failed after 1500.0 ms; for 1500.0 ms no live client held it (A "
            "crashed at 20.0 ms while holding it and its key has no TTL).");
  ASSERT_EQ(r.recoveries.size(), 1u);
  EXPECT_EQ(r.recoveries[0].recovered_ns, -1);
  EXPECT_EQ(r.recoveries[0].next_holder, -1);

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
  ASSERT_EQ(r.deadlocks.size(), 1u);
  EXPECT_EQ(r.deadlocks[0].stuck_from_ns, ms(400));
  EXPECT_EQ(r.deadlocks[0].stuck_to_ns, ms(2000));
  EXPECT_TRUE(contains(r.deadlocks[0].explanation, "for 1600.0 ms"));
  EXPECT_TRUE(contains(r.deadlocks[0].explanation, "A's release at 400.0 ms did not delete"));
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
  EXPECT_TRUE(r.deadlocks.empty());
  ASSERT_EQ(r.recoveries.size(), 1u);
  const Recovery& recovery = r.recoveries[0];
  EXPECT_EQ(recovery.crashed, A);
  EXPECT_EQ(recovery.next_holder, B);
  EXPECT_EQ(recovery.recovered_ns, ms(320.5));
  EXPECT_EQ(recovery.explanation,
            "A crashed inside at 50.0 ms; lock was obtainable again at 320.5 ms (recovery 270.5 "
            "ms, B acquired it)");
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
  ASSERT_EQ(r.deadlocks.size(), 1u);
  EXPECT_EQ(r.deadlocks[0].stuck_from_ns, ms(120));
  EXPECT_TRUE(contains(r.deadlocks[0].explanation, "its lease ran out at 120.0 ms"));
  EXPECT_FALSE(contains(r.deadlocks[0].explanation, "no TTL"));
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
  EXPECT_TRUE(r.deadlocks.empty());
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
  ASSERT_EQ(r.indeterminate.size(), 1u);
  EXPECT_EQ(r.indeterminate[0].client, B);
  EXPECT_EQ(r.indeterminate[0].invoke_ns, ms(50));
  EXPECT_TRUE(contains(r.indeterminate[0].explanation, "B's acquire of lock at 50.0 ms"));

  const History apart = HistoryBuilder()
                            .hold(A, ms(0), ms(10), ms(200), ms(201))
                            .acquire_invoke(ms(300), B)
                            .acquire_end(ms(310), B, EventType::kInfo)
                            .build();
  const CheckResult ok = check(apart);
  EXPECT_EQ(ok.verdict, Verdict::kOk);
  EXPECT_TRUE(ok.indeterminate.empty());
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
  ASSERT_EQ(r.indeterminate.size(), 1u);
  EXPECT_EQ(r.indeterminate[0].client, A);

  // With a 5 ms TTL the interrupted SET could not outlive 25 ms: B at 40 ms is clear.
  const History with_ttl = HistoryBuilder()
                               .acquire_invoke(ms(10), A, 5)
                               .crash(ms(20), A)
                               .hold(B, ms(30), ms(40), ms(100), ms(101), 5)
                               .build();
  EXPECT_EQ(check(with_ttl).verdict, Verdict::kOk);
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
  EXPECT_FALSE(r.indeterminate.empty());
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
  EXPECT_EQ(deadlock.deadlocks.size(), 1u);
  EXPECT_EQ(deadlock.indeterminate.size(), 1u);

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
      .count = 1;
  const CheckResult r = check(builder.build());
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_TRUE(r.violations.empty());
  ASSERT_EQ(r.stale_releases.size(), 1u);
  EXPECT_EQ(r.stale_releases[0].releaser, A);
  EXPECT_EQ(r.stale_releases[0].victim, B);
  EXPECT_EQ(r.stale_releases[0].explanation,
            "A's release of lock at 160.0 ms came after its lease had run out at 110.0 ms and "
            "deleted the lock while B was inside (since 150.0 ms).");

  // The same release made while A's lease was still valid is not stale.
  HistoryBuilder fresh;
  fresh.hold(B, ms(20), ms(150), ms(400), ms(401), 100);
  fresh.acquire_invoke(ms(0), A, 1000).acquire_ok(ms(10), A, 1000);
  fresh.event(ms(140), A, EventType::kOk, Op::kExit)
      .event(ms(160), A, EventType::kInvoke, Op::kRelease)
      .event(ms(161), A, EventType::kOk, Op::kRelease)
      .last()
      .count = 1;
  EXPECT_TRUE(check(fresh.build()).stale_releases.empty());
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
      .error = "reply_error: not the owner";
  builder.acquire_invoke(ms(100), A).acquire_ok(ms(101), A);
  builder.event(ms(105), A, EventType::kOk, Op::kExit)
      .event(ms(105), A, EventType::kInvoke, Op::kRelease)
      .event(ms(106), A, EventType::kInfo, Op::kRelease)
      .last()
      .error = "timeout: no reply";
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
  // Latencies sorted: 1 1 1 2 3 8 10 ms; nearest rank p50 = 4th, p99 = 7th.
  EXPECT_EQ(s.acquire_latency_p50_ns, ms(2));
  EXPECT_EQ(s.acquire_latency_p99_ns, ms(10));
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
  const std::vector<HoldWindow> windows = hold_windows(h);
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
  EXPECT_EQ(hold_windows(h).size(), 10'000u);

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
  ASSERT_EQ(bad.violations.size(), 1u);
  EXPECT_EQ(bad.violations[0].overlap_ns, 1);
  EXPECT_EQ(bad.violations[0].later.start_ns, moved_ns);
}

}  // namespace
}  // namespace locksim
