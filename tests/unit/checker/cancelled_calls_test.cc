// cancelled_calls_test: calls cancelled by their caller are named where they matter: a cancelled
// release that deleted nothing and a cancelled acquire the server executed leave an idle hold that
// a waiter sat out; a cancelled extend explains an expired lease; nothing is claimed when the next
// client got in at once.
#include <gtest/gtest.h>

#include <vector>

#include "sim/checker/check.h"
#include "tests/unit/checker/checker_test_support.h"
#include "tests/unit/history_builder.h"

namespace locksim {
namespace {

using test::A;
using test::B;
using test::check;
using test::contains;
using test::HistoryBuilder;
using test::ms;

// cancelled: a call of `client` invoked at `invoke` and cancelled at `done`.
void cancelled(HistoryBuilder& builder, Op f, Nanos invoke, Nanos done, int client) {
  builder.event(invoke, client, EventType::kInvoke, f);
  if (f == Op::kAcquire) builder.last().ttl_ms = 1000;
  builder.event(done, client, EventType::kInfo, f);
  builder.last().error = ErrorKind::kCancelled;
}

// granted_after_wait: `client` asks at `invoke` and is granted by an attempt sent at `sent`.
void granted_after_wait(HistoryBuilder& builder, int client, Nanos invoke, Nanos sent, Nanos ok) {
  builder.acquire_invoke(invoke, client, 1000).acquire_ok(ok, client, 1000);
  std::vector<Event>& events = builder.events();
  events[events.size() - 2].acquire().sent_ns = sent;  // the ok, before its enter
  events[events.size() - 2].acquire().attempts = 50;
}

// Proves a cancelled release whose key the next client got only when the lease ran out is an idle
// hold that names the cancelled call, and the library's refusal of the retry.
TEST(CheckerTest, CancelledReleaseThatDeletedNothingIsAnIdleHold) {
  HistoryBuilder builder;
  builder.acquire_invoke(ms(0), A, 1000).acquire_ok(ms(1), A, 1000);
  builder.event(ms(20), A, EventType::kOk, Op::kExit);
  cancelled(builder, Op::kRelease, ms(20), ms(120), A);
  builder.event(ms(121), A, EventType::kInvoke, Op::kRelease);
  builder.event(ms(122), A, EventType::kFail, Op::kRelease);
  builder.last().error = ErrorKind::kNotHeld;
  // B's successful attempt was sent (by its lower bound) just before A's earliest lease end;
  // its grant came after it.
  granted_after_wait(builder, B, ms(125), ms(999), ms(1006));
  builder.release(ms(1020), ms(1021), B);
  const CheckResult r = check(builder.build());
  EXPECT_EQ(r.verdict, Verdict::kOk);
  const std::vector<const Finding*> idle = r.of(FindingKind::kIdleHold);
  ASSERT_EQ(idle.size(), 1u);
  EXPECT_EQ(idle[0]->cause, "cancelled_release");
  EXPECT_EQ(idle[0]->clients, (std::vector<int>{A, B}));
  EXPECT_TRUE(contains(idle[0]->words,
                       "A's release of lock at 20.0 ms was cancelled by its "
                       "caller at 120.0 ms"))
      << idle[0]->words;
  EXPECT_TRUE(contains(idle[0]->words, "its retry at 122.0 ms was refused by the library"))
      << idle[0]->words;
  EXPECT_TRUE(contains(idle[0]->words, "got the lock only when A's lease ran out"))
      << idle[0]->words;
}

// Proves a cancelled release that did delete (the next client got in at once) claims nothing.
TEST(CheckerTest, CancelledReleaseThatDeletedIsNoIdleHold) {
  HistoryBuilder builder;
  builder.acquire_invoke(ms(0), A, 1000).acquire_ok(ms(1), A, 1000);
  builder.event(ms(20), A, EventType::kOk, Op::kExit);
  cancelled(builder, Op::kRelease, ms(20), ms(120), A);
  granted_after_wait(builder, B, ms(25), ms(60), ms(61));
  builder.release(ms(80), ms(81), B);
  EXPECT_EQ(check(builder.build()).count(FindingKind::kIdleHold), 0u);
}

// Proves a cancelled acquire followed by a waiter kept out until its lease could have run out is
// an idle hold held by a caller that believes it failed; the run is undecided (unknown), not ok.
TEST(CheckerTest, CancelledAcquireTheServerExecutedIsAnIdleHold) {
  HistoryBuilder builder;
  cancelled(builder, Op::kAcquire, ms(0), ms(100), A);
  granted_after_wait(builder, B, ms(101), ms(1002), ms(1003));
  builder.release(ms(1500), ms(1501), B);
  const CheckResult r = check(builder.build());
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  const std::vector<const Finding*> idle = r.of(FindingKind::kIdleHold);
  ASSERT_EQ(idle.size(), 1u);
  EXPECT_EQ(idle[0]->cause, "cancelled_acquire");
  EXPECT_TRUE(contains(idle[0]->words,
                       "its caller believes it failed. But the server had "
                       "executed it"))
      << idle[0]->words;
}

// Proves a violation after a cancelled extend names it as why the holder outlived its lease, and
// an extend answered after the cancelled one takes the words back.
TEST(CheckerTest, ExpiredLeaseAfterACancelledExtendNamesIt) {
  const auto run = [](bool answered_later) {
    HistoryBuilder builder;
    builder.acquire_invoke(ms(0), A, 300).acquire_ok(ms(1), A, 300);
    cancelled(builder, Op::kExtend, ms(100), ms(200), A);
    if (answered_later) builder.extend(ms(250), ms(251), A, 300, /*count=*/0);
    builder.hold(B, ms(305), ms(310), ms(400), ms(401), 300);
    builder.release(ms(420), ms(421), A, 0);
    return check(builder.build());
  };
  const CheckResult r = run(false);
  ASSERT_EQ(r.of(FindingKind::kMutexViolation).size(), 1u);
  const Finding& v = *r.of(FindingKind::kMutexViolation)[0];
  EXPECT_EQ(v.cause, "lease_expired");
  EXPECT_TRUE(contains(v.words, "Its extend at 100.0 ms was cancelled by its caller at 200.0 ms"))
      << v.words;
  const CheckResult answered = run(true);
  ASSERT_EQ(answered.of(FindingKind::kMutexViolation).size(), 1u);
  EXPECT_FALSE(contains(answered.of(FindingKind::kMutexViolation)[0]->words, "cancelled"));
}

}  // namespace
}  // namespace locksim
