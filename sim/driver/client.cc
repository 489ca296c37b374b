#include "sim/driver/client.h"

#include <algorithm>
#include <charconv>

#include "sim/core/assert.h"
#include "sim/driver/conditions.h"
#include "sim/driver/fenced_store.h"
#include "sim/topology/topology.h"

namespace locksim::driver_internal {
namespace {

// ClientCrashed: thrown from a checkpoint to stop the client in the middle of a variant call,
// as a process dying between two commands would. Variants let it propagate.
struct ClientCrashed {};

}  // namespace

ErrorKind error_kind(RedisErrorKind kind) {
  switch (kind) {
    case RedisErrorKind::kNone:
      return ErrorKind::kNone;
    case RedisErrorKind::kTimeout:
      return ErrorKind::kTimeout;
    case RedisErrorKind::kClosed:
      return ErrorKind::kClosed;
    case RedisErrorKind::kRefused:
      return ErrorKind::kRefused;
    case RedisErrorKind::kProtocol:
      return ErrorKind::kProtocol;
    case RedisErrorKind::kReplyError:
      return ErrorKind::kReplyError;
    case RedisErrorKind::kUnexpectedReply:
      return ErrorKind::kUnexpectedReply;
  }
  return ErrorKind::kProtocol;
}

// set_error: the error of a failed call, typed, with the server's or hiredis' words.
void set_error(ClientLog& log, Event& event, const RedisResult& result) {
  event.error = error_kind(result.error);
  event.message = log.intern(result.message);
}

namespace {

// needs_reconnect: after an I/O error the hiredis context is never reused.
bool needs_reconnect(const RedisResult& result) {
  return result.error == RedisErrorKind::kTimeout || result.error == RedisErrorKind::kClosed ||
         result.error == RedisErrorKind::kProtocol;
}

}  // namespace

std::chrono::milliseconds node_timeout(std::int64_t ttl_ms) {
  return std::chrono::milliseconds(std::clamp<std::int64_t>(ttl_ms / 10, 50, 1000));
}

ServerGrant server_grant(const std::vector<int>& granted_on, std::size_t servers) {
  ServerGrant grant;
  grant.of = static_cast<std::uint8_t>(std::min(servers, kMaxGrantServers));
  for (const int server : granted_on) {
    if (server >= 0 && server < grant.of) grant.on |= 1U << server;
  }
  return grant.on == 0 ? ServerGrant{} : grant;
}

DriverClient::DriverClient(RunContext& run, int index)
    : run_(run),
      index_(index),
      name_(run.scenario().clients.at(static_cast<std::size_t>(index))),
      log_(run.recorder().log(static_cast<std::size_t>(index))) {}

Endpoint DriverClient::link_endpoint() const {
  return run_.link_endpoint(static_cast<std::size_t>(index_));
}

void DriverClient::record_work(std::int64_t planned_ms) {
  log_.record(EventType::kInfo, Op::kWork, held_key_).work().planned_ms =
      static_cast<std::int32_t>(std::min<std::int64_t>(planned_ms, INT32_MAX));
}

ThreadClient::ThreadClient(RunContext& run, int index)
    : DriverClient(run, index),
      rng_(run.plan().clients().at(static_cast<std::size_t>(index)).seed),
      wait_(make_wait_strategy(run.scenario().lock.wait, link_endpoint(),
                               rng_.fork(kWaitStream))) {
  if (run.request().variant.renews()) {
    renewal_log_ = &run.recorder().add_log(static_cast<std::size_t>(index));
  }
}

ThreadClient::~ThreadClient() { stop_renewal(); }

std::string ThreadClient::connect() {
  connection_.emplace(link_endpoint(), ConnectionOptions{});
  if (connection_->broken()) return connection_->last_error().describe();
  const Topology* topology = run_.request().topology;
  if (topology != nullptr) primary_generation_ = topology->primary_generation();
  if (topology != nullptr && run_.request().variant.multi_server()) {
    const auto timeout = node_timeout(run_.scenario().lock.ttl_ms);
    for (std::size_t server = 0; server < topology->size(); ++server) {
      // A node down at the start is not an error: the variant counts it as not granting.
      nodes_.push_back(std::make_unique<Connection>(
          run_.link_endpoint(static_cast<std::size_t>(index_), server),
          ConnectionOptions{timeout, timeout}));
      node_pointers_.push_back(nodes_.back().get());
    }
  }
  return "";
}

void ThreadClient::refresh_links() {
  const Topology* topology = run_.request().topology;
  const bool changed =
      topology != nullptr && topology->primary_generation() != primary_generation_;
  if (changed) {
    primary_generation_ = topology->primary_generation();
    connection_.emplace(link_endpoint(), ConnectionOptions{});
  }
  if (connection_->broken()) connection_->reconnect();
  for (const auto& node : nodes_) {
    if (changed || node->broken()) node->reconnect();
  }
}

Connection& DriverClient::observer() {
  if (!observer_ || observer_->broken()) {
    observer_.emplace(run_.request().endpoint, ConnectionOptions{});
  }
  return *observer_;
}

void DriverClient::set_state(bool inside, bool crashed) {
  {
    std::lock_guard<std::mutex> lock(run_.mutex);
    run_.inside[static_cast<std::size_t>(index_)] = inside;
    run_.crashed[static_cast<std::size_t>(index_)] = crashed;
  }
  run_.changed.notify_all();
}

void DriverClient::set_waiting(bool waiting) {
  {
    std::lock_guard<std::mutex> lock(run_.mutex);
    run_.waiting[static_cast<std::size_t>(index_)] = waiting;
  }
  run_.changed.notify_all();
}

LockContext ThreadClient::context(CallFaults* faults) {
  LockContext context{*connection_, rng_, {}, name_, run_.scenario().lock.queue_timeout_ms};
  context.nodes = node_pointers_;
  if (faults && (!faults->crash_at.empty() || !faults->pause_at.empty())) {
    context.checkpoint = [this, faults](std::string_view point, CallState state) {
      if (point == faults->crash_at) {
        faults->reached = true;
        faults->crashed_waiting = state == CallState::kBusy;
        throw ClientCrashed{};
      }
      if (point == faults->pause_at) {
        faults->reached = true;
        if (!wait_for_conditions(run_, observer(), faults->pause_until, faults->pause_max_ns) &&
            !run_.should_stop()) {
          run_.note(name_ + ": paused the full " +
                    std::to_string(faults->pause_max_ns / kNanosPerMilli) + " ms at " +
                    faults->pause_at + "; never saw " + describe_conditions(faults->pause_until));
        }
      }
    };
  }
  return context;
}

AcquireStatus ThreadClient::acquire(const std::string& logical_key, std::int64_t timeout_ms,
                                    CallFaults* faults, Nanos intended_ns) {
  LOCKSIM_ASSERT(!holding_ && !crashed_);
  const LockVariant& variant = run_.request().variant;
  const std::int64_t ttl_ms = run_.scenario().lock.ttl_ms;
  const std::string key = run_.full_key(logical_key);
  const LockContext lock_context = context(faults);

  Event& invoke = log_.record(EventType::kInvoke, Op::kAcquire, logical_key);
  if (variant.uses_ttl()) invoke.ttl_ms = static_cast<std::int32_t>(ttl_ms);
  if (intended_ns >= 0) invoke.schedule().intended_ns = std::min(intended_ns, invoke.time_ns);
  const Nanos start = invoke.time_ns;
  const Nanos deadline = start + ms_to_ns(timeout_ms);
  // Once refused, the client is waiting for the lock until this call returns.
  struct WaitingFlag {
    ThreadClient& client;
    bool set = false;
    ~WaitingFlag() {
      if (set) client.set_waiting(false);
    }
  } waiting{*this};

  // Bounded: every pass either returns or waits until the deadline draws closer.
  for (std::int32_t attempts = 1;; ++attempts) {
    refresh_links();
    const Nanos attempt_sent_ns = run_.clock().now_ns();
    AcquireAttempt attempt;
    try {
      attempt = variant.try_acquire(lock_context, key, ttl_ms);
    } catch (const ClientCrashed&) {
      if (faults != nullptr && faults->crashed_waiting) {
        // The attempt was answered busy before the crash: the acquire definitely failed.
        Event& failed = log_.record(EventType::kFail, Op::kAcquire, logical_key);
        failed.error = ErrorKind::kCrashed;
        failed.acquire().attempts = attempts;
      }
      // Otherwise the acquire stays without completion: the checker treats it as "may hold".
      crash();
      return AcquireStatus::kCrashed;
    }
    switch (attempt.outcome) {
      case AcquireAttempt::Outcome::kAcquired: {
        // ok first, then enter: both after the reply was read (the conservative point).
        Event& ok = log_.record(EventType::kOk, Op::kAcquire, logical_key);
        ok.token = log_.intern(attempt.token);
        ok.acquire().attempts = attempts;
        ok.acquire().sent_ns = attempt_sent_ns;
        ok.acquire().fencing = attempt.fencing;
        if (attempt.validity_ms >= 0) {
          ok.acquire().validity_ms =
              static_cast<std::int32_t>(std::min<std::int64_t>(attempt.validity_ms, INT32_MAX));
        }
        if (!attempt.granted_on.empty() && run_.request().topology != nullptr) {
          ok.acquire().granted = server_grant(attempt.granted_on, run_.request().topology->size());
        }
        if (variant.uses_ttl()) ok.ttl_ms = static_cast<std::int32_t>(ttl_ms);
        log_.record(EventType::kOk, Op::kEnter, logical_key);
        holding_ = true;
        held_key_ = logical_key;
        held_token_ = std::move(attempt.token);
        held_fencing_ = attempt.fencing;
        set_state(true, false);
        if (variant.renews()) start_renewal(logical_key, held_token_);
        return AcquireStatus::kAcquired;
      }
      case AcquireAttempt::Outcome::kError: {
        const bool maybe = attempt.error.indeterminate();
        Event& failed =
            log_.record(maybe ? EventType::kInfo : EventType::kFail, Op::kAcquire, logical_key);
        set_error(log_, failed, attempt.error);
        failed.acquire().attempts = attempts;
        // Never reuse a connection after an I/O error.
        if (needs_reconnect(attempt.error)) connection_->reconnect();
        return maybe ? AcquireStatus::kIndeterminate : AcquireStatus::kFailed;
      }
      case AcquireAttempt::Outcome::kBusy:
        if (!waiting.set) {
          waiting.set = true;
          set_waiting(true);
        }
        break;
    }
    const Nanos now = run_.clock().now_ns();
    const bool stopping = run_.should_stop();
    if (now >= deadline || stopping) {
      Event& failed = log_.record(EventType::kFail, Op::kAcquire, logical_key);
      failed.acquire().attempts = attempts;
      failed.error = stopping ? ErrorKind::kStopped : ErrorKind::kGaveUp;
      return stopping ? AcquireStatus::kStopped : AcquireStatus::kFailed;
    }
    wait_->wait([this](Nanos d) { return run_.pause(d); }, key, static_cast<int>(attempts),
                deadline - now);
  }
}

bool ThreadClient::release(bool unsaved_token, CallFaults* faults) {
  LOCKSIM_ASSERT(holding_ && !crashed_);
  const LockVariant& variant = run_.request().variant;
  stop_renewal();
  // exit before the release request is sent (the conservative point).
  log_.record(EventType::kOk, Op::kExit, held_key_);
  set_state(false, false);
  // Doc C's bug: the value stored at acquire time was never kept, so the release sends another.
  const std::string token = unsaved_token ? std::string() : held_token_;
  log_.record(EventType::kInvoke, Op::kRelease, held_key_).token = log_.intern(token);
  refresh_links();
  const std::string full_key = run_.full_key(held_key_);
  ReleaseResult result;
  try {
    result = variant.release(context(faults), full_key, token);
  } catch (const ClientCrashed&) {
    crash();
    return false;
  }
  if (result.outcome == ReleaseResult::Outcome::kError) {
    const bool maybe = result.error.indeterminate();
    Event& failed =
        log_.record(maybe ? EventType::kInfo : EventType::kFail, Op::kRelease, held_key_);
    set_error(log_, failed, result.error);
    if (needs_reconnect(result.error)) connection_->reconnect();
  } else {
    log_.record(EventType::kOk, Op::kRelease, held_key_).release().deleted =
        static_cast<std::int32_t>(std::clamp<std::int64_t>(result.deleted, 0, INT32_MAX));
    if (result.outcome == ReleaseResult::Outcome::kReleased)
      wait_->on_release(*connection_, full_key);
  }
  holding_ = false;
  held_token_.clear();
  held_fencing_ = -1;
  return true;
}

void ThreadClient::crash() {
  LOCKSIM_ASSERT(!crashed_);
  stop_renewal();  // a dead process renews nothing
  log_.record(EventType::kInfo, Op::kCrash, held_key_);
  crashed_ = true;
  holding_ = false;
  // The server sees the connection close, as it would when a process dies.
  connection_->close();
  close_observer();
  set_state(false, true);
}

void ThreadClient::freeze() {
  // A stall lands between two commands: a renewal already under way finishes first.
  std::unique_lock<std::mutex> lock(renewal_mutex_);
  frozen_ = true;
  renewal_wake_.wait(lock, [this] { return !renewing_; });
}

void ThreadClient::thaw() {
  // The nemesis records the pause's end before this, so a renewal that fell due while frozen is
  // always stamped after the window, never inside it.
  {
    std::lock_guard<std::mutex> lock(renewal_mutex_);
    frozen_ = false;
  }
  renewal_wake_.notify_all();
}

void ThreadClient::lose_lock() {
  stop_renewal();
  log_.record(EventType::kInfo, Op::kFault, held_key_).fault().name = log_.intern("lose_lock");
}

void ThreadClient::start_renewal(const std::string& logical_key, const std::string& token) {
  LOCKSIM_ASSERT(renewal_log_ != nullptr && !renewal_.joinable());
  renewal_stop_ = false;
  const LockConfig& config = run_.scenario().lock;
  // The loader resolves the default (ttl_ms / 3) once; the driver takes what it says.
  LOCKSIM_ASSERT(config.renew_period_ms > 0);
  const Nanos period_ns = ms_to_ns(config.renew_period_ms);
  renewal_ = std::thread([this, logical_key, token, period_ns, ttl_ms = config.ttl_ms,
                          key = run_.full_key(logical_key)] {
    // Its own connection and random stream: it runs beside the client's thread.
    Connection connection(link_endpoint(), ConnectionOptions{});
    Rng rng = rng_.fork(1000);
    LockContext lock_context{connection, rng, {}, name_, run_.scenario().lock.queue_timeout_ms};
    std::unique_lock<std::mutex> lock(renewal_mutex_);
    // Each renewal falls due a period after the previous one returned (a deadline, as the
    // worker's): a freeze does not move it, and one that fell due meanwhile runs on thaw.
    auto due = std::chrono::steady_clock::now() + std::chrono::nanoseconds(period_ns);
    // Bounded by the hold: stop_renewal() ends it, and so does the run's stop.
    while (!renewal_stop_ && !run_.should_stop()) {
      renewal_wake_.wait_until(lock, due, [this] { return renewal_stop_; });
      // A frozen client renews nothing; the renewal that fell due meanwhile runs on thaw.
      renewal_wake_.wait(lock, [this] { return !frozen_ || renewal_stop_; });
      if (renewal_stop_ || run_.should_stop()) break;
      renewing_ = true;
      lock.unlock();
      Event& invoke = renewal_log_->record(EventType::kInvoke, Op::kExtend, logical_key);
      invoke.ttl_ms = static_cast<std::int32_t>(ttl_ms);
      invoke.token = renewal_log_->intern(token);
      if (connection.broken()) connection.reconnect();
      const ExtendResult result = run_.request().variant.extend(lock_context, key, token, ttl_ms);
      due = std::chrono::steady_clock::now() + std::chrono::nanoseconds(period_ns);
      if (result.outcome == ExtendResult::Outcome::kError) {
        Event& failed =
            renewal_log_->record(result.error.indeterminate() ? EventType::kInfo : EventType::kFail,
                                 Op::kExtend, logical_key);
        set_error(*renewal_log_, failed, result.error);
      } else {
        Event& ok = renewal_log_->record(EventType::kOk, Op::kExtend, logical_key);
        ok.extend().extended = result.outcome == ExtendResult::Outcome::kExtended ? 1 : 0;
        ok.ttl_ms = static_cast<std::int32_t>(ttl_ms);
      }
      {
        std::lock_guard<std::mutex> state(run_.mutex);
        ++run_.renewals[static_cast<std::size_t>(index_)];
      }
      run_.changed.notify_all();
      lock.lock();
      renewing_ = false;
      renewal_wake_.notify_all();  // a freeze may wait for this call to end
    }
  });
}

void ThreadClient::stop_renewal() {
  if (!renewal_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(renewal_mutex_);
    renewal_stop_ = true;
  }
  renewal_wake_.notify_all();
  renewal_.join();
}

void ThreadClient::resource_read(const std::string& record_id) {
  const ResourceConfig& resource = run_.scenario().resource;
  const std::string key = run_.full_key(resource.name);
  const bool counter = resource.counts();
  RedisResult result = counter ? connection_->command({"GET", key})
                               : connection_->command({"HEXISTS", key, record_id});
  std::int64_t value = 0;
  if (result.ok()) {
    if (!counter) {
      value = result.reply.integer;
    } else if (!result.reply.is_nil()) {
      const std::string& text = result.reply.str;
      const auto parsed = std::from_chars(text.data(), text.data() + text.size(), value);
      if (parsed.ec != std::errc() || parsed.ptr != text.data() + text.size()) {
        result.error = RedisErrorKind::kUnexpectedReply;
        result.message = "the counter holds \"" + text.substr(0, 40) + "\", not an integer";
      }
    }
  }
  // Recorded when the reply was read, as every completion is.
  Event& event =
      log_.record(result.ok() ? EventType::kOk : EventType::kFail, Op::kRead, resource.name);
  if (!counter) event.resource().record = log_.intern(record_id);
  if (!result.ok()) {
    set_error(log_, event, result);
    last_read_ = -1;
  } else {
    last_read_ = value;
    event.resource().value = value;
  }
}

void ThreadClient::resource_write(const std::string& record_id) {
  const ResourceConfig& resource = run_.scenario().resource;
  const std::string key = run_.full_key(resource.name);
  const bool counter = resource.counts();
  const bool fenced = resource.kind == ResourceConfig::Kind::kFencedCounter;
  // The application logic of the documents: sell only if stock was left; create only if the
  // record was not found. Nothing is written otherwise.
  if (counter ? last_read_ <= 0 : last_read_ != 0) return;
  const std::int64_t value = counter ? last_read_ - 1 : 1;
  RedisResult result;
  if (fenced) {
    // The store is shown the fencing number of the grant this client holds (-1: none).
    result = fenced_store_write(*connection_, key, value, held_fencing_);
  } else if (counter) {
    result = connection_->command({"SET", key, std::to_string(value)});
  } else {
    result = connection_->command({"HSET", key, record_id, name_});
  }
  const bool refused = fenced && result.ok() && result.reply.is_integer(0);
  Event& event = log_.record(result.ok() && !refused ? EventType::kOk : EventType::kFail,
                             Op::kWrite, resource.name);
  if (!counter) event.resource().record = log_.intern(record_id);
  if (refused) {
    event.error = ErrorKind::kFenced;
    event.message = log_.intern("fencing number " + std::to_string(held_fencing_) +
                                " is lower than one the store has accepted");
  } else if (!result.ok()) {
    set_error(log_, event, result);
  }
  event.resource().value = value;
  event.resource().base = last_read_;
  event.resource().has_base = true;
  if (fenced) event.resource().fencing = held_fencing_;
  last_read_ = -1;
}

}  // namespace locksim::driver_internal
