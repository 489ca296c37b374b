// Stats: one pass of counting, plus acquire latency percentiles by selection (nth_element) rather
// than a full sort.
#include <algorithm>
#include <vector>

#include "sim/checker/checkers.h"

namespace locksim::checker_internal {
namespace {

constexpr std::size_t kSamplesForP50 = 2;
constexpr std::size_t kSamplesForP99 = 100;

// percentile: the nearest-rank percentile of `values` (reordered); 0 for no values.
Nanos percentile(std::vector<Nanos>& values, int percent) {
  if (values.empty()) return 0;
  const std::size_t n = values.size();
  std::size_t rank = (n * static_cast<std::size_t>(percent) + 99) / 100;  // ceil(n * p / 100)
  rank = std::clamp<std::size_t>(rank, 1, n);
  auto nth = values.begin() + static_cast<std::ptrdiff_t>(rank - 1);
  std::nth_element(values.begin(), nth, values.end());
  return *nth;
}

}  // namespace

CheckStats compute_stats(const History& history) {
  CheckStats stats;
  stats.events = static_cast<std::int64_t>(history.events.size());
  stats.holds_per_client.assign(history.clients.size(), 0);
  if (history.events.empty()) return stats;
  stats.duration_ns = history.events.back().time_ns - history.events.front().time_ns;

  // A client runs one operation at a time, so its pending acquire needs no key.
  std::vector<Nanos> acquire_invoke_ns(history.clients.size(), -1);
  std::vector<bool> acquire_pending(history.clients.size(), false);
  std::vector<Nanos> latencies;
  for (const Event& event : history.events) {
    const auto c = static_cast<std::size_t>(event.client);
    const bool known_client = event.client >= 0 && c < history.clients.size();
    switch (event.f) {
      case Op::kAcquire:
        if (event.type == EventType::kInvoke) {
          if (known_client) {
            acquire_invoke_ns[c] = event.time_ns;
            acquire_pending[c] = true;
          }
          break;
        }
        if (event.type == EventType::kOk) {
          ++stats.acquires_ok;
          if (known_client && acquire_pending[c]) {
            latencies.push_back(event.time_ns - acquire_invoke_ns[c]);
          }
        } else if (event.type == EventType::kFail) {
          ++stats.acquires_failed;
        } else {
          ++stats.acquires_indeterminate;
        }
        if (known_client) acquire_pending[c] = false;
        break;
      case Op::kRelease:
        if (event.type == EventType::kOk) {
          if (event.release().deleted >= 1) {
            ++stats.releases_ok;
          } else {
            ++stats.releases_refused;
          }
        } else if (event.type == EventType::kFail && !is_io_error(event.error)) {
          ++stats.releases_refused;
        }
        break;
      case Op::kEnter:
        if (known_client) ++stats.holds_per_client[c];
        break;
      case Op::kExtend:
        if (event.type == EventType::kOk && event.extend().extended >= 1) {
          ++stats.extends_ok;
        } else if (event.type != EventType::kInvoke) {
          ++stats.extends_failed;  // refused (count 0) or an error: the lease was not extended
        }
        break;
      case Op::kWrite:
        if (event.type == EventType::kOk) ++stats.resource_writes;
        break;
      case Op::kCrash:
        ++stats.crashes;
        // An acquire cut short by a crash may have succeeded: it is indeterminate.
        if (known_client && acquire_pending[c]) {
          ++stats.acquires_indeterminate;
          acquire_pending[c] = false;
        }
        break;
      default:
        break;
    }
  }
  // A percentile is stated only when enough samples lie above it to tell it from the maximum.
  stats.latency_samples = static_cast<std::int64_t>(latencies.size());
  if (!latencies.empty()) {
    stats.acquire_latency_max_ns = *std::max_element(latencies.begin(), latencies.end());
    if (latencies.size() >= kSamplesForP99)
      stats.acquire_latency_p99_ns = percentile(latencies, 99);
    if (latencies.size() >= kSamplesForP50)
      stats.acquire_latency_p50_ns = percentile(latencies, 50);
  }
  return stats;
}

}  // namespace locksim::checker_internal
