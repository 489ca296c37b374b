#include "sim/stats/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace locksim {

int LogHistogram::index_of(std::int64_t value) {
  if (value < kSubBuckets) return static_cast<int>(std::max<std::int64_t>(value, 0));
  const auto v = static_cast<std::uint64_t>(value);
  const int top = 63 - std::countl_zero(v);  // >= kSubBits
  const int shift = top - kSubBits;
  const auto sub = static_cast<int>((v >> shift) - static_cast<std::uint64_t>(kSubBuckets));
  return (shift + 1) * static_cast<int>(kSubBuckets) + sub;
}

std::int64_t LogHistogram::upper_of(int index) {
  if (index < kSubBuckets) return index;
  const int shift = index / static_cast<int>(kSubBuckets) - 1;
  const std::uint64_t sub = static_cast<std::uint64_t>(index % kSubBuckets);
  const std::uint64_t low = (static_cast<std::uint64_t>(kSubBuckets) + sub) << shift;
  const std::uint64_t high = low + ((std::uint64_t{1} << shift) - 1);
  return high > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
             ? std::numeric_limits<std::int64_t>::max()
             : static_cast<std::int64_t>(high);
}

void LogHistogram::record(std::int64_t value, std::int64_t count) {
  if (count <= 0) return;
  value = std::max<std::int64_t>(value, 0);
  counts_[static_cast<std::size_t>(index_of(value))] += count;
  if (count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  count_ += count;
  sum_ += static_cast<double>(value) * static_cast<double>(count);
}

void LogHistogram::merge(const LogHistogram& other) {
  if (other.count_ == 0) return;
  for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  if (count_ == 0) {
    min_ = other.min_;
    max_ = other.max_;
  } else {
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
  }
  count_ += other.count_;
  sum_ += other.sum_;
}

std::int64_t LogHistogram::percentile(double p) const {
  if (count_ == 0) return 0;
  p = std::clamp(p, 0.0, 100.0);
  auto rank = static_cast<std::int64_t>(std::ceil(p / 100.0 * static_cast<double>(count_)));
  rank = std::clamp<std::int64_t>(rank, 1, count_);
  std::int64_t seen = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::clamp(upper_of(static_cast<int>(i)), min_, max_);
  }
  return max_;
}

double LogHistogram::fraction_at_or_below(std::int64_t value) const {
  if (count_ == 0) return 0.0;
  if (value < 0) return 0.0;
  const int last = index_of(value);
  std::int64_t seen = 0;
  for (int i = 0; i <= last; ++i) seen += counts_[static_cast<std::size_t>(i)];
  return static_cast<double>(seen) / static_cast<double>(count_);
}

std::vector<LogHistogram::Bucket> LogHistogram::buckets() const {
  std::vector<Bucket> out;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] > 0) out.push_back({upper_of(static_cast<int>(i)), counts_[i]});
  }
  return out;
}

}  // namespace locksim
