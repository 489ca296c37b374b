// The "lock" object: key, lease, acquire timeout, wait strategy and renewal period.
#include <algorithm>
#include <regex>
#include <string>

#include "sim/scenario/scenario_parts.h"

namespace locksim::scenario_internal {
namespace {

constexpr std::int64_t kMaxWaitMs = 60000;
constexpr std::int64_t kMaxBackoffMs = 600000;
constexpr double kMaxBackoffFactor = 10.0;

struct StrategySpec {
  const char* name;
  std::vector<std::string> keys;  // keys this strategy allows beside "strategy"
};

const std::vector<StrategySpec>& strategy_specs() {
  static const std::vector<StrategySpec> specs = {
      {"poll", {"interval_ms"}},
      {"backoff", {"initial_ms", "factor", "max_ms", "jitter"}},
      {"retry_sleep", {"interval_ms"}},
      {"notify", {"fallback_ms"}},
      {"pubsub", {"fallback_ms"}},
  };
  return specs;
}

const StrategySpec& strategy_spec(const std::string& name) {
  const auto& specs = strategy_specs();
  return *std::find_if(specs.begin(), specs.end(),
                       [&](const StrategySpec& spec) { return name == spec.name; });
}

bool contains(const std::vector<std::string>& words, const std::string& word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

// The strategies whose "wait" may carry `key`, for "not allowed" messages.
std::vector<std::string> strategies_allowing(const std::string& key) {
  std::vector<std::string> names;
  for (const StrategySpec& spec : strategy_specs()) {
    if (contains(spec.keys, key)) names.push_back("\"" + std::string(spec.name) + "\"");
  }
  return names;
}

WaitConfig parse_wait(const JsonReader& node) {
  std::vector<std::string> strategies;
  std::vector<std::string> allowed = {"strategy"};
  for (const StrategySpec& spec : strategy_specs()) {
    strategies.emplace_back(spec.name);
    for (const std::string& key : spec.keys) {
      if (!contains(allowed, key)) allowed.push_back(key);
    }
  }
  node.expect_object(allowed);
  WaitConfig wait;
  if (const auto strategy = node.optional_member("strategy")) {
    wait.strategy = strategy->one_of(strategies, "strategy", "allowed");
  }
  const StrategySpec& spec = strategy_spec(wait.strategy);
  for (const auto& [key, unused] : node.value().items()) {
    if (key != "strategy" && !contains(spec.keys, key)) {
      node.member(key).fail("not allowed when \"strategy\" is \"" + wait.strategy +
                            "\" (only with \"strategy\": " + join(strategies_allowing(key)) + ")");
    }
  }

  if (wait.strategy == "poll" || wait.strategy == "retry_sleep") {
    // Doc B sleeps 3 s before its single retry; a poll loop retries quickly.
    wait.interval_ms = wait.strategy == "poll" ? 10 : 3000;
    if (const auto interval = node.optional_member("interval_ms")) {
      wait.interval_ms = interval->duration_ms(1, kMaxWaitMs);
    }
  } else if (wait.strategy == "backoff") {
    if (const auto initial = node.optional_member("initial_ms")) {
      wait.initial_ms = initial->duration_ms(1, kMaxWaitMs);
    }
    if (const auto factor = node.optional_member("factor")) {
      wait.factor = factor->number("a backoff factor");
      if (!(wait.factor >= 1.0 && wait.factor <= kMaxBackoffFactor)) {
        factor->fail("expected a backoff factor between 1 and 10, got " +
                     describe(factor->value()));
      }
    }
    // The default cap (Doc A's 5 s) grows with a larger initial wait so the pair stays valid.
    wait.max_ms = std::max<std::int64_t>(5000, wait.initial_ms);
    if (const auto max = node.optional_member("max_ms")) {
      wait.max_ms = max->duration_ms(1, kMaxBackoffMs);
      if (wait.max_ms < wait.initial_ms) {
        max->fail("expected at least \"initial_ms\" (" + std::to_string(wait.initial_ms) +
                  "), the first wait it caps, got " + describe(max->value()));
      }
    }
    if (const auto jitter = node.optional_member("jitter")) {
      wait.jitter = jitter->one_of({"none", "full", "equal"}, "jitter", "allowed");
    }
  } else {
    if (const auto fallback = node.optional_member("fallback_ms")) {
      wait.fallback_ms = fallback->duration_ms(1, kMaxWaitMs);
    }
  }
  return wait;
}

nlohmann::json resolved_wait(const WaitConfig& wait) {
  nlohmann::json result = {{"strategy", wait.strategy}};
  if (wait.strategy == "backoff") {
    result["initial_ms"] = wait.initial_ms;
    result["factor"] = wait.factor;
    result["max_ms"] = wait.max_ms;
    result["jitter"] = wait.jitter;
  } else if (wait.strategy == "notify" || wait.strategy == "pubsub") {
    result["fallback_ms"] = wait.fallback_ms;
  } else {
    result["interval_ms"] = wait.interval_ms;
  }
  return result;
}

}  // namespace

LockConfig parse_lock(const std::optional<JsonReader>& node,
                      const std::optional<SweepTtl>& sweep_ttl,
                      const std::vector<std::string>& variants) {
  // Braces: a Redis Cluster hash tag ("{lock}"), which keeps a lock's own keys in one slot.
  static const std::regex kKeyPattern("[A-Za-z0-9_:.{}-]{1,64}");
  LockConfig lock;
  if (node) {
    node->expect_object({"key", "ttl_ms", "acquire_timeout_ms", "reply_timeout_ms", "wait",
                         "renew_period_ms", "queue_timeout_ms", "permits"});
    if (const auto key = node->optional_member("key")) {
      lock.key = key->matching(kKeyPattern, "a key of 1 to 64 letters, digits or _ : . - { }");
    }
    if (const auto ttl = node->optional_member("ttl_ms")) {
      if (sweep_ttl) {
        ttl->fail("not allowed with \"sweep\": each sweep point sets it from \"ttl_over_work\"");
      }
      lock.ttl_ms = ttl->duration_ms(1, kMaxDurationMs);
    }
    if (const auto timeout = node->optional_member("acquire_timeout_ms")) {
      lock.acquire_timeout_ms = timeout->duration_ms(0, kMaxDurationMs);
    }
    if (const auto reply = node->optional_member("reply_timeout_ms")) {
      lock.reply_timeout_ms = reply->duration_ms(1, kMaxReplyTimeoutMs);
    }
    if (const auto wait = node->optional_member("wait")) lock.wait = parse_wait(*wait);
    if (const auto permits = node->optional_member("permits")) {
      lock.permits = permits->count(1, kMaxLockPermits, "permits");
    }
  }
  if (sweep_ttl) lock.ttl_ms = sweep_ttl->ttl_ms;

  // Renewing three times per lease leaves two chances before the lease runs out.
  lock.renew_period_ms = std::max<std::int64_t>(1, lock.ttl_ms / 3);
  if (const auto renew = node ? node->optional_member("renew_period_ms") : std::nullopt) {
    lock.renew_period_ms = renew->duration_ms(1, kMaxDurationMs);
    // A renewal at or after the lease end comes too late; a 1 ms lease cannot do better than 1.
    if (lock.renew_period_ms >= lock.ttl_ms && lock.renew_period_ms > 1) {
      renew->fail("expected less than lock.ttl_ms (" + std::to_string(lock.ttl_ms) +
                  (sweep_ttl ? ", set by sweep point " + sweep_ttl->key : std::string()) +
                  ") so the lease is renewed before it expires, got " + describe(renew->value()));
    }
  }

  // A queued waiter keeps its place by trying again; three pauses of slack, and never less than
  // a lease, so a live waiter is not dropped while the holder works.
  const std::int64_t pause_ms = longest_pause_ms(lock.wait);
  lock.queue_timeout_ms = std::min(kMaxDurationMs, std::max(lock.ttl_ms, 3 * pause_ms));
  if (const auto queue = node ? node->optional_member("queue_timeout_ms") : std::nullopt) {
    lock.queue_timeout_ms = queue->duration_ms(1, kMaxDurationMs);
    const bool queues =
        std::find(variants.begin(), variants.end(), kFairQueueVariant) != variants.end();
    if (queues && lock.queue_timeout_ms < 2 * pause_ms) {
      queue->fail("expected at least " + std::to_string(2 * pause_ms) + " (2 x the longest pause " +
                  std::to_string(pause_ms) + " ms of the \"" + lock.wait.strategy +
                  "\" wait) because " + std::string(kFairQueueVariant) +
                  " is listed: a waiter that pauses longer than the queue timeout between attempts "
                  "loses its place every time; got " +
                  describe(queue->value()));
    }
  }
  return lock;
}

nlohmann::json resolved_lock(const LockConfig& lock) {
  nlohmann::json resolved = {{"key", lock.key},
                             {"ttl_ms", lock.ttl_ms},
                             {"acquire_timeout_ms", lock.acquire_timeout_ms},
                             {"reply_timeout_ms", lock.reply_timeout_ms},
                             {"wait", resolved_wait(lock.wait)},
                             {"renew_period_ms", lock.renew_period_ms},
                             {"queue_timeout_ms", lock.queue_timeout_ms}};
  // Only a semaphore's: a mutex's resolved lock stays as it was.
  if (lock.permits != 1) resolved["permits"] = lock.permits;
  return resolved;
}

std::int64_t longest_pause_ms(const WaitConfig& wait) {
  if (wait.strategy == "backoff") return wait.max_ms;
  if (wait.strategy == "notify") return wait.fallback_ms;
  return wait.interval_ms;  // poll, retry_sleep
}

std::int64_t default_stuck_ms(const WaitConfig& wait) {
  // Backoff waits grow to max_ms, so two of the longest waits already span several attempts.
  if (wait.strategy == "backoff") return std::max<std::int64_t>(500, 2 * wait.max_ms);
  if (wait.strategy == "notify" || wait.strategy == "pubsub") return std::max<std::int64_t>(500, 5 * wait.fallback_ms);
  return std::max<std::int64_t>(500, 5 * wait.interval_ms);
}

}  // namespace locksim::scenario_internal
