// check_test: check_history as a whole: keys judged apart, the strongest finding is the verdict.
#include "sim/checker/check.h"

#include <gtest/gtest.h>

#include "tests/unit/checker/checker_test_support.h"
#include "tests/unit/history_builder.h"

namespace locksim {
namespace {

using test::A;
using test::B;
using test::C;
using test::check;
using test::deadlocks;
using test::HistoryBuilder;
using test::indeterminate;
using test::ms;
using test::overlap_of;
using test::violations;

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
