// indeterminacy_test: an unanswered acquire that could hide a violation or a deadlock is unknown.
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
using test::indeterminate;
using test::ms;

// Proves an info acquire whose possible hold overlaps another client's window makes the verdict
// unknown, and one that overlaps nothing leaves it ok.
TEST(CheckerTest, InfoAcquireOverlappingHoldIsUnknown) {
  const History overlapping = HistoryBuilder()
                                  .hold(A, ms(0), ms(10), ms(200), ms(201))
                                  .acquire_invoke(ms(50), B)
                                  .acquire_end(ms(60), B, EventType::kInfo)
                                  .build();
  const CheckResult r = check(overlapping);
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  ASSERT_EQ(indeterminate(r).size(), 1u);
  EXPECT_EQ(indeterminate(r)[0]->clients[0], B);
  EXPECT_EQ(indeterminate(r)[0]->from_ns, ms(50));
  EXPECT_TRUE(contains(indeterminate(r)[0]->words, "B's acquire of lock at 50.0 ms"));

  const History apart = HistoryBuilder()
                            .hold(A, ms(0), ms(10), ms(200), ms(201))
                            .acquire_invoke(ms(300), B)
                            .acquire_end(ms(310), B, EventType::kInfo)
                            .build();
  const CheckResult ok = check(apart);
  EXPECT_EQ(ok.verdict, Verdict::kOk);
  EXPECT_TRUE(indeterminate(ok).empty());
  EXPECT_EQ(ok.stats.acquires_indeterminate, 1);
}

// Proves an acquire cut short by a crash is indeterminate for as long as its key could live: with
// no TTL, a later holder overlaps it.
TEST(CheckerTest, CrashDuringAcquireIsIndeterminate) {
  const History h = HistoryBuilder()
                        .acquire_invoke(ms(10), A)
                        .crash(ms(20), A)
                        .hold(B, ms(30), ms(40), ms(100), ms(101))
                        .build();
  const CheckResult r = check(h);
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  ASSERT_EQ(indeterminate(r).size(), 1u);
  EXPECT_EQ(indeterminate(r)[0]->clients[0], A);

  // With a 5 ms TTL the interrupted SET could not outlive 25 ms: B at 40 ms is clear.
  const History with_ttl = HistoryBuilder()
                               .acquire_invoke(ms(10), A, 5)
                               .crash(ms(20), A)
                               .hold(B, ms(30), ms(40), ms(100), ms(101), 5)
                               .build();
  EXPECT_EQ(check(with_ttl).verdict, Verdict::kOk);
}

// Proves an unanswered acquire that may have held the key while another client waited and gave
// up makes the run unknown (kept out by a holder that does not know it holds, or by nobody);
// an acquire that failed without waiting (the server refused the connection) is no such doubt.
TEST(CheckerTest, UnansweredAcquireThatKeptOthersOutIsUnknown) {
  HistoryBuilder builder;
  builder.acquire_invoke(ms(0), A, 100)
      .acquire_end(ms(2000), A, EventType::kInfo)
      .acquire_invoke(ms(1), B, 100)
      .acquire_end(ms(2050), B, EventType::kFail);
  builder.last().error = ErrorKind::kGaveUp;
  const CheckResult r = check(builder.build());
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  ASSERT_EQ(r.count(FindingKind::kIndeterminate), 1u);
  EXPECT_TRUE(contains(r.of(FindingKind::kIndeterminate)[0]->words, "gave up at 2050.0 ms"))
      << r.of(FindingKind::kIndeterminate)[0]->words;

  HistoryBuilder refused;
  refused.acquire_invoke(ms(0), A, 100)
      .acquire_end(ms(2000), A, EventType::kInfo)
      .acquire_invoke(ms(1), B, 100)
      .acquire_end(ms(2), B, EventType::kFail);
  refused.last().error = ErrorKind::kRefused;
  // B never waited, so nobody was kept out; the run is unknown all the same, since the lock was
  // granted to nobody for certain (grants.cc), and says that alone.
  const CheckResult rr = check(refused.build());
  ASSERT_EQ(rr.count(FindingKind::kIndeterminate), 1u);
  EXPECT_TRUE(contains(rr.of(FindingKind::kIndeterminate)[0]->words, "never granted for certain"))
      << rr.of(FindingKind::kIndeterminate)[0]->words;
}

// Proves a run whose every acquire is indeterminate (its only acquire's reply lost, or the acquire
// cut short by a crash) and nothing else happens is unknown, not ok: the lock was granted to
// nobody for certain, so the run decided nothing. Before, it was ok (exit 0), real and
// simulated. A later definite grant decides it again.
TEST(CheckerTest, ARunWhoseEveryAcquireIsIndeterminateIsUnknown) {
  HistoryBuilder lost;
  lost.acquire_invoke(ms(0), A, 1000).acquire_end(ms(200), A, EventType::kInfo);
  lost.last().error = ErrorKind::kTimeout;
  lost.last().message = lost.str("no reply within 200 ms");
  const CheckResult r = check(lost.build());
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  ASSERT_EQ(r.count(FindingKind::kIndeterminate), 1u);
  const Finding& f = *r.of(FindingKind::kIndeterminate)[0];
  EXPECT_EQ(f.cause, "no_reply");
  EXPECT_EQ(f.amount, 1);
  EXPECT_EQ(f.clients, (std::vector<int>{A}));
  EXPECT_TRUE(contains(f.words, "was never granted for certain: 1 acquire(s) may have succeeded"))
      << f.words;
  EXPECT_TRUE(contains(f.words, "A's at 0.0 ms got no definite reply (timeout"));
  EXPECT_EQ(r.count(FindingKind::kNeverGranted), 0u);  // it may have been granted

  // Cut short by a crash: the same.
  const History crashed = HistoryBuilder().acquire_invoke(ms(0), A, 1000).crash(ms(5), A).build();
  const CheckResult c = check(crashed);
  EXPECT_EQ(c.verdict, Verdict::kUnknown);
  ASSERT_EQ(c.count(FindingKind::kIndeterminate), 1u);
  EXPECT_EQ(c.of(FindingKind::kIndeterminate)[0]->cause, "interrupted");

  // Beside a definite grant, the key was granted: whatever else is in doubt, not this.
  lost.hold(B, ms(1300), ms(1301), ms(1310), ms(1311), 1000);
  for (const Finding& finding : check(lost.build()).findings) {
    EXPECT_FALSE(contains(finding.words, "never granted for certain")) << finding.words;
  }
}

}  // namespace
}  // namespace locksim
