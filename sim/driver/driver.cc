#include "sim/driver/driver.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "sim/driver/runners.h"
#include "sim/host/client.h"
#include "sim/host/event_loop.h"
#include "sim/host/process_client.h"
#include "sim/lock/library_variant.h"
#include "sim/proxy/link_proxy.h"
#include "sim/topology/topology.h"

namespace locksim {
namespace {

using host::DriverClient;
using host::ProcessClient;
using host::ThreadClient;

// client_clock_words: how client `index`'s own clock runs off the others', for its client_clock
// event: "offset +3000 ms", "drift +500 ms/s", or both.
std::string client_clock_words(const Scenario& scenario, std::size_t index) {
  const std::string& name = scenario.clients[index];
  const auto signed_text = [](std::int64_t value) {
    return (value > 0 ? "+" : "") + std::to_string(value);
  };
  std::string words;
  if (const std::int64_t offset_ms = scenario.clock_offset_ms(name); offset_ms != 0) {
    words = "offset " + signed_text(offset_ms) + " ms";
  }
  if (const std::int64_t drift = scenario.clock_drift_ms_per_s(name); drift != 0) {
    words += (words.empty() ? "" : ", ") + std::string("drift ") + signed_text(drift) +
             " ms/s from time 0";
  }
  return words;
}

// delete_run_keys: removes every key under the run's prefix (and nothing else), over a connection
// of the run's runtime. Bounded by the number of SCAN rounds so a huge foreign keyspace cannot
// keep it busy forever.
void delete_run_keys(Runtime& runtime, const RunRequest& request,
                     std::vector<std::string>& notes) {
  const std::unique_ptr<Connection> connected = runtime.connect(request.endpoint, ConnectionOptions{});
  Connection& connection = *connected;
  if (connection.broken()) {
    notes.push_back("cleanup: could not connect to delete the run's keys: " +
                    connection.last_error().describe());
    return;
  }
  // A library may keep its lock under a prefix of its own ("mutex:<key>"), or name other keys
  // after it (Redisson's unlock latches): those too.
  std::vector<std::string> prefixes = {request.key_prefix};
  for (std::string& more : library_prefixes(request.variant, request.key_prefix)) {
    prefixes.push_back(std::move(more));
  }
  for (const std::string& prefix : prefixes) {
    std::string cursor = "0";
    for (int round = 0; round < 100000; ++round) {
      const RedisResult scan =
          connection.command({"SCAN", cursor, "MATCH", prefix + "*", "COUNT", "1000"});
      if (!scan.ok() || scan.reply.elements.size() != 2) {
        notes.push_back("cleanup: SCAN failed: " + scan.describe());
        return;
      }
      for (const Reply& key : scan.reply.elements[1].elements) {
        connection.command({"DEL", key.str});
      }
      cursor = scan.reply.elements[0].str;
      if (cursor == "0") break;
    }
  }
}

// ServerWatch: is the server still answering? Used from the driver's own thread only, over
// connections of the run's runtime. With a topology it watches the current primary, and only
// while the nemesis has not downed it.
class ServerWatch {
 public:
  ServerWatch(Runtime& runtime, const RunRequest& request)
      : runtime_(runtime),
        topology_(request.topology),
        private_server_(request.private_server),
        connection_(runtime.connect(request.admin_endpoint.value_or(request.endpoint), options())) {}

  // healthy: the last check's PING was answered.
  bool healthy() const { return healthy_; }

  // check: "" while the server answers (a busy one is unstuck if locksim owns it); otherwise why
  // it is considered lost. `note` receives what the watch did that a reader should know.
  std::string check(const std::function<void(const std::string&)>& note) {
    if (topology_ != nullptr) {
      // A primary the nemesis killed or paused is not lost; a new primary is watched instead.
      const std::size_t primary = topology_->primary();
      if (!topology_->expected_up(primary)) {
        healthy_ = true;
        timeouts_ = 0;
        return "";
      }
      if (primary != watched_) {
        watched_ = primary;
        connection_ = runtime_.connect(topology_->endpoint(primary), options());
      }
      const std::string lost = check_connection(note);
      return topology_->expected_up(primary) ? lost : "";
    }
    return check_connection(note);
  }

