// The event-loop client mode (event_loop.h). Each LoopClient walks the workload loop of
// workload.cc (acquire -> work -> release -> rest) as a state machine: a command is sent and the
// client returns to the loop; the reply callback, or a timer for a wait, work or rest, moves it on.
// The recording mirrors ThreadClient::acquire/release and run_workload_client step by step, and
// every cycle is the plan's, so a seed means the same run in both modes.
#include "sim/driver/event_loop.h"

#include <event2/event.h>
#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <algorithm>
#include <cstring>

#include "sim/core/assert.h"
#include "sim/driver/client.h"
#include "sim/driver/wait.h"
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

// LoopClient: one workload client on the loop.
class LoopClient {
 public:
  LoopClient(EventLoopWorkload& owner, int index)
      : owner_(owner),
        run_(owner.run_),
        scenario_(run_.scenario()),
        workload_(*scenario_.workload),
        variant_(run_.request().variant),
        index_(index),
        name_(scenario_.clients.at(static_cast<std::size_t>(index))),
        log_(run_.recorder().log(static_cast<std::size_t>(index))),
        rng_(run_.plan().clients().at(static_cast<std::size_t>(index)).seed),
        wait_rng_(rng_.fork(kWaitStream)) {
    logical_key_ = run_.plan().clients()[static_cast<std::size_t>(index)].key;
    full_key_ = run_.full_key(logical_key_);
    timed_ = workload_.duration_ms > 0;
    end_ns_ = ms_to_ns(workload_.warmup_ms + workload_.duration_ms);
    open_loop_ = workload_.arrival_per_s > 0;
    interval_ns_ = open_loop_ ? static_cast<Nanos>(1e9 / workload_.arrival_per_s) : 0;
    due_ns_ = run_.plan().clients()[static_cast<std::size_t>(index)].first_due_ns;
    timer_ = event_new(owner_.base_, -1, 0, &LoopClient::on_timer, this);
  }

