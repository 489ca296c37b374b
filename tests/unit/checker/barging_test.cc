// barging_test: with CheckOptions::barging, a grant made while another client's earlier acquire
// of the same key still waited is a `barging` finding (newcomer, waiter; from the waiter's invoke
// to the grant) that changes no verdict; a FIFO handoff, a waiter that gave up first, another key,
// and the option off are not.
#include <gtest/gtest.h>

#include "sim/checker/check.h"
#include "tests/unit/checker/checker_test_support.h"
#include "tests/unit/history_builder.h"

namespace locksim {
namespace {

using test::A;
using test::B;
using test::C;
using test::HistoryBuilder;
using test::ms;

CheckResult check_barging(const History& h, bool barging = true) {
  return check_history(h, CheckOptions{.stuck_threshold_ns = ms(10000), .barging = barging});
}

// A holds [0, 100]; B asks at 10 and waits; C asks at 101, just after A's release, and gets it
// at 102 while B still waits (B gets it at 300, after C).
HistoryBuilder c_barges_past_b() {
  HistoryBuilder h;
  h.hold(A, ms(0), ms(1), ms(100), ms(101), 5000);
  h.acquire_invoke(ms(10), B, 5000);
  h.acquire_invoke(ms(101), C, 5000).acquire_ok(ms(102), C, 5000).release(ms(110), ms(111), C);
  h.acquire_ok(ms(300), B, 5000).release(ms(310), ms(311), B);
  return h;
}

TEST(Barging, ANewcomerGrantedWhileAnEarlierAcquireWaitsIsReported) {
  const CheckResult r = check_barging(c_barges_past_b().build());
  EXPECT_EQ(r.verdict, Verdict::kOk);
  const std::vector<const Finding*> found = r.of(FindingKind::kBarging);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0]->clients, (std::vector<int>{C, B}));
  EXPECT_EQ(found[0]->from_ns, ms(10));
  EXPECT_EQ(found[0]->to_ns, ms(102));
  EXPECT_EQ(found[0]->key, "lock");
  EXPECT_EQ(found[0]->words,
            "C got lock at 102.0 ms (it asked at 101.0 ms) while B, who asked earlier, was still "
            "waiting for it (since 10.0 ms): it barged past a waiter.");
}

TEST(Barging, OnlyWhenTheScenarioAsks) {
  EXPECT_EQ(check_barging(c_barges_past_b().build(), false).count(FindingKind::kBarging), 0u);
}

TEST(Barging, AFifoHandoffIsNot) {
  // B, who asked first, gets it at A's release; C, who asked later, after B.
  HistoryBuilder h;
  h.hold(A, ms(0), ms(1), ms(100), ms(101), 5000);
  h.acquire_invoke(ms(10), B, 5000);
  h.acquire_invoke(ms(20), C, 5000);
  h.acquire_ok(ms(102), B, 5000).release(ms(110), ms(111), B);
  h.acquire_ok(ms(112), C, 5000).release(ms(120), ms(121), C);
  EXPECT_EQ(check_barging(h.build()).count(FindingKind::kBarging), 0u);
}

TEST(Barging, AWaiterThatGaveUpOrDiedIsNoLongerWaiting) {
  HistoryBuilder h;
  h.hold(A, ms(0), ms(1), ms(100), ms(101), 5000);
  h.acquire_invoke(ms(10), B, 5000).acquire_end(ms(50), B, EventType::kFail);
  h.acquire_invoke(ms(101), C, 5000).acquire_ok(ms(102), C, 5000).release(ms(110), ms(111), C);
  EXPECT_EQ(check_barging(h.build()).count(FindingKind::kBarging), 0u);
}

TEST(Barging, AWaiterForAnotherKeyDoesNotCount) {
  HistoryBuilder h;
  h.hold(A, ms(0), ms(1), ms(100), ms(101), 5000);
  h.acquire_invoke(ms(10), B, 5000, "other");
  h.acquire_invoke(ms(101), C, 5000).acquire_ok(ms(102), C, 5000).release(ms(110), ms(111), C);
  h.acquire_ok(ms(300), B, 5000, "other").release(ms(310), ms(311), B, 1, "other");
  EXPECT_EQ(check_barging(h.build()).count(FindingKind::kBarging), 0u);
}

}  // namespace
}  // namespace locksim
