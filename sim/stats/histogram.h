// histogram.h: LogHistogram, a latency histogram with a stated relative error (HdrHistogram's
// idea; Debian has no C HdrHistogram).
//
// Values (non-negative integers, e.g. nanoseconds) below 2^kSubBits are counted exactly; above,
// each power-of-two range is split into 2^kSubBits equal buckets, so a value is known to within
// 1 / 2^kSubBits of itself (0.79% for 7 bits). Percentiles use the nearest rank and report the
// bucket's highest value, never below the true percentile; max and min are exact. Memory is
// fixed (64 x 128 counters, 64 KiB) whatever is recorded.
//
//   LogHistogram h;
//   h.record(latency_ns);
//   Nanos p99 = h.percentile(99.0);
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace locksim {

class LogHistogram {
 public:
  static constexpr int kSubBits = 7;
  static constexpr std::int64_t kSubBuckets = std::int64_t{1} << kSubBits;
  // kRelativeError: the largest (reported - true) / true of a percentile or a bucket bound.
  static constexpr double kRelativeError = 1.0 / static_cast<double>(kSubBuckets);

  // record: counts `value` (negative values count as 0) `count` times.
  void record(std::int64_t value, std::int64_t count = 1);
  // merge: adds every count of `other`.
  void merge(const LogHistogram& other);

  std::int64_t count() const { return count_; }
  std::int64_t min() const { return count_ == 0 ? 0 : min_; }
  std::int64_t max() const { return count_ == 0 ? 0 : max_; }
  double mean() const { return count_ == 0 ? 0.0 : sum_ / static_cast<double>(count_); }
  // percentile: the nearest-rank `p`-th percentile (0 < p <= 100), as the highest value of its
  // bucket clamped to max(); 0 when empty.
  std::int64_t percentile(double p) const;
  // fraction_at_or_below: the share of values <= `value` (bucket resolution), for CDFs.
  double fraction_at_or_below(std::int64_t value) const;

  // Buckets with a count, lowest first: {highest value of the bucket, count}.
  struct Bucket {
    std::int64_t upper = 0;
    std::int64_t count = 0;
  };
  std::vector<Bucket> buckets() const;

  // index_of / upper_of: the bucket of a value and the highest value of a bucket (for tests).
  static int index_of(std::int64_t value);
  static std::int64_t upper_of(int index);

 private:
  static constexpr int kBuckets = 64 * static_cast<int>(kSubBuckets);
  std::array<std::int64_t, kBuckets> counts_{};
  std::int64_t count_ = 0;
  std::int64_t min_ = 0;
  std::int64_t max_ = 0;
  double sum_ = 0;
};

}  // namespace locksim
