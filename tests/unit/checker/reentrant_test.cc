// reentrant_test: a reentrant lock (History::reentrant) is held to its depth: a nested acquire by
// the holder must be granted (a refusal is a deadlock of the lock's own), an inner release that
// frees the lock lets the next holder in by the lock's own fault (early_release), an inner release
// that undoes a hold is no idle release, and a release by a client that held nothing is stale.
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
using test::deadlocks;
using test::HistoryBuilder;
using test::ms;
using test::violations;

constexpr std::int64_t kTtlMs = 1000;

History reentrant(History history) {
  history.reentrant = true;
  return history;
}

// nested_acquire: `client`, inside, acquires again: invoke at `invoke`, ok at `ok` (no enter).
void nested_acquire(HistoryBuilder& builder, int client, Nanos invoke, Nanos ok) {
  builder.acquire_invoke(invoke, client, kTtlMs);
  builder.event(ok, client, EventType::kOk, Op::kAcquire);
  builder.last().ttl_ms = kTtlMs;
  builder.last().token = builder.str("owner:A");
  builder.last().acquire().attempts = 1;
}

// inner_release: `client`, still inside, releases one hold, deleting `deleted` (no exit).
void inner_release(HistoryBuilder& builder, int client, Nanos invoke, Nanos done, int deleted) {
  builder.event(invoke, client, EventType::kInvoke, Op::kRelease);
  builder.event(done, client, EventType::kOk, Op::kRelease);
  builder.last().release().deleted = deleted;
}

// Proves a holder's nested acquire refused while its lease ran is a deadlock of the lock's own
// (nested_refused), and that the same refusal after the lease may have run out is not.
TEST(Reentrant, ANestedAcquireRefusedWhileHeldIsTheOwnersDeadlock) {
  HistoryBuilder builder;
  builder.acquire_invoke(ms(0), A, kTtlMs).acquire_ok(ms(1), A, kTtlMs);
  builder.acquire_invoke(ms(10), A, kTtlMs).acquire_end(ms(11), A, EventType::kFail);
  builder.release(ms(50), ms(51), A);
  const CheckResult r = check(reentrant(builder.build()));
  EXPECT_EQ(r.verdict, Verdict::kDeadlock);
  ASSERT_EQ(deadlocks(r).size(), 1u);
  EXPECT_EQ(deadlocks(r)[0]->cause, "nested_refused");
  EXPECT_TRUE(is_own_finding(*deadlocks(r)[0]));
  EXPECT_TRUE(contains(deadlocks(r)[0]->words,
                       "A's nested acquire of lock at 10.0 ms was refused until it gave up at "
                       "11.0 ms, while A itself held the lock"))
      << deadlocks(r)[0]->words;

  // Granted only after busy answers (its own lease ran out meanwhile): refused all the same.
  HistoryBuilder waited;
  waited.acquire_invoke(ms(0), A, kTtlMs).acquire_ok(ms(1), A, kTtlMs);
  nested_acquire(waited, A, ms(10), ms(1005));
  waited.last().acquire().attempts = 4;
  waited.release(ms(1050), ms(1051), A, 0);
  const CheckResult w = check(reentrant(waited.build()));
  ASSERT_EQ(deadlocks(w).size(), 1u);
  EXPECT_TRUE(contains(deadlocks(w)[0]->words, "was refused and got in only at 1005.0 ms"))
      << deadlocks(w)[0]->words;

  HistoryBuilder late;
  late.acquire_invoke(ms(0), A, kTtlMs).acquire_ok(ms(1), A, kTtlMs);
  late.acquire_invoke(ms(1500), A, kTtlMs).acquire_end(ms(1501), A, EventType::kFail);
  late.release(ms(1600), ms(1601), A, 0);
  EXPECT_TRUE(deadlocks(check(reentrant(late.build()))).empty());
}

