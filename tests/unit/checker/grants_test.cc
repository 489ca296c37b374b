// grants_test: a key wanted but never granted, not even possibly, makes the run an error.
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
using test::ms;

// Proves a key that was wanted but never granted is an error, while an acquire that may have
// succeeded (info) counts as possibly granted.
TEST(CheckerTest, NeverGrantedIsAnError) {
  HistoryBuilder never;
  never.acquire_invoke(ms(0), A, 100).acquire_end(ms(5), A, EventType::kFail);
  never.acquire_invoke(ms(1), B, 100).acquire_end(ms(6), B, EventType::kFail);
  const CheckResult r = check(never.build());
  EXPECT_EQ(r.verdict, Verdict::kError);
  ASSERT_EQ(r.count(FindingKind::kNeverGranted), 1u);
  EXPECT_EQ(r.of(FindingKind::kNeverGranted)[0]->amount, 2);

  HistoryBuilder maybe;
  maybe.acquire_invoke(ms(0), A, 100).acquire_end(ms(5), A, EventType::kInfo);
  maybe.acquire_invoke(ms(1), B, 100).acquire_end(ms(6), B, EventType::kFail);
  EXPECT_EQ(check(maybe.build()).count(FindingKind::kNeverGranted), 0u);
}

}  // namespace
}  // namespace locksim
