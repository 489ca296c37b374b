// The event-loop client mode (event_loop.h). Each LoopClient hosts the one workload client
// (workload_client() in workload.cc, with acquire_loop() of sim/client): it sends the commands the
// client asks for and returns to the loop; the reply callback, or a timer for a wait, work or
// rest, resumes the client. The recording is every host's (ClientRecord,
// sim/client/record.h), and every cycle is the plan's, so a seed means the same run on threads and on the loop.
#include "sim/driver/event_loop.h"

#include <event2/event.h>
#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <algorithm>
#include <cstring>

#include "sim/core/assert.h"
#include "sim/driver/client.h"
#include "sim/client/wait.h"
#include "sim/driver/workload.h"
#include "sim/lock/variant.h"
#include "sim/redis/script.h"

namespace locksim::driver_internal {
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

RedisResult closed_result(const redisAsyncContext* context) {
  std::string message = context != nullptr && context->errstr[0] != '\0'
                            ? std::string(context->errstr)
                            : std::string("the connection was closed");
  return RedisResult{RedisErrorKind::kClosed, std::move(message), {}};
}

}  // namespace

std::string event_loop_refusal(const RunRequest& request) {
  if (request.variant.renews()) {
    return std::string(request.variant.name()) + " renews its lease on a thread of its own";
  }
  if (!request.variant.one_command()) {
    return std::string(request.variant.name()) +
           " needs several commands (with checkpoints between them) per acquire or release";
  }
  return "";
}

// LoopClient: one workload client on the loop: the host of workload_client() and of its
// acquire_loop(), answering their asks when a reply or a timer arrives.
class LoopClient final : public WorkloadHost, public AcquireHost {
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
  }

  ~LoopClient() override {
    closing_ = true;  // callbacks run by the free below do nothing
    if (context_ != nullptr) {
      context_->data = nullptr;
      redisAsyncFree(context_);
    }
    if (timer_ != nullptr) event_free(timer_);
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
    if (!endpoint.password.empty()) {
      std::vector<std::string> auth = {"AUTH"};
      if (!endpoint.username.empty()) auth.push_back(endpoint.username);
      auth.push_back(endpoint.password);
      send_argv(auth, &LoopClient::on_setup_reply);
    }
    if (endpoint.db != 0) {
      send_argv({"SELECT", std::to_string(endpoint.db)}, &LoopClient::on_setup_reply);
    }
    send_argv({"PING"}, &LoopClient::on_setup_reply);  // answered once the set-up went through
    setup_left_ = (endpoint.password.empty() ? 0 : 1) + (endpoint.db != 0 ? 1 : 0) + 1;
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

  // stop: the run is stopping; a client waiting on a timer goes on now (its sleep was cut
  // short), as a client thread's pause ends at a stop.
  void stop() {
    if (sleeping_ == nullptr) return;
    event_del(timer_);
    wake(false);
  }

  bool done() const { return done_; }
  bool in_flight() const { return reply_ != nullptr; }

  // --- WorkloadHost ---------------------------------------------------------------------------

  Task<AcquireStatus> acquire(std::string logical_key, std::int64_t timeout_ms,
                              Nanos intended_ns) override {
    const Nanos invoked = record_.invoke_acquire(logical_key, intended_ns);
    full_key_ = run_.full_key(logical_key);
    const AcquireEnd end = co_await acquire_loop(*this, invoked + ms_to_ns(timeout_ms));
    co_return record_.end_acquire(outcome_of(end));
  }

  Task<bool> release() override {
    record_.exit();
    const std::string token = record_.invoke_release();
    const OneCommand release = *variant_.release_command(full_key_, token);
    const RedisResult reply = co_await command(release);
    record_.end_release(outcome_of(variant_.read_release(reply)));
    co_return true;
  }

  Ask<bool> sleep(Nanos duration) override {
    if (run_.should_stop()) return Ask<bool>(false);
    return Ask<bool>::later([this, duration](Slot<bool>& slot) {
      // One timer serves sleeps and deliveries: the client waits for one thing at a time.
      LOCKSIM_ASSERT(reply_ == nullptr && !delivering_);
      sleeping_ = &slot;
      const timeval tv = to_timeval(duration);
      event_add(timer_, &tv);
    });
  }

  void crash() override {
    record_.crash();
    // The server sees the connection close, as it would when a process dies.
    if (context_ != nullptr) redisAsyncDisconnect(context_);
  }

  void record_work(std::int64_t planned_ms) override {
    record_.work(planned_ms);
  }

  void note(const std::string& line) override { run_.note(line); }

  // Refused before the run (event_loop_refusal, and the loader's executor_refusal, which asks
  // every drawn fault kind of the workload whether one loop can host it).
  void resource_read(const std::string& /*record_id*/) override { refused("a resource"); }
  void resource_write(const std::string& /*record_id*/) override { refused("a resource"); }
  void lose_lock() override { refused("a drawn fault that needs renewal"); }
  void lose_next_reply() override { refused("a drawn fault that needs the nemesis"); }
  void pause_holder() override { refused("a drawn fault that needs the nemesis"); }
  void resume_holder() override { refused("a drawn fault that needs the nemesis"); }

  // --- AcquireHost ----------------------------------------------------------------------------

  Task<AcquireAttempt> attempt() override {
    const OneCommand command =
        *variant_.acquire_command(full_key_, run_.scenario().lock.ttl_ms, rng_);
    RedisResult reply = co_await this->command(command);
    co_return variant_.read_acquire(std::move(reply), command.token());
  }

  Ask<bool> wait(int failed_attempts, Nanos max_ns) override {
    const WaitConfig& wait = run_.scenario().lock.wait;
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

  // wake: ends the sleep under way with `full` and runs the client on.
  void wake(bool full) {
    Slot<bool>* slot = std::exchange(sleeping_, nullptr);
    slot->complete(full);
    check_done();
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
    std::vector<const char*> pointers;
    std::vector<std::size_t> lengths;
    pointers.reserve(argv.size());
    lengths.reserve(argv.size());
    for (const std::string& arg : argv) {
      pointers.push_back(arg.data());
      lengths.push_back(arg.size());
    }
    if (redisAsyncCommandArgv(context_, callback, this, static_cast<int>(argv.size()),
                              pointers.data(), lengths.data()) != REDIS_OK) {
      pending_ = closed_result(context_);
      return deliver_later();
    }
    flush();
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

  // on_timer: a sleep ended, or a result waits to be delivered.
  static void on_timer(int /*fd*/, short /*what*/, void* self) {
    auto* client = static_cast<LoopClient*>(self);
    if (std::exchange(client->delivering_, false)) return client->deliver();
    if (client->sleeping_ != nullptr) client->wake(true);
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

  // What the client task waits for: a reply, or the end of a sleep.
  Slot<RedisResult>* reply_ = nullptr;
  Slot<bool>* sleeping_ = nullptr;

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
        run_.request().variant.release_command("k", "t")}) {
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

}  // namespace locksim::driver_internal
