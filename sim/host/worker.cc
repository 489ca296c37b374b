// The `locksim worker` process: one client of a run behind the worker protocol
// (worker_protocol.h). It runs a built-in lock variant with the scenario's wait strategy, and
// renews on a thread of its own while it holds a renewing lock, so a SIGSTOP freezes both.
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include "sim/client/acquire.h"
#include "sim/client/release.h"
#include "sim/core/clock.h"
#include "sim/host/client.h"
#include "sim/client/resource.h"
#include "sim/run/run_context.h"
#include "sim/client/wait.h"
#include "sim/client/watchdog.h"
#include "sim/host/worker_codec.h"
#include "sim/host/worker_protocol.h"
#include "sim/history/transfer.h"
#include "sim/history/utf8.h"
#include "sim/lock/registry.h"
#include "sim/plan/plan.h"
#include "sim/scenario/loader.h"

namespace locksim {
namespace {


// kMaxLine: a request longer than this is refused (the harness never sends one).
constexpr std::size_t kMaxLine = 1 << 20;

// Output: stdout, one JSON object per line; written by the main and the renewal thread.
class Output {
 public:
  void write(const nlohmann::json& message) {
    const std::string line = message.dump() + "\n";
    std::lock_guard<std::mutex> lock(mutex_);
    std::size_t done = 0;
    while (done < line.size()) {
      const ssize_t n = ::write(STDOUT_FILENO, line.data() + done, line.size() - done);
      if (n <= 0) {
        if (n < 0 && errno == EINTR) continue;
        _exit(0);  // the harness is gone
      }
      done += static_cast<std::size_t>(n);
    }
  }

 private:
  std::mutex mutex_;
};

// Stdin, read in blocks (a byte per read(2) cost a system call per byte of every request). One
// thread reads at a time: the main thread, or a workload's StdinWatch while the main thread runs
// the workload.
char g_input[1 << 16];
std::size_t g_begin = 0;
std::size_t g_end = 0;

// line_buffered: whether a whole line is already read and waits in the buffer.
bool line_buffered() { return std::memchr(g_input + g_begin, '\n', g_end - g_begin) != nullptr; }

// g_held: lines a workload's StdinWatch read that were not for it, for the main thread after.
std::deque<std::string> g_held;

// read_stdin_line: the next line of stdin; false at its end.
bool read_stdin_line(std::string& line) {
  line.clear();
  for (;;) {
    const char* start = g_input + g_begin;
    const auto* newline = static_cast<const char*>(std::memchr(start, '\n', g_end - g_begin));
    const std::size_t take = newline ? static_cast<std::size_t>(newline - start) : g_end - g_begin;
    if (line.size() + take > kMaxLine) return false;
    line.append(start, take);
    g_begin += take;
    if (newline) {
      ++g_begin;  // the newline itself
      return true;
    }
    g_begin = g_end = 0;
    const ssize_t n = ::read(STDIN_FILENO, g_input, sizeof g_input);
    if (n == 0) return false;
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    g_end = static_cast<std::size_t>(n);
  }
}

// read_line: the next request: one held back during a workload, else the next line of stdin.
bool read_line(std::string& line) {
  if (g_held.empty()) return read_stdin_line(line);
  line = std::move(g_held.front());
  g_held.pop_front();
  return true;
}

nlohmann::json failure(const nlohmann::json& request, const RedisResult& error) {
  return host::with_id(request, host::failure_to_json(failure_of(error)));
}

nlohmann::json reply(const nlohmann::json& request, std::string_view result) {
  return {{"id", request.value("id", 0)}, {"result", result}};
}

// Worker: the state of one worker process after `connect`.
class Worker {
 public:
  // servers: with a multi-server variant, every server of the topology (connect's "servers").
  Worker(Output& out, Endpoint endpoint, const std::vector<Endpoint>& servers,
         const LockVariant& variant, std::string client, std::uint64_t seed, LockConfig lock)
      : out_(out),
        endpoint_(std::move(endpoint)),
        variant_(variant),
        client_(std::move(client)),
        rng_(seed),
        lock_(std::move(lock)),
        connection_(endpoint_, host::client_connection(lock_)),
        wait_(make_wait_strategy(lock_.wait, dial_hiredis(endpoint_),
                                 rng_.fork(host::kWaitStream), clock_.base())),
        renewal_(variant, clock_.base(), os_threads(),
                 [dial = dial_hiredis(endpoint_),
                  options = host::client_connection(lock_)] { return dial(options); }) {
    if (!variant.multi_server()) return;
    // As a thread client's; a node down at the start is not an error.
    const auto timeout = host::node_timeout(lock_.ttl_ms);
    for (const Endpoint& server : servers) {
      nodes_.push_back(
          std::make_unique<HiredisConnection>(server, ConnectionOptions{timeout, timeout}));
      node_pointers_.push_back(nodes_.back().get());
    }
  }

