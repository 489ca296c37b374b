// naive_overlaps_test: naive [invoke, release done] windows that overlap are counted exactly.
#include <gtest/gtest.h>

#include <algorithm>
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
using test::correct_history;
using test::CycleTimes;
using test::HistoryBuilder;
using test::ms;
using test::violations;

// Proves the naive [acquire invoke, release completed] windows overlap on a polled hand-off whose
// definite windows are disjoint, and do not when each acquire starts after the previous release.
TEST(CheckerTest, NaiveTimestampOverlaps) {
  const History polled = HistoryBuilder()
                             .hold(A, ms(0), ms(1), ms(100), ms(101))
                             .hold(B, ms(50), ms(102), ms(200), ms(201))
                             .hold(C, ms(150), ms(202), ms(300), ms(301))
                             .hold(A, ms(160), ms(302), ms(400), ms(401))
                             .build();
  const CheckResult r = check(polled);
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_TRUE(violations(r).empty());
  // A1-B, B-C, B-A2, C-A2.
  EXPECT_EQ(r.naive_timestamp_overlaps, 4);

  const History gaps = HistoryBuilder()
                           .hold(A, ms(0), ms(1), ms(100), ms(101))
                           .hold(B, ms(110), ms(111), ms(200), ms(201))
                           .hold(C, ms(201), ms(202), ms(300), ms(301))
                           .build();
  EXPECT_EQ(check(gaps).naive_timestamp_overlaps, 0);
}

// Proves the naive-overlap sweep counts exactly what a pairwise comparison counts, on a long
// contended history.
TEST(CheckerTest, NaiveTimestampOverlapsMatchPairwiseCount) {
  std::vector<CycleTimes> times;
  const History h = correct_history(2'000, 5, 3, &times);
  struct Naive {
    int client;
    Nanos start_ns;
    Nanos end_ns;
  };
  std::vector<Naive> naive;
  std::vector<Nanos> invoke_ns(h.clients.size(), -1);
  std::vector<Nanos> start_ns(h.clients.size(), -1);
  for (const Event& e : h.events) {
    const auto c = static_cast<std::size_t>(e.client);
    if (e.f == Op::kAcquire && e.type == EventType::kInvoke) invoke_ns[c] = e.time_ns;
    if (e.f == Op::kAcquire && e.type == EventType::kOk) start_ns[c] = invoke_ns[c];
    if (e.f == Op::kRelease && e.type != EventType::kInvoke && start_ns[c] >= 0) {
      naive.push_back({e.client, start_ns[c], e.time_ns});
      start_ns[c] = -1;
    }
  }
  std::int64_t pairs = 0;
  for (std::size_t i = 0; i < naive.size(); ++i) {
    for (std::size_t j = i + 1; j < naive.size(); ++j) {
      if (naive[i].client == naive[j].client) continue;
      const Nanos overlap = std::min(naive[i].end_ns, naive[j].end_ns) -
                            std::max(naive[i].start_ns, naive[j].start_ns);
      if (overlap > 0) ++pairs;
    }
  }
  const CheckResult r = check(h);
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_GT(pairs, 0);
  EXPECT_EQ(r.naive_timestamp_overlaps, pairs);
}

}  // namespace
}  // namespace locksim
