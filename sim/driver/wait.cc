#include "sim/driver/wait.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "sim/core/assert.h"
#include "sim/redis/script.h"

namespace locksim {
namespace {

// SleepingWait: poll, retry_sleep and backoff only differ in the delay they compute.
class SleepingWait final : public WaitStrategy {
 public:
  explicit SleepingWait(WaitConfig config) : config_(std::move(config)) {}
  void wait(const Pause& pause, const std::string& /*full_key*/, int failed_attempts,
            Nanos max_ns) override {
    pause(std::min(delay_ns(config_, failed_attempts), max_ns));
  }

 private:
  WaitConfig config_;
};

// Wakes at most one waiter per release; the list keeps a single pending wake-up so that
// releases nobody waited for do not pile up.
const Script kNotify("notify.wake", R"lua(
redis.call('LPUSH', KEYS[1], '1')
redis.call('LTRIM', KEYS[1], 0, 0)
return 1)lua");

// NotifyWait: BLPOP on the key's notify list, bounded by fallback_ms because a lock freed by
// expiry (or by a crashed holder's TTL) notifies nobody.
class NotifyWait final : public WaitStrategy {
 public:
  NotifyWait(const WaitConfig& config, Endpoint endpoint)
      : fallback_ns_(ms_to_ns(config.fallback_ms)), endpoint_(std::move(endpoint)) {}

  void wait(const Pause& pause, const std::string& full_key, int /*failed_attempts*/,
            Nanos max_ns) override {
    const Nanos wait_ns = std::min(fallback_ns_, max_ns);
    if (wait_ns <= 0) return;
    // The blocking call needs a command timeout above its own timeout.
    const auto timeout = std::chrono::milliseconds(wait_ns / kNanosPerMilli + 2000);
    if (!waiter_ || waiter_->broken()) {
      waiter_.emplace(endpoint_, ConnectionOptions{std::chrono::milliseconds(2000), timeout});
    }
    if (!pause(0)) return;
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.3f",
                  std::max(0.001, static_cast<double>(wait_ns) / 1e9));
    const RedisResult result = waiter_->command({"BLPOP", notify_key(full_key), seconds});
    if (!result.ok()) pause(wait_ns);  // fall back to sleeping; reconnect next time
  }

  void on_release(Connection& connection, const std::string& full_key) override {
    kNotify.run(connection, {notify_key(full_key)}, {});
  }

 private:
  Nanos fallback_ns_;
  Endpoint endpoint_;
  std::optional<Connection> waiter_;
};

}  // namespace

std::string notify_key(const std::string& full_key) { return full_key + ":notify"; }

Nanos delay_ns(const WaitConfig& config, int failed_attempts) {
  if (config.strategy == "backoff") {
    // initial x factor^(n-1), capped; computed in double so large n cannot overflow.
    const double delay_ms =
        static_cast<double>(config.initial_ms) *
        std::pow(config.factor, static_cast<double>(std::max(0, failed_attempts - 1)));
    return ms_to_ns(
        static_cast<std::int64_t>(std::min(delay_ms, static_cast<double>(config.max_ms))));
  }
  if (config.strategy == "notify") return ms_to_ns(config.fallback_ms);
  return ms_to_ns(config.interval_ms);  // poll, retry_sleep
}

std::unique_ptr<WaitStrategy> make_wait_strategy(const WaitConfig& config,
                                                 const Endpoint& endpoint) {
  if (config.strategy == "notify") return std::make_unique<NotifyWait>(config, endpoint);
  LOCKSIM_ASSERT(config.strategy == "poll" || config.strategy == "retry_sleep" ||
                 config.strategy == "backoff");
  return std::make_unique<SleepingWait>(config);
}

}  // namespace locksim
