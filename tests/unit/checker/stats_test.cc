// stats_test: the counts and acquire latency percentiles of CheckStats.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

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
using test::ms;

// Proves the counts and latency percentiles of CheckStats.
TEST(CheckerTest, StatsValues) {
  HistoryBuilder builder;
  builder
      .hold(A, ms(0), ms(1), ms(10), ms(11))         // latency 1 ms
      .hold(B, ms(5), ms(13), ms(20), ms(21))        // 8 ms
      .hold(A, ms(20), ms(23), ms(30), ms(31))       // 3 ms
      .hold(C, ms(25), ms(35), ms(40), ms(41), -1);  // 10 ms
  builder.acquire_invoke(ms(50), B).acquire_end(ms(60), B, EventType::kFail);
  builder.acquire_invoke(ms(61), B).acquire_end(ms(62), B, EventType::kInfo);
  builder.acquire_invoke(ms(70), C).acquire_ok(ms(72), C);  // 2 ms
  builder.release(ms(80), ms(81), C, 0);                    // refused: deleted nothing
  builder.acquire_invoke(ms(90), A).acquire_ok(ms(91), A);  // 1 ms
  builder.event(ms(95), A, EventType::kOk, Op::kExit)
      .event(ms(95), A, EventType::kInvoke, Op::kRelease)
      .event(ms(96), A, EventType::kFail, Op::kRelease)
      .last()
      .error = ErrorKind::kReplyError;
  builder.acquire_invoke(ms(100), A).acquire_ok(ms(101), A);
  builder.event(ms(105), A, EventType::kOk, Op::kExit)
      .event(ms(105), A, EventType::kInvoke, Op::kRelease)
      .event(ms(106), A, EventType::kInfo, Op::kRelease)
      .last()
      .error = ErrorKind::kTimeout;
  builder.acquire_invoke(ms(110), B).crash(ms(120), B);
  const History h = builder.build();
  const CheckStats s = check(h).stats;
  EXPECT_EQ(s.events, static_cast<std::int64_t>(h.events.size()));
  EXPECT_EQ(s.acquires_ok, 7);
  EXPECT_EQ(s.acquires_failed, 1);
  EXPECT_EQ(s.acquires_indeterminate, 2);  // the info and the one cut short by B's crash
  EXPECT_EQ(s.releases_ok, 4);
  EXPECT_EQ(s.releases_refused, 2);  // count 0 and the reply error; not the timeout
  EXPECT_EQ(s.crashes, 1);
  EXPECT_EQ(s.holds_per_client, (std::vector<std::int64_t>{4, 1, 2}));
  // Latencies sorted: 1 1 1 2 3 8 10 ms; nearest rank p50 = 4th. Seven samples cannot tell a
  // p99 from the maximum, so no p99 is stated.
  EXPECT_EQ(s.latency_samples, 7);
  EXPECT_EQ(s.acquire_latency_p50_ns, ms(2));
  EXPECT_EQ(s.acquire_latency_p99_ns, -1);
  EXPECT_EQ(s.acquire_latency_max_ns, ms(10));
  EXPECT_EQ(s.duration_ns, ms(120));
}

// Proves a p99 is stated from 100 samples on, and is the nearest-rank value.
TEST(CheckerTest, P99NeedsAHundredSamples) {
  HistoryBuilder builder;
  for (int i = 0; i < 100; ++i) {
    const Nanos t = ms(10.0 * i);
    builder.hold(A, t, t + ms(i == 99 ? 5 : 1), t + ms(6), t + ms(7));
  }
  const CheckStats s = check(builder.build()).stats;
  EXPECT_EQ(s.latency_samples, 100);
  EXPECT_EQ(s.acquire_latency_p50_ns, ms(1));
  EXPECT_EQ(s.acquire_latency_p99_ns, ms(1));  // the 99th of 100 is still 1 ms
  EXPECT_EQ(s.acquire_latency_max_ns, ms(5));
}

}  // namespace
}  // namespace locksim