 private:
  static ConnectionOptions options() {
    return ConnectionOptions{std::chrono::milliseconds(1000), std::chrono::milliseconds(1000)};
  }

  std::string check_connection(const std::function<void(const std::string&)>& note) {
    if (connection_->broken()) {
      const RedisResult reconnected = connection_->reconnect();
      if (!reconnected.ok()) return "cannot reconnect: " + reconnected.describe();
    }
    const RedisResult ping = connection_->command({"PING"});
    healthy_ = ping.ok();
    if (ping.ok()) {
      timeouts_ = 0;
      return "";
    }
    if (ping.error == RedisErrorKind::kReplyError && ping.message.starts_with("BUSY")) {
      if (!private_server_) {
        return "the server answers BUSY: a Lua script has run too long; locksim does not kill "
               "scripts on a server it did not start";
      }
      const RedisResult killed = connection_->command({"SCRIPT", "KILL"});
      if (killed.ok() || killed.message.starts_with("NOTBUSY")) {
        note("a Lua script kept the server busy; the harness ended it with SCRIPT KILL");
        return "";
      }
      return "a Lua script keeps the server busy and cannot be killed (" + killed.message +
             "): it wrote before it hung, and only SHUTDOWN NOSAVE would stop it";
    }
    if (ping.error == RedisErrorKind::kTimeout && ++timeouts_ < 3) return "";
    // Never reuse a connection after an I/O error: the next check reconnects, and a server that
    // is gone refuses.
    const RedisResult reconnected = connection_->reconnect();
    if (!reconnected.ok()) return "it stopped answering: " + reconnected.describe();
    return ping.error == RedisErrorKind::kTimeout ? "no reply to PING for 3 s: " + ping.describe()
                                                  : "";
  }

