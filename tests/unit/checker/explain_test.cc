// explain_test: format_ms writes what printf's "%.1f ms" writes for every instant, the exact
// halves and the far and negative ones included (it skips printf where it can agree without it).
#include "sim/checker/explain.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "sim/core/random.h"

namespace locksim::checker_internal {
namespace {

std::string printf_ms(Nanos ns) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.1f ms", ns_to_ms(ns));
  return buffer;
}

TEST(FormatMs, WritesWhatPrintfWrites) {
  std::vector<Nanos> cases = {0,
                              1,
                              49'999,
                              50'000,  // 0.05 ms: an exact half
                              50'001,
                              99'999,
                              100'000,
                              149'999,
                              150'000,  // 0.15 ms: a half that the double puts below
                              150'001,
                              950'000,
                              999'999,
                              1'000'000,
                              215'300'000,
                              215'349'999,
                              215'350'000,
                              999'999'999'999'999,
                              1'000'000'000'000'000,  // beyond: printf's own digits
                              INT64_MAX,
                              -1,
                              -49'999,
                              -50'000,
                              -150'000,
                              -215'350'000,
                              INT64_MIN};
  Rng rng(2026);
  for (int i = 0; i < 200'000; ++i) {
    cases.push_back(rng.uniform(0, 10'000'000'000));                      // within ~10 s
    cases.push_back(rng.uniform(0, 2'000) * 50'000);                      // halves and tenths
    cases.push_back(rng.uniform(-1'000'000'000, 1'000'000'000'000'000));  // far, and negative
  }
  for (const Nanos ns : cases) {
    ASSERT_EQ(format_ms(ns), printf_ms(ns)) << ns << " ns";
  }
}

}  // namespace
}  // namespace locksim::checker_internal
