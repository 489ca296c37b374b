// resource_test: oversells, lost updates and duplicate records corrupt the resource; clean runs ok.
#include <gtest/gtest.h>

#include <optional>

#include "sim/checker/check.h"
#include "tests/unit/checker/checker_test_support.h"
#include "tests/unit/history_builder.h"

namespace locksim {
namespace {

using test::A;
using test::B;
using test::C;
using test::check;
using test::counter;
using test::HistoryBuilder;
using test::ms;
using test::records;
using test::resource_findings;
using test::violations;

// Proves the counter check is independent of the windows: two sequential sales of the last item,
// the second computed from a stale read, are an oversell and a lost update (resource_corrupted);
// with overlapping windows the violation outweighs it; without a resource spec it is not judged.
TEST(CheckerTest, CounterStaleReadOversellsAndLosesUpdate) {
  HistoryBuilder sequential;
  sequential.hold(A, ms(0), ms(1), ms(10), ms(11))
      .read(ms(2), A, "stock", 1)
      .write(ms(5), A, "stock", 0, 1)
      .hold(B, ms(3), ms(20), ms(30), ms(31))
      .read(ms(22), B, "stock", 1)  // the harness's stale copy
      .write(ms(25), B, "stock", 0, 1);
  const History h = sequential.build();
  const CheckResult r = check(h, counter(1));
  EXPECT_EQ(r.verdict, Verdict::kResourceCorrupted);
  EXPECT_TRUE(violations(r).empty());
  EXPECT_EQ(r.stats.resource_writes, 2);
  ASSERT_EQ(resource_findings(r).size(), 2u);
  const Finding& oversell = *resource_findings(r)[0];
  EXPECT_EQ(oversell.cause, "oversell");
  EXPECT_EQ(oversell.key, "stock");
  EXPECT_EQ(oversell.amount, 1);
  EXPECT_EQ(oversell.words, "stock: 2 sales from an initial 1: oversold by 1.");
  const Finding& lost = *resource_findings(r)[1];
  EXPECT_EQ(lost.cause, "lost_update");
  EXPECT_EQ(lost.amount, 1);
  EXPECT_EQ(lost.words,
            "stock ends at 0 but 2 sales from 1 should leave -1: 1 update lost (B wrote 0 at "
            "25.0 ms computed from a stale read of 1).");

  EXPECT_EQ(check(h).verdict, Verdict::kOk);  // no resource spec: only the lock is judged

  HistoryBuilder overlapping;
  overlapping.hold(A, ms(0), ms(1), ms(10), ms(11))
      .read(ms(2), A, "stock", 1)
      .hold(B, ms(1), ms(3), ms(30), ms(31))
      .read(ms(4), B, "stock", 1)
      .write(ms(5), A, "stock", 0, 1)
      .write(ms(25), B, "stock", 0, 1);
  const CheckResult both = check(overlapping.build(), counter(1));
  EXPECT_EQ(both.verdict, Verdict::kMutexViolation);
  EXPECT_EQ(resource_findings(both).size(), 2u);
}

// Proves a clean sequence of sales passes, and that one more correctly-based sale than the stock
// (a write of -1) is an oversell but no lost update.
TEST(CheckerTest, CounterCleanSalesPass) {
  HistoryBuilder builder;
  for (int i = 0; i < 3; ++i) {
    const double t = 10.0 * i;
    builder.hold(i % 2 == 0 ? A : B, ms(t), ms(t + 1), ms(t + 5), ms(t + 6))
        .read(ms(t + 2), i % 2 == 0 ? A : B, "stock", 3 - i)
        .write(ms(t + 3), i % 2 == 0 ? A : B, "stock", 2 - i, 3 - i);
  }
  const CheckResult ok = check(builder.build(), counter(3));
  EXPECT_EQ(ok.verdict, Verdict::kOk);
  EXPECT_TRUE(resource_findings(ok).empty());
  EXPECT_EQ(ok.stats.resource_writes, 3);

  builder.hold(C, ms(40), ms(41), ms(45), ms(46))
      .read(ms(42), C, "stock", 0)
      .write(ms(43), C, "stock", -1, 0);
  const CheckResult bad = check(builder.build(), counter(3));
  EXPECT_EQ(bad.verdict, Verdict::kResourceCorrupted);
  ASSERT_EQ(resource_findings(bad).size(), 1u);
  EXPECT_EQ(resource_findings(bad)[0]->cause, "oversell");
  EXPECT_EQ(resource_findings(bad)[0]->amount, 1);

  // A write below zero is an oversell even when the sales count does not show it.
  const History negative = HistoryBuilder().write(ms(1), A, "stock", -2, 0).build();
  const CheckResult neg = check(negative, counter(5));
  ASSERT_EQ(resource_findings(neg).size(), 1u);
  EXPECT_EQ(resource_findings(neg)[0]->cause, "oversell");
  EXPECT_EQ(resource_findings(neg)[0]->amount, 2);
  EXPECT_EQ(resource_findings(neg)[0]->words, "stock: A wrote -2 at 1.0 ms: oversold by 2.");
}

// Proves find-or-create reports a record created twice with its id and creators, and passes when
// the second client found it.
TEST(CheckerTest, FindOrCreateDuplicate) {
  const History dup = HistoryBuilder()
                          .read(ms(10), A, "records", 0, "1")
                          .read(ms(11), B, "records", 0, "1")
                          .write(ms(12), A, "records", 1, std::nullopt, "1")
                          .write(ms(14.1), B, "records", 1, std::nullopt, "1")
                          .read(ms(15), C, "records", 0, "2")
                          .write(ms(16), C, "records", 1, std::nullopt, "2")
                          .build();
  const CheckResult r = check(dup, records());
  EXPECT_EQ(r.verdict, Verdict::kResourceCorrupted);
  ASSERT_EQ(resource_findings(r).size(), 1u);
  const Finding& f = *resource_findings(r)[0];
  EXPECT_EQ(f.cause, "duplicate");
  EXPECT_EQ(f.key, "records");
  EXPECT_EQ(f.record, "1");
  EXPECT_EQ(f.amount, 1);
  EXPECT_EQ(f.words, "record 1 created 2 times (by A at 12.0 ms and B at 14.1 ms): 1 duplicate.");

  const History clean = HistoryBuilder()
                            .read(ms(10), A, "records", 0, "1")
                            .write(ms(12), A, "records", 1, std::nullopt, "1")
                            .read(ms(14), B, "records", 1, "1")
                            .read(ms(15), C, "records", 0, "2")
                            .write(ms(16), C, "records", 1, std::nullopt, "2")
                            .build();
  const CheckResult ok = check(clean, records());
  EXPECT_EQ(ok.verdict, Verdict::kOk);
  EXPECT_TRUE(resource_findings(ok).empty());
  EXPECT_EQ(ok.stats.resource_writes, 2);
}

}  // namespace
}  // namespace locksim
