#include "sim/driver/client.h"

#include <algorithm>

#include "sim/client/acquire.h"
#include "sim/core/assert.h"
#include "sim/driver/conditions.h"
#include "sim/driver/resource.h"
#include "sim/fault/fault.h"
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

ConnectionOptions client_connection(const LockConfig& lock) {
  ConnectionOptions options;
  options.command_timeout = std::chrono::milliseconds(lock.reply_timeout_ms);
  return options;
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

const std::string& DriverClient::lock_key(const std::string& logical) {
  if (lock_key_full_.empty() || logical != lock_key_logical_) {
    lock_key_logical_ = logical;
    lock_key_full_ = run_.full_key(logical);
  }
  return lock_key_full_;
}

void DriverClient::extend(CallFaults* /*faults*/) {
  // The loader sends extend steps to client processes only (ProcessClient overrides this).
  LOCKSIM_ASSERT(!"an extend step reached a client that is not a process");
}

void DriverClient::record_work(std::int64_t planned_ms) {
  log_.record(EventType::kInfo, Op::kWork, held_key_).work().planned_ms =
      static_cast<std::int32_t>(std::min<std::int64_t>(planned_ms, INT32_MAX));
}

ThreadClient::ThreadClient(RunContext& run, int index)
    : DriverClient(run, index),
      rng_(run.plan().clients().at(static_cast<std::size_t>(index)).seed),
      wait_(make_wait_strategy(run.scenario().lock.wait, run.runtime().dial(link_endpoint()),
                               rng_.fork(kWaitStream), run.clock().base())),
      // Its own connection: it runs beside the client's thread. Dialled when it starts, to the
      // link of the primary of that moment (a failover may have moved it).
      watchdog_(run.request().variant, run.clock().base(), run.runtime().threads(), [this] {
        return run_.connect(link_endpoint(), client_connection(run_.scenario().lock));
      }) {
  if (run.request().variant.renews()) {
    renewal_log_ = &run.recorder().add_log(static_cast<std::size_t>(index));
  }
}

ThreadClient::~ThreadClient() { stop_renewal(); }

std::string ThreadClient::connect() {
  connection_.emplace(run_.connect(link_endpoint(), client_connection(run_.scenario().lock)));
  if (connection_->broken()) return connection_->last_error().describe();
  const Topology* topology = run_.request().topology;
  if (topology != nullptr) primary_generation_ = topology->primary_generation();
  if (topology != nullptr && run_.request().variant.multi_server()) {
    const auto timeout = node_timeout(run_.scenario().lock.ttl_ms);
    for (std::size_t server = 0; server < topology->size(); ++server) {
      // A node down at the start is not an error: the variant counts it as not granting.
      nodes_.push_back(run_.connect(run_.link_endpoint(static_cast<std::size_t>(index_), server),
                                    ConnectionOptions{timeout, timeout}));
      node_pointers_.push_back(nodes_.back().get());
    }
  }
  return "";
}

void DriverClient::pause_inside_call(const CallFaults& faults) {
  const auto record = [this](FaultPhase phase) {
    Event& event = log_.record(EventType::kInfo, Op::kFault, "");
    event.fault().kind = FaultKind::kPause;
    event.fault().phase = phase;
  };
  record(FaultPhase::kStart);
  if (!wait_for_conditions(run_, observer(), faults.pause_until, faults.pause_max_ns) &&
      !run_.should_stop()) {
    run_.note(name_ + ": paused the full " + std::to_string(faults.pause_max_ns / kNanosPerMilli) +
              " ms at " + faults.pause_at + "; never saw " +
              describe_conditions(faults.pause_until));
  }
  record(FaultPhase::kEnd);
}

void ThreadClient::refresh_links() {
  const Topology* topology = run_.request().topology;
  const bool changed =
      topology != nullptr && topology->primary_generation() != primary_generation_;
  if (changed) {
    primary_generation_ = topology->primary_generation();
    // Replaced behind the same object: the call under way holds a reference to it.
    connection_->replace(run_.connect(link_endpoint(), client_connection(run_.scenario().lock)));
  }
  if (connection_->broken()) connection_->reconnect();
  for (const auto& node : nodes_) {
    if (changed || node->broken()) node->reconnect();
  }
}

Connection& DriverClient::observer() {
  if (!observer_ || observer_->broken()) observer_ = run_.connect(run_.request().endpoint);
  return *observer_;
}

void DriverClient::set_state(bool inside, bool crashed) {
  {
    std::lock_guard<std::mutex> lock(run_.mutex);
    run_.inside[static_cast<std::size_t>(index_)] = inside;
    run_.crashed[static_cast<std::size_t>(index_)] = crashed;
  }
  run_.notify_changed();
}

void DriverClient::set_waiting(bool waiting) {
  {
    std::lock_guard<std::mutex> lock(run_.mutex);
    run_.waiting[static_cast<std::size_t>(index_)] = waiting;
  }
  run_.notify_changed();
}

LockContext ThreadClient::context(CallFaults* faults) {
  LockContext context{.connection = *connection_,
                      .rng = rng_,
                      .waiter_id = name_,
                      .queue_timeout_ms = run_.scenario().lock.queue_timeout_ms,
                      .nodes = node_pointers_,
                      .clock = run_.clock().base()};
  if (faults && (!faults->crash_at.empty() || !faults->pause_at.empty())) {
    context.checkpoint = [this, faults](std::string_view point, CallState state) {
      if (point == faults->crash_at) {
        faults->reached = true;
        faults->crashed_waiting = state == CallState::kBusy;
        throw ClientCrashed{};
      }
      if (point == faults->pause_at) {
        faults->reached = true;
        pause_inside_call(*faults);
      }
    };
  }
  return context;
}

AcquireStatus record_acquire_end(const RunContext& run, ClientLog& log,
                                 const std::string& logical_key, const AcquireEnd& end) {
  const LockVariant& variant = run.request().variant;
  const std::int64_t ttl_ms = run.scenario().lock.ttl_ms;
  const AcquireAttempt& attempt = end.attempt;
  switch (end.kind) {
    case AcquireEnd::Kind::kAcquired: {
      // ok first, then enter: both after the reply was read (the conservative point).
      Event& ok = log.record(EventType::kOk, Op::kAcquire, logical_key);
      ok.token = log.intern(attempt.token);
      ok.acquire().attempts = end.attempts;
      ok.acquire().sent_ns = end.sent_ns;
      ok.acquire().fencing = attempt.fencing;
      if (attempt.validity_ms >= 0) {
        ok.acquire().validity_ms =
            static_cast<std::int32_t>(std::min<std::int64_t>(attempt.validity_ms, INT32_MAX));
      }
      if (!attempt.granted_on.empty() && run.request().topology != nullptr) {
        ok.acquire().granted = server_grant(attempt.granted_on, run.request().topology->size());
      }
      if (variant.uses_ttl()) ok.ttl_ms = static_cast<std::int32_t>(ttl_ms);
      log.record(EventType::kOk, Op::kEnter, logical_key);
      return AcquireStatus::kAcquired;
    }
    case AcquireEnd::Kind::kError: {
      const bool maybe = attempt.error.indeterminate();
      Event& failed =
          log.record(maybe ? EventType::kInfo : EventType::kFail, Op::kAcquire, logical_key);
      set_error(log, failed, attempt.error);
      failed.acquire().attempts = end.attempts;
      return maybe ? AcquireStatus::kIndeterminate : AcquireStatus::kFailed;
    }
    case AcquireEnd::Kind::kGaveUp:
    case AcquireEnd::Kind::kStopped:
      break;
  }
  const bool stopping = end.kind == AcquireEnd::Kind::kStopped;
  Event& failed = log.record(EventType::kFail, Op::kAcquire, logical_key);
  failed.acquire().attempts = end.attempts;
  failed.error = stopping ? ErrorKind::kStopped : ErrorKind::kGaveUp;
  return stopping ? AcquireStatus::kStopped : AcquireStatus::kFailed;
}

void record_release_end(ClientLog& log, const std::string& logical_key,
                        const ReleaseResult& result) {
  if (result.outcome == ReleaseResult::Outcome::kError) {
    const bool maybe = result.error.indeterminate();
    Event& failed =
        log.record(maybe ? EventType::kInfo : EventType::kFail, Op::kRelease, logical_key);
    set_error(log, failed, result.error);
  } else {
    log.record(EventType::kOk, Op::kRelease, logical_key).release().deleted =
        static_cast<std::int32_t>(std::clamp<std::int64_t>(result.deleted, 0, INT32_MAX));
  }
}

// ThreadClient::Host: the acquire loop's host on the client's own thread: every attempt and
// wait blocks, so the loop runs inline.
class ThreadClient::Host final : public AcquireHost {
 public:
  Host(ThreadClient& client, const LockContext& context, const std::string& key)
      : client_(client), context_(context), key_(key) {}
  ~Host() override {
    // Once refused, the client was waiting for the lock until the acquire returned.
    if (waiting_) client_.set_waiting(false);
  }

  void prepare() override { client_.refresh_links(); }
  const RedisResult* unreachable() override {
    // A lock over several servers counts a refused node as not granting (its nodes_).
    if (!client_.nodes_.empty()) return nullptr;
    const Connection& connection = *client_.connection_;
    return connection.broken() && connection.last_error().error == RedisErrorKind::kRefused
               ? &connection.last_error()
               : nullptr;
  }
  Task<AcquireAttempt> attempt() override {
    ++attempts_;
    co_return client_.run_.request().variant.try_acquire(context_, key_,
                                                         client_.run_.scenario().lock.ttl_ms);
  }
  Ask<bool> wait(int failed_attempts, Nanos max_ns) override {
    bool full = true;
    client_.wait_->wait([this, &full](Nanos d) { return full = client_.run_.pause(d); }, key_,
                        failed_attempts, max_ns);
    return Ask<bool>(full);
  }
  Nanos now() override { return client_.run_.clock().now_ns(); }
  bool stopping() override { return client_.run_.should_stop(); }
  void busy() override {
    waiting_ = true;
    client_.set_waiting(true);
  }
  int attempts() const { return attempts_; }

 private:
  ThreadClient& client_;
  const LockContext& context_;
  const std::string& key_;
  int attempts_ = 0;
  bool waiting_ = false;
};

AcquireStatus ThreadClient::acquire(const std::string& logical_key, std::int64_t timeout_ms,
                                    CallFaults* faults, Nanos intended_ns) {
  LOCKSIM_ASSERT(!holding_ && !crashed_);
  const LockVariant& variant = run_.request().variant;
  const std::int64_t ttl_ms = run_.scenario().lock.ttl_ms;
  const std::string& key = lock_key(logical_key);
  const LockContext lock_context = context(faults);

  Event& invoke = log_.record(EventType::kInvoke, Op::kAcquire, logical_key);
  if (variant.uses_ttl()) invoke.ttl_ms = static_cast<std::int32_t>(ttl_ms);
  if (intended_ns >= 0) invoke.schedule().intended_ns = std::min(intended_ns, invoke.time_ns);
  const Nanos deadline = invoke.time_ns + ms_to_ns(timeout_ms);

  // The host lives until the acquire returns: a client once refused is waiting for the lock
  // until then (its destructor says it no longer is).
  Host host(*this, lock_context, key);
  AcquireEnd end;
  try {
    end = run_inline(acquire_loop(host, deadline));
  } catch (const ClientCrashed&) {
    if (faults != nullptr && faults->crashed_waiting) {
      // The attempt was answered busy before the crash: the acquire definitely failed.
      Event& failed = log_.record(EventType::kFail, Op::kAcquire, logical_key);
      failed.error = ErrorKind::kCrashed;
      failed.acquire().attempts = host.attempts();
    }
    // Otherwise the acquire stays without completion: the checker treats it as "may hold".
    crash();
    return AcquireStatus::kCrashed;
  }
  const AcquireStatus status = record_acquire_end(run_, log_, logical_key, end);
  if (end.kind == AcquireEnd::Kind::kError && needs_reconnect(end.attempt.error)) {
    connection_->reconnect();  // never reuse a connection after an I/O error
  }
  if (status != AcquireStatus::kAcquired) return status;
  holding_ = true;
  held_key_ = logical_key;
  held_token_ = std::move(end.attempt.token);
  held_fencing_ = end.attempt.fencing;
  set_state(true, false);
  if (variant.renews()) start_renewal(logical_key, held_token_);
  return AcquireStatus::kAcquired;
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
  const std::string& full_key = lock_key(held_key_);
  ReleaseResult result;
  try {
    result = variant.release(context(faults), full_key, token);
  } catch (const ClientCrashed&) {
    crash();
    return false;
  }
  record_release_end(log_, held_key_, result);
  if (result.outcome == ReleaseResult::Outcome::kError && needs_reconnect(result.error)) {
    connection_->reconnect();
  }
  if (result.outcome == ReleaseResult::Outcome::kReleased) {
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
  watchdog_.freeze();
}

void ThreadClient::thaw() {
  // The nemesis records the pause's end before this, so a renewal that fell due while frozen is
  // always stamped after the window, never inside it.
  watchdog_.thaw();
}

void ThreadClient::lose_lock() {
  stop_renewal();
  log_.record(EventType::kInfo, Op::kFault, held_key_).fault().kind = FaultKind::kLoseLock;
}

void ThreadClient::start_renewal(const std::string& logical_key, const std::string& token) {
  LOCKSIM_ASSERT(renewal_log_ != nullptr);
  const LockConfig& config = run_.scenario().lock;
  // The loader resolves the default (ttl_ms / 3) once; the driver takes what it says.
  LOCKSIM_ASSERT(config.renew_period_ms > 0);
  Watchdog::Lease lease{.key = run_.full_key(logical_key),
                        .token = token,
                        .ttl_ms = config.ttl_ms,
                        .period_ns = ms_to_ns(config.renew_period_ms),
                        .rng = rng_.fork(1000),
                        .waiter_id = name_,
                        .queue_timeout_ms = config.queue_timeout_ms};
  Watchdog::Hooks hooks;
  hooks.invoke = [this, logical_key, token, ttl_ms = config.ttl_ms] {
    Event& invoke = renewal_log_->record(EventType::kInvoke, Op::kExtend, logical_key);
    invoke.ttl_ms = static_cast<std::int32_t>(ttl_ms);
    invoke.token = renewal_log_->intern(token);
  };
  hooks.completed = [this, logical_key, ttl_ms = config.ttl_ms](const ExtendResult& result) {
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
    run_.notify_changed();
  };
  // Bounded by the hold: stop_renewal() ends it, and so does the run's stop.
  hooks.stop = [this] { return run_.should_stop(); };
  watchdog_.start(std::move(lease), std::move(hooks));
}

void ThreadClient::stop_renewal() { watchdog_.stop(); }

void ThreadClient::resource_read(const std::string& record_id) {
  const ResourceConfig& resource = run_.scenario().resource;
  const ResourceRead read =
      read_resource(*connection_, resource.kind, run_.full_key(resource.name), record_id);
  // Recorded when the reply was read, as every completion is.
  Event& event =
      log_.record(read.result.ok() ? EventType::kOk : EventType::kFail, Op::kRead, resource.name);
  if (!resource.counts()) event.resource().record = log_.intern(record_id);
  if (!read.result.ok()) {
    set_error(log_, event, read.result);
    last_read_ = -1;
  } else {
    last_read_ = read.value;
    event.resource().value = read.value;
  }
}

void ThreadClient::resource_write(const std::string& record_id) {
  const ResourceConfig& resource = run_.scenario().resource;
  const bool counter = resource.counts();
  const bool fenced = resource.kind == ResourceConfig::Kind::kFencedCounter;
  // The application logic of the documents: sell only if stock was left; create only if the
  // record was not found. Nothing is written otherwise.
  if (counter ? last_read_ <= 0 : last_read_ != 0) return;
  const std::int64_t value = counter ? last_read_ - 1 : 1;
  // A fenced store is shown the fencing number of the grant this client holds (-1: none).
  const ResourceWrite write =
      write_resource(*connection_, resource.kind, run_.full_key(resource.name), record_id, value,
                     name_, held_fencing_);
  Event& event =
      log_.record(write.result.ok() && !write.refused ? EventType::kOk : EventType::kFail,
                  Op::kWrite, resource.name);
  if (!counter) event.resource().record = log_.intern(record_id);
  if (write.refused) {
    event.error = ErrorKind::kFenced;
    event.message = log_.intern(write.refusal);
  } else if (!write.result.ok()) {
    set_error(log_, event, write.result);
  }
  event.resource().value = value;
  event.resource().base = last_read_;
  event.resource().has_base = true;
  if (fenced) event.resource().fencing = held_fencing_;
  last_read_ = -1;
}

}  // namespace locksim::driver_internal