 private:
  Runtime& runtime_;
  const Topology* topology_;
  std::size_t watched_ = 0;
  bool private_server_;
  std::unique_ptr<Connection> connection_;
  int timeouts_ = 0;
  bool healthy_ = false;
};

// take_history: the run's merged history; the harness and the nemesis (listed last, in that
// order) are listed only when they have something to say. The topology's servers are listed, in
// order: grants name them by index.
History take_history(RunContext& run) {
  const bool harness_recorded = run.harness_log().size() > 0;
  const bool nemesis_recorded = run.nemesis_log().size() > 0;
  History history = std::move(run.recorder()).merge();
  if (!nemesis_recorded) {
    history.clients.pop_back();
    if (!harness_recorded) history.clients.pop_back();
  }
  if (const Topology* topology = run.request().topology; topology != nullptr) {
    for (std::size_t i = 0; i < topology->size(); ++i) history.servers.push_back(topology->name(i));
  }
  // A semaphore admits lock.permits holders; a mutex one, whatever the scenario says (and is
  // judged as a mutex: permits 0).
  static_assert(kMaxLockPermits == kMaxPermits);
  if (run.request().variant.semaphore()) {
    history.permits = static_cast<int>(run.scenario().lock.permits);
  }
  history.reentrant = run.request().variant.reentrant();
  history.read_write = run.request().variant.read_write();
  history.client_clocks = run.request().variant.reads_client_clock();
  return history;
}

// interrupted_before_start: the outcome of a run stopped by Ctrl-C or SIGTERM before its clients
// started: a `stop` event, so that its reports say it was interrupted and decided nothing.
RunOutcome interrupted_before_start(RunContext& run, RunOutcome outcome, const std::string& why) {
  run.harness_log().record(EventType::kInfo, Op::kStop, "").stop().reason =
      StopReason::kInterrupted;
  outcome.interrupted = true;
  outcome.notes = run.take_notes();
  outcome.notes.push_back("interrupted while the clients were starting: " + why);
  outcome.history = take_history(run);
  return outcome;
}

double progress_fraction(RunContext& run) {
  const Scenario& scenario = run.scenario();
  if (scenario.workload && scenario.workload->duration_ms > 0) {
    const double total_ns =
        static_cast<double>(ms_to_ns(scenario.workload->warmup_ms + scenario.workload->duration_ms));
    return std::min(1.0, static_cast<double>(run.clock().now_ns()) / total_ns);
  }
  if (scenario.workload) {
    const auto total = static_cast<double>(scenario.workload->clients) *
                       static_cast<double>(scenario.workload->cycles);
    return static_cast<double>(run.cycles_done.load()) / total;
  }
  std::lock_guard<std::mutex> lock(run.mutex);
  return static_cast<double>(run.steps_started) / static_cast<double>(scenario.steps.size());
}

}  // namespace

double estimated_events(const Scenario& scenario, const LockVariant& variant) {
  if (!scenario.workload) return 64.0 * static_cast<double>(scenario.steps.size() + 1);
  const Workload& w = *scenario.workload;
  // acquire invoke and ok, enter, work, exit, release invoke and ok; a few failed attempts' worth
  // of slack; a read and a write with a resource; an extend invoke and ok per renewal period.
  double per_cycle = 8;
  if (scenario.resource.kind != ResourceConfig::Kind::kNone) per_cycle += 2;
  if (variant.renews()) {
    const double period_ms = static_cast<double>(std::max<std::int64_t>(1, scenario.lock.renew_period_ms));
    double inside_ms = static_cast<double>(w.work_ms.max_ms);
    for (const auto& fault : w.drawn_faults) inside_ms += fault->estimated_inside_ms();
    per_cycle += 2.0 * (1.0 + inside_ms / period_ms);
  }
  double cycles = static_cast<double>(w.clients) * static_cast<double>(w.cycles);
  if (w.duration_ms > 0) {
    // Time-bounded: at most what one Redis serves (well under 200k cycles a second on loopback),
    // or what the clients' work and schedule allow, whichever is less.
    const double seconds = static_cast<double>(w.warmup_ms + w.duration_ms) / 1000.0;
    const double per_client_per_s =
        w.arrival_per_s > 0 ? w.arrival_per_s
                            : 1000.0 / std::max(0.005, static_cast<double>(w.work_ms.min_ms +
                                                                            w.rest_ms.min_ms));
    cycles = seconds * std::min(200000.0, static_cast<double>(w.clients) * per_client_per_s);
  }
  return cycles * per_cycle;
}

std::string clients_run_as_refusal(const Scenario& scenario, const LockVariant& variant) {
  if (scenario.executor != Executor::kEventLoop) return "";
  StopSignal unused;
  const RunRequest request{scenario, variant, 0, {}, {}, unused, {}, false, {}};
  const std::string why = host::event_loop_refusal(request);
  if (why.empty()) return "";
  return "\"event_loop\" cannot run " + std::string(variant.name()) + ": " + why +
         "; use \"threads\"";
}

namespace {

// ScenarioRun: one call of run_scenario, on the driver's thread, phase by phase: set_up (what the
// runtime refuses, the link proxies, the clients and their connections, the resource), start (a
// thread per client, the nemesis's, then time 0), watch (until every thread ended) and finish
// (the outcome). The members are declared in the order the phases make them, so they are
// destroyed in the reverse order: the clients before their proxies, all before the run's context.
class ScenarioRun {
 public:
  explicit ScenarioRun(const RunRequest& request)
      : request_(request),
        scenario_(request.scenario),
        plan_(compile_plan(scenario_, request.seed)),
        run_(request, plan_),
        world_(run_.runtime().traits()),
        event_loop_(scenario_.executor == Executor::kEventLoop),
        processes_(scenario_.executor == Executor::kProcesses),
        proxies_(plan_.clients().size()) {}

