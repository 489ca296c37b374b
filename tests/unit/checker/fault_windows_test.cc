// fault_windows_test: a fault window pairs its start with its end and marks its target's holds.
#include <gtest/gtest.h>

#include "sim/checker/check.h"
#include "tests/unit/checker/checker_test_support.h"
#include "tests/unit/history_builder.h"

namespace locksim {
namespace {

using test::A;
using test::B;
using test::C;
using test::check;
using test::HistoryBuilder;
using test::hold_of;
using test::ms;
using test::violations;

// Proves a nemesis fault counts for the client it was aimed at, not for the nemesis: A paused
// (a window from start to end) while holding is a faulted window; B, not aimed at, is not; and
// the fault windows pair each start with its end, an instant being a window of no length.
TEST(CheckerTest, NemesisFaultMarksTheTargetsWindow) {
  constexpr int kNemesis = 3;
  HistoryBuilder builder({"A", "B", "C", "nemesis"});
  builder.hold(A, ms(0), ms(1), ms(400), ms(401), 100)
      .nemesis(ms(50), kNemesis, A, FaultKind::kPause, FaultPhase::kStart)
      .hold(B, ms(60), ms(250), ms(500), ms(501), 100)
      .nemesis(ms(300), kNemesis, A, FaultKind::kPause, FaultPhase::kEnd)
      .nemesis(ms(450), kNemesis, C, FaultKind::kLoseReply, FaultPhase::kInstant);
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
      .nemesis(ms(50), kNemesis, C, FaultKind::kPause, FaultPhase::kStart)
      .hold(B, ms(60), ms(250), ms(500), ms(501), 100)
      .nemesis(ms(300), kNemesis, C, FaultKind::kPause, FaultPhase::kEnd);
  EXPECT_EQ(check(aimed_elsewhere.build()).violations_outside_faults, 1);
}

// Proves a window the run never closed (the nemesis stopped mid-pause) ends with the history.
TEST(CheckerTest, UnclosedFaultWindowEndsWithTheHistory) {
  HistoryBuilder builder({"A", "B", "C", "nemesis"});
  builder.hold(A, ms(0), ms(1), ms(400), ms(401), 100)
      .nemesis(ms(50), 3, A, FaultKind::kPartition, FaultPhase::kStart);
  const CheckResult r = check(builder.build());
  ASSERT_EQ(r.faults.size(), 1u);
  EXPECT_EQ(r.faults[0].to_ns, ms(401));
}

}  // namespace
}  // namespace locksim