  ~LoopClient() {
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

  void start() { begin_cycle(); }

  // stop: the run is stopping; a client waiting on a timer finishes now.
  void stop() {
    if (done_ || in_flight_) return;
    event_del(timer_);
    switch (next_) {
      case Next::kAttempt:  // waiting between attempts: the acquire ends as stopped
        acquire_failed(/*stopping=*/true);
        break;
      case Next::kAfterWork:  // inside: as on threads, the work is cut short and it releases
        after_work();
        break;
      case Next::kDeliver:
        deliver();
        break;
      case Next::kBeginCycle:
      case Next::kStartAcquire:
        run_.stopped_early = true;
        finish();
        break;
    }
  }

  bool done() const { return done_; }
  bool in_flight() const { return in_flight_; }

 private:
  enum class Next { kBeginCycle, kStartAcquire, kAttempt, kAfterWork, kDeliver };
  enum class Awaiting { kNothing, kAcquire, kRelease };

  // --- the workload loop -------------------------------------------------------------------

  void begin_cycle() {
    if (timed_ ? run_.clock().now_ns() >= end_ns_ : cycle_ >= workload_.cycles) return finish();
    if (run_.should_stop()) {
      run_.stopped_early = true;
      return finish();
    }
    if (open_loop_) {
      if (timed_ && due_ns_ >= end_ns_) return finish();
      const Nanos now = run_.clock().now_ns();
      if (due_ns_ > now) return schedule(due_ns_ - now, Next::kStartAcquire);
    }
    start_acquire();
  }

  void start_acquire() {
    Event& invoke = log_.record(EventType::kInvoke, Op::kAcquire, logical_key_);
    if (variant_.uses_ttl()) invoke.ttl_ms = static_cast<std::int32_t>(scenario_.lock.ttl_ms);
    if (due_ns_ >= 0) invoke.schedule().intended_ns = std::min(due_ns_, invoke.time_ns);
    deadline_ns_ = invoke.time_ns + ms_to_ns(scenario_.lock.acquire_timeout_ms);
    attempts_ = 0;
    attempt();
  }

  void attempt() {
    ++attempts_;
    command_ = *variant_.acquire_command(full_key_, scenario_.lock.ttl_ms, rng_);
    awaiting_ = Awaiting::kAcquire;
    sent_ns_ = run_.clock().now_ns();
    send(command_);
  }

  void on_acquire(RedisResult result) {
    AcquireAttempt outcome = variant_.read_acquire(std::move(result), command_.token);
    switch (outcome.outcome) {
      case AcquireAttempt::Outcome::kAcquired: {
        // ok first, then enter: both after the reply was read (the conservative point).
        Event& ok = log_.record(EventType::kOk, Op::kAcquire, logical_key_);
        ok.token = log_.intern(outcome.token);
        ok.acquire().attempts = attempts_;
        ok.acquire().sent_ns = sent_ns_;
        ok.acquire().fencing = outcome.fencing;
        if (variant_.uses_ttl()) ok.ttl_ms = static_cast<std::int32_t>(scenario_.lock.ttl_ms);
        log_.record(EventType::kOk, Op::kEnter, logical_key_);
        held_token_ = std::move(outcome.token);
        if (open_loop_) due_ns_ += interval_ns_;
        // The cycle as the plan decided it (no lost iterations or nemesis in this mode).
        const std::int64_t work_ms = cycle_plan().work_ms;
        log_.record(EventType::kInfo, Op::kWork, logical_key_).work().planned_ms =
            static_cast<std::int32_t>(std::min<std::int64_t>(work_ms, INT32_MAX));
        if (work_ms > 0 && !run_.should_stop()) return schedule(ms_to_ns(work_ms), Next::kAfterWork);
        return after_work();
      }
      case AcquireAttempt::Outcome::kError: {
        const bool maybe = outcome.error.indeterminate();
        Event& failed = log_.record(maybe ? EventType::kInfo : EventType::kFail, Op::kAcquire,
                                    logical_key_);
        set_error(log_, failed, outcome.error);
        failed.acquire().attempts = attempts_;
        if (open_loop_) due_ns_ += interval_ns_;
        return end_cycle();
      }
      case AcquireAttempt::Outcome::kBusy:
        break;
    }
    const Nanos now = run_.clock().now_ns();
    const bool stopping = run_.should_stop();
    if (now >= deadline_ns_ || stopping) return acquire_failed(stopping);
    const WaitConfig& wait = scenario_.lock.wait;
    schedule(std::min(jittered_ns(wait, delay_ns(wait, attempts_), wait_rng_), deadline_ns_ - now),
             Next::kAttempt);
  }

  void acquire_failed(bool stopping) {
    Event& failed = log_.record(EventType::kFail, Op::kAcquire, logical_key_);
    failed.acquire().attempts = attempts_;
    failed.error = stopping ? ErrorKind::kStopped : ErrorKind::kGaveUp;
    if (stopping) {
      run_.stopped_early = true;
      return finish();
    }
    if (open_loop_) due_ns_ += interval_ns_;
    end_cycle();
  }

  void after_work() {
    if (cycle_plan().crash) {
      log_.record(EventType::kInfo, Op::kCrash, logical_key_);
      // The server sees the connection close, as it would when a process dies.
      if (context_ != nullptr) redisAsyncDisconnect(context_);
      run_.note(name_ + " crashed inside the critical section (cycle " +
                std::to_string(cycle_ + 1) + ")");
      if (!timed_) run_.cycles_done += workload_.cycles - cycle_;
      return finish();
    }
    // exit before the release request is sent (the conservative point).
    log_.record(EventType::kOk, Op::kExit, logical_key_);
    log_.record(EventType::kInvoke, Op::kRelease, logical_key_).token = log_.intern(held_token_);
    command_ = *variant_.release_command(full_key_, held_token_);
    awaiting_ = Awaiting::kRelease;
    send(command_);
  }

  void on_release(RedisResult result) {
    const ReleaseResult outcome = variant_.read_release(std::move(result));
    if (outcome.outcome == ReleaseResult::Outcome::kError) {
      const bool maybe = outcome.error.indeterminate();
      Event& failed = log_.record(maybe ? EventType::kInfo : EventType::kFail, Op::kRelease,
                                  logical_key_);
      set_error(log_, failed, outcome.error);
    } else {
      log_.record(EventType::kOk, Op::kRelease, logical_key_).release().deleted =
          static_cast<std::int32_t>(std::clamp<std::int64_t>(outcome.deleted, 0, INT32_MAX));
    }
    held_token_.clear();
    end_cycle();
  }

  void end_cycle() {
    run_.cycles_done += 1;
    const std::int64_t rest_ms = cycle_plan().rest_ms;
    ++cycle_;
    if (open_loop_) return begin_cycle();  // the schedule, not a rest, decides
    if (rest_ms > 0) return schedule(ms_to_ns(rest_ms), Next::kBeginCycle);
    begin_cycle();
  }

  CyclePlan cycle_plan() const {
    return run_.plan().cycle(static_cast<std::size_t>(index_), cycle_);
  }

  void finish() {
    if (done_) return;
    done_ = true;
    owner_.client_done();
  }

  // --- commands ------------------------------------------------------------------------------

  void send(const OneCommand& command) {
    eval_retried_ = false;
    if (command.script == nullptr) return send_argv(command.argv, &LoopClient::on_reply);
    std::vector<std::string> argv = {"EVALSHA", command.script->sha(),
                                     std::to_string(command.keys)};
    argv.insert(argv.end(), command.argv.begin(), command.argv.end());
    send_argv(argv, &LoopClient::on_reply);
  }

  // send_eval: the script by its source, after the server answered NOSCRIPT.
  void send_eval(const OneCommand& command) {
    eval_retried_ = true;
    std::vector<std::string> argv = {"EVAL", command.script->source(),
                                     std::to_string(command.keys)};
    argv.insert(argv.end(), command.argv.begin(), command.argv.end());
    send_argv(argv, &LoopClient::on_reply);
  }

  void send_argv(const std::vector<std::string>& argv, redisCallbackFn* callback) {
    if (context_ == nullptr) {
      std::string error;
      if (!open(&error)) {
        // Delivered from the loop, never from inside this call: no unbounded recursion.
        pending_ = RedisResult{RedisErrorKind::kRefused, error, {}};
        in_flight_ = true;
        return schedule(0, Next::kDeliver);
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
    if (callback == &LoopClient::on_reply) in_flight_ = true;
    if (redisAsyncCommandArgv(context_, callback, this, static_cast<int>(argv.size()),
                              pointers.data(), lengths.data()) != REDIS_OK) {
      pending_ = closed_result(context_);
      in_flight_ = true;
      return schedule(0, Next::kDeliver);
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
      client->schedule(0, Next::kDeliver);
      return;
    }
    client->pending_ = result_of(*static_cast<redisReply*>(reply));
    client->deliver();
  }

  void deliver() {
    in_flight_ = false;
    RedisResult result = std::move(pending_);
    if (command_.script != nullptr && result.error == RedisErrorKind::kReplyError) {
      // The server lost its script cache (restart, SCRIPT FLUSH): send the source once.
      if (result.message.starts_with("NOSCRIPT") && !eval_retried_) return send_eval(command_);
      result.message = "script " + command_.script->name() + ": " + result.message;
    }
    const Awaiting awaiting = std::exchange(awaiting_, Awaiting::kNothing);
    if (awaiting == Awaiting::kAcquire) return on_acquire(std::move(result));
    if (awaiting == Awaiting::kRelease) return on_release(std::move(result));
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

  // --- timers --------------------------------------------------------------------------------

  void schedule(Nanos delay, Next next) {
    next_ = next;
    const timeval tv = to_timeval(delay);
    event_add(timer_, &tv);
  }

  static void on_timer(int /*fd*/, short /*what*/, void* self) {
    auto* client = static_cast<LoopClient*>(self);
    switch (client->next_) {
      case Next::kBeginCycle:
        return client->begin_cycle();
      case Next::kStartAcquire:
        return client->start_acquire();
      case Next::kAttempt:
        return client->attempt();
      case Next::kAfterWork:
        return client->after_work();
      case Next::kDeliver:
        return client->deliver();
    }
  }

  EventLoopWorkload& owner_;
  RunContext& run_;
  const Scenario& scenario_;
  const Workload& workload_;
  const LockVariant& variant_;
  int index_;
  std::string name_;
  ClientLog& log_;
  Rng rng_;
  Rng wait_rng_;
  std::string logical_key_;
  std::string full_key_;
  bool timed_ = false;
  Nanos end_ns_ = 0;
  bool open_loop_ = false;
  Nanos interval_ns_ = 0;
  Nanos due_ns_ = -1;

  redisAsyncContext* context_ = nullptr;
  event* timer_ = nullptr;
  Next next_ = Next::kBeginCycle;
  Awaiting awaiting_ = Awaiting::kNothing;
  bool in_flight_ = false;
  bool eval_retried_ = false;
  bool setup_pending_ = false;
  int setup_left_ = 0;  // set-up replies still to come
  bool closing_ = false;
  std::string setup_error_;
  RedisResult pending_;
  OneCommand command_;
  bool done_ = false;

  int cycle_ = 0;
  std::int32_t attempts_ = 0;
  Nanos deadline_ns_ = 0;
  Nanos sent_ns_ = 0;
  std::string held_token_;
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
  Connection setup(run_.request().endpoint, ConnectionOptions{});
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
}

void EventLoopWorkload::client_done() {
  if (active_ > 0 && --active_ == 0) event_base_loopbreak(base_);
  run_.changed.notify_all();
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