  RunOutcome run() {
    if (std::optional<RunOutcome> ended = set_up()) return std::move(*ended);
    start();
    watch();
    return finish();
  }

 private:
  static RunOutcome harness_error(std::string why) {
    RunOutcome outcome;
    outcome.harness_error = std::move(why);
    return outcome;
  }

  // set_up: everything before the clients start; an outcome if the run ends before it started (a
  // harness error, or Ctrl-C while the clients connected).
  std::optional<RunOutcome> set_up() {
    if (const std::string why = refusal(); !why.empty()) return harness_error(why);
    if (const std::string error = open_link_proxies(); !error.empty()) return harness_error(error);
    if (std::optional<RunOutcome> ended = connect_clients()) return ended;
    if (const std::string error = initialise_resource(); !error.empty()) {
      return harness_error(error);
    }
    return std::nullopt;
  }

  // refusal: why this run cannot run here ("" if it can; then the nemesis has the topology).
  std::string refusal() {
    if (event_loop_) {
      if (const std::string why = host::event_loop_refusal(request_); !why.empty()) {
        return "\"clients_run_as\": \"event_loop\" cannot run this variant: " + why +
               "; run it with \"clients_run_as\": \"threads\"";
      }
    }
    if ((processes_ && !world_.client_processes) || (event_loop_ && !world_.event_loop)) {
      return "this runtime runs clients as threads only (this scenario needs " +
             std::string(processes_ ? "client processes" : "the event loop") + ")";
    }
    const bool cluster = request_.topology != nullptr && request_.topology->cluster();
    // A library's own cluster client (ioredis's Cluster, redis-py's RedisCluster) follows the
    // cluster's redirections and failovers by itself.
    const LibrarySpec* library = library_spec(request_.variant);
    const bool cluster_library = cluster && processes_ && library != nullptr && library->cluster;
    if (cluster) {
      // The slot-aware client is the thread client's (sim/redis/cluster_connection.h).
      if ((processes_ && !cluster_library) || event_loop_) {
        return "a Redis Cluster topology runs its clients as threads (\"clients_run_as\": "
               "\"threads\"), or as the processes of a library whose adapter has a cluster client "
               "(\"cluster\": true in adapters/libraries.json): locksim's worker processes and the "
               "event loop have no slot-aware client yet";
      }
      if (plan_.proxied_links()) {
        return "a client's link faults (partition, lose_reply, delay, drop_commands) need a proxy "
               "in front of every node a redirection may name; a Redis Cluster topology has none "
               "yet";
      }
    }
    if (request_.topology != nullptr) {
      if (processes_ && !cluster_library && scenario_.changes_primary()) {
        return "client processes cannot follow a change of primary (a worker connects to the "
               "primary of the start, and \"promote\" or \"failover\" moves it); run the clients "
               "as threads";
      }
      run_.nemesis().attach_topology(request_.topology);
    }
    return "";
  }

  // open_link_proxies: one proxy per client link when some fault needs one (a link per server of
  // the topology); they outlive the clients. "" or why they could not start.
  std::string open_link_proxies() {
    if (!plan_.proxied_links()) return "";
    try {
      const std::vector<Endpoint> servers = request_.topology != nullptr
                                                ? request_.topology->endpoints()
                                                : std::vector<Endpoint>{request_.endpoint};
      for (std::size_t i = 0; i < plan_.clients().size(); ++i) {
        std::vector<Endpoint> links;
        for (const Endpoint& server : servers) {
          proxies_[i].push_back(run_.runtime().open_link(server));
          links.push_back(proxies_[i].back()->endpoint());
        }
        run_.set_link_endpoints(i, std::move(links));
      }
    } catch (const std::exception& error) {
      return std::string("cannot start the link proxies: ") + error.what();
    }
    return "";
  }

