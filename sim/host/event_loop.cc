// The event-loop client mode (event_loop.h). Each LoopClient hosts the one workload client
// (workload_client() in workload.cc, with acquire_loop() of sim/client): it sends the commands the
// client asks for and returns to the loop; the reply callback, or a timer for a wait, work or
// rest, resumes the client. The recording is every host's (ClientRecord,
// sim/client/record.h), and every cycle is the plan's, so a seed means the same run on threads and
// on the loop. The waking wait strategies send the commands of sim/client/wait.h (BLPOP on a
// "notify" waiter's connection, SUBSCRIBE on a "pubsub" subscriber's, the release's signal) on
// asynchronous connections of the client's own, under the rules their thread forms keep.
#include "sim/host/event_loop.h"

#include <event2/event.h>
#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <set>

#include "sim/core/assert.h"
#include "sim/host/client.h"
#include "sim/client/release.h"
#include "sim/client/renewal.h"
#include "sim/client/resource_call.h"
#include "sim/client/wait.h"
#include "sim/client/workload.h"
#include "sim/lock/variant.h"
#include "sim/redis/script.h"

namespace locksim::host {
namespace {

// After the run stops, clients still waiting for a reply get this long before the loop ends
// without them (their invocations stay open: the checker reads them as "may have happened").
constexpr Nanos kNanosPerSecond = 1000 * kNanosPerMilli;
constexpr Nanos kStopGraceNs = 2 * kNanosPerSecond;

timeval to_timeval(Nanos ns) {
  ns = std::max<Nanos>(ns, 0);
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ns / kNanosPerSecond);
  tv.tv_usec = static_cast<suseconds_t>((ns % kNanosPerSecond) / 1000);
  return tv;
}

// A blocking call's command timeout exceeds its own timeout by this much (NotifyWait's
// connection has the same margin).
constexpr Nanos kBlockingCommandMarginNs = 2 * kNanosPerSecond;

// setup_commands: AUTH and SELECT for `endpoint`, as far as it needs them.
std::vector<std::vector<std::string>> setup_commands(const Endpoint& endpoint) {
  std::vector<std::vector<std::string>> commands;
  if (!endpoint.password.empty()) {
    std::vector<std::string> auth = {"AUTH"};
    if (!endpoint.username.empty()) auth.push_back(endpoint.username);
    auth.push_back(endpoint.password);
    commands.push_back(std::move(auth));
  }
  if (endpoint.db != 0) commands.push_back({"SELECT", std::to_string(endpoint.db)});
  return commands;
}

RedisResult closed_result(const redisAsyncContext* context) {
  std::string message = context != nullptr && context->errstr[0] != '\0'
                            ? std::string(context->errstr)
                            : std::string("the connection was closed");
  return RedisResult{RedisErrorKind::kClosed, std::move(message), {}};
}

}  // namespace

std::string event_loop_refusal(const RunRequest& request) {
  if (request.variant.renews() && !request.variant.extend_command("k", "t", 1000)) {
    return std::string(request.variant.name()) +
           " renews its lease with several commands, on a thread of its own";
  }
  if (!request.variant.one_command()) {
    return std::string(request.variant.name()) +
           " needs several commands (with checkpoints between them) per acquire or release";
  }
  return "";
}

