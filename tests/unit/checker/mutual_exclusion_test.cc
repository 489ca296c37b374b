// mutual_exclusion_test: overlapping holds are violations with their cause; near misses pass.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
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
using test::correct_history;
using test::CycleTimes;
using test::HistoryBuilder;
using test::hold_of;
using test::idle_holds;
using test::ms;
using test::overlap_of;
using test::stale_releases;
using test::violations;

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

// Proves a client still inside when the history ends overlaps one that enters at its last
// instant (a zero-length overlap, but both were inside then), while windows that touch before
// the end still pass.
TEST(CheckerTest, AWindowOpenAtTheEndOverlapsOneThatEntersThen) {
  HistoryBuilder builder;
  builder.acquire_invoke(ms(0), A, 100).acquire_ok(ms(1), A, 100);
  builder.acquire_invoke(ms(2), B, 100).acquire_ok(ms(101), B, 100);
  const CheckResult r = check(builder.build());
  ASSERT_EQ(violations(r).size(), 1u);
  EXPECT_EQ(violations(r)[0]->cause, "lease_expired") << violations(r)[0]->words;
  EXPECT_EQ(violations(r)[0]->clients, (std::vector<int>{A, B}));
  EXPECT_EQ(overlap_of(*violations(r)[0]), 0);
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
// Proves a release whose lease ran out only while it was under way, with a client entering
// meanwhile, is no stale release on its own: the newcomer's SET may have come after the delete
// (which then deleted the releaser's own key). Held back by a delay on its link until after the
// newcomer entered, its delete certainly came after: a stale release.
TEST(CheckerTest, AStaleReleaseDuringTheReleaseNeedsEvidenceOfTheOrder) {
  const auto history = [](bool delayed) {
    HistoryBuilder h;
    h.acquire_invoke(ms(0), A, 100).acquire_ok(ms(1), A, 100);
    h.event(ms(90), A, EventType::kOk, Op::kExit);
    h.event(ms(98), A, EventType::kInvoke, Op::kRelease);
    if (delayed) h.nemesis(ms(98), 3, A, FaultKind::kDelay, FaultPhase::kStart);
    h.acquire_invoke(ms(50), B, 100).acquire_ok(ms(101), B, 100);
    if (delayed) h.nemesis(ms(102), 3, A, FaultKind::kDelay, FaultPhase::kEnd);
    h.event(ms(103), A, EventType::kOk, Op::kRelease).last().release().deleted = 1;
    h.release(ms(150), ms(151), B, 0);
    return h.build();
  };
  EXPECT_TRUE(stale_releases(check(history(false))).empty());
  ASSERT_EQ(stale_releases(check(history(true))).size(), 1u);
  EXPECT_EQ(stale_releases(check(history(true)))[0]->clients[1], B);
}

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
  // The history knows the lease asked for, not the key's TTL: a lock that set its key's TTL in
  // seconds with the lease's milliseconds (1 ms) looks the same, and the words say so.
  EXPECT_TRUE(contains(violations(r)[0]->words,
                       "or the lock set its key to live shorter than the lease it was asked for"))
      << violations(r)[0]->words;
}