  // connect_clients: the event loop, or each client (a thread's or a process's), attached to the
  // nemesis and connected; an outcome if one could not connect.
  std::optional<RunOutcome> connect_clients() {
    if (event_loop_) {
      loop_ = std::make_unique<host::EventLoopWorkload>(run_);
      const std::string error = loop_->connect();
      if (!error.empty()) {
        return harness_error("cannot connect to Redis at " + request_.endpoint.redacted() + ": " +
                             error);
      }
    }
    for (std::size_t i = 0; !event_loop_ && i < scenario_.clients.size(); ++i) {
      const int index = static_cast<int>(i);
      if (processes_) {
        clients_.push_back(std::make_unique<ProcessClient>(run_, index));
      } else {
        clients_.push_back(std::make_unique<ThreadClient>(run_, index));
      }
      std::vector<Link*> links;
      for (const auto& proxy : proxies_[i]) links.push_back(proxy.get());
      run_.nemesis().attach(i, clients_.back().get(), std::move(links));
      const std::string error = clients_.back()->connect();
      if (!error.empty() && request_.stop.requested()) {
        // Interrupted while the clients started (an adapter's runtime takes a while): that is
        // what happened, not a broken client.
        return interrupted_before_start(run_, RunOutcome{}, error);
      }
      if (!error.empty()) {
        return harness_error(processes_ ? "client " + scenario_.clients[i] + ": " + error
                                        : "cannot connect to Redis at " +
                                              request_.endpoint.redacted() + ": " + error);
      }
    }
    return std::nullopt;
  }

  // initialise_resource: the protected resource starts in a known state (a counter at its
  // initial stock; a fenced store has accepted no fencing number yet). "" or why it could not.
  std::string initialise_resource() {
    if (!scenario_.resource.counts()) return "";
    const std::unique_ptr<Connection> setup = run_.connect(request_.endpoint);
    const RedisResult result = setup->command({"SET", request_.key_prefix + scenario_.resource.name,
                                               std::to_string(scenario_.resource.initial)});
    if (!result.ok()) return "cannot initialise the resource: " + result.describe();
    return "";
  }

  // start: the run's threads, each waiting for time 0, the server watch, then time 0. All
  // connections are open before any client starts, so set-up is not part of the run. In the
  // event-loop mode one thread runs every client.
  void start() {
    const std::size_t thread_count = event_loop_ ? 1 : clients_.size();
    const std::size_t nemesis_threads = scenario_.server_faults() ? 1 : 0;
    threads_.reserve(thread_count + nemesis_threads);
    Threads& spawn = run_.runtime().threads();
    if (event_loop_) {
      threads_.emplace_back(spawn, [this, loop = loop_.get()] {
        wait_for_start();
        loop->run();
        finish_thread();
      });
    }
    for (auto& client : clients_) {
      threads_.emplace_back(spawn, [this, client = client.get()] {
        wait_for_start();
        if (scenario_.scripted()) {
          driver_internal::run_scripted_client(run_, *client);
        } else {
          host::run_workload_client(run_, *client);
        }
        finish_thread();
      });
    }
    if (scenario_.server_faults()) {
      // The nemesis's own thread runs the server faults of the script.
      threads_.emplace_back(spawn, [this] {
        wait_for_start();
        driver_internal::run_scripted_server_faults(run_);
        finish_thread();
      });
    }
    // A server that can fail of itself is watched (the simulator's fail only as the run makes
    // them).
    if (world_.servers_fail_alone) watch_.emplace(run_.runtime(), request_);
    // Time 0 is when the clients start, not when the first was spawned: starting eight adapter
    // processes can take seconds, which a time-bounded workload must not lose.
    run_.start_clock();
    for (std::size_t i = 0; i < scenario_.clients.size(); ++i) {
      if (scenario_.clock_runs_off(scenario_.clients[i])) {
        run_.nemesis().client_clock(i, client_clock_words(scenario_, i));
      }
    }
    {
      std::lock_guard<std::mutex> lock(run_.mutex);
      started_ = true;
    }
    run_.notify_changed();
  }