// LoopClient: one workload client on the loop: the host of workload_client() and of its
// acquire_loop(), answering their asks when a reply or a timer arrives.
class LoopClient final : public WorkloadHost,
                         public AcquireHost,
                         public RenewalHost,
                         public ResourceHost,
                         public ReleaseHost,
                         public ReleaseIo {
 public:
  LoopClient(EventLoopWorkload& owner, int index)
      : owner_(owner),
        run_(owner.run_),
        variant_(run_.request().variant),
        index_(index),
        record_(run_.recorder().log(static_cast<std::size_t>(index)), client_record_terms(run_)),
        rng_(run_.plan().clients().at(static_cast<std::size_t>(index)).seed),
        wait_rng_(rng_.fork(kWaitStream)) {
    timer_ = event_new(owner_.base_, -1, 0, &LoopClient::on_timer, this);
    if (variant_.renews()) {
      // The renewal's own log, added in the same order as a client thread adds it.
      renewal_record_.emplace(run_.recorder().add_log(static_cast<std::size_t>(index)),
                              run_.scenario().lock.ttl_ms);
      renew_timer_ = event_new(owner_.base_, -1, 0, &LoopClient::on_renew_timer, this);
    }
  }

  ~LoopClient() override {
    closing_ = true;  // callbacks run by the frees below do nothing
    for (redisAsyncContext* context : {context_, waiter_, subscriber_, renewer_}) {
      if (context == nullptr) continue;
      context->data = nullptr;
      redisAsyncFree(context);
    }
    if (timer_ != nullptr) event_free(timer_);
    if (renew_timer_ != nullptr) event_free(renew_timer_);
  }

  // open: a connection with AUTH and SELECT queued; false if it failed at once.
  bool open(std::string* error) {
    const Endpoint& endpoint = run_.request().endpoint;
    redisAsyncContext* context = redisAsyncConnect(endpoint.host.c_str(), endpoint.port);
    if (context == nullptr || context->err != 0) {
      if (error) *error = context ? context->errstr : "cannot allocate a hiredis context";
      if (context) redisAsyncFree(context);
      return false;
    }
    context->data = this;
    redisLibeventAttach(context, owner_.base_);
    redisAsyncSetConnectCallback(context, &LoopClient::on_connect);
    redisAsyncSetDisconnectCallback(context, &LoopClient::on_disconnect);
    context_ = context;
    const std::vector<std::vector<std::string>> setup = setup_commands(endpoint);
    for (const std::vector<std::string>& argv : setup) send_argv(argv, &LoopClient::on_setup_reply);
    send_argv({"PING"}, &LoopClient::on_setup_reply);  // answered once the set-up went through
    setup_left_ = static_cast<int>(setup.size()) + 1;
    setup_pending_ = true;
    return true;
  }

  bool setup_pending() const { return setup_pending_; }
  const std::string& setup_error() const { return setup_error_; }

  void start() {
    task_ = workload_client(run_, *this, static_cast<std::size_t>(index_));
    task_.start();
    check_done();
  }

  // stop: the run is stopping; a client waiting on a timer, a BLPOP or a subscription goes on
  // now (its wait was cut short), as a client thread's pause ends at a stop. A reply that comes
  // later for the wait is dropped (on_woken, on_message).
  void stop() {
    if (sleeping_ == nullptr) return;
    wake(false);
  }

  bool done() const { return done_; }
  bool in_flight() const { return reply_ != nullptr || renewal_stopped_ != nullptr; }

  // --- WorkloadHost ---------------------------------------------------------------------------

  Task<AcquireStatus> acquire(std::string logical_key, std::int64_t timeout_ms,
                              Nanos intended_ns) override {
    const Nanos invoked = record_.invoke_acquire(logical_key, intended_ns);
    full_key_ = run_.full_key(logical_key);
    const AcquireEnd end = co_await acquire_loop(*this, invoked + ms_to_ns(timeout_ms));
    const AcquireStatus status = record_.end_acquire(outcome_of(end));
    if (status == AcquireStatus::kAcquired && renewal_record_) {
      start_renewal(logical_key, record_.held_token());
    }
    co_return status;
  }

  Task<bool> release() override { return release_call(*this, record_, false); }

  // ReleaseHost and ReleaseIo: the release on this client's connection, answered when its reply
  // arrives. end_renewal is also DrawnFaultHost's (a lost iteration ends the renewal).
  Task<void> end_renewal() override {
    co_await stop_renewal();  // as a client thread joins its watchdog: an extension ends first
  }
  Task<std::optional<ReleaseOutcome>> release_with(std::string token) override {
    co_return outcome_of(co_await carry_out_release(*this, full_key_, std::move(token)));
  }
  Task<ReleaseResult> send_release(const std::string& key, const std::string& token) override {
    co_return variant_.read_release(co_await command(*variant_.release_command(key, token)));
  }
  // reconnect: nothing to do: a connection that failed is dropped by its callbacks and opened
  // again by the next command (send_argv).
  void reconnect() override {}
  Task<void> signal_release(const std::string& key) override {
    if (std::optional<OneCommand> signal = release_signal(run_.scenario().lock.wait, key)) {
      co_await command(*std::move(signal));
    }
  }

  Ask<bool> sleep(Nanos duration) override {
    if (run_.should_stop()) return Ask<bool>(false);
    return Ask<bool>::later([this, duration](Slot<bool>& slot) {
      begin_wait(slot, Waiting::kTimer);
      sleep_for(duration);
    });
  }

  void crash() override {
    // A dead process renews nothing; an extension under way is never answered to it (its
    // invocation stays open in the history: it may or may not have happened).
    drop_extension_ = extending_;
    end_renewal_wait();
    record_.crash();
    // The server sees the connection close, as it would when a process dies.
    if (context_ != nullptr) redisAsyncDisconnect(context_);
  }

  // (end_renewal, which a drawn fault asks for too, is the release's: see ReleaseHost below.)
  void record_fault(FaultKind kind) override { record_.fault(kind); }

  void record_work(std::int64_t planned_ms) override {
    record_.work(planned_ms);
  }
  // A read-write lock has no one-command form, so it never runs on the loop (event_loop_refusal);
  // the mode is recorded all the same.
  void set_acquire_mode(LockMode mode) override { record_.set_acquire_mode(mode); }

  void note(const std::string& line) override { run_.note(line); }

  // Refused before the run (event_loop_refusal, and the loader's executor_refusal, which asks
  // every drawn fault kind of the workload whether one loop can host it).
  Task<void> resource_read(std::string record_id) override {
    co_await resource_read_call(*this, record_, resource_terms(run_), std::move(record_id));
  }
  Task<void> resource_write(std::string record_id) override {
    co_await resource_write_call(*this, record_, resource_terms(run_), std::move(record_id));
  }

  // ResourceHost: the resource's commands on this client's connection.
  Task<ResourceReadOutcome> read_resource(const std::string& record_id) override {
    const ResourceConfig& resource = run_.scenario().resource;
    const RedisResult reply = co_await command(
        resource_read_command(resource.kind, run_.full_key(resource.name), record_id));
    co_return outcome_of(resource_read_reply(resource.kind, reply));
  }
  Task<ResourceWriteOutcome> write_resource(const std::string& record_id, std::int64_t value,
                                            std::int64_t fencing) override {
    const ResourceConfig& resource = run_.scenario().resource;
    const RedisResult reply = co_await command(
        resource_write_command(resource.kind, run_.full_key(resource.name), record_id, value,
                               run_.scenario().clients[static_cast<std::size_t>(index_)], fencing));
    co_return outcome_of(resource_write_reply(resource.kind, reply, fencing));
  }
  void lose_next_reply() override { refused("a drawn fault that needs the nemesis"); }
  void pause_holder() override { refused("a drawn fault that needs the nemesis"); }
  void resume_holder() override { refused("a drawn fault that needs the nemesis"); }

  // --- renewal (renewal_loop, sim/client/renewal.h, as the Watchdog runs it on a thread) -------
  //
  // While the lock is held, renewal_loop runs on the loop: its waits are a timer, its
  // extensions go on a connection of the client's own (the Watchdog's), so that they never wait
  // behind the client's own commands.

  void start_renewal(const std::string& logical_key, std::string token) {
    LOCKSIM_ASSERT(run_.scenario().lock.renew_period_ms > 0);
    renew_logical_key_ = logical_key;
    renew_token_ = std::move(token);
    renewing_on_ = true;
    renewal_task_ = renew();
    renewal_task_.start();
  }

  Task<void> renew() {
    co_await renewal_loop(*this, ms_to_ns(run_.scenario().lock.renew_period_ms));
    if (Slot<bool>* stopped = std::exchange(renewal_stopped_, nullptr)) {
      stopped->complete(true);
      check_done();
    }
  }

  // stop_renewal: no extension is sent from now on; done once the one under way (if any) ended.
  Ask<bool> stop_renewal() {
    end_renewal_wait();
    if (!renewal_task_.valid() || renewal_task_.done()) return Ask<bool>(true);
    return Ask<bool>::later([this](Slot<bool>& slot) { renewal_stopped_ = &slot; });
  }

  // end_renewal_wait: the renewal goes no further; a wait for its next extension ends now.
  void end_renewal_wait() {
    renewing_on_ = false;
    if (renew_timer_ != nullptr) event_del(renew_timer_);
    if (Slot<bool>* due = std::exchange(renewal_due_, nullptr)) due->complete(false);
  }

  // RenewalHost
  Ask<bool> until(Nanos due_ns) override {
    if (!renewing_on_ || run_.should_stop()) return Ask<bool>(false);  // the run's stop ends it
    return Ask<bool>::later([this, due_ns](Slot<bool>& slot) {
      renewal_due_ = &slot;
      const timeval wait = to_timeval(std::max<Nanos>(0, due_ns - now()));
      event_add(renew_timer_, &wait);
    });
  }

  static void on_renew_timer(int /*fd*/, short /*what*/, void* self) {
    auto* client = static_cast<LoopClient*>(self);
    if (Slot<bool>* due = std::exchange(client->renewal_due_, nullptr)) {
      due->complete(client->renewing_on_ && !client->run_.should_stop());
    }
  }

  void invoked() override {
    renewal_record_->invoke(renew_logical_key_, renew_token_);
    extending_ = true;
  }

  Task<ExtendResult> extend() override {
    const OneCommand command = *variant_.extend_command(
        run_.full_key(renew_logical_key_), renew_token_, run_.scenario().lock.ttl_ms);
    if (renewer_ == nullptr) renewer_ = open_side();
    // A script is sent by its source: the renewer is opened per need, and EVAL needs no cache.
    std::vector<std::string> argv = {"EVAL", command.script->source(),
                                     std::to_string(command.keys)};
    for (std::size_t i = 0; i < command.argv.size(); ++i) argv.emplace_back(command.argv[i]);
    // Sent before the task waits: its reply comes from the loop (on_extended), never at once.
    if (renewer_ == nullptr || !command_on(renewer_, argv, &LoopClient::on_extended)) {
      co_return variant_.read_extend(closed_result(renewer_));
    }
    co_return variant_.read_extend(co_await Ask<RedisResult>::later(
        [this](Slot<RedisResult>& slot) { extension_reply_ = &slot; }));
  }

  void completed(const ExtendResult& result) override {
    extending_ = false;
    if (std::exchange(drop_extension_, false)) return;  // the client died meanwhile: see crash()
    record_renewal_end(run_, *renewal_record_, index_, renew_logical_key_, result);
  }

  static void on_extended(redisAsyncContext* context, void* reply, void* self) {
    auto* client = static_cast<LoopClient*>(self);
    if (client->closing_) return;
    client->extended(reply != nullptr ? result_of(*static_cast<redisReply*>(reply))
                                      : closed_result(context));
  }

  // extended: the extension under way returned `reply`.
  void extended(RedisResult reply) {
    if (Slot<RedisResult>* slot = std::exchange(extension_reply_, nullptr)) {
      slot->complete(std::move(reply));
    }
  }

  // --- AcquireHost ----------------------------------------------------------------------------

  Task<void> attempt(AcquireAttempt& out) override {
    const OneCommand command =
        *variant_.acquire_command(full_key_, run_.scenario().lock.ttl_ms, rng_);
    RedisResult reply = co_await this->command(command);
    out = variant_.read_acquire(std::move(reply), command.token());
  }

  Ask<bool> wait(int failed_attempts, Nanos max_ns) override {
    const WaitConfig& wait = run_.scenario().lock.wait;
    if (wait.strategy == "notify") return notify_wait(std::min(fallback_ns(wait), max_ns));
    if (wait.strategy == "pubsub") return pubsub_wait(std::min(fallback_ns(wait), max_ns));
    return sleep(
        std::min(jittered_ns(wait, delay_ns(wait, failed_attempts), wait_rng_), max_ns));
  }

  Nanos now() override { return run_.clock().now_ns(); }
  bool stopping() override { return run_.should_stop(); }

 private:
  void refused(const char* what) {
    LOCKSIM_ASSERT(!"the event-loop mode refuses this workload before the run" && what);
  }

  // command: one command's reply (a script by EVALSHA, once more by its source after NOSCRIPT).
  Ask<RedisResult> command(OneCommand command) {
    return Ask<RedisResult>::later([this, command = std::move(command)](Slot<RedisResult>& slot) {
      command_ = command;
      send(command_, &slot);
    });
  }

  // --- the waking wait strategies (NotifyWait and PubSubWait of sim/client/wait.cc, whose rules
  // these keep) ----------------------------------------------------------------------------------

  // What a wait under way waits for; each ends with wake(), at the latest when the timer fires.
  enum class Waiting {
    kTimer,      // a sleep; or a waking wait sleeping out its fallback after its connection failed
    kBlpop,      // a notify waiter's BLPOP (the timer: its command timeout)
    kSubscribe,  // a pubsub subscription's confirmation (the timer: the fallback)
    kListen,     // a release published on `listening_` (the timer: the fallback)
  };

  // notify_wait: BLPOP on the key's notify list on the waiter connection, bounded by `wait_ns`
  // (the fallback); if the connection or the command fails, the fallback is slept out instead.
  Ask<bool> notify_wait(Nanos wait_ns) {
    if (wait_ns <= 0) return Ask<bool>(true);
    if (run_.should_stop()) return Ask<bool>(false);
    return Ask<bool>::later([this, wait_ns](Slot<bool>& slot) {
      begin_wait(slot, Waiting::kBlpop);
      wait_ns_ = wait_ns;
      if (waiter_ == nullptr) waiter_ = open_side();
      if (waiter_ == nullptr ||
          !command_on(waiter_, notify_wait_words(full_key_, wait_ns).strings(),
                      &LoopClient::on_woken)) {
        waiting_ = Waiting::kTimer;
        return sleep_for(wait_ns);
      }
      blpops_.push_back(waits_);
      // The blocking call's command timeout, as the thread form's connection has it.
      sleep_for(wait_ns + kBlockingCommandMarginNs);
    });
  }

  // pubsub_wait: the first wait for a key subscribes to its release channel and ends once the
  // server confirmed it (the next attempt then comes after the subscription, so no release
  // between the two is missed); later ones wait for a release on the channel, bounded by the
  // fallback. A release that came while the client was not waiting is taken at once, as a thread
  // reads it from its socket at its next wait.
  Ask<bool> pubsub_wait(Nanos wait_ns) {
    if (wait_ns <= 0) return Ask<bool>(true);
    if (run_.should_stop()) return Ask<bool>(false);
    const std::string channel = release_channel(full_key_);
    if (subscriber_ != nullptr && subscribed_.contains(channel)) {
      if (int& unread = unread_[channel]; unread > 0) {
        --unread;
        return Ask<bool>(true);
      }
    }
    return Ask<bool>::later([this, wait_ns, channel](Slot<bool>& slot) {
      if (subscriber_ == nullptr) subscriber_ = open_side();  // side_gone() cleared the channels
      if (subscribed_.contains(channel)) {
        begin_wait(slot, Waiting::kListen);
        listening_ = channel;
        return sleep_for(wait_ns);  // or a release on the channel (on_message)
      }
      begin_wait(slot, Waiting::kSubscribe);
      // Without a subscriber the fallback is slept out, and the next wait subscribes again.
      if (subscriber_ != nullptr &&
          command_on(subscriber_, {"SUBSCRIBE", channel}, &LoopClient::on_message)) {
        subscribing_ = channel;
      } else {
        waiting_ = Waiting::kTimer;
      }
      sleep_for(wait_ns);
    });
  }

  // begin_wait: the client now waits (one thing at a time: one timer serves sleeps, waits and
  // deliveries).
  void begin_wait(Slot<bool>& slot, Waiting waiting) {
    LOCKSIM_ASSERT(reply_ == nullptr && !delivering_ && sleeping_ == nullptr);
    sleeping_ = &slot;
    waiting_ = waiting;
    ++waits_;
  }

  void sleep_for(Nanos duration) {
    const timeval tv = to_timeval(duration);
    event_add(timer_, &tv);
  }

  // wake: ends the wait under way with `full` and runs the client on.
  void wake(bool full) {
    event_del(timer_);
    listening_.clear();
    subscribing_.clear();
    waiting_ = Waiting::kTimer;
    Slot<bool>* slot = std::exchange(sleeping_, nullptr);
    slot->complete(full);
    check_done();
  }

  // open_side: another connection of this client's (a notify waiter's, a pubsub subscriber's),
  // with AUTH and SELECT queued as open() queues them; null if it could not be made at once.
  redisAsyncContext* open_side() {
    const Endpoint& endpoint = run_.request().endpoint;
    redisAsyncContext* context = redisAsyncConnect(endpoint.host.c_str(), endpoint.port);
    if (context == nullptr || context->err != 0) {
      if (context != nullptr) redisAsyncFree(context);
      return nullptr;
    }
    context->data = this;
    redisLibeventAttach(context, owner_.base_);
    redisAsyncSetConnectCallback(context, &LoopClient::on_side_connect);
    redisAsyncSetDisconnectCallback(context, &LoopClient::on_side_gone);
    for (const std::vector<std::string>& argv : setup_commands(endpoint)) {
      command_on(context, argv, nullptr);  // a failure shows in the command after it
    }
    return context;
  }

  // side_gone: a side connection closed or could not connect: the next wait opens a new one (and
  // subscribes again). A wait under way runs on to its timer, as the thread form sleeps out its
  // fallback when its connection breaks.
  void side_gone(const redisAsyncContext* context) {
    if (context == waiter_) waiter_ = nullptr;
    if (context == renewer_) renewer_ = nullptr;
    if (context == subscriber_) {
      subscriber_ = nullptr;
      subscribed_.clear();
      unread_.clear();
      if (waiting_ == Waiting::kSubscribe || waiting_ == Waiting::kListen) {
        waiting_ = Waiting::kTimer;
      }
    }
  }

  // abandon_waiter: a BLPOP that outlived its command timeout: its connection is dropped (the
  // thread form's connection breaks at the timeout and is reopened by the next wait).
  void abandon_waiter() {
    redisAsyncContext* context = std::exchange(waiter_, nullptr);
    if (context == nullptr) return;
    context->data = nullptr;
    redisAsyncFree(context);  // its BLPOP is answered with nothing (on_woken drops it)
  }

  // side_gone also forgets a renewer that closed.
  static void on_side_connect(const redisAsyncContext* context, int status) {
    auto* client = static_cast<LoopClient*>(context->data);
    if (status != REDIS_OK && client != nullptr && !client->closing_) client->side_gone(context);
  }

  static void on_side_gone(const redisAsyncContext* context, int /*status*/) {
    auto* client = static_cast<LoopClient*>(context->data);
    if (client != nullptr && !client->closing_) client->side_gone(context);
  }

  // on_woken: a notify waiter's BLPOP answered (a wake-up, or nil when its timeout passed: either
  // way the client attempts again), failed (the fallback is slept out), or went with its
  // connection. A reply for a wait that already ended (the run's stop) is dropped.
  static void on_woken(redisAsyncContext* /*context*/, void* reply, void* self) {
    auto* client = static_cast<LoopClient*>(self);
    if (client->closing_) return;
    LOCKSIM_ASSERT(!client->blpops_.empty());
    const std::uint64_t wait = client->blpops_.front();
    client->blpops_.pop_front();
    if (client->sleeping_ == nullptr || wait != client->waits_ ||
        client->waiting_ != Waiting::kBlpop) {
      return;
    }
    const auto* r = static_cast<const redisReply*>(reply);
    if (r == nullptr || r->type == REDIS_REPLY_ERROR) {
      client->waiting_ = Waiting::kTimer;
      return client->sleep_for(client->wait_ns_);
    }
    client->wake(true);
  }

  // on_message: what the subscriber connection reads: a subscription's confirmation, or a
  // release published on a channel. Nothing (null) when the connection goes: side_gone() follows.
  static void on_message(redisAsyncContext* /*context*/, void* reply, void* self) {
    auto* client = static_cast<LoopClient*>(self);
    if (client->closing_ || reply == nullptr) return;
    const RedisResult read = result_of(*static_cast<redisReply*>(reply));
    const Reply& r = read.reply;
    if (r.type != Reply::Type::kArray || r.elements.size() != 3) return;
    const std::string& channel = r.elements[1].str;
    if (r.elements[0].str == "subscribe") {
      client->subscribed_.insert(channel);
      // Attempt again now that releases will be heard.
      if (client->waiting_ == Waiting::kSubscribe && client->subscribing_ == channel) {
        client->wake(true);
      }
      return;
    }
    if (!is_release_message(r, channel)) return;
    if (client->waiting_ == Waiting::kListen && client->listening_ == channel) {
      return client->wake(true);
    }
    ++client->unread_[channel];
  }

  void check_done() {
    if (done_ || !task_.done()) return;
    done_ = true;
    owner_.client_done();
  }

 public:
  // rethrow_failure: what the client threw, rethrown outside the loop's C callbacks.
  void rethrow_failure() {
    if (task_.done()) task_.result();
  }

 private:
  // --- commands ------------------------------------------------------------------------------

  void send(const OneCommand& command, Slot<RedisResult>* reply) {
    reply_ = reply;
    eval_retried_ = false;
    if (command.script == nullptr) return send_argv(command.argv.strings(), &LoopClient::on_reply);
    std::vector<std::string> argv = {"EVALSHA", command.script->sha(),
                                     std::to_string(command.keys)};
    for (std::size_t i = 0; i < command.argv.size(); ++i) argv.emplace_back(command.argv[i]);
    send_argv(argv, &LoopClient::on_reply);
  }

  // send_eval: the script by its source, after the server answered NOSCRIPT.
  void send_eval(const OneCommand& command) {
    eval_retried_ = true;
    std::vector<std::string> argv = {"EVAL", command.script->source(),
                                     std::to_string(command.keys)};
    for (std::size_t i = 0; i < command.argv.size(); ++i) argv.emplace_back(command.argv[i]);
    send_argv(argv, &LoopClient::on_reply);
  }

  void send_argv(const std::vector<std::string>& argv, redisCallbackFn* callback) {
    if (context_ == nullptr) {
      std::string error;
      if (!open(&error)) {
        // Delivered from the loop, never from inside this call: no unbounded recursion.
        pending_ = RedisResult{RedisErrorKind::kRefused, error, {}};
        return deliver_later();
      }
    }
    if (!command_on(context_, argv, callback)) {
      pending_ = closed_result(context_);
      return deliver_later();
    }
    flush();
  }

  // command_on: queues `argv` on `context`, its reply to `callback` (with this client); false if
  // hiredis refused it (the connection is closing).
  bool command_on(redisAsyncContext* context, const std::vector<std::string>& argv,
                  redisCallbackFn* callback) {
    std::vector<const char*> pointers;
    std::vector<std::size_t> lengths;
    pointers.reserve(argv.size());
    lengths.reserve(argv.size());
    for (const std::string& arg : argv) {
      pointers.push_back(arg.data());
      lengths.push_back(arg.size());
    }
    return redisAsyncCommandArgv(context, callback, this, static_cast<int>(argv.size()),
                                 pointers.data(), lengths.data()) == REDIS_OK;
  }

  // flush: writes the queued commands now instead of on the loop's next turn: one write() per
  // command, and the write event hiredis just asked for is dropped again before libevent's
  // changelist reaches the kernel (two epoll_ctl calls per command saved; system calls were most
  // of the loop's time). It writes with the plain-context call, never redisAsyncHandleWrite:
  // that one frees the context on a write error, which inside a reply callback of the same
  // context would pull it out from under hiredis. On an error (or a partial write) the write
  // event stays, and hiredis meets the error on its own turn, outside every callback.
  void flush() {
    if (!(context_->c.flags & REDIS_CONNECTED)) return;
    int done = 0;
    if (redisBufferWrite(&context_->c, &done) == REDIS_OK && done != 0 &&
        context_->ev.delWrite != nullptr) {
      context_->ev.delWrite(context_->ev.data);
    }
  }

  static void on_reply(redisAsyncContext* context, void* reply, void* self) {
    auto* client = static_cast<LoopClient*>(self);
    if (client->closing_) return;
    if (reply == nullptr) {
      // The connection is going away (hiredis frees it after these callbacks): nothing may be
      // sent on it now, so the error is delivered from the loop, on a new connection.
      if (client->context_ == context) client->context_ = nullptr;
      client->pending_ = closed_result(context);
      return client->deliver_later();
    }
    client->pending_ = result_of(*static_cast<redisReply*>(reply));
    client->deliver();
  }

  // deliver_later: the pending result is delivered on the loop's next turn.
  void deliver_later() {
    LOCKSIM_ASSERT(sleeping_ == nullptr);
    delivering_ = true;
    const timeval now{};
    event_add(timer_, &now);
  }

  void deliver() {
    RedisResult result = std::move(pending_);
    if (command_.script != nullptr && result.error == RedisErrorKind::kReplyError) {
      // The server lost its script cache (restart, SCRIPT FLUSH): send the source once.
      if (result.message.starts_with("NOSCRIPT") && !eval_retried_) return send_eval(command_);
      result.message = "script " + command_.script->name() + ": " + result.message;
    }
    std::exchange(reply_, nullptr)->complete(std::move(result));
    check_done();
  }

  static void on_setup_reply(redisAsyncContext* /*context*/, void* reply, void* self) {
    auto* client = static_cast<LoopClient*>(self);
    if (client->closing_) return;
    const auto* r = static_cast<const redisReply*>(reply);
    if (client->setup_error_.empty()) {
      if (r == nullptr) client->setup_error_ = "the connection was closed during its set-up";
      if (r != nullptr && r->type == REDIS_REPLY_ERROR) client->setup_error_.assign(r->str, r->len);
    }
    if (client->setup_left_ > 0 && --client->setup_left_ == 0) {
      client->setup_pending_ = false;
      client->owner_.connected_or_failed();
    }
  }

  static void on_connect(const redisAsyncContext* context, int status) {
    auto* client = static_cast<LoopClient*>(context->data);
    if (status == REDIS_OK || client == nullptr) return;
    // hiredis frees a context that failed to connect; its commands are answered with nothing.
    if (client->context_ == context) client->context_ = nullptr;
    if (client->setup_error_.empty()) client->setup_error_ = context->errstr;
  }

  static void on_disconnect(const redisAsyncContext* context, int /*status*/) {
    auto* client = static_cast<LoopClient*>(context->data);
    if (client != nullptr && client->context_ == context) client->context_ = nullptr;
  }

  // on_timer: a sleep or a waking wait's fallback ended (or a BLPOP's command timeout passed),
  // or a result waits to be delivered.
  static void on_timer(int /*fd*/, short /*what*/, void* self) {
    auto* client = static_cast<LoopClient*>(self);
    if (std::exchange(client->delivering_, false)) return client->deliver();
    if (client->sleeping_ == nullptr) return;
    if (client->waiting_ == Waiting::kBlpop) client->abandon_waiter();
    client->wake(true);
  }

  EventLoopWorkload& owner_;
  RunContext& run_;
  const LockVariant& variant_;
  int index_;
  ClientRecord record_;  // what the client records and holds
  Rng rng_;
  Rng wait_rng_;
  Task<void> task_;  // workload_client() on this host

  redisAsyncContext* context_ = nullptr;
  event* timer_ = nullptr;  // a sleep, or a result delivered on the next turn
  bool delivering_ = false;
  bool eval_retried_ = false;
  bool setup_pending_ = false;
  int setup_left_ = 0;  // set-up replies still to come
  bool closing_ = false;
  std::string setup_error_;
  RedisResult pending_;
  OneCommand command_;
  bool done_ = false;

  // What the client task waits for: a reply, or the end of a sleep or wait (waiting_ says which).
  Slot<RedisResult>* reply_ = nullptr;
  Slot<bool>* sleeping_ = nullptr;
  Waiting waiting_ = Waiting::kTimer;
  std::uint64_t waits_ = 0;  // waits begun: which one a late reply belongs to
  Nanos wait_ns_ = 0;        // a notify wait's fallback, slept out if its BLPOP fails

  // The waking strategies' connections: a notify waiter's (BLPOPs in flight, by their wait), and
  // a pubsub subscriber's (its channels, the releases read while not waiting, and what the wait
  // under way subscribes to or listens on).
  redisAsyncContext* waiter_ = nullptr;
  std::deque<std::uint64_t> blpops_;
  redisAsyncContext* subscriber_ = nullptr;
  std::set<std::string> subscribed_;
  std::map<std::string, int> unread_;
  std::string subscribing_;
  std::string listening_;

  // The renewal of a variant that renews: its log, timer and connection, what it extends, and
  // whether it goes on, has an extension under way, or is awaited by a release.
  std::optional<RenewalRecord> renewal_record_;
  event* renew_timer_ = nullptr;
  redisAsyncContext* renewer_ = nullptr;
  std::string renew_logical_key_;
  std::string renew_token_;
  bool renewing_on_ = false;
  bool extending_ = false;
  bool drop_extension_ = false;  // the extension under way outlived its client (crash())
  Slot<bool>* renewal_due_ = nullptr;             // renewal_loop waits for its next extension
  Slot<RedisResult>* extension_reply_ = nullptr;  // ... or for its extension's reply
  Slot<bool>* renewal_stopped_ = nullptr;         // a release waits for the renewal's end
  Task<void> renewal_task_;                       // renew(), while the lock is held

  std::string full_key_;
};