  const RedisResult* connect_error() const {
    return connection_.broken() ? &connection_.last_error() : nullptr;
  }

  nlohmann::json handle(const nlohmann::json& request) {
    const std::string op = request.value("op", "");
    if (request.value("reconnect", false)) {
      // A server of the topology was killed, restarted or replaced since the last request: a
      // connection to it may look open and be dead.
      connection_.reconnect();
      for (const auto& node : nodes_) node->reconnect();
    }
    if (op == "acquire") return acquire(request);
    if (op == "release") return release(request);
    if (op == "extend") return extend(request);
    if (op == "stop_renewal") {
      renewal_.stop();
      return reply(request, "ok");
    }
    if (op == "read") return read(request);
    if (op == "write") return write(request);
    return {{"id", request.value("id", 0)},
            {"result", "fail"},
            {"error", "protocol"},
            {"message", "unknown op \"" + op + "\""}};
  }

  // set_clock_offset_ms: how far this client's own clock runs ahead (connect's clock_offset_ms).
  void set_clock_offset_ms(std::int64_t offset_ms) { clock_offset_ms_ = offset_ms; }
  // set_clock_drift_ms_per_s: how many ms this client's own clock gains each second of the run
  // (connect's clock_drift_ms_per_s), from the run's time 0 that later requests carry.
  void set_clock_drift_ms_per_s(std::int64_t drift) { clock_drift_ms_per_s_ = drift; }

 private:
  // context: a LockContext whose checkpoints act on the request's crash_at and pause_at.
  LockContext context(const nlohmann::json& request) {
    for (const auto& node : nodes_) {
      if (node->broken()) node->reconnect();
    }
    LockContext context{.connection = connection_,
                        .rng = rng_,
                        .clock = clock_.base(),
                        .waiter_id = client_,
                        .queue_timeout_ms = lock_.queue_timeout_ms,
                        .nodes = node_pointers_,
                        .permits = lock_.permits,
                        .clock_offset_ms = clock_offset_ms_,
                        .clock_drift_ms_per_s = clock_drift_ms_per_s_,
                        .clock_drift_origin_ns = request.value("clock_origin_ns", Nanos{0}),
                        .ttl_ms = lock_.ttl_ms,
                        .read = request.value("mode", "") == "read"};
    const std::string crash_at = request.value("crash_at", "");
    const std::string pause_at = request.value("pause_at", "");
    if (crash_at.empty() && pause_at.empty()) return context;
    context.checkpoint = [this, crash_at, pause_at](std::string_view point, CallState state) {
      const bool crash = point == crash_at;
      if (!crash && point != pause_at) return;
      out_.write({{"event", "at"},
                  {"point", point},
                  {"state", state == CallState::kBusy ? "busy" : "open"},
                  {"then", crash ? "crash" : "pause"}});
      if (crash) {
        // A process dying between two commands: the kernel closes its connections.
        ::kill(getpid(), SIGKILL);
      }
      std::string line;
      while (read_line(line)) {
        if (nlohmann::json::parse(line, nullptr, false).value("op", "") == "continue") return;
      }
      _exit(0);  // the harness is gone
    };
    return context;
  }

  // AcquireOnWorker: the acquire loop's host in the worker: attempts and waits block.
  class AcquireOnWorker final : public AcquireHost {
   public:
    AcquireOnWorker(Worker& worker, const LockContext& context, const std::string& key,
                    std::int64_t ttl_ms)
        : worker_(worker), context_(context), key_(key), ttl_ms_(ttl_ms) {}
    void prepare() override {
      if (worker_.connection_.broken()) worker_.connection_.reconnect();
    }
    const RedisResult* unreachable() override {
      // As a thread client's: a lock over several servers counts a refused node as not granting.
      if (!worker_.nodes_.empty()) return nullptr;
      const Connection& connection = worker_.connection_;
      return connection.broken() && connection.last_error().error == RedisErrorKind::kRefused
                 ? &connection.last_error()
                 : nullptr;
    }
    Task<void> attempt(AcquireAttempt& out) override {
      out = worker_.variant_.try_acquire(context_, key_, ttl_ms_);
      co_return;
    }
    Ask<bool> wait(int failed_attempts, Nanos max_ns) override {
      const Clock& clock = worker_.clock_.base();
      const auto sleep = [&clock](Nanos d) {
        clock.sleep_for(d);
        return true;
      };
      worker_.wait_->wait(sleep, key_, failed_attempts, max_ns);
      return Ask<bool>(true);
    }
    Nanos now() override { return worker_.clock_.now_ns(); }
    // The harness ends a worker whose run stops; the worker itself never sees a stop.
    bool stopping() override { return false; }
    void busy() override { worker_.out_.write({{"event", "busy"}}); }

