// wait.h: WaitStrategy, how a client waits between acquire attempts that found the lock busy.
//
// The driver asks the strategy to wait, bounded by the acquire deadline; sleeping strategies
// compute a delay (backoff with optional jitter), the notification strategies block on the server
// until a releaser wakes them ("notify": BLPOP on a list, one waiter per release; "pubsub":
// SUBSCRIBE to a channel, every waiter per release). One instance per client thread (strategies
// keep state and a random stream, and "notify" and "pubsub" own a connection, which they open
// with the Dial their host gives them and reopen when it breaks).
//
//   auto wait = make_wait_strategy(scenario.lock.wait, dial_hiredis(endpoint), client_rng.fork(1),
//                                  clock);
//   wait->wait(pause, full_key, failed_attempts, remaining_ns);  // after a busy answer
//   wait->on_release(connection, full_key);                       // after a successful release
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "sim/core/clock.h"
#include "sim/core/random.h"
#include "sim/lock/variant.h"
#include "sim/redis/connection.h"
#include "sim/redis/words.h"
#include "sim/scenario/scenario.h"

namespace locksim {

class WaitStrategy {
 public:
  // Pause: sleeps up to the given time; false if the run must stop (Ctrl-C, time limit).
  using Pause = std::function<bool(Nanos)>;

  virtual ~WaitStrategy() = default;
  // wait: returns when the next attempt should be made, after `failed_attempts` (>= 1) busy
  // answers, and never later than `max_ns` from now.
  virtual void wait(const Pause& pause, const std::string& full_key, int failed_attempts,
                    Nanos max_ns) = 0;
  // on_release: this client just released `full_key` (the notify strategy wakes one waiter).
  virtual void on_release(Connection& /*connection*/, const std::string& /*full_key*/) {}
};

// make_wait_strategy: the strategy named by config.strategy (validated by the loader).
// "notify" and "pubsub" open their connection with `dial`; `rng` draws the jitter; "pubsub"
// measures its fallback on `clock`.
std::unique_ptr<WaitStrategy> make_wait_strategy(const WaitConfig& config, Dial dial, Rng rng,
                                                 const Clock& clock);

// delay_ns: for the sleeping strategies, the pause after `failed_attempts` busy answers, before
// jitter (exposed for tests). "notify" and "pubsub" answer their fallback.
Nanos delay_ns(const WaitConfig& config, int failed_attempts);
// jittered_ns: `delay` with the config's jitter drawn from `rng` ("none": `delay` itself).
Nanos jittered_ns(const WaitConfig& config, Nanos delay, Rng& rng);
// Jitter: the config's jitter word, read once (jitter_of), for a caller that draws at every poll.
enum class Jitter { kNone, kFull, kEqual };
Jitter jitter_of(const WaitConfig& config);
Nanos jittered_ns(Jitter jitter, Nanos delay, Rng& rng);

// The commands of the waking strategies, written once for every host (a client thread and
// `locksim worker` send them on blocking connections, the event loop on asynchronous ones):
//
// release_signal: what a client sends after it released `full_key`, so that its waiters wake:
// "notify" pushes one wake-up on the key's list (a script that keeps at most one pending), "pubsub"
// publishes on the key's channel; nothing for the sleeping strategies. Its reply means nothing.
std::optional<OneCommand> release_signal(const WaitConfig& config, const std::string& full_key);
// notify_wait_words: the BLPOP a "notify" waiter blocks in, for at most `wait_ns` (> 0; at
// least a millisecond).
Words notify_wait_words(const std::string& full_key, Nanos wait_ns);
// fallback_ns: how long a "notify" or "pubsub" waiter waits for a wake-up before it attempts again
// anyway (a lock freed by expiry wakes nobody).
Nanos fallback_ns(const WaitConfig& config);
// is_release_message: whether `reply`, read on a subscribed connection, is a release published on
// `channel` (not a subscription's confirmation, nor another key's release).
bool is_release_message(const Reply& reply, const std::string& channel);

// notify_key: the list a notify waiter blocks on for `full_key`.
std::string notify_key(const std::string& full_key);
// release_channel: the channel a pubsub waiter subscribes to for `full_key`.
std::string release_channel(const std::string& full_key);

}  // namespace locksim