// new_base: a libevent base whose timers fire on time (without the precise timer, epoll waits in
// whole milliseconds rounded up, and a 1 ms poll or work pause would last up to 2 ms) and whose
// event changes are batched.
event_base* new_base() {
  event_config* config = event_config_new();
  LOCKSIM_ASSERT(config != nullptr);
  event_config_set_flag(config, EVENT_BASE_FLAG_PRECISE_TIMER);
  // Changes to a socket's events are applied once per loop turn, so a write event added and
  // removed in the same turn costs no system call.
  event_config_set_flag(config, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
  event_base* base = event_base_new_with_config(config);
  event_config_free(config);
  return base;
}

EventLoopWorkload::EventLoopWorkload(RunContext& run) : run_(run), base_(new_base()) {
  LOCKSIM_ASSERT(base_ != nullptr);
  for (std::size_t i = 0; i < run.scenario().clients.size(); ++i) {
    clients_.push_back(std::make_unique<LoopClient>(*this, static_cast<int>(i)));
  }
  tick_ = event_new(base_, -1, EV_PERSIST, &EventLoopWorkload::on_tick, this);
}

EventLoopWorkload::~EventLoopWorkload() {
  clients_.clear();  // frees their connections while the base is alive
  if (tick_ != nullptr) event_free(tick_);
  event_base_free(base_);
}

std::string EventLoopWorkload::connect() {
  // The scripts are loaded once here, so that every client can send EVALSHA at once.
  const std::unique_ptr<Connection> connected = run_.connect(run_.request().endpoint);
  Connection& setup = *connected;
  if (setup.broken()) return setup.last_error().describe();
  Rng rng(0);
  for (const std::optional<OneCommand>& command :
       {run_.request().variant.acquire_command("k", 1000, rng),
        run_.request().variant.release_command("k", "t"),
        release_signal(run_.scenario().lock.wait, "k")}) {
    if (command && command->script != nullptr) {
      const RedisResult loaded = command->script->load(setup);
      if (!loaded.ok()) return loaded.describe();
    }
  }
  std::string error;
  for (auto& client : clients_) {
    if (!client->open(&error)) return error;
  }
  connecting_ = clients_.size();
  // Bounded: a server that never answers the set-up is given up after the connect timeout.
  event* limit = event_new(
      base_, -1, 0, [](int, short, void* base) { event_base_loopbreak(static_cast<event_base*>(base)); },
      base_);
  const timeval after = to_timeval(ConnectionOptions{}.connect_timeout.count() * kNanosPerMilli);
  event_add(limit, &after);
  if (connecting_ > 0) event_base_dispatch(base_);
  event_free(limit);
  for (auto& client : clients_) {
    if (!client->setup_error().empty()) return client->setup_error();
    if (client->setup_pending()) return "no answer to the connection set-up in time";
  }
  return "";
}

void EventLoopWorkload::connected_or_failed() {
  if (connecting_ > 0 && --connecting_ == 0) event_base_loopbreak(base_);
}

void EventLoopWorkload::run() {
  active_ = clients_.size();
  const timeval every = to_timeval(20 * kNanosPerMilli);
  event_add(tick_, &every);
  for (auto& client : clients_) client->start();
  if (active_ > 0) event_base_dispatch(base_);
  event_del(tick_);
  for (auto& client : clients_) client->rethrow_failure();
}

void EventLoopWorkload::client_done() {
  if (active_ > 0 && --active_ == 0) event_base_loopbreak(base_);
  run_.notify_changed();
}

void EventLoopWorkload::on_tick(int /*fd*/, short /*what*/, void* self) {
  auto* loop = static_cast<EventLoopWorkload*>(self);
  if (!loop->run_.should_stop()) return;
  const Nanos now = loop->run_.clock().now_ns();
  if (loop->stop_seen_ns_ < 0) loop->stop_seen_ns_ = now;
  for (auto& client : loop->clients_) client->stop();
  if (loop->active_ > 0 && now - loop->stop_seen_ns_ >= kStopGraceNs) {
    std::size_t waiting = 0;
    for (auto& client : loop->clients_) waiting += client->in_flight() ? 1 : 0;
    loop->run_.note(std::to_string(waiting) +
                    " client(s) still waited for a reply when the run stopped; their last "
                    "call stays open in the history");
    loop->run_.stopped_early = true;
    event_base_loopbreak(loop->base_);
  }
}

}  // namespace locksim::host
