// idle_holds_test: a release that deleted nothing while its lease ran left the lock idle meanwhile.
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
using test::idle_holds;
using test::ms;

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

// Proves a refused release is not an idle hold when the lease had run out, or when another client
// was inside (a stale release refused, as it should be).
TEST(CheckerTest, RefusedReleaseThatIsNotAnIdleHold) {
  const History expired = HistoryBuilder()
                              .acquire_invoke(ms(0), A, 20)
                              .acquire_ok(ms(10), A, 20)
                              .release(ms(40), ms(41), A, 0)
                              .build();
  EXPECT_TRUE(idle_holds(check(expired)).empty());

  // Invoked inside the lease as the client counts it (from the acquire's reply, until 70 ms), but
  // answered after its earliest end (from the acquire's invoke, 50 ms): a slow link may have
  // brought the release to a key that had expired. Not an idle hold: nothing shows the key was
  // there. Answered before the earliest end, it is one.
  const auto slow = [](double release_ok_ms) {
    return HistoryBuilder()
        .acquire_invoke(ms(0), A, 50)
        .acquire_ok(ms(20), A, 50)
        .release(ms(48), ms(release_ok_ms), A, 0)
        .build();
  };
  EXPECT_TRUE(idle_holds(check(slow(51))).empty());
  EXPECT_EQ(idle_holds(check(slow(48.5))).size(), 1u);

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

// Proves a release that found nothing after another client's deleting release was under way at
// its grant is said to fit a stale release too (a blind test's lock, whose release compared tokens
// as numbers, deleted the next holder's key; the words said only "the lock sat idle, held by
// nobody"), and that one answered before the grant was sent adds nothing.
TEST(CheckerTest, AnIdleHoldAfterAReleaseUnderWayAtItsGrantMayBeAStaleRelease) {
  const auto history = [](double b_release_ok_ms) {
    HistoryBuilder b;
    b.acquire_invoke(ms(0), B, 100).acquire_ok(ms(1.9), B, 100);
    b.event(ms(2.9), B, EventType::kOk, Op::kExit);
    b.event(ms(2.9), B, EventType::kInvoke, Op::kRelease);
    if (b_release_ok_ms < 3.6) {
      b.event(ms(b_release_ok_ms), B, EventType::kOk, Op::kRelease).last().release().deleted = 1;
    }
    b.acquire_invoke(ms(3.6), A, 100).acquire_ok(ms(3.9), A, 100).sent_at(ms(3.6));
    if (b_release_ok_ms >= 3.6) {
      b.event(ms(b_release_ok_ms), B, EventType::kOk, Op::kRelease).last().release().deleted = 1;
    }
    b.release(ms(5.5), ms(6.3), A, 0);
    return b.build();
  };
  const CheckResult crossed = check(history(5.2));
  ASSERT_EQ(idle_holds(crossed).size(), 1u);
  EXPECT_NE(idle_holds(crossed)[0]->words.find(
                "the lock sat idle, held by nobody, for 98.4 ms (nobody got it afterwards). Or B's "
                "release, invoked at 2.9 ms before A was granted and answered at 5.2 ms having "
                "deleted a key, deleted A's key: a stale release."),
            std::string::npos)
      << idle_holds(crossed)[0]->words;
  const CheckResult before = check(history(3.1));
  ASSERT_EQ(idle_holds(before).size(), 1u);
  EXPECT_EQ(idle_holds(before)[0]->words.find("stale release"), std::string::npos)
      << idle_holds(before)[0]->words;
}

}  // namespace
}  // namespace locksim
