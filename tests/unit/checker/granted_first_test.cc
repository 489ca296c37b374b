// granted_first_test: an overlap whose later holder may have been granted first, its key gone
// before the earlier grant (its TTL ran out during its own acquire, or a server forgot it), is
// that holder's lost lease, not a racy acquire, and no release in between was stale.
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
using test::stale_releases;
using test::violations;

// paused_acquire: lua_owner_wait seed 594. B's SET (sent at `b_sent_ms`) then a pause at
// after_set until 129.5 ms; C granted at 129.4 ms (sent at 125.3 ms); B answered at 131.8 ms; C
// releases its own key at 166.5 ms and is granted again; A gets in at 184.3 ms.
History paused_acquire(double b_sent_ms) {
  HistoryBuilder h;
  h.acquire_invoke(ms(3.6), A, 100);
  h.acquire_invoke(ms(6.0), C, 100);
  h.acquire_invoke(ms(b_sent_ms), B, 100);
  h.nemesis(ms(25.2), B, B, FaultKind::kPause, FaultPhase::kStart);
  h.acquire_ok(ms(129.4), C, 100).sent_at(ms(125.3));
  h.nemesis(ms(129.5), B, B, FaultKind::kPause, FaultPhase::kEnd);
  h.acquire_ok(ms(131.8), B, 100).sent_at(ms(b_sent_ms));
  h.release(ms(166.5), ms(167.8), C, 1);
  h.acquire_invoke(ms(167.8), C, 100).acquire_ok(ms(172.5), C, 100).sent_at(ms(167.8));
  h.release(ms(173.5), ms(176.4), C, 1);
  h.acquire_ok(ms(184.3), A, 100).sent_at(ms(181.1));
  h.release(ms(215.3), ms(217.9), A, 1);
  h.release(ms(215.4), ms(217.9), B, 0);
  return h.build();
}

// Proves the lua_owner_wait seed-594 shape: B's key, set at 23.8 ms at the latest before its
// pause, ran out before C was granted, so every overlap is B's lease, and C's release deleted
// C's own key.
TEST(GrantedFirstTest, AcquirePausedPastItsTtlBeforeAnotherGrantIsLeaseExpired) {
  const CheckResult r = check(paused_acquire(23.8));
  ASSERT_EQ(violations(r).size(), 3u);
  for (const Finding* v : violations(r)) {
    EXPECT_EQ(v->cause, "lease_expired") << v->words;
  }
  EXPECT_EQ(violations(r)[0]->clients, (std::vector<int>{C, B}));
  EXPECT_TRUE(contains(violations(r)[0]->words, "B's pause from 25.2 ms to 129.5 ms"))
      << violations(r)[0]->words;
  EXPECT_TRUE(stale_releases(r).empty());
  EXPECT_EQ(r.count(FindingKind::kStaleRelease), 0u);
}

// Proves the rule keeps a true racy acquire (a SET without NX): B's attempt, sent at 125.0 ms,
// set a key that was still valid when C was granted, so both acquires succeeded on a held lock.
TEST(GrantedFirstTest, ShortAcquireOnAHeldLockStaysRacy) {
  const CheckResult r = check(paused_acquire(125.0));
  ASSERT_FALSE(violations(r).empty());
  EXPECT_EQ(violations(r)[0]->clients, (std::vector<int>{C, B}));
  EXPECT_EQ(violations(r)[0]->cause, "racy_acquire") << violations(r)[0]->words;
}

// clock_jump_grants: lua_owner_renew seed 124703 with clock_jump. A's attempt is sent at 12.5 ms
// while C's release is under way; n1's clock jumps at 13.2 ms (with `jump`); C is granted again
// at 13.4 ms and A at 13.5 ms.
History clock_jump_grants(bool jump) {
  HistoryBuilder h({"A", "B", "C", "nemesis"});
  h.servers({"n1"});
  h.acquire_invoke(0, C, 100).acquire_ok(ms(0.4), C, 100).sent_at(0);
  h.acquire_invoke(ms(0.5), A, 100);
  h.release(ms(12.2), ms(13.24), C, 1);
  if (jump) h.server_fault(ms(13.22), 3, FaultKind::kClockJump, "n1");
  h.acquire_invoke(ms(13.24), C, 100).acquire_ok(ms(13.36), C, 100).sent_at(ms(13.24));
  h.acquire_ok(ms(13.47), A, 100).sent_at(ms(12.5));
  h.release(ms(19.5), ms(20.2), A, 0);
  h.extend(ms(47.1), ms(48.5), C, 100);
  h.release(ms(55.1), ms(55.7), C, 1);
  return h.build();
}

// Proves two grants under way at once around a clock jump are lock_lost: A's SET may have run
// first, after C's release deleted, and the jump expired it before C's SET; without the jump the
// overlap stays a racy acquire.
TEST(GrantedFirstTest, GrantsUnderWayAcrossAClockJumpAreLockLost) {
  const CheckResult jumped = check(clock_jump_grants(true));
  ASSERT_EQ(violations(jumped).size(), 1u);
  EXPECT_EQ(violations(jumped)[0]->clients, (std::vector<int>{C, A}));
  EXPECT_EQ(violations(jumped)[0]->cause, "lock_lost") << violations(jumped)[0]->words;
  EXPECT_TRUE(contains(violations(jumped)[0]->words, "n1's clock jumped ahead at 13.2 ms"))
      << violations(jumped)[0]->words;

  const CheckResult steady = check(clock_jump_grants(false));
  ASSERT_EQ(violations(steady).size(), 1u);
  EXPECT_EQ(violations(steady)[0]->cause, "racy_acquire") << violations(steady)[0]->words;
}

// Proves a release under way as the next holder was granted (after the releaser's lease may have
// run out) is no stale release when a server fault may have forgotten that holder's key before a
// third got in: the fault explains the overlap (lock_lost), the release is only a doubt (explore's
// rw_lock_fair seed 35338); without the fault the release stays the stale one.
TEST(GrantedFirstTest, AReleaseUnderWayAtAGrantIsNoStaleReleaseWhenAServerForgotTheKey) {
  const auto history = [](bool jump) {
    HistoryBuilder h({"A", "B", "C", "nemesis"});
    h.servers({"n1"});
    h.acquire_invoke(0, A, 100).acquire_ok(ms(4.5), A, 100).sent_at(0);
    h.release(ms(96.7), ms(102), A, 1);
    h.acquire_invoke(ms(96.8), C, 100).acquire_ok(ms(100.7), C, 100).sent_at(ms(96.8));
    if (jump) h.server_fault(ms(110.9), 3, FaultKind::kClockJump, "n1");
    h.acquire_invoke(ms(116), B, 100).acquire_ok(ms(117.5), B, 100).sent_at(ms(116));
    h.release(ms(180), ms(181), C, 0);
    h.release(ms(190), ms(191), B, 1);
    return h.build();
  };
  const CheckResult jumped = check(history(true));
  ASSERT_EQ(violations(jumped).size(), 1u);
  EXPECT_EQ(violations(jumped)[0]->cause, "lock_lost") << violations(jumped)[0]->words;
  EXPECT_EQ(jumped.count(FindingKind::kStaleRelease), 0u);
  const CheckResult plain = check(history(false));
  ASSERT_EQ(violations(plain).size(), 1u);
  EXPECT_EQ(violations(plain)[0]->cause, "stale_release") << violations(plain)[0]->words;
}

}  // namespace
}  // namespace locksim
