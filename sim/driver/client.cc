#include "sim/driver/client.h"

#include <algorithm>

#include "sim/core/assert.h"

namespace locksim::driver_internal {

DriverClient::DriverClient(RunContext& run, int index, std::uint64_t seed)
    : run_(run),
      index_(index),
      name_(run.scenario().clients.at(static_cast<std::size_t>(index))),
      log_(run.recorder().log(static_cast<std::size_t>(index))),
      rng_(Rng(seed).fork(static_cast<std::uint64_t>(index))),
      wait_(make_wait_strategy(run.scenario().lock.wait)) {}

std::string DriverClient::connect() {
  connection_.emplace(run_.request().endpoint, ConnectionOptions{});
  if (connection_->broken()) return connection_->last_error().describe();
  return "";
}

Connection& DriverClient::observer() {
  if (!observer_ || observer_->broken()) {
    observer_.emplace(run_.request().endpoint, ConnectionOptions{});
  }
  return *observer_;
}

void DriverClient::set_inside(bool inside) {
  {
    std::lock_guard<std::mutex> lock(run_.mutex);
    run_.inside[static_cast<std::size_t>(index_)] = inside;
  }
  run_.changed.notify_all();
}

AcquireStatus DriverClient::acquire(const std::string& logical_key, std::int64_t timeout_ms) {
  LOCKSIM_ASSERT(!holding_ && !crashed_);
  const LockVariant& variant = run_.request().variant;
  const std::int64_t ttl_ms = run_.scenario().lock.ttl_ms;
  const std::string key = run_.full_key(logical_key);
  LockContext context{*connection_, rng_, {}};

  const Nanos start = log_.record(EventType::kInvoke, Op::kAcquire, logical_key);
  if (variant.uses_ttl()) log_.last().ttl_ms = ttl_ms;
  const Nanos deadline = start + ms_to_ns(timeout_ms);

  // Bounded: every pass either returns or sleeps until the deadline draws closer.
  for (std::int64_t attempts = 1;; ++attempts) {
    if (connection_->broken()) connection_->reconnect();
    AcquireAttempt attempt = variant.try_acquire(context, key, ttl_ms);
    switch (attempt.outcome) {
      case AcquireAttempt::Outcome::kAcquired: {
        // ok first, then enter: both after the reply was read (the conservative point).
        log_.record(EventType::kOk, Op::kAcquire, logical_key);
        Event& ok = log_.last();
        ok.token = attempt.token;
        ok.count = attempts;
        if (variant.uses_ttl()) ok.ttl_ms = ttl_ms;
        log_.record(EventType::kOk, Op::kEnter, logical_key);
        holding_ = true;
        held_key_ = logical_key;
        held_token_ = std::move(attempt.token);
        set_inside(true);
        return AcquireStatus::kAcquired;
      }
      case AcquireAttempt::Outcome::kError: {
        const bool maybe = attempt.error.indeterminate();
        log_.record(maybe ? EventType::kInfo : EventType::kFail, Op::kAcquire, logical_key);
        log_.last().error = attempt.error.describe();
        log_.last().count = attempts;
        // Never reuse a connection after an I/O error: the next call reconnects.
        if (maybe) connection_->reconnect();
        return maybe ? AcquireStatus::kIndeterminate : AcquireStatus::kFailed;
      }
      case AcquireAttempt::Outcome::kBusy:
        break;
    }
    const Nanos now = run_.clock().now_ns();
    const bool stopping = run_.should_stop();
    if (now >= deadline || stopping) {
      log_.record(EventType::kFail, Op::kAcquire, logical_key);
      log_.last().count = attempts;
      log_.last().error = stopping ? std::string("stopped: the run was interrupted or timed out")
                                   : "timeout: lock still held after " +
                                         std::to_string(timeout_ms) + " ms";
      return stopping ? AcquireStatus::kStopped : AcquireStatus::kFailed;
    }
    const Nanos delay = std::min(wait_->next_delay_ns(static_cast<int>(attempts)), deadline - now);
    run_.pause(delay);
  }
}

void DriverClient::release() {
  LOCKSIM_ASSERT(holding_ && !crashed_);
  const LockVariant& variant = run_.request().variant;
  LockContext context{*connection_, rng_, {}};
  // exit before the release request is sent (the conservative point).
  log_.record(EventType::kOk, Op::kExit, held_key_);
  set_inside(false);
  log_.record(EventType::kInvoke, Op::kRelease, held_key_);
  log_.last().token = held_token_;
  if (connection_->broken()) connection_->reconnect();
  const ReleaseResult result = variant.release(context, run_.full_key(held_key_), held_token_);
  if (result.outcome == ReleaseResult::Outcome::kError) {
    const bool maybe = result.error.indeterminate();
    log_.record(maybe ? EventType::kInfo : EventType::kFail, Op::kRelease, held_key_);
    log_.last().error = result.error.describe();
    if (maybe) connection_->reconnect();
  } else {
    log_.record(EventType::kOk, Op::kRelease, held_key_);
    log_.last().count = result.deleted;
  }
  holding_ = false;
  held_token_.clear();
}

void DriverClient::crash() {
  LOCKSIM_ASSERT(!crashed_);
  log_.record(EventType::kInfo, Op::kCrash, held_key_);
  crashed_ = true;
  holding_ = false;
  // The server sees the connection close, as it would when a process dies.
  connection_->close();
  observer_.reset();
  {
    std::lock_guard<std::mutex> lock(run_.mutex);
    run_.inside[static_cast<std::size_t>(index_)] = false;
    run_.crashed[static_cast<std::size_t>(index_)] = true;
  }
  run_.changed.notify_all();
}

void DriverClient::record_work(std::int64_t planned_ms) {
  log_.record(EventType::kInfo, Op::kWork, held_key_);
  log_.last().count = planned_ms;
}

}  // namespace locksim::driver_internal
