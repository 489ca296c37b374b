#include "sim/client/wait.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>

#include "sim/core/assert.h"
#include "sim/redis/script.h"

namespace locksim {
namespace {

// SleepingWait: poll, retry_sleep and backoff only differ in the delay they compute.
class SleepingWait final : public WaitStrategy {
 public:
  // The config's words are read once here, not at every poll.
  SleepingWait(WaitConfig config, Rng rng)
      : config_(std::move(config)),
        rng_(rng),
        interval_ns_(config_.strategy == "backoff" ? -1 : delay_ns(config_, 1)),
        jitter_(jitter_of(config_)) {}
  void wait(const Pause& pause, const std::string& /*full_key*/, int failed_attempts,
            Nanos max_ns) override {
    const Nanos delay = interval_ns_ >= 0 ? interval_ns_ : delay_ns(config_, failed_attempts);
    pause(std::min(jittered_ns(jitter_, delay, rng_), max_ns));
  }

 private:
  WaitConfig config_;
  Rng rng_;
  Nanos interval_ns_;  // poll, retry_sleep: the same pause after every busy answer; -1: backoff
  Jitter jitter_;
};

// Wakes at most one waiter per release; the list keeps a single pending wake-up so that
// releases nobody waited for do not pile up.
const Script kNotify("notify.wake", R"lua(
redis.call('LPUSH', KEYS[1], '1')
redis.call('LTRIM', KEYS[1], 0, 0)
return 1)lua");

// WakingWait: what the notify and pubsub strategies share: their fallback, the dial of their own
// connection, and the release's signal (release_signal).
class WakingWait : public WaitStrategy {
 public:
  WakingWait(const WaitConfig& config, Dial dial)
      : config_(config), fallback_ns_(fallback_ns(config)), dial_(std::move(dial)) {}

  void on_release(Connection& connection, const std::string& full_key) final {
    run_one(connection, *release_signal(config_, full_key));
  }

 protected:
  WaitConfig config_;
  Nanos fallback_ns_;
  Dial dial_;
};

// NotifyWait: BLPOP on the key's notify list, bounded by fallback_ms because a lock freed by
// expiry (or by a crashed holder's TTL) notifies nobody.
class NotifyWait final : public WakingWait {
 public:
  using WakingWait::WakingWait;

  void wait(const Pause& pause, const std::string& full_key, int /*failed_attempts*/,
            Nanos max_ns) override {
    const Nanos wait_ns = std::min(fallback_ns_, max_ns);
    if (wait_ns <= 0) return;
    // The blocking call needs a command timeout above its own timeout.
    const auto timeout = std::chrono::milliseconds(wait_ns / kNanosPerMilli + 2000);
    if (!waiter_ || waiter_->broken()) {
      waiter_ = dial_(ConnectionOptions{std::chrono::milliseconds(2000), timeout});
    }
    if (!pause(0)) return;
    const RedisResult result = waiter_->command(notify_wait_words(full_key, wait_ns).views());
    if (!result.ok()) pause(wait_ns);  // fall back to sleeping; reconnect next time
  }

 private:
  std::unique_ptr<Connection> waiter_;
};

// PubSubWait: SUBSCRIBE to the key's release channel; a releaser PUBLISHes and every subscribed
// waiter wakes (and all but one find the lock busy again: the thundering herd Redisson tames with
// a per-process semaphore). Pub/sub is at-most-once: a release published before the subscription
// took effect, or while the connection was down, wakes nobody, so a waiter re-tries at least
// every fallback_ms. The first wait for a key only subscribes and returns at once, so that the
// next attempt comes after the subscription: a release between the two is then never missed.
class PubSubWait final : public WakingWait {
 public:
  PubSubWait(const WaitConfig& config, Dial dial, const Clock& clock)
      : WakingWait(config, std::move(dial)), clock_(clock) {}