// Proves an overlap within a valid lease after a client's own clock ran off the others' is that
// clock's doing (client_clock) for a mutex that times its lease with its clients' clocks (a
// {now_ms} lock), and a racy acquire for one that reads no client's clock.
TEST(CheckerTest, AClientClockBeforeAnOverlapIsItsCauseForALockThatReadsIt) {
  constexpr int kNemesis = 2;
  HistoryBuilder builder({"A", "B", "nemesis"});
  builder.nemesis(ms(0), kNemesis, B, FaultKind::kClientClock, FaultPhase::kInstant)
      .hold(A, ms(0), ms(10), ms(200), ms(201), 1000)
      .hold(B, ms(5), ms(100), ms(300), ms(301), 1000);
  History timed = builder.build();
  timed.client_clocks = true;
  const CheckResult r = check(timed);
  ASSERT_EQ(violations(r).size(), 1u);
  EXPECT_EQ(violations(r)[0]->cause, "client_clock");
  EXPECT_TRUE(contains(violations(r)[0]->words, "B's own clock ran off the others'"))
      << violations(r)[0]->words;
  const CheckResult untimed = check(builder.build());
  ASSERT_EQ(violations(untimed).size(), 1u);
  EXPECT_EQ(violations(untimed)[0]->cause, "racy_acquire");
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

// Proves a Redlock overlap after a restart is lock_lost and names the servers each grant came
// from, read from the typed grants (no event has a message): the restart of n3, which granted
// A's lock, is the cause; the restart of n4, which did not, is not named.
TEST(CheckerTest, RedlockLockLostNamesTheGrantingServersFromTypedGrants) {
  constexpr int kNemesis = C;
  HistoryBuilder b({"A", "B", "nemesis"});
  b.servers({"n1", "n2", "n3", "n4", "n5"});
  b.acquire_invoke(ms(0), A, 10000).acquire_ok(ms(1), A, 10000).granted_on({0, 1, 2});
  b.server_fault(ms(4), kNemesis, FaultKind::kRestartServer, "n4");
  b.server_fault(ms(5), kNemesis, FaultKind::kRestartServer, "n3");
  b.acquire_invoke(ms(6), B, 10000).acquire_ok(ms(8), B, 10000).granted_on({2, 3, 4});
  b.release(ms(20), ms(21), A).release(ms(30), ms(31), B);
  const History h = b.build();
  for (const Event& e : h.events) EXPECT_EQ(e.message, 0u);

  const CheckResult r = check(h);
  ASSERT_EQ(violations(r).size(), 1u);
  const Finding& v = *violations(r)[0];
  EXPECT_EQ(v.cause, "lock_lost");
  EXPECT_TRUE(contains(v.words, "n3 was restarted at 5.0 ms and came back without the key"))
      << v.words;
  EXPECT_FALSE(contains(v.words, "n4 was restarted")) << v.words;
  EXPECT_TRUE(contains(v.words,
                       "B's acquire was granted by n3, n4, n5 of 5, while A's was granted by "
                       "n1, n2, n3 of 5: two majorities."))
      << v.words;
}

// Proves the cause of an overlap after a server fault follows the fault's kind: each kind that
// may make a server forget the key (a restart, a promotion, Sentinel's failover, a clock jump)
// makes it lock_lost, named in its own words; every other server fault leaves it racy_acquire.
TEST(CheckerTest, LockLostFollowsTheServerFaultsKind) {
  constexpr int kNemesis = C;
  const auto overlap_after = [](FaultKind kind) {
    HistoryBuilder b({"A", "B", "nemesis"});
    b.acquire_invoke(ms(0), A, 10000).acquire_ok(ms(1), A, 10000);
    const FaultPhase phase = traits(kind).window ? FaultPhase::kStart : FaultPhase::kInstant;
    b.server_fault(ms(5), kNemesis, kind, "n1", phase);
    b.acquire_invoke(ms(6), B, 10000).acquire_ok(ms(8), B, 10000);
    b.release(ms(20), ms(21), A).release(ms(30), ms(31), B);
    const CheckResult r = check(b.build());
    EXPECT_EQ(violations(r).size(), 1u) << traits(kind).word;
    return violations(r).empty() ? Finding{} : *violations(r)[0];
  };
  const std::vector<std::pair<FaultKind, std::string>> forgetting = {
      {FaultKind::kRestartServer, "n1 was restarted at 5.0 ms and came back without the key"},
      {FaultKind::kPromote, "n1 was promoted to primary at 5.0 ms without having received the key"},
      {FaultKind::kFailover,
       "n1 was promoted to primary at 5.0 ms by an automatic failover without having received the "
       "key"},
      {FaultKind::kClockJump, "n1's clock jumped ahead at 5.0 ms, so the key expired there early"},
  };
  for (const auto& [kind, words] : forgetting) {
    const Finding v = overlap_after(kind);
    EXPECT_EQ(v.cause, "lock_lost") << traits(kind).word;
    EXPECT_TRUE(contains(v.words, words)) << v.words;
  }
  for (const FaultKind kind : {FaultKind::kKillServer, FaultKind::kDown, FaultKind::kPauseServer,
                               FaultKind::kReplicationCut, FaultKind::kPartition}) {
    EXPECT_EQ(overlap_after(kind).cause, "racy_acquire") << traits(kind).word;
  }
}

}  // namespace
}  // namespace locksim
