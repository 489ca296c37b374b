// watchdog.h (sim/client): Watchdog, the renewal of a held lock (renewal_loop, renewal.h) on a
// thread of its own, for the hosts that block (a thread of locksim, `locksim worker`; the event
// loop runs renewal_loop on its loop).
//
// While started, it extends the lease on a thread of its own over a connection of its own. Each
// extension falls due a renewal period after the previous one returned: a deadline, so a stall
// of the process does not move it, and one that fell due meanwhile runs as soon as the stall
// ends. freeze() holds it as a stall of the whole process would (a call under way returns
// first); thaw() lets it go on. What is recorded, and where, is the host's: it passes Hooks.
//
//   Watchdog dog(variant, clock, os_threads(), [&] { return std::make_unique<HiredisConnection>(ep,
//   opts); }); dog.start({full_key, token, ttl_ms, period_ns, rng, waiter}, hooks);
//   ...
//   dog.stop();  // before the release; also in the destructor
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "sim/core/clock.h"
#include "sim/core/random.h"
#include "sim/core/threads.h"
#include "sim/lock/variant.h"
#include "sim/redis/connection.h"

namespace locksim {

class Watchdog {
 public:
  using Connect = std::function<std::unique_ptr<Connection>()>;

  // Lease: what to keep extending.
  struct Lease {
    std::string key;  // the full Redis key
    std::string token;
    std::int64_t ttl_ms = 0;
    Nanos period_ns = 0;    // > 0
    Rng rng{0};             // the extension calls' random stream
    std::string waiter_id;  // the client's name (LockContext::waiter_id)
    std::int64_t queue_timeout_ms = 0;  // LockContext::queue_timeout_ms
  };
  // Hooks: the host's view of each extension. `invoke` runs before the call is sent,
  // `completed` after it returned; `stop` (may be empty) ends the renewal early when true.
  struct Hooks {
    std::function<void()> invoke;
    std::function<void(const ExtendResult&)> completed;
    std::function<bool()> stop;
  };

  // `threads` starts the renewal thread; `clock` times it (a runtime's: sim/world/runtime.h).
  Watchdog(const LockVariant& variant, const Clock& clock, Threads& threads, Connect connect);
  ~Watchdog() { stop(); }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // start: renews `lease` until stop() (a renewal of an earlier lease is stopped first).
  void start(Lease lease, Hooks hooks);
  // stop: ends the renewal (a call under way returns first) and joins its thread.
  void stop();
  bool running() const { return thread_.joinable(); }
  // freeze / thaw: a stall of the client: no extension is sent between them.
  void freeze();
  void thaw();

 private:
  class Host;  // renewal_loop's host (sim/client/renewal.h)
  void renew(const Lease& lease, const Hooks& hooks);

  const LockVariant& variant_;
  const Clock& clock_;
  Connect connect_;
  Threads& threads_;
  Thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;      // guarded by mutex_
  bool frozen_ = false;    // guarded by mutex_
  bool renewing_ = false;  // guarded by mutex_: an extend call is under way
};

}  // namespace locksim