   private:
    Worker& worker_;
    const LockContext& context_;
    const std::string& key_;
    std::int64_t ttl_ms_;
  };

  nlohmann::json acquire(const nlohmann::json& request) {
    const std::string key = request.at("key").get<std::string>();
    const std::int64_t ttl_ms = request.at("ttl_ms").get<std::int64_t>();
    // The worker's own clock only bounds its wait; nothing it measures is recorded.
    const Nanos received = clock_.now_ns();
    const Nanos deadline = received + ms_to_ns(request.at("timeout_ms").get<std::int64_t>());
    std::string acquisition_token;  // LockContext::acquisition_token: one per acquire call
    LockContext lock_context = context(request);
    lock_context.acquisition_token = &acquisition_token;
    AcquireOnWorker host(*this, lock_context, key, ttl_ms);
    const AcquireEnd end = run_inline(acquire_loop(host, deadline));
    if (end.kind == AcquireEnd::Kind::kAcquired && variant_.renews()) {
      start_renewal(key, end.attempt.token, ttl_ms);
    }
    if (end.kind == AcquireEnd::Kind::kError && needs_reconnect(end.attempt.error)) {
      connection_.reconnect();
    }
    // The worker never stops of itself (the harness ends it), so an acquire that did not get the
    // lock gave up.
    return host::with_id(request,
                                    host::acquire_to_json(outcome_of(end), received));
  }

  // start_renewal: the watchdog of the lock just acquired; its events go to the harness.
  void start_renewal(const std::string& key, const std::string& token, std::int64_t ttl_ms) {
    Watchdog::Hooks hooks;
    hooks.invoke = [this] {
      // When it is sent, by the machine's monotonic clock: the harness's own stamp (when the line
      // arrives) can be later, which would move the lease's earliest end past the truth.
      out_.write(
          {{"event", "extend"}, {"phase", "invoke"}, {"monotonic_ns", clock_.base().now_ns()}});
    };
    hooks.completed = [this](const ExtendResult& result) {
      nlohmann::json event = host::extend_to_json(outcome_of(result));
      event["event"] = "extend";
      out_.write(event);
    };
    renewal_.start({.key = key,
                    .token = token,
                    .ttl_ms = ttl_ms,
                    .period_ns = ms_to_ns(lock_.renew_period_ms),
                    .rng = rng_.fork(1000),
                    .waiter_id = client_,
                    .queue_timeout_ms = lock_.queue_timeout_ms},
                   std::move(hooks));
  }

  // ReleaseOnWorker: carry_out_release's host for one release request: the worker's own
  // connection and wait strategy; it records nothing (the harness does).
  class ReleaseOnWorker final : public ReleaseIo {
   public:
    ReleaseOnWorker(Worker& worker, const nlohmann::json& request)
        : worker_(worker), request_(request) {}
    Task<ReleaseResult> send_release(const std::string& key, const std::string& token) override {
      co_return worker_.variant_.release(worker_.context(request_), key, token);
    }
    void reconnect() override { worker_.connection_.reconnect(); }
    Task<void> signal_release(const std::string& key) override {
      worker_.wait_->on_release(worker_.connection_, key);
      co_return;
    }

   private:
    Worker& worker_;
    const nlohmann::json& request_;
  };

  nlohmann::json release(const nlohmann::json& request) {
    renewal_.stop();
    if (connection_.broken()) connection_.reconnect();
    ReleaseOnWorker io(*this, request);
    const ReleaseResult result = run_inline(carry_out_release(
        io, request.at("key").get<std::string>(), request.at("token").get<std::string>()));
    return host::with_id(request, host::release_to_json(outcome_of(result)));
  }