  // wait_for_start: every thread waits for the start (time 0) before it does anything.
  void wait_for_start() {
    std::unique_lock<std::mutex> lock(run_.mutex);
    run_.clock().base().wait(run_.changed, lock, [this] { return started_; });
  }

  // finish_thread: a thread of the run ends; the watch is woken.
  void finish_thread() {
    {
      std::lock_guard<std::mutex> lock(run_.mutex);  // the watch looks and waits under it
      finished_ += 1;
    }
    run_.clock().base().notify_all(one_finished_);
    run_.notify_changed();
  }

  // watch: until every thread ended, looks at the topology's processes every 50 ms (one waitid
  // each), so a death is named close to when it happened, and PINGs the primary every 200 ms.
  void watch() {
    const Clock& clock = run_.clock().base();
    Nanos next_check = clock.now_ns();
    const Nanos wake = ms_to_ns(request_.topology != nullptr ? 50 : 200);
    while (finished_.load() < threads_.size()) {
      {
        std::unique_lock<std::mutex> lock(run_.mutex);
        if (finished_.load() < threads_.size()) clock.pause(one_finished_, lock, wake);
      }
      watch_deaths();
      if (watch_ && !run_.server_lost.load() && clock.now_ns() >= next_check) {
        next_check = clock.now_ns() + ms_to_ns(200);
        if (request_.progress) request_.progress(progress_fraction(run_));
        const auto note = [this](const std::string& text) { run_.note(text); };
        std::string lost = watch_->check(note);
        // A topology's process killed from outside closes its sockets before its death can be
        // reaped: the refused PING may come first (harm_from_outside, once: a Redlock node killed
        // with SIGKILL was "SERVER LOST", the run stopped, where its death lets the run go on).
        // The death is looked for again, a few times over 200 ms, before the server is lost.
        for (int look = 0; look < 10 && !lost.empty() && request_.topology != nullptr; ++look) {
          clock.sleep_for(ms_to_ns(20));
          watch_deaths();
          lost = watch_->check(note);
        }
        if (!lost.empty()) lose(lost, "");
      }
    }
    for (auto& thread : threads_) thread.join();
    watch_deaths();  // a death since the last look is no less a death
  }

  // lose: the server is gone; the loss is a typed history event (so `locksim check` re-judges the
  // run as the run did: never ok) and the run stops.
  void lose(const std::string& why, const std::string& when) {
    run_.harness_log().record(EventType::kInfo, Op::kServerLost, "").message =
        run_.harness_log().intern(why);
    run_.note(when + "the Redis server was lost: " + why + "; the run was stopped");
    run_.server_lost = true;
    run_.notify_stop();
  }

  // watch_deaths: a process of the topology that died without the scenario killing it is a typed
  // history event, named at once. The run goes on only where the lock is meant to survive it (a
  // multi-server variant that lost one of its independent nodes); otherwise it stops, as it
  // cannot go as scripted (a failover that waits for a dead Sentinel, clients of a dead primary).
  void watch_deaths() {
    if (request_.topology == nullptr) return;
    for (const Topology::ProcessDeath& death : request_.topology->unplanned_deaths()) {
      Event& died = run_.harness_log().record(EventType::kInfo, Op::kServerDied, "");
      died.server().server = run_.harness_log().intern(death.server);
      died.message = run_.harness_log().intern(death.how);
      any_death_ = true;
      const std::size_t index = request_.topology->spec().server_index(death.server);
      const bool survivable = request_.topology->independent() && request_.variant.multi_server() &&
                              index < request_.topology->size();
      run_.note(death.server + " died without the scenario killing it (" + death.how + "); " +
                (survivable ? "the run went on, as the lock is meant to survive losing a node"
                            : "the run was stopped"));
      if (!survivable) {
        run_.stopped_for_death = true;
        run_.notify_stop();
      }
    }
  }

