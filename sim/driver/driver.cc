#include "sim/driver/driver.h"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "sim/driver/client.h"
#include "sim/driver/event_loop.h"
#include "sim/driver/process_client.h"
#include "sim/driver/runners.h"
#include "sim/proxy/link_proxy.h"
#include "sim/topology/topology.h"

namespace locksim {
namespace {

using driver_internal::DriverClient;
using driver_internal::ProcessClient;
using driver_internal::RunContext;
using driver_internal::ThreadClient;

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
  // A library may keep its lock under a prefix of its own ("mutex:<key>"): that too.
  std::vector<std::string> prefixes = {request.key_prefix};
  const std::string library_prefix = request.variant.stored_prefix(request.key_prefix);
  if (library_prefix != request.key_prefix) prefixes.push_back(library_prefix);
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
  const std::string why = driver_internal::event_loop_refusal(request);
  if (why.empty()) return "";
  return "\"event_loop\" cannot run " + std::string(variant.name()) + ": " + why +
         "; use \"threads\"";
}

RunOutcome run_scenario(const RunRequest& request) {
  const Scenario& scenario = request.scenario;
  RunOutcome outcome;
  const Plan plan = compile_plan(scenario, request.seed);
  RunContext run(request, plan);

  const bool event_loop = scenario.executor == Executor::kEventLoop;
  const bool processes = scenario.executor == Executor::kProcesses;
  if (event_loop) {
    if (const std::string why = driver_internal::event_loop_refusal(request); !why.empty()) {
      outcome.harness_error = "\"clients_run_as\": \"event_loop\" cannot run this variant: " +
                              why + "; run it with \"clients_run_as\": \"threads\"";
      return outcome;
    }
  }
  const RuntimeTraits world = run.runtime().traits();
  if ((processes && !world.client_processes) || (event_loop && !world.event_loop)) {
    outcome.harness_error = "this runtime runs clients as threads only (this scenario needs " +
                            std::string(processes ? "client processes" : "the event loop") + ")";
    return outcome;
  }
  if (request.topology != nullptr) {
    if (processes && scenario.changes_primary()) {
      outcome.harness_error =
          "client processes cannot follow a change of primary (a worker connects to the primary "
          "of the start, and \"promote\" or \"failover\" moves it); run the clients as threads";
      return outcome;
    }
    run.nemesis().attach_topology(request.topology);
  }
  // One proxy per client link when some fault needs one (a link per server of the topology);
  // they outlive the clients.
  std::vector<std::vector<std::unique_ptr<Link>>> proxies(plan.clients().size());
  if (plan.proxied_links()) {
    try {
      const std::vector<Endpoint> servers =
          request.topology != nullptr ? request.topology->endpoints()
                                      : std::vector<Endpoint>{request.endpoint};
      for (std::size_t i = 0; i < plan.clients().size(); ++i) {
        std::vector<Endpoint> links;
        for (const Endpoint& server : servers) {
          proxies[i].push_back(run.runtime().open_link(server));
          links.push_back(proxies[i].back()->endpoint());
        }
        run.set_link_endpoints(i, std::move(links));
      }
    } catch (const std::exception& error) {
      outcome.harness_error = std::string("cannot start the link proxies: ") + error.what();
      return outcome;
    }
  }
  std::vector<std::unique_ptr<DriverClient>> clients;
  std::unique_ptr<driver_internal::EventLoopWorkload> loop;
  if (event_loop) {
    loop = std::make_unique<driver_internal::EventLoopWorkload>(run);
    const std::string error = loop->connect();
    if (!error.empty()) {
      outcome.harness_error = "cannot connect to Redis at " + request.endpoint.redacted() + ": " + error;
      return outcome;
    }
  }
  for (std::size_t i = 0; !event_loop && i < scenario.clients.size(); ++i) {
    const int index = static_cast<int>(i);
    if (processes) {
      clients.push_back(std::make_unique<ProcessClient>(run, index));
    } else {
      clients.push_back(std::make_unique<ThreadClient>(run, index));
    }
    std::vector<Link*> links;
    for (const auto& proxy : proxies[i]) links.push_back(proxy.get());
    run.nemesis().attach(i, clients.back().get(), std::move(links));
    const std::string error = clients.back()->connect();
    if (!error.empty() && request.stop.requested()) {
      // Interrupted while the clients started (an adapter's runtime takes a while): that is
      // what happened, not a broken client.
      return interrupted_before_start(run, std::move(outcome), error);
    }
    if (!error.empty()) {
      outcome.harness_error =
          processes ? "client " + scenario.clients[i] + ": " + error
                    : "cannot connect to Redis at " + request.endpoint.redacted() + ": " + error;
      return outcome;
    }
  }

  // The protected resource starts in a known state (a counter at its initial stock; a fenced
  // store has accepted no fencing number yet).
  if (scenario.resource.counts()) {
    const std::unique_ptr<Connection> setup = run.connect(request.endpoint);
    const RedisResult result = setup->command({"SET", request.key_prefix + scenario.resource.name,
                                               std::to_string(scenario.resource.initial)});
    if (!result.ok()) {
      outcome.harness_error = "cannot initialise the resource: " + result.describe();
      return outcome;
    }
  }

  // All connections are open before any client starts, so set-up is not part of the run. In the
  // event-loop mode one thread runs every client.
  const std::size_t thread_count = event_loop ? 1 : clients.size();
  const std::size_t nemesis_threads = scenario.server_faults() ? 1 : 0;
  // Every thread waits for the start (time 0) before it does anything.
  bool started = false;  // guarded by run.mutex
  const auto start = [&run, &started] {
    std::unique_lock<std::mutex> lock(run.mutex);
    run.clock().base().wait(run.changed, lock, [&started] { return started; });
  };
  std::atomic<std::size_t> finished{0};
  // one_finished: notified when a thread of the run ends; the watch below waits on it (not on
  // every change of the run).
  std::condition_variable one_finished;
  const auto finish = [&run, &finished, &one_finished] {
    {
      std::lock_guard<std::mutex> lock(run.mutex);  // the watch looks and waits under it
      finished += 1;
    }
    run.clock().base().notify_all(one_finished);
    run.notify_changed();
  };
  std::vector<Thread> threads;
  threads.reserve(thread_count + nemesis_threads);
  Threads& spawn = run.runtime().threads();
  if (event_loop) {
    threads.emplace_back(spawn, [&start, &finish, loop = loop.get()] {
      start();
      loop->run();
      finish();
    });
  }
  for (auto& client : clients) {
    threads.emplace_back(spawn, [&run, &start, &finish, &scenario, client = client.get()] {
      start();
      if (scenario.scripted()) {
        driver_internal::run_scripted_client(run, *client);
      } else {
        driver_internal::run_workload_client(run, *client);
      }
      finish();
    });
  }
  if (scenario.server_faults()) {
    // The nemesis's own thread runs the server faults of the script.
    threads.emplace_back(spawn, [&run, &start, &finish] {
      start();
      driver_internal::run_scripted_server_faults(run);
      finish();
    });
  }
  // A server that can fail of itself is watched (the simulator's fail only as the run makes them).
  std::optional<ServerWatch> watch;
  if (world.servers_fail_alone) watch.emplace(run.runtime(), request);
  // Time 0 is when the clients start, not when the first was spawned: starting eight adapter
  // processes can take seconds, which a time-bounded workload must not lose.
  run.start_clock();
  {
    std::lock_guard<std::mutex> lock(run.mutex);
    started = true;
  }
  run.notify_changed();
  // lose: the server is gone; the loss is a typed history event (so `locksim check` re-judges the
  // run as the run did: never ok) and the run stops.
  const auto lose = [&run](const std::string& why, const std::string& when) {
    run.harness_log().record(EventType::kInfo, Op::kServerLost, "").message =
        run.harness_log().intern(why);
    run.note(when + "the Redis server was lost: " + why + "; the run was stopped");
    run.server_lost = true;
    run.notify_stop();
  };
  // watch_deaths: a process of the topology that died without the scenario killing it is a
  // typed history event, named at once. The run goes on only where the lock is meant to survive
  // it (a multi-server variant that lost one of its independent nodes); otherwise it stops, as
  // it cannot go as scripted (a failover that waits for a dead Sentinel, clients of a dead
  // primary).
  bool any_death = false;
  const auto watch_deaths = [&run, &request, &any_death] {
    if (request.topology == nullptr) return;
    for (const Topology::ProcessDeath& death : request.topology->unplanned_deaths()) {
      Event& died = run.harness_log().record(EventType::kInfo, Op::kServerDied, "");
      died.server().server = run.harness_log().intern(death.server);
      died.message = run.harness_log().intern(death.how);
      any_death = true;
      const std::size_t index = request.topology->spec().server_index(death.server);
      const bool survivable = request.topology->independent() && request.variant.multi_server() &&
                              index < request.topology->size();
      run.note(death.server + " died without the scenario killing it (" + death.how + "); " +
               (survivable ? "the run went on, as the lock is meant to survive losing a node"
                           : "the run was stopped"));
      if (!survivable) {
        run.stopped_for_death = true;
        run.notify_stop();
      }
    }
  };
  const Clock& clock = run.clock().base();
  Nanos next_check = clock.now_ns();
  // A topology's processes are looked at every 50 ms (one waitid each), so a death is named
  // close to when it happened; the primary is PINGed every 200 ms.
  const Nanos wake = ms_to_ns(request.topology != nullptr ? 50 : 200);
  while (finished.load() < threads.size()) {
    {
      std::unique_lock<std::mutex> lock(run.mutex);
      if (finished.load() < threads.size()) clock.pause(one_finished, lock, wake);
    }
    watch_deaths();
    if (watch && !run.server_lost.load() && clock.now_ns() >= next_check) {
      next_check = clock.now_ns() + ms_to_ns(200);
      if (request.progress) request.progress(progress_fraction(run));
      const std::string lost = watch->check([&run](const std::string& text) { run.note(text); });
      if (!lost.empty()) lose(lost, "");
    }
  }
  for (auto& thread : threads) thread.join();
  watch_deaths();  // a death since the last look is no less a death

  outcome.interrupted = request.stop.requested();
  outcome.server_lost = run.server_lost.load();
  outcome.server_died = any_death;
  outcome.timed_out = !outcome.interrupted && !outcome.server_lost &&
                      !run.stopped_for_death.load() && run.stopped_early.load();
  if (outcome.interrupted || outcome.timed_out) {
    Event& stop = run.harness_log().record(EventType::kInfo, Op::kStop, "");
    stop.stop().reason = outcome.interrupted ? StopReason::kInterrupted : StopReason::kTimeLimit;
    if (outcome.timed_out) {
      stop.message =
          run.harness_log().intern("time_limit_ms " + std::to_string(scenario.time_limit_ms));
      run.note("the run reached its time limit of " + std::to_string(scenario.time_limit_ms) +
               " ms and was stopped");
    }
  }
  // Leave the server answering for the next run: a script still looping is ended now (bounded:
  // the server starts answering BUSY, and so becomes killable, after its busy-reply-threshold).
  if (watch && !outcome.server_lost) {
    for (int attempt = 0; attempt < 10; ++attempt) {
      const std::string lost = watch->check([&run](const std::string& text) { run.note(text); });
      if (!lost.empty()) {
        // The clients may have finished before a check saw the loss (their calls failed fast):
        // what they did after it is no evidence either.
        lose(lost, "after the clients finished, ");
        outcome.server_lost = true;
        break;
      }
      if (watch->healthy()) break;
    }
  }
  outcome.notes = run.take_notes();
  // A topology's servers are thrown away with the run, as are all of a runtime whose servers do
  // not outlive it; a shared server is cleaned.
  if (world.servers_outlive_run && !outcome.server_lost && request.topology == nullptr) {
    delete_run_keys(run.runtime(), request, outcome.notes);
  }
  clients.clear();
  loop.reset();
  if (run.worker_failed.load() && !outcome.interrupted) {
    // No verdict: what the history holds after a broken worker says nothing about the lock.
    outcome.harness_error = run.worker_failure();
    return outcome;
  }
  if (run.worker_failed.load()) {
    // An interruption wins over the failures it causes (a client process that dies of the
    // signal too, a server fault cut short): the run is interrupted, its history kept.
    outcome.notes.push_back("after the interruption: " + run.worker_failure());
  }
  outcome.history = take_history(run);
  return outcome;
}

}  // namespace locksim