  nlohmann::json extend(const nlohmann::json& request) {
    if (connection_.broken()) connection_.reconnect();
    const ExtendResult result =
        variant_.extend(context(request), request.at("key").get<std::string>(),
                        request.at("token").get<std::string>(),
                        request.at("ttl_ms").get<std::int64_t>());
    return host::with_id(request, host::extend_to_json(outcome_of(result)));
  }

  // resource: the kind and key of a read or write request's resource (nullopt: a kind the
  // protocol does not know).
  static std::optional<std::pair<ResourceConfig::Kind, std::string>> resource(
      const nlohmann::json& request) {
    const nlohmann::json& resource = request.at("resource");
    const std::optional<ResourceConfig::Kind> kind =
        resource_kind_of(resource.at("kind").get<std::string>());
    if (!kind) return std::nullopt;
    return std::make_pair(*kind, resource.at("key").get<std::string>());
  }
  static nlohmann::json unknown_kind(const nlohmann::json& request) {
    nlohmann::json failed = reply(request, "fail");
    failed["error"] = "protocol";
    failed["message"] = "unknown resource kind " + request.at("resource").at("kind").dump();
    return failed;
  }

  nlohmann::json read(const nlohmann::json& request) {
    const auto target = resource(request);
    if (!target) return unknown_kind(request);
    const auto& [kind, key] = *target;
    if (connection_.broken()) connection_.reconnect();
    const ResourceRead read = read_resource(
        connection_, kind, key, request.value("record", std::string()));
    return host::with_id(request, host::read_to_json(outcome_of(read)));
  }

  nlohmann::json write(const nlohmann::json& request) {
    const auto target = resource(request);
    if (!target) return unknown_kind(request);
    const auto& [kind, key] = *target;
    const bool counts = kind != ResourceConfig::Kind::kFindOrCreate;
    if (connection_.broken()) connection_.reconnect();
    // A fenced store is shown the fencing number the harness sends (-1: the grant had none).
    const ResourceWrite write = write_resource(
        connection_, kind, key, request.value("record", std::string()),
        counts ? request.at("value").get<std::int64_t>() : 1, client_,
        request.value("fencing", std::int64_t{-1}));
    return host::with_id(request, host::write_to_json(outcome_of(write)));
  }

  Output& out_;
  RunClock clock_;
  Endpoint endpoint_;
  const LockVariant& variant_;
  std::string client_;
  Rng rng_;
  LockConfig lock_;
  std::int64_t clock_offset_ms_ = 0;
  std::int64_t clock_drift_ms_per_s_ = 0;
  HiredisConnection connection_;
  std::vector<std::unique_ptr<Connection>> nodes_;  // a multi-server variant's, by server
  std::vector<Connection*> node_pointers_;
  std::unique_ptr<WaitStrategy> wait_;
  Watchdog renewal_;
};

// StdinWatch: while a workload runs in the worker, a thread of its own watches stdin ("stop" or
// its end stops the run) and tells the harness how many cycles are done about every 200 ms (the
// run's progress, and a sign of life).
class StdinWatch {
 public:
  StdinWatch(Output& out, RunContext& run, StopSignal& stop)
      : out_(out), run_(run), stop_(stop), wake_(::eventfd(0, EFD_CLOEXEC)) {
    thread_ = std::thread([this] { watch(); });
  }
  ~StdinWatch() {
    const std::uint64_t one = 1;
    if (wake_ >= 0) (void)!::write(wake_, &one, sizeof one);
    thread_.join();
    if (wake_ >= 0) ::close(wake_);
  }
  StdinWatch(const StdinWatch&) = delete;
  StdinWatch& operator=(const StdinWatch&) = delete;

 private:
  void watch() {
    bool input = true;  // stdin still open
    std::int64_t told = -1;
    for (;;) {
      // A line that came with the workload request is in the buffer already.
      const bool waiting = input && line_buffered();
      pollfd fds[2] = {{wake_, POLLIN, 0}, {input ? STDIN_FILENO : -1, POLLIN, 0}};
      const int ready = ::poll(fds, 2, waiting ? 0 : 200);
      if (ready < 0 && errno != EINTR) return;
      if (fds[0].revents != 0) return;
      if (input && (waiting || fds[1].revents != 0)) {
        std::string line;
        if (!read_stdin_line(line)) {
          input = false;  // the harness is gone: stop, and let PR_SET_PDEATHSIG do the rest
          stop_.request();
        } else if (const nlohmann::json request = nlohmann::json::parse(line, nullptr, false);
                   request.is_object() && request.value("op", "") == "stop") {
          stop_.request();
        } else {
          g_held.push_back(std::move(line));  // answered after the workload
        }
      }
      const std::int64_t done = run_.cycles_done.load();
      if (done != told) {
        out_.write({{"event", "cycles"}, {"done", done}});
        told = done;
      }
    }
  }

