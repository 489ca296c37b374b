#include "sim/host/client.h"

#include <algorithm>

#include "sim/client/acquire.h"
#include "sim/client/release.h"
#include "sim/core/assert.h"
#include "sim/run/conditions.h"
#include "sim/client/resource_call.h"
#include "sim/fault/fault.h"
#include "sim/topology/topology.h"

namespace locksim::host {

// ClientCrashed: thrown from a checkpoint to stop the client in the middle of a variant call,
// as a process dying between two commands would. Variants let it propagate. (Not in an anonymous
// namespace: a coroutine that catches it keeps it in its frame.)
struct ClientCrashed {};

void record_renewal_end(RunContext& run, RenewalRecord& record, int index,
                        const std::string& logical_key, const ExtendResult& result) {
  record.end(logical_key, outcome_of(result));
  {
    std::lock_guard<std::mutex> state(run.mutex);
    ++run.renewals[static_cast<std::size_t>(index)];
  }
  run.notify_changed();
}

std::chrono::milliseconds node_timeout(std::int64_t ttl_ms) {
  return std::chrono::milliseconds(std::clamp<std::int64_t>(ttl_ms / 10, 50, 1000));
}

ConnectionOptions client_connection(const LockConfig& lock) {
  ConnectionOptions options;
  options.command_timeout = std::chrono::milliseconds(lock.reply_timeout_ms);
  return options;
}

ClientTerms client_record_terms(const RunContext& run) {
  const Topology* topology = run.request().topology;
  return client_terms(run.request().variant, run.scenario().lock.ttl_ms,
                      topology != nullptr ? topology->quorum_servers() : 0);
}

ClientRecord::ResourceTerms resource_terms(const RunContext& run) {
  const ResourceConfig& resource = run.scenario().resource;
  return ClientRecord::ResourceTerms{resource.name, resource.counts(),
                                     resource.kind == ResourceConfig::Kind::kFencedCounter};
}

DriverClient::DriverClient(RunContext& run, int index)
    : run_(run),
      index_(index),
      name_(run.scenario().clients.at(static_cast<std::size_t>(index))),
      log_(run.recorder().log(static_cast<std::size_t>(index))),
      record_(log_, client_record_terms(run)) {}

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


void DriverClient::record_work(std::int64_t planned_ms) {
  record_.work(planned_ms);
}

ThreadClient::ThreadClient(RunContext& run, int index)
    : DriverClient(run, index),
      rng_(run.plan().clients().at(static_cast<std::size_t>(index)).seed),
      // The waiter's own connection (notify's BLPOP, pubsub's SUBSCRIBE) is the run's: on a
      // Redis Cluster a slot-aware one, so that a BLPOP reaches the primary of its key's slot.
      wait_(make_wait_strategy(
          run.scenario().lock.wait,
          [&run, endpoint = link_endpoint()](const ConnectionOptions& options) {
            return run.connect(endpoint, options);
          },
          rng_.fork(kWaitStream), run.clock().base())),
      // Its own connection: it runs beside the client's thread. Dialled when it starts, to the
      // link of the primary of that moment (a failover may have moved it).
      watchdog_(run.request().variant, run.clock().base(), run.runtime().threads(), [this] {
        return run_.connect(link_endpoint(), client_connection(run_.scenario().lock));
      }) {
  if (run.request().variant.renews()) {
    renewal_record_.emplace(run.recorder().add_log(static_cast<std::size_t>(index)),
                            run.scenario().lock.ttl_ms);
  }
}

ThreadClient::~ThreadClient() { stop_renewal(); }

std::string ThreadClient::connect() {
  connection_.emplace(
      run_.connect(link_endpoint(), client_connection(run_.scenario().lock), &log_));
  if (connection_->broken()) return connection_->last_error().describe();
  const Topology* topology = run_.request().topology;
  if (topology != nullptr) primary_generation_ = topology->primary_generation();
  if (topology != nullptr && run_.request().variant.multi_server()) {
    const auto timeout = node_timeout(run_.scenario().lock.ttl_ms);
    for (std::size_t server = 0; server < topology->quorum_servers(); ++server) {
      // A node down at the start is not an error: the variant counts it as not granting. On a
      // cluster each primary is asked through a plain connection (a MOVED answer is an error
      // reply, which the variant counts as not granting), as Redlock's users hand it one client
      // per primary.
      const Endpoint node = run_.link_endpoint(static_cast<std::size_t>(index_), server);
      const ConnectionOptions options{timeout, timeout};
      nodes_.push_back(topology->cluster() ? run_.runtime().connect(node, options)
                                           : run_.connect(node, options));
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
    connection_->replace(
        run_.connect(link_endpoint(), client_connection(run_.scenario().lock), &log_));
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
                      .clock = run_.clock().base(),
                      .waiter_id = name_,
                      .queue_timeout_ms = run_.scenario().lock.queue_timeout_ms,
                      .nodes = node_pointers_,
                      .permits = run_.scenario().lock.permits,
                      .clock_offset_ms = run_.scenario().clock_offset_ms(name_),
                      .clock_drift_ms_per_s = run_.scenario().clock_drift_ms_per_s(name_),
                      .clock_drift_origin_ns = run_.clock().at(0),
                      .ttl_ms = run_.scenario().lock.ttl_ms,
                      .read = record_.acquire_mode() == LockMode::kRead};
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
  Task<void> attempt(AcquireAttempt& out) override {
    ++attempts_;
    out = client_.run_.request().variant.try_acquire(context_, key_,
                                                     client_.run_.scenario().lock.ttl_ms);
    co_return;
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
  LOCKSIM_ASSERT(
      (!holding() || run_.request().variant.reentrant() || run_.request().variant.read_write()) &&
      !crashed());
  const bool nested = holding();
  const std::string& key = lock_key(logical_key);
  // The attempts' command is kept from one attempt to the next (LockContext::attempt_command).
  std::optional<OneCommand> attempt_command;
  std::string acquisition_token;  // LockContext::acquisition_token
  LockContext lock_context = context(faults);
  lock_context.attempt_command = &attempt_command;
  lock_context.acquisition_token = &acquisition_token;
  const Nanos deadline = record_.invoke_acquire(logical_key, intended_ns) + ms_to_ns(timeout_ms);

  // The host lives until the acquire returns: a client once refused is waiting for the lock
  // until then (its destructor says it no longer is).
  Host host(*this, lock_context, key);
  AcquireEnd end;
  try {
    end = run_inline(acquire_loop(host, deadline));
  } catch (const ClientCrashed&) {
    record_.crashed_in_acquire(faults != nullptr && faults->crashed_waiting, host.attempts());
    crash();
    return AcquireStatus::kCrashed;
  }
  const bool reconnect = end.kind == AcquireEnd::Kind::kError && needs_reconnect(end.attempt.error);
  const AcquireStatus status = record_.end_acquire(outcome_of(std::move(end)));
  if (reconnect) connection_->reconnect();  // never reuse a connection after an I/O error
  if (status != AcquireStatus::kAcquired || nested) return status;
  set_state(true, false);
  if (run_.request().variant.renews()) start_renewal(logical_key, record_.held_token());
  return AcquireStatus::kAcquired;
}

// ThreadClient::Release: the release's host on the client's own thread: it blocks, so
// release_call and carry_out_release run inline; a crash fault thrown at one of the variant's
// checkpoints ends the client.
class ThreadClient::Release final : public ReleaseHost, public ReleaseIo {
 public:
  Release(ThreadClient& client, CallFaults* faults) : client_(client), faults_(faults) {}

  Task<void> end_renewal() override {
    client_.stop_renewal();
    co_return;
  }
  void outside() override { client_.set_state(false, false); }
  Task<std::optional<ReleaseOutcome>> release_with(std::string token) override {
    client_.refresh_links();
    try {
      const ReleaseResult result = co_await carry_out_release(
          *this, client_.lock_key(client_.record_.held_key()), std::move(token));
      co_return outcome_of(result);
    } catch (const ClientCrashed&) {
      client_.crash();
      co_return std::nullopt;
    }
  }

  Task<ReleaseResult> send_release(const std::string& key, const std::string& token) override {
    co_return client_.run_.request().variant.release(client_.context(faults_), key, token);
  }
  void reconnect() override { client_.connection_->reconnect(); }
  Task<void> signal_release(const std::string& key) override {
    client_.wait_->on_release(*client_.connection_, key);
    co_return;
  }

 private:
  ThreadClient& client_;
  CallFaults* faults_;
};

// ThreadClient::Extend: an extend step's host on the client's own thread (it blocks).
class ThreadClient::Extend final : public ExtendHost {
 public:
  Extend(ThreadClient& client, CallFaults* faults) : client_(client), faults_(faults) {}
  Task<std::optional<ExtendOutcome>> extend_with(std::string key, std::string token) override {
    client_.refresh_links();
    try {
      const ExtendResult result =
          client_.run_.request().variant.extend(client_.context(faults_), client_.lock_key(key),
                                                token, client_.run_.scenario().lock.ttl_ms);
      if (result.outcome == ExtendResult::Outcome::kError && needs_reconnect(result.error)) {
        client_.connection_->reconnect();
      }
      co_return outcome_of(result);
    } catch (const ClientCrashed&) {
      client_.crash();
      co_return std::nullopt;
    }
  }

 private:
  ThreadClient& client_;
  CallFaults* faults_;
};

void ThreadClient::extend(CallFaults* faults) {
  LOCKSIM_ASSERT(holding() && !crashed());
  Extend host(*this, faults);
  run_inline(extend_call(host, record_));
}

bool ThreadClient::release(bool unsaved_token, CallFaults* faults) {
  LOCKSIM_ASSERT((holding() || record_.unheld_release()) && !crashed());
  Release host(*this, faults);
  return run_inline(release_call(host, record_, unsaved_token));
}

void ThreadClient::crash() {
  stop_renewal();  // a dead process renews nothing
  record_.crash();
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

void ThreadClient::start_renewal(const std::string& logical_key, const std::string& token) {
  LOCKSIM_ASSERT(renewal_record_.has_value());
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
  hooks.invoke = [this, logical_key, token] { renewal_record_->invoke(logical_key, token); };
  hooks.completed = [this, logical_key](const ExtendResult& result) {
    record_renewal_end(run_, *renewal_record_, index_, logical_key, result);
  };
  // Bounded by the hold: stop_renewal() ends it, and so does the run's stop.
  hooks.stop = [this] { return run_.should_stop(); };
  watchdog_.start(std::move(lease), std::move(hooks));
}

void ThreadClient::stop_renewal() { watchdog_.stop(); }

// ThreadClient::Resource: the resource's host on the client's own connection: it blocks.
class ThreadClient::Resource final : public ResourceHost {
 public:
  explicit Resource(ThreadClient& client)
      : client_(client),
        resource_(client.run_.scenario().resource),
        key_(client.run_.full_key(resource_.name)) {}
  Task<ResourceReadOutcome> read_resource(const std::string& record_id) override {
    co_return outcome_of(locksim::read_resource(*client_.connection_, resource_.kind, key_,
                                                record_id));
  }
  Task<ResourceWriteOutcome> write_resource(const std::string& record_id, std::int64_t value,
                                            std::int64_t fencing) override {
    co_return outcome_of(locksim::write_resource(*client_.connection_, resource_.kind, key_,
                                                 record_id, value, client_.name_, fencing));
  }

 private:
  ThreadClient& client_;
  const ResourceConfig& resource_;
  const std::string key_;
};

void ThreadClient::resource_read(const std::string& record_id) {
  Resource host(*this);
  run_inline(resource_read_call(host, record_, resource_terms(run_), record_id));
}

void ThreadClient::resource_write(const std::string& record_id) {
  Resource host(*this);
  run_inline(resource_write_call(host, record_, resource_terms(run_), record_id));
}

Task<AcquireStatus> BlockingWorkloadHost::acquire(std::string logical_key, std::int64_t timeout_ms,
                                                  Nanos intended_ns) {
  co_return client_.acquire(logical_key, timeout_ms, nullptr, intended_ns);
}

Task<bool> BlockingWorkloadHost::release() { co_return client_.release(); }

void BlockingWorkloadHost::lose_next_reply() {
  run_.nemesis().lose_next_reply(static_cast<std::size_t>(client_.index()), run_.call_links());
}

void BlockingWorkloadHost::pause_holder() {
  run_.nemesis().pause(static_cast<std::size_t>(client_.index()));
}

void BlockingWorkloadHost::resume_holder() {
  run_.nemesis().resume(static_cast<std::size_t>(client_.index()));
}

void run_workload_client(RunContext& run, DriverClient& client) {
  if (client.runs_own_workload()) {
    client.run_own_workload();
    return;
  }
  BlockingWorkloadHost host(run, client);
  run_inline(workload_client(run, host, static_cast<std::size_t>(client.index())));
}

}  // namespace locksim::host