  void wait(const Pause& pause, const std::string& full_key, int /*failed_attempts*/,
            Nanos max_ns) override {
    const Nanos wait_ns = std::min(fallback_ns_, max_ns);
    if (wait_ns <= 0 || !pause(0)) return;
    if (!subscriber_ || subscriber_->broken()) {
      subscriber_ = dial_(ConnectionOptions{});
      subscribed_.clear();
    }
    const std::string channel = release_channel(full_key);
    if (!subscribed_.contains(channel)) {
      if (!subscriber_->command({"SUBSCRIBE", channel}).ok()) {
        pause(wait_ns);  // no server to listen to: sleep the fallback; resubscribe next time
        return;
      }
      subscribed_.insert(channel);
      return;  // attempt again now that releases will be heard
    }
    const Nanos end = clock_.now_ns() + wait_ns;
    for (Nanos left = wait_ns; left > 0; left = end - clock_.now_ns()) {
      const std::optional<RedisResult> message = subscriber_->next_message(left);
      if (!message) return;  // the fallback passed: attempt again
      if (!message->ok()) {
        pause(end - clock_.now_ns());  // the connection broke: sleep out the fallback
        return;
      }
      if (is_release_message(message->reply, channel)) return;  // a release of this key
    }
  }

 private:
  const Clock& clock_;
  std::unique_ptr<Connection> subscriber_;
  std::set<std::string> subscribed_;
};

}  // namespace

std::string release_channel(const std::string& full_key) { return full_key + ":released"; }

std::optional<OneCommand> release_signal(const WaitConfig& config, const std::string& full_key) {
  OneCommand signal;
  if (config.strategy == "notify") {
    const std::string list = notify_key(full_key);
    signal.script = &kNotify;
    signal.argv = OneCommand::words({list});
    signal.keys = 1;
    return signal;
  }
  if (config.strategy == "pubsub") {
    const std::string channel = release_channel(full_key);
    signal.argv = OneCommand::words({"PUBLISH", channel, "released"});
    return signal;
  }
  return std::nullopt;
}

Words notify_wait_words(const std::string& full_key, Nanos wait_ns) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.3f",
                std::max(0.001, static_cast<double>(wait_ns) / 1e9));
  const std::string list = notify_key(full_key);
  return Words({"BLPOP", list, seconds});
}

Nanos fallback_ns(const WaitConfig& config) { return ms_to_ns(config.fallback_ms); }

bool is_release_message(const Reply& reply, const std::string& channel) {
  return reply.type == Reply::Type::kArray && reply.elements.size() == 3 &&
         reply.elements[0].str == "message" && reply.elements[1].str == channel;
}

Jitter jitter_of(const WaitConfig& config) {
  if (config.jitter == "full") return Jitter::kFull;
  if (config.jitter == "equal") return Jitter::kEqual;
  return Jitter::kNone;
}

Nanos jittered_ns(Jitter jitter, Nanos delay, Rng& rng) {
  switch (jitter) {
    case Jitter::kFull:
      return rng.uniform(0, delay);
    case Jitter::kEqual:
      return delay / 2 + rng.uniform(0, delay - delay / 2);
    case Jitter::kNone:
      break;
  }
  return delay;
}

Nanos jittered_ns(const WaitConfig& config, Nanos delay, Rng& rng) {
  return jittered_ns(jitter_of(config), delay, rng);
}

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
  if (config.strategy == "notify" || config.strategy == "pubsub") {
    return ms_to_ns(config.fallback_ms);
  }
  return ms_to_ns(config.interval_ms);  // poll, retry_sleep
}

std::unique_ptr<WaitStrategy> make_wait_strategy(const WaitConfig& config, Dial dial, Rng rng,
                                                 const Clock& clock) {
  if (config.strategy == "notify") return std::make_unique<NotifyWait>(config, std::move(dial));
  if (config.strategy == "pubsub") {
    return std::make_unique<PubSubWait>(config, std::move(dial), clock);
  }
  LOCKSIM_ASSERT(config.strategy == "poll" || config.strategy == "retry_sleep" ||
                 config.strategy == "backoff");
  return std::make_unique<SleepingWait>(config, rng);
}

}  // namespace locksim