  // finish: the outcome once every thread ended: how the run ended (a `stop` event when it was
  // cut short), the server left answering, the run's keys deleted, the clients closed, and the
  // history, unless a broken worker leaves no verdict.
  RunOutcome finish() {
    RunOutcome outcome;
    outcome.interrupted = request_.stop.requested();
    outcome.server_lost = run_.server_lost.load();
    outcome.server_died = any_death_;
    outcome.timed_out = !outcome.interrupted && !outcome.server_lost &&
                        !run_.stopped_for_death.load() && run_.stopped_early.load();
    if (outcome.interrupted || outcome.timed_out) record_stop(outcome);
    leave_server_answering(outcome);
    outcome.notes = run_.take_notes();
    // A topology's servers are thrown away with the run, as are all of a runtime whose servers do
    // not outlive it; a shared server is cleaned.
    if (world_.servers_outlive_run && !outcome.server_lost && request_.topology == nullptr) {
      delete_run_keys(run_.runtime(), request_, outcome.notes);
    }
    clients_.clear();
    loop_.reset();
    if (run_.worker_failed.load() && !outcome.interrupted) {
      // No verdict: what the history holds after a broken worker says nothing about the lock.
      outcome.harness_error = run_.worker_failure();
      return outcome;
    }
    if (run_.worker_failed.load()) {
      // An interruption wins over the failures it causes (a client process that dies of the
      // signal too, a server fault cut short): the run is interrupted, its history kept.
      outcome.notes.push_back("after the interruption: " + run_.worker_failure());
    }
    outcome.history = take_history(run_);
    return outcome;
  }

  // record_stop: the `stop` event of a run cut short (Ctrl-C, or its time limit, also noted).
  void record_stop(const RunOutcome& outcome) {
    Event& stop = run_.harness_log().record(EventType::kInfo, Op::kStop, "");
    stop.stop().reason = outcome.interrupted ? StopReason::kInterrupted : StopReason::kTimeLimit;
    if (outcome.timed_out) {
      stop.message =
          run_.harness_log().intern("time_limit_ms " + std::to_string(scenario_.time_limit_ms));
      run_.note("the run reached its time limit of " + std::to_string(scenario_.time_limit_ms) +
                " ms and was stopped");
    }
  }

  // leave_server_answering: leaves the server answering for the next run: a script still looping
  // is ended now (bounded: the server starts answering BUSY, and so becomes killable, after its
  // busy-reply-threshold).
  void leave_server_answering(RunOutcome& outcome) {
    if (!watch_ || outcome.server_lost) return;
    for (int attempt = 0; attempt < 10; ++attempt) {
      const std::string lost = watch_->check([this](const std::string& text) { run_.note(text); });
      if (!lost.empty()) {
        // The clients may have finished before a check saw the loss (their calls failed fast):
        // what they did after it is no evidence either.
        lose(lost, "after the clients finished, ");
        outcome.server_lost = true;
        break;
      }
      if (watch_->healthy()) break;
    }
  }

  const RunRequest& request_;
  const Scenario& scenario_;
  const Plan plan_;
  RunContext run_;
  const RuntimeTraits world_;
  const bool event_loop_;
  const bool processes_;
  std::vector<std::vector<std::unique_ptr<Link>>> proxies_;  // by client, a link per server
  std::vector<std::unique_ptr<DriverClient>> clients_;
  std::unique_ptr<host::EventLoopWorkload> loop_;
  bool started_ = false;  // guarded by run_.mutex
  std::atomic<std::size_t> finished_{0};
  // one_finished_: notified when a thread of the run ends; the watch waits on it (not on every
  // change of the run).
  std::condition_variable one_finished_;
  std::vector<Thread> threads_;
  std::optional<ServerWatch> watch_;
  bool any_death_ = false;
};

}  // namespace

RunOutcome run_scenario(const RunRequest& request) { return ScenarioRun(request).run(); }

}  // namespace locksim