// Proves an inner release that deleted the lock (freed with a hold left) is the cause of the
// violation it lets in, early_release, the lock's own.
TEST(Reentrant, AnInnerReleaseThatFreesTheLockIsAnEarlyRelease) {
  HistoryBuilder builder;
  builder.acquire_invoke(ms(0), A, kTtlMs).acquire_ok(ms(1), A, kTtlMs);
  nested_acquire(builder, A, ms(5), ms(6));
  inner_release(builder, A, ms(20), ms(21), 1);
  builder.hold(B, ms(30), ms(31), ms(40), ms(41), kTtlMs);
  builder.release(ms(100), ms(101), A, 0);
  const CheckResult r = check(reentrant(builder.build()));
  EXPECT_EQ(r.verdict, Verdict::kMutexViolation);
  ASSERT_EQ(violations(r).size(), 1u);
  EXPECT_EQ(violations(r)[0]->cause, "early_release");
  EXPECT_TRUE(is_own_cause("early_release"));
  EXPECT_TRUE(contains(violations(r)[0]->words,
                       "A's release at 20.0 ms undid one of its 2 holds and deleted the lock"))
      << violations(r)[0]->words;
  // The early release is reported as such, and A's outer release, which found the lock gone,
  // left nothing idle.
  EXPECT_EQ(r.count(FindingKind::kEarlyRelease), 1u);
  EXPECT_EQ(r.count(FindingKind::kIdleHold), 0u);
}

// Proves an early release nobody came in through is still reported (the lock's own), with no
// verdict and no idle hold after it.
TEST(Reentrant, AnEarlyReleaseNobodyUsedIsReported) {
  HistoryBuilder builder;
  builder.acquire_invoke(ms(0), A, kTtlMs).acquire_ok(ms(1), A, kTtlMs);
  nested_acquire(builder, A, ms(5), ms(6));
  inner_release(builder, A, ms(20), ms(21), 1);
  builder.release(ms(100), ms(101), A, 0);
  const CheckResult r = check(reentrant(builder.build()));
  EXPECT_EQ(r.verdict, Verdict::kOk);
  ASSERT_EQ(r.count(FindingKind::kEarlyRelease), 1u);
  EXPECT_TRUE(is_own_finding(*r.of(FindingKind::kEarlyRelease)[0]));
  EXPECT_EQ(r.count(FindingKind::kIdleHold), 0u);
}

// Proves an inner release that undid a hold (deleted nothing, the owner still inside) is neither
// an idle hold nor the end of the hold, while the outer release that deletes nothing while its
// lease runs (a count that never reaches zero) is an idle hold.
TEST(Reentrant, AnInnerReleaseIsNoIdleHoldButAnOuterOneThatFreesNothingIs) {
  HistoryBuilder builder;
  builder.acquire_invoke(ms(0), A, kTtlMs).acquire_ok(ms(1), A, kTtlMs);
  nested_acquire(builder, A, ms(5), ms(6));
  inner_release(builder, A, ms(20), ms(21), 0);
  builder.release(ms(50), ms(51), A, 1);
  const CheckResult r = check(reentrant(builder.build()));
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_EQ(r.count(FindingKind::kIdleHold), 0u);
  ASSERT_EQ(r.holds.size(), 1u);
  EXPECT_EQ(r.holds[0].start_ns, ms(1));
  EXPECT_EQ(r.holds[0].end_ns, ms(50));

  HistoryBuilder stuck;
  stuck.acquire_invoke(ms(0), A, kTtlMs).acquire_ok(ms(1), A, kTtlMs);
  nested_acquire(stuck, A, ms(5), ms(6));
  inner_release(stuck, A, ms(20), ms(21), 0);
  stuck.release(ms(50), ms(51), A, 0);
  EXPECT_EQ(check(reentrant(stuck.build())).count(FindingKind::kIdleHold), 1u);
}

// Proves a release by a client that held nothing (a finally after a failed tryLock) that deleted
// the holder's lock is a stale release, said so.
TEST(Reentrant, AReleaseByAClientThatHeldNothingIsStale) {
  HistoryBuilder builder;
  builder.acquire_invoke(ms(0), A, kTtlMs).acquire_ok(ms(1), A, kTtlMs);
  builder.acquire_invoke(ms(5), B, kTtlMs).acquire_end(ms(6), B, EventType::kFail);
  builder.event(ms(7), B, EventType::kInvoke, Op::kRelease);
  builder.event(ms(8), B, EventType::kOk, Op::kRelease);
  builder.last().release().deleted = 1;
  builder.hold(C, ms(10), ms(11), ms(20), ms(21), kTtlMs);
  builder.release(ms(50), ms(51), A, 0);
  const CheckResult r = check(reentrant(builder.build()));
  ASSERT_FALSE(violations(r).empty());
  EXPECT_EQ(violations(r)[0]->cause, "stale_release");
  EXPECT_TRUE(contains(violations(r)[0]->words, "B's release at 7.0 ms, made while B held nothing"))
      << violations(r)[0]->words;
}

}  // namespace
}  // namespace locksim
