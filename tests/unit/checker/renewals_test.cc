// renewals_test: a renewal that extended another client's lock is stolen; refused or own ones not.
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
using test::hold_of;
using test::ms;
using test::violations;

// Proves a renewal that succeeded after another client took the expired lock is a stolen
// renewal: it extended the new holder's key. It does not count as renewing the extender's own
// lease, so the overlap is still blamed on the extender's expired lease.
TEST(CheckerTest, StolenRenewalIsFlagged) {
  HistoryBuilder builder;
  builder.acquire_invoke(ms(0), A, 100)
      .acquire_ok(ms(1), A, 100)  // lease until 101 ms; A pauses, renewing nothing
      .hold(B, ms(50), ms(110), ms(400), ms(401), 100)
      .extend(ms(200), ms(201), A, 100)  // A resumes: its extend finds B's key and extends it
      .release(ms(300), ms(301), A, 0);
  const CheckResult r = check(builder.build());
  EXPECT_EQ(r.verdict, Verdict::kMutexViolation);
  ASSERT_EQ(violations(r).size(), 1u);
  EXPECT_EQ(violations(r)[0]->cause, "lease_expired");
  const std::vector<const Finding*> stolen = r.of(FindingKind::kStolenRenewal);
  ASSERT_EQ(stolen.size(), 1u);
  EXPECT_EQ(stolen[0]->clients, (std::vector<int>{A, B}));
  EXPECT_EQ(stolen[0]->from_ns, ms(200));
  EXPECT_TRUE(contains(stolen[0]->words, "it extended B's lock, not A's")) << stolen[0]->words;
  EXPECT_EQ(hold_of(r, A, ms(150)).lease_end_ns, ms(101));  // not moved by the stolen extend
}

// Proves an owner-checked renewal that found someone else's key (extended 0), and renewals of the
// extender's own lease, are not stolen.
TEST(CheckerTest, RefusedAndOwnRenewalsAreNotStolen) {
  HistoryBuilder builder;
  builder.acquire_invoke(ms(0), A, 100)
      .acquire_ok(ms(1), A, 100)
      .renewals(ms(30), ms(90), ms(30), A, 100)  // its own lease, while nobody else is inside
      .hold(B, ms(50), ms(200), ms(400), ms(401), 100)
      .extend(ms(250), ms(251), A, 100, /*count=*/0)  // refused: B's key has B's token
      .release(ms(300), ms(301), A, 0);
  const CheckResult r = check(builder.build());
  EXPECT_EQ(r.count(FindingKind::kStolenRenewal), 0u);
}

}  // namespace
}  // namespace locksim