  Output& out_;
  RunContext& run_;
  StopSignal& stop_;
  int wake_;
  std::thread thread_;
};

// run_workload: the "workload" op. The client's whole workload runs here, by the code a thread
// client runs (ThreadClient and workload_client) on the run's clock (the harness's time 0, read
// from the same monotonic clock), with no round trip to the harness per call. Its history goes
// to the file the request names; the reply says how the run ended.
nlohmann::json run_workload(const nlohmann::json& request, const nlohmann::json& connected,
                            Output& out) {
  const LockVariant* variant = find_variant(connected.at("variant").get<std::string>());
  const auto index = request.at("client").get<std::size_t>();
  Scenario scenario =
      parse_scenario(request.at("scenario"), "the workload request's scenario", variant_names());
  scenario.executor = Executor::kThreads;
  if (variant == nullptr || scenario.scripted() || index >= scenario.clients.size() ||
      variant->multi_server()) {
    nlohmann::json failed = reply(request, "fail");
    failed["error"] = "protocol";
    failed["message"] = "this worker runs only a workload of a one-server variant";
    return failed;
  }
  StopSignal stop;
  const RunRequest run_request{scenario,
                               *variant,
                               request.at("seed").get<std::uint64_t>(),
                               endpoint_from_json(connected.at("redis")),
                               request.at("key_prefix").get<std::string>(),
                               stop,
                               {},
                               false,
                               {}};
  const Plan plan = compile_plan(scenario, run_request.seed);
  RunContext run(run_request, plan);
  run.start_clock_at(request.at("origin_ns").get<Nanos>());
  {
    host::ThreadClient client(run, static_cast<int>(index));
    run.nemesis().attach(index, &client, {});
    if (const std::string error = client.connect(); !error.empty()) {
      nlohmann::json failed = reply(request, "fail");
      failed["error"] = to_string(ErrorKind::kClosed);
      failed["message"] = error;
      return failed;
    }
    StdinWatch watch(out, run, stop);
    host::run_workload_client(run, client);
  }  // the client and its renewal thread are gone: nothing records any more
  const bool crashed = run.crashed.at(index);
  const std::int64_t cycles = run.cycles_done.load();
  const bool stopped_early = run.stopped_early.load();
  nlohmann::json notes = run.take_notes();
  write_history_transfer(request.at("history").get<std::string>(),
                         std::move(run.recorder()).merge());
  nlohmann::json ok = reply(request, "ok");
  ok["cycles_done"] = cycles;
  ok["stopped_early"] = stopped_early;
  ok["crashed"] = crashed;
  ok["notes"] = std::move(notes);
  return ok;
}

}  // namespace

nlohmann::json endpoint_to_json(const Endpoint& endpoint) {
  return {{"host", endpoint.host},
          {"port", endpoint.port},
          {"username", endpoint.username},
          {"password", endpoint.password},
          {"db", endpoint.db}};
}

Endpoint endpoint_from_json(const nlohmann::json& j) {
  Endpoint endpoint;
  endpoint.host = j.at("host").get<std::string>();
  endpoint.port = j.at("port").get<int>();
  endpoint.username = j.value("username", "");
  endpoint.password = j.value("password", "");
  endpoint.db = j.value("db", 0);
  return endpoint;
}

nlohmann::json lock_to_json(const LockConfig& lock) {
  const WaitConfig& wait = lock.wait;
  return {{"ttl_ms", lock.ttl_ms},
          {"reply_timeout_ms", lock.reply_timeout_ms},
          {"renew_period_ms", lock.renew_period_ms},
          {"queue_timeout_ms", lock.queue_timeout_ms},
          {"permits", lock.permits},
          {"wait",
           {{"strategy", wait.strategy},
            {"interval_ms", wait.interval_ms},
            {"initial_ms", wait.initial_ms},
            {"factor", wait.factor},
            {"max_ms", wait.max_ms},
            {"jitter", wait.jitter},
            {"fallback_ms", wait.fallback_ms}}}};
}

LockConfig lock_from_json(const nlohmann::json& j) {
  LockConfig lock;
  lock.ttl_ms = j.at("ttl_ms").get<std::int64_t>();
  // Optional in the protocol: a connect written before it existed waits as long as ever.
  lock.reply_timeout_ms = j.value("reply_timeout_ms", LockConfig{}.reply_timeout_ms);
  lock.renew_period_ms = j.at("renew_period_ms").get<std::int64_t>();
  lock.queue_timeout_ms = j.at("queue_timeout_ms").get<std::int64_t>();
  lock.permits = j.value("permits", std::int64_t{1});
  const nlohmann::json& wait = j.at("wait");
  lock.wait.strategy = wait.at("strategy").get<std::string>();
  lock.wait.interval_ms = wait.at("interval_ms").get<std::int64_t>();
  lock.wait.initial_ms = wait.at("initial_ms").get<std::int64_t>();
  lock.wait.factor = wait.at("factor").get<double>();
  lock.wait.max_ms = wait.at("max_ms").get<std::int64_t>();
  lock.wait.jitter = wait.at("jitter").get<std::string>();
  lock.wait.fallback_ms = wait.at("fallback_ms").get<std::int64_t>();
  return lock;
}

int run_worker() {
  // The harness writes to a pipe it may close; a worker outliving it would be an orphan.
  ::signal(SIGPIPE, SIG_IGN);
  Output out;
  std::unique_ptr<Worker> worker;
  nlohmann::json connected;  // the "connect" request
  std::string line;
  while (read_line(line)) {
    const nlohmann::json request = nlohmann::json::parse(line, nullptr, false);
    if (request.is_discarded() || !request.is_object()) {
      out.write({{"result", "fail"}, {"error", "protocol"}, {"message", "not a JSON object"}});
      continue;
    }
    const std::string op = request.value("op", "");
    try {
      if (request.value("v", 0) != kWorkerProtocol) {
        nlohmann::json failed = reply(request, "fail");
        failed["error"] = "protocol";
        failed["message"] = "this worker speaks protocol " + std::to_string(kWorkerProtocol);
        out.write(failed);
      } else if (op == "hello") {
        nlohmann::json hello = reply(request, "ok");
        hello["protocol"] = kWorkerProtocol;
        hello["worker"] = "locksim";
        out.write(hello);
      } else if (op == "connect") {
        const LockVariant* variant = find_variant(request.at("variant").get<std::string>());
        if (variant == nullptr) {
          nlohmann::json failed = reply(request, "fail");
          failed["error"] = "protocol";
          failed["message"] = "unknown variant " + request.at("variant").dump();
          out.write(failed);
          continue;
        }
        std::vector<Endpoint> servers;
        for (const nlohmann::json& server : request.value("servers", nlohmann::json::array())) {
          servers.push_back(endpoint_from_json(server));
        }
        connected = request;
        worker = std::make_unique<Worker>(out, endpoint_from_json(request.at("redis")), servers,
                                          *variant,
                                          request.at("client").get<std::string>(),
                                          request.at("seed").get<std::uint64_t>(),
                                          lock_from_json(request.at("lock")));
        worker->set_clock_offset_ms(request.value("clock_offset_ms", std::int64_t{0}));
        worker->set_clock_drift_ms_per_s(request.value("clock_drift_ms_per_s", std::int64_t{0}));
        const RedisResult* error = worker->connect_error();
        out.write(error != nullptr ? failure(request, *error) : reply(request, "ok"));
      } else if (worker == nullptr) {
        nlohmann::json failed = reply(request, "fail");
        failed["error"] = "protocol";
        failed["message"] = "\"" + op + "\" before \"connect\"";
        out.write(failed);
      } else if (op == "workload") {
        out.write(run_workload(request, connected, out));
      } else {
        out.write(worker->handle(request));
      }
    } catch (const nlohmann::json::exception& error) {
      nlohmann::json failed = reply(request, "fail");
      failed["error"] = "protocol";
      failed["message"] = std::string("malformed \"") + op + "\" request: " + error.what();
      out.write(failed);
    } catch (const std::exception& error) {
      // A workload's scenario the loader refuses, a history file that cannot be written.
      nlohmann::json failed = reply(request, "fail");
      failed["error"] = "protocol";
      failed["message"] = "\"" + op + "\" failed: " + error.what();
      out.write(failed);
    }
  }
  return 0;
}

}  // namespace locksim
