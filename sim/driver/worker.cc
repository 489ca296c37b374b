// The `locksim worker` process: one client of a run behind the worker protocol
// (worker_protocol.h). It runs a built-in lock variant with the scenario's wait strategy, and
// renews on a thread of its own while it holds a renewing lock, so a SIGSTOP freezes both.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <condition_variable>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include "sim/core/clock.h"
#include "sim/driver/client.h"
#include "sim/driver/fenced_store.h"
#include "sim/driver/wait.h"
#include "sim/driver/worker_protocol.h"
#include "sim/lock/registry.h"

namespace locksim {
namespace {

using driver_internal::error_kind;

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

// read_line: the next line of stdin; false at its end.
bool read_line(std::string& line) {
  line.clear();
  for (;;) {
    char c = 0;
    const ssize_t n = ::read(STDIN_FILENO, &c, 1);
    if (n == 0) return false;
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (c == '\n') return true;
    if (line.size() >= kMaxLine) return false;
    line.push_back(c);
  }
}

nlohmann::json failure(const nlohmann::json& request, const RedisResult& error) {
  return {{"id", request.value("id", 0)},
          {"result", error.indeterminate() ? "info" : "fail"},
          {"error", to_string(error_kind(error.error))},
          {"message", error.message}};
}

nlohmann::json reply(const nlohmann::json& request, std::string_view result) {
  return {{"id", request.value("id", 0)}, {"result", result}};
}

bool needs_reconnect(const RedisResult& result) {
  return result.error == RedisErrorKind::kTimeout || result.error == RedisErrorKind::kClosed ||
         result.error == RedisErrorKind::kProtocol;
}

// Renewal: the worker's watchdog, extending the held lock every period until stopped.
class Renewal {
 public:
  Renewal(Output& out, const Endpoint& endpoint, const LockVariant& variant, Rng rng)
      : out_(out), endpoint_(endpoint), variant_(variant), rng_(rng) {}
  ~Renewal() { stop(); }

  void start(const std::string& key, const std::string& token, std::int64_t ttl_ms,
             std::int64_t period_ms) {
    stop();
    stop_ = false;
    thread_ = std::thread([this, key, token, ttl_ms, period_ms] {
      Connection connection(endpoint_, ConnectionOptions{});
      const LockContext context{connection, rng_, {}, {}, 0};
      std::unique_lock<std::mutex> lock(mutex_);
      // Each renewal falls due a period after the previous one returned, a deadline taken before
      // anything is written: a worker stopped (SIGSTOP) anywhere after that, even before it went
      // back to sleep, renews at once when it is continued if the deadline has passed meanwhile.
      auto due = std::chrono::steady_clock::now() + std::chrono::milliseconds(period_ms);
      while (!stop_) {
        wake_.wait_until(lock, due, [this] { return stop_; });
        if (stop_) break;
        lock.unlock();
        out_.write({{"event", "extend"}, {"phase", "invoke"}});
        if (connection.broken()) connection.reconnect();
        const ExtendResult result = variant_.extend(context, key, token, ttl_ms);
        due = std::chrono::steady_clock::now() + std::chrono::milliseconds(period_ms);
        if (result.outcome == ExtendResult::Outcome::kError) {
          nlohmann::json event = failure({}, result.error);
          event.erase("id");
          event["event"] = "extend";
          out_.write(event);
          if (needs_reconnect(result.error)) connection.reconnect();
        } else {
          out_.write({{"event", "extend"},
                      {"result", "ok"},
                      {"extended", result.outcome == ExtendResult::Outcome::kExtended ? 1 : 0}});
        }
        lock.lock();
      }
    });
  }

  void stop() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

