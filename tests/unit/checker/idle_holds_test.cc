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

}  // namespace
}  // namespace locksim
