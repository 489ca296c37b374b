#include "sim/client/watchdog.h"

#include <utility>

#include "sim/core/assert.h"

namespace locksim {

Watchdog::Watchdog(const LockVariant& variant, const Clock& clock, Threads& threads,
                   Connect connect)
    : variant_(variant), clock_(clock), connect_(std::move(connect)), threads_(threads) {}

void Watchdog::start(Lease lease, Hooks hooks) {
  LOCKSIM_ASSERT(lease.period_ns > 0);
  stop();
  stop_ = false;
  thread_ = Thread(threads_, [this, lease = std::move(lease), hooks = std::move(hooks)] {
    renew(lease, hooks);
  });
}

void Watchdog::renew(const Lease& lease, const Hooks& hooks) {
  const std::unique_ptr<Connection> connection = connect_();
  Rng rng = lease.rng;
  const LockContext context{.connection = *connection,
                            .rng = rng,
                            .clock = clock_,
                            .waiter_id = lease.waiter_id,
                            .queue_timeout_ms = lease.queue_timeout_ms};
  const auto stopping = [this, &hooks] { return stop_ || (hooks.stop && hooks.stop()); };
  std::unique_lock<std::mutex> lock(mutex_);
  // The deadline is taken before anything is recorded: a stall anywhere after it, even before
  // the thread went back to sleep, renews at once when it ends if the deadline passed meanwhile.
  Nanos due = clock_.now_ns() + lease.period_ns;
  while (!stopping()) {
    clock_.wait_until(wake_, lock, due, [this] { return stop_; });
    // A frozen client renews nothing; the renewal that fell due meanwhile runs on thaw.
    clock_.wait(wake_, lock, [this] { return !frozen_ || stop_; });
    if (stopping()) break;
    renewing_ = true;
    lock.unlock();
    if (hooks.invoke) hooks.invoke();
    if (connection->broken()) connection->reconnect();  // never reused after an I/O error
    const ExtendResult result = variant_.extend(context, lease.key, lease.token, lease.ttl_ms);
    due = clock_.now_ns() + lease.period_ns;
    if (hooks.completed) hooks.completed(result);
    lock.lock();
    renewing_ = false;
    clock_.notify_all(wake_);  // a freeze may wait for this call to end
  }
}

void Watchdog::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  clock_.notify_all(wake_);
  thread_.join();
}

void Watchdog::freeze() {
  std::unique_lock<std::mutex> lock(mutex_);
  frozen_ = true;
  clock_.wait(wake_, lock, [this] { return !renewing_; });
}

void Watchdog::thaw() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    frozen_ = false;
  }
  clock_.notify_all(wake_);
}

}  // namespace locksim
