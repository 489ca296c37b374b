// contention_stats_test: LogHistogram against exact percentiles, and contention_metrics on
// hand-written histories: an even handoff chain, a barging run, a starving client, an open-loop
// client charged from its intended start, and a run with a violation (the metrics still count it).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "sim/stats/contention.h"
#include "sim/stats/histogram.h"
#include "tests/unit/checker/checker_test_support.h"
#include "tests/unit/history_builder.h"

namespace locksim {
namespace {

using test::HistoryBuilder;
using test::ms;

using test::A;  // the clients of tests/unit/checker/checker_test_support.h
using test::B;
using test::C;

TEST(LogHistogram, SmallValuesAreExact) {
  LogHistogram h;
  for (int v = 0; v < 128; ++v) h.record(v);
  EXPECT_EQ(h.count(), 128);
  EXPECT_EQ(h.percentile(50), 63);
  EXPECT_EQ(h.percentile(100), 127);
  EXPECT_EQ(h.min(), 0);
  EXPECT_EQ(h.max(), 127);
}

// Every bucket's bounds: a value lies in its bucket, and the bucket is at most 1/128 wide.
TEST(LogHistogram, BucketsAreWithinTheStatedError) {
  std::mt19937_64 random(7);
  for (int i = 0; i < 100000; ++i) {
    const auto v = static_cast<std::int64_t>(random() >> (1 + random() % 63));
    const int index = LogHistogram::index_of(v);
    const std::int64_t upper = LogHistogram::upper_of(index);
    ASSERT_GE(upper, v);
    ASSERT_LE(static_cast<double>(upper - v), LogHistogram::kRelativeError * static_cast<double>(v) + 1)
        << v;
    if (index > 0) {
      ASSERT_LT(LogHistogram::upper_of(index - 1), v) << v;
    }
  }
  EXPECT_EQ(LogHistogram::index_of(-5), 0);
  EXPECT_GE(LogHistogram::upper_of(LogHistogram::index_of(INT64_MAX)), INT64_MAX - 1);
}

// Percentiles of a lognormal latency sample are never below the exact nearest-rank value and at
// most the stated error above it.
TEST(LogHistogram, PercentilesMatchExactValues) {
  std::mt19937_64 random(42);
  std::lognormal_distribution<double> latency(13.0, 1.0);  // about 0.4 ms median, long tail
  std::vector<std::int64_t> values;
  LogHistogram h;
  for (int i = 0; i < 50000; ++i) {
    const auto v = static_cast<std::int64_t>(latency(random));
    values.push_back(v);
    h.record(v);
  }
  std::sort(values.begin(), values.end());
  for (const double p : {1.0, 50.0, 90.0, 99.0, 99.9, 100.0}) {
    const auto rank = static_cast<std::size_t>(std::ceil(p / 100 * static_cast<double>(values.size())));
    const std::int64_t exact = values[rank - 1];
    const std::int64_t reported = h.percentile(p);
    EXPECT_GE(reported, exact) << "p" << p;
    EXPECT_LE(static_cast<double>(reported),
              static_cast<double>(exact) * (1 + LogHistogram::kRelativeError) + 1)
        << "p" << p;
  }
  EXPECT_EQ(h.max(), values.back());
  LogHistogram merged;
  merged.merge(h);
  merged.merge(h);
  EXPECT_EQ(merged.count(), 2 * h.count());
  EXPECT_EQ(merged.percentile(50), h.percentile(50));
  EXPECT_DOUBLE_EQ(h.fraction_at_or_below(h.max()), 1.0);
  EXPECT_EQ(LogHistogram().percentile(99), 0);
}

TEST(ContentionMetrics, JainIndex) {
  EXPECT_DOUBLE_EQ(jain_index({5, 5, 5, 5}), 1.0);
  EXPECT_DOUBLE_EQ(jain_index({10, 0}), 0.5);
  EXPECT_DOUBLE_EQ(jain_index({}), 0.0);
  EXPECT_DOUBLE_EQ(jain_index({0, 0}), 0.0);
  EXPECT_NEAR(jain_index({3, 1}), 16.0 / 20.0, 1e-12);
}

// A fair chain: A, B, C take turns on one key, each waiting for the previous holder; every
// handoff is contended and none is a barge; each client acquires twice.
TEST(ContentionMetrics, EvenHandoffChain) {
  HistoryBuilder b;
  // Everyone asks at 0; A gets it at once, then each exit hands over 0.2 ms later.
  b.acquire_invoke(ms(0), A).acquire_invoke(ms(0), B).acquire_invoke(ms(0), C);
  b.acquire_ok(ms(0.1), A).release(ms(1.1), ms(1.2), A);
  b.acquire_invoke(ms(1.2), A);
  b.acquire_ok(ms(1.3), B).release(ms(2.3), ms(2.4), B);
  b.acquire_invoke(ms(2.4), B);
  b.acquire_ok(ms(2.5), C).release(ms(3.5), ms(3.6), C);
  b.acquire_invoke(ms(3.6), C);
  b.acquire_ok(ms(3.7), A).release(ms(4.7), ms(4.8), A);
  b.acquire_ok(ms(4.9), B).release(ms(5.9), ms(6.0), B);
  b.acquire_ok(ms(6.1), C).release(ms(7.1), ms(7.2), C);
  const ContentionMetrics m = contention_metrics(b.build(), 0, ms(10));
  EXPECT_EQ(m.acquisitions, 6);
  EXPECT_DOUBLE_EQ(m.throughput_per_s, 600.0);
  EXPECT_EQ(m.acquisitions_per_client, (std::vector<std::int64_t>{2, 2, 2}));
  EXPECT_DOUBLE_EQ(m.jain, 1.0);
  EXPECT_DOUBLE_EQ(m.max_min_share, 1.0);
  EXPECT_EQ(m.starved_clients, 0);
  // Five handoffs while someone waited (the last exit had nobody waiting), none a barge.
  EXPECT_EQ(m.contended_handoffs, 5);
  EXPECT_EQ(m.barges, 0);
  EXPECT_EQ(m.handoff_gap_ns.count(), 5);
  EXPECT_NEAR(static_cast<double>(m.handoff_gap_ns.percentile(50)), 2e5, 2e5 / 128 + 1);
  // Held 6 x 1 ms of 10 ms.
  EXPECT_NEAR(m.utilisation, 0.6, 1e-9);
  // C waited from 0 to 2.5 ms: the longest.
  EXPECT_NEAR(static_cast<double>(m.longest_wait_ns), 2.5e6, 1);
  EXPECT_NEAR(static_cast<double>(m.latency_ns.max()), 2.5e6, 1);
}

// A barging run: A releases and re-acquires every time although B is waiting; B never gets in.
// The metrics must show it: barging 1.0, B starved, Jain 0.5, and B's wait to the window's end.
TEST(ContentionMetrics, BargingReleaserStarvesTheWaiter) {
  HistoryBuilder b;
  b.acquire_invoke(ms(0), B);
  for (int i = 0; i < 10; ++i) {
    const double t = i;
    b.acquire_invoke(ms(t), A).acquire_ok(ms(t + 0.05), A).release(ms(t + 0.9), ms(t + 0.95), A);
  }
  const ContentionMetrics m = contention_metrics(b.build(), 0, ms(10));
  EXPECT_EQ(m.acquisitions, 10);
  EXPECT_EQ(m.acquisitions_per_client, (std::vector<std::int64_t>{10, 0}));
  EXPECT_EQ(m.starved_clients, 1);
  EXPECT_DOUBLE_EQ(m.max_min_share, 0.0);
  EXPECT_DOUBLE_EQ(m.jain, 0.5);
  EXPECT_EQ(m.contended_handoffs, 9);
  EXPECT_EQ(m.barges, 9);
  EXPECT_DOUBLE_EQ(m.barging_rate, 1.0);
  EXPECT_EQ(m.longest_wait_ns, ms(10));  // still waiting at the window's end
}

// Only the window counts: what happened in the warm-up is not measured.
TEST(ContentionMetrics, OnlyTheWindowCounts) {
  HistoryBuilder b;
  for (int i = 0; i < 20; ++i) {
    const double t = i;
    b.hold(A, ms(t), ms(t + 0.1), ms(t + 0.5), ms(t + 0.6));
  }
  const ContentionMetrics m = contention_metrics(b.build(), ms(5), ms(15));
  EXPECT_EQ(m.acquisitions, 10);
  EXPECT_DOUBLE_EQ(m.throughput_per_s, 1000.0);
  EXPECT_NEAR(m.utilisation, 0.4, 1e-9);
  EXPECT_EQ(m.contended_handoffs, 0);  // nobody ever waited
}

// Open loop: an acquire due at 0 but invoked at 4 ms (the client was behind) and granted at
// 5 ms has a latency of 5 ms, not 1 ms.
TEST(ContentionMetrics, OpenLoopLatencyCountsFromTheIntendedStart) {
  HistoryBuilder b;
  b.acquire_invoke(ms(4), A);
  b.events().back().schedule().intended_ns = ms(0);
  b.acquire_ok(ms(5), A).release(ms(6), ms(6.1), A);
  const ContentionMetrics m = contention_metrics(b.build(), 0, ms(10));
  EXPECT_EQ(m.latency_ns.max(), ms(5));
  const ContentionMetrics closed = [&] {
    HistoryBuilder c;
    c.acquire_invoke(ms(4), A).acquire_ok(ms(5), A).release(ms(6), ms(6.1), A);
    return contention_metrics(c.build(), 0, ms(10));
  }();
  EXPECT_EQ(closed.latency_ns.max(), ms(1));
}

// Wasted attempts: 3 attempts for one success (2 wasted) and a give-up after 4 attempts.
TEST(ContentionMetrics, WastedAttemptsAndFailures) {
  HistoryBuilder b;
  b.acquire_invoke(ms(0), A).acquire_ok(ms(1), A);
  for (Event& e : b.events()) {
    if (e.f == Op::kAcquire && e.type == EventType::kOk) e.acquire().attempts = 3;
  }
  b.release(ms(2), ms(2.1), A);
  b.acquire_invoke(ms(3), B).acquire_end(ms(4), B, EventType::kFail);
  b.events().back().acquire().attempts = 4;
  const ContentionMetrics m = contention_metrics(b.build(), 0, ms(10));
  EXPECT_EQ(m.acquisitions, 1);
  EXPECT_EQ(m.acquires_failed, 1);
  EXPECT_DOUBLE_EQ(m.wasted_attempts_per_acquisition, 6.0);
}

// A violation (B enters while A is inside) is measured like any acquisition; the verdict is the
// checker's business. Utilisation counts the key held once, not twice.
TEST(ContentionMetrics, OverlappingHoldsAreStillCounted) {
  HistoryBuilder b;
  b.hold(A, ms(0), ms(0), ms(4), ms(4.1), 2);
  b.hold(B, ms(1), ms(3), ms(6), ms(6.1), 2);
  const ContentionMetrics m = contention_metrics(b.build(), 0, ms(10));
  EXPECT_EQ(m.acquisitions, 2);
  EXPECT_NEAR(m.utilisation, 0.6, 1e-9);  // busy from 0 to 6 ms
}

// Holders, as a semaphore has them: A inside 0..4 ms, B 3..6, C 3.5..5: three at once at the
// most, 8.5 ms inside over a 10 ms window (0.85 on average). A window from 4.5 ms starts with B
// and C inside (its most is 2, counted though nobody enters in it) and holds 2 ms of holders in
// 5.5 ms.
TEST(ContentionMetrics, HoldersInsideAtOnce) {
  HistoryBuilder b;
  b.hold(A, ms(0), ms(0), ms(4), ms(4.1), 2);
  b.hold(B, ms(1), ms(3), ms(6), ms(6.1), 2);
  b.hold(C, ms(3.5), ms(3.5), ms(5), ms(5.1), 2);
  const History history = b.build();
  const ContentionMetrics whole = contention_metrics(history, 0, ms(10));
  EXPECT_EQ(whole.most_holders, 3);
  EXPECT_NEAR(whole.mean_holders, 0.85, 1e-9);
  const ContentionMetrics late = contention_metrics(history, ms(4.5), ms(10));
  EXPECT_EQ(late.most_holders, 2);
  EXPECT_NEAR(late.mean_holders, 2.0 / 5.5, 1e-9);
  // One holder at a time is 1 at the most, and the utilisation on average.
  HistoryBuilder one;
  one.hold(A, ms(0), ms(1), ms(3), ms(3.1)).hold(B, ms(0), ms(4), ms(6), ms(6.1));
  const ContentionMetrics mutex = contention_metrics(one.build(), 0, ms(10));
  EXPECT_EQ(mutex.most_holders, 1);
  EXPECT_NEAR(mutex.mean_holders, mutex.utilisation, 1e-9);
}

}  // namespace
}  // namespace locksim