 private:
  Output& out_;
  const Endpoint& endpoint_;
  const LockVariant& variant_;
  Rng rng_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;  // guarded by mutex_
};

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
        connection_(endpoint_, ConnectionOptions{}),
        wait_(make_wait_strategy(lock_.wait, endpoint_, rng_.fork(driver_internal::kWaitStream))),
        renewal_(out, endpoint_, variant, rng_.fork(1000)) {
    if (!variant.multi_server()) return;
    // As a thread client's; a node down at the start is not an error.
    const auto timeout = driver_internal::node_timeout(lock_.ttl_ms);
    for (const Endpoint& server : servers) {
      nodes_.push_back(std::make_unique<Connection>(server, ConnectionOptions{timeout, timeout}));
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

 private:
  // context: a LockContext whose checkpoints act on the request's crash_at and pause_at.
  LockContext context(const nlohmann::json& request) {
    LockContext context{connection_, rng_, {}, client_, lock_.queue_timeout_ms};
    for (const auto& node : nodes_) {
      if (node->broken()) node->reconnect();
    }
    context.nodes = node_pointers_;
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

  nlohmann::json acquire(const nlohmann::json& request) {
    const std::string key = request.at("key").get<std::string>();
    const std::int64_t ttl_ms = request.at("ttl_ms").get<std::int64_t>();
    // The worker's own clock only bounds its wait; nothing it measures is recorded.
    const Nanos received = clock_.now_ns();
    const Nanos deadline = received + ms_to_ns(request.at("timeout_ms").get<std::int64_t>());
    const LockContext lock_context = context(request);
    for (int attempts = 1;; ++attempts) {
      if (connection_.broken()) connection_.reconnect();
      const Nanos sent = clock_.now_ns();
      AcquireAttempt attempt = variant_.try_acquire(lock_context, key, ttl_ms);
      if (attempt.outcome == AcquireAttempt::Outcome::kAcquired) {
        nlohmann::json ok = reply(request, "ok");
        ok["token"] = attempt.token;
        if (attempt.fencing >= 0) ok["fencing"] = attempt.fencing;
        ok["attempts"] = attempts;
        if (attempt.validity_ms >= 0) ok["validity_ms"] = attempt.validity_ms;
        if (!attempt.granted_on.empty()) ok["granted_on"] = attempt.granted_on;
        // A duration, not an instant: the harness adds it to its own invoke time, which came
        // before the request arrived here, so the lease start it derives is never too late.
        ok["sent_after_ns"] = sent - received;
        if (variant_.renews()) {
          renewal_.start(key, attempt.token, ttl_ms, lock_.renew_period_ms);
        }
        return ok;
      }
      if (attempt.outcome == AcquireAttempt::Outcome::kError) {
        nlohmann::json failed = failure(request, attempt.error);
        failed["attempts"] = attempts;
        if (needs_reconnect(attempt.error)) connection_.reconnect();
        return failed;
      }
      if (attempts == 1) out_.write({{"event", "busy"}});
      const Nanos now = clock_.now_ns();
      if (now >= deadline) {
        nlohmann::json failed = reply(request, "fail");
        failed["error"] = to_string(ErrorKind::kGaveUp);
        failed["attempts"] = attempts;
        return failed;
      }
      const auto sleep = [](Nanos d) {
        std::this_thread::sleep_for(std::chrono::nanoseconds(d));
        return true;
      };
      wait_->wait(sleep, key, attempts, deadline - now);
    }
  }

  nlohmann::json release(const nlohmann::json& request) {
    renewal_.stop();
    if (connection_.broken()) connection_.reconnect();
    const std::string key = request.at("key").get<std::string>();
    const ReleaseResult result =
        variant_.release(context(request), key, request.at("token").get<std::string>());
    if (result.outcome == ReleaseResult::Outcome::kError) {
      if (needs_reconnect(result.error)) connection_.reconnect();
      return failure(request, result.error);
    }
    if (result.outcome == ReleaseResult::Outcome::kReleased) wait_->on_release(connection_, key);
    nlohmann::json ok = reply(request, "ok");
    ok["deleted"] = result.deleted;
    return ok;
  }

  nlohmann::json extend(const nlohmann::json& request) {
    if (connection_.broken()) connection_.reconnect();
    const ExtendResult result =
        variant_.extend(context(request), request.at("key").get<std::string>(),
                        request.at("token").get<std::string>(),
                        request.at("ttl_ms").get<std::int64_t>());
    if (result.outcome == ExtendResult::Outcome::kError) return failure(request, result.error);
    nlohmann::json ok = reply(request, "ok");
    ok["extended"] = result.outcome == ExtendResult::Outcome::kExtended ? 1 : 0;
    return ok;
  }

  nlohmann::json read(const nlohmann::json& request) {
    const nlohmann::json& resource = request.at("resource");
    const std::string key = resource.at("key").get<std::string>();
    const std::string kind = resource.at("kind").get<std::string>();
    const bool counter = kind == "counter" || kind == "fenced_counter";
    if (connection_.broken()) connection_.reconnect();
    RedisResult result =
        counter ? connection_.command({"GET", key})
                : connection_.command({"HEXISTS", key, request.value("record", std::string())});
    if (!result.ok()) return failure(request, result);
    std::int64_t value = 0;
    if (!counter) {
      value = result.reply.integer;
    } else if (!result.reply.is_nil()) {
      const std::string& text = result.reply.str;
      const auto parsed = std::from_chars(text.data(), text.data() + text.size(), value);
      if (parsed.ec != std::errc() || parsed.ptr != text.data() + text.size()) {
        result.error = RedisErrorKind::kUnexpectedReply;
        result.message = "the counter holds \"" + text.substr(0, 40) + "\", not an integer";
        return failure(request, result);
      }
    }
    nlohmann::json ok = reply(request, "ok");
    ok["value"] = value;
    return ok;
  }

  nlohmann::json write(const nlohmann::json& request) {
    const nlohmann::json& resource = request.at("resource");
    const std::string key = resource.at("key").get<std::string>();
    const std::string kind = resource.at("kind").get<std::string>();
    if (connection_.broken()) connection_.reconnect();
    if (kind == "fenced_counter") {
      // The store is shown the fencing number the harness sends (-1: the grant had none).
      const std::int64_t fencing = request.value("fencing", std::int64_t{-1});
      const RedisResult result =
          fenced_store_write(connection_, key, request.at("value").get<std::int64_t>(), fencing);
      if (!result.ok()) return failure(request, result);
      if (result.reply.is_integer(0)) {
        nlohmann::json refused = reply(request, "fail");
        refused["error"] = to_string(ErrorKind::kFenced);
        refused["message"] = "fencing number " + std::to_string(fencing) +
                             " is lower than one the store has accepted";
        return refused;
      }
      return reply(request, "ok");
    }
    const RedisResult result =
        kind == "counter"
            ? connection_.command(
                  {"SET", key, std::to_string(request.at("value").get<std::int64_t>())})
            : connection_.command({"HSET", key, request.value("record", std::string()), client_});
    if (!result.ok()) return failure(request, result);
    return reply(request, "ok");
  }

  Output& out_;
  RunClock clock_;
  Endpoint endpoint_;
  const LockVariant& variant_;
  std::string client_;
  Rng rng_;
  LockConfig lock_;
  Connection connection_;
  std::vector<std::unique_ptr<Connection>> nodes_;  // a multi-server variant's, by server
  std::vector<Connection*> node_pointers_;
  std::unique_ptr<WaitStrategy> wait_;
  Renewal renewal_;
};

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
          {"renew_period_ms", lock.renew_period_ms},
          {"queue_timeout_ms", lock.queue_timeout_ms},
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
  lock.renew_period_ms = j.at("renew_period_ms").get<std::int64_t>();
  lock.queue_timeout_ms = j.at("queue_timeout_ms").get<std::int64_t>();
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
        worker = std::make_unique<Worker>(out, endpoint_from_json(request.at("redis")), servers,
                                          *variant,
                                          request.at("client").get<std::string>(),
                                          request.at("seed").get<std::uint64_t>(),
                                          lock_from_json(request.at("lock")));
        const RedisResult* error = worker->connect_error();
        out.write(error != nullptr ? failure(request, *error) : reply(request, "ok"));
      } else if (worker == nullptr) {
        nlohmann::json failed = reply(request, "fail");
        failed["error"] = "protocol";
        failed["message"] = "\"" + op + "\" before \"connect\"";
        out.write(failed);
      } else {
        out.write(worker->handle(request));
      }
    } catch (const nlohmann::json::exception& error) {
      nlohmann::json failed = reply(request, "fail");
      failed["error"] = "protocol";
      failed["message"] = std::string("malformed \"") + op + "\" request: " + error.what();
      out.write(failed);
    }
  }
  return 0;
}

}  // namespace locksim
