#include "sim/client/watchdog.h"

#include <utility>

#include "sim/client/renewal.h"
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

// Watchdog::Host: renewal_loop's host on the watchdog's thread: it blocks on the clock and on
// the mutex's condition, so the loop runs inline.
class Watchdog::Host final : public RenewalHost {
 public:
  Host(Watchdog& dog, const Lease& lease, const Hooks& hooks)
      : dog_(dog),
        lease_(lease),
        hooks_(hooks),
        connection_(dog.connect_()),
        rng_(lease.rng),
        context_{.connection = *connection_,
                 .rng = rng_,
                 .clock = dog.clock_,
                 .waiter_id = lease.waiter_id,
                 .queue_timeout_ms = lease.queue_timeout_ms} {}

  Nanos now() override { return dog_.clock_.now_ns(); }
  Ask<bool> until(Nanos due_ns) override {
    std::unique_lock<std::mutex> lock(dog_.mutex_);
    if (std::exchange(dog_.renewing_, false)) {
      dog_.clock_.notify_all(dog_.wake_);  // a freeze may wait for the call that ended
    }
    if (stopping()) return Ask<bool>(false);
    dog_.clock_.wait_until(dog_.wake_, lock, due_ns, [this] { return dog_.stop_; });
    // A frozen client renews nothing; the renewal that fell due meanwhile runs on thaw.
    dog_.clock_.wait(dog_.wake_, lock, [this] { return !dog_.frozen_ || dog_.stop_; });
    if (stopping()) return Ask<bool>(false);
    dog_.renewing_ = true;
    return Ask<bool>(true);
  }
  void invoked() override {
    if (hooks_.invoke) hooks_.invoke();
  }
  Task<ExtendResult> extend() override {
    if (connection_->broken()) connection_->reconnect();  // never reused after an I/O error
    co_return dog_.variant_.extend(context_, lease_.key, lease_.token, lease_.ttl_ms);
  }
  void completed(const ExtendResult& result) override {
    if (hooks_.completed) hooks_.completed(result);
  }

 private:
  // stopping: under the mutex.
  bool stopping() const { return dog_.stop_ || (hooks_.stop && hooks_.stop()); }

  Watchdog& dog_;
  const Lease& lease_;
  const Hooks& hooks_;
  const std::unique_ptr<Connection> connection_;
  Rng rng_;
  const LockContext context_;
};

void Watchdog::renew(const Lease& lease, const Hooks& hooks) {
  Host host(*this, lease, hooks);
  run_inline(renewal_loop(host, lease.period_ns));
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
