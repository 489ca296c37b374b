// run_context.h: RunContext, the state one run shares between its driver, hosts and clients.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/clock.h"
#include "sim/run/request.h"
#include "sim/history/recorder.h"
#include "sim/nemesis/nemesis.h"
#include "sim/plan/plan.h"

namespace locksim {

// RunContext: the clock, recorder, bounds and notes of one run. Thread-safe where noted.
class RunContext {
 public:
  RunContext(const RunRequest& request, const Plan& plan);

  const RunRequest& request() const { return request_; }
  // runtime: the run's clock, threads and connections (the machine's, or the simulator's).
  Runtime& runtime() const { return runtime_; }
  // connect: a new connection in the run's runtime. On a Redis Cluster topology, a slot-aware
  // ClusterConnection (sim/redis/cluster_connection.h) that reads the slot map from `endpoint`
  // or any server of the topology, and records each redirection it follows in `redirects`
  // (when given: the client's own log) as an info event "redirect".
  std::unique_ptr<Connection> connect(const Endpoint& endpoint,
                                      const ConnectionOptions& options = {},
                                      ClientLog* redirects = nullptr) const;
  // admin_connection: a connection for the harness's own looks (conditions, the resource's
  // set-up), to the admin endpoint.
  std::unique_ptr<Connection> admin_connection() const {
    return connect(request_.admin_endpoint.value_or(request_.endpoint));
  }
  // notify_changed: after a change of the shared state below (through the clock, which a virtual
  // clock needs to wake its waiters).
  void notify_changed() { clock_.base().notify_all(changed); }
  // notify_stop: after should_stop() may have turned true (a lost server, a failed worker, a
  // death): wakes pause() too, which waits for nothing else.
  void notify_stop() {
    clock_.base().notify_all(stop_changed);
    notify_changed();
  }
  const Scenario& scenario() const { return request_.scenario; }
  const Plan& plan() const { return plan_; }
  Nemesis& nemesis() { return nemesis_; }
  // link_endpoint: where client `client`'s connections to the primary go now (its proxy for the
  // primary, or the primary itself); with a topology the primary may change during the run.
  Endpoint link_endpoint(std::size_t client) const;
  // link_endpoint(client, server): where its connections to server `server` of the topology go.
  Endpoint link_endpoint(std::size_t client, std::size_t server) const;
  // set_link_endpoints: the client's proxies, one per server (index order).
  void set_link_endpoints(std::size_t client, std::vector<Endpoint> endpoints);
  // server_count: the servers a client has links to (1 without a topology).
  std::size_t server_count() const;
  // call_links: the links a lost reply or a delayed command of one call is on when a step does
  // not name them: the primary's, or every node's for a multi-server variant (server indices;
  // empty: every link).
  std::vector<std::size_t> call_links() const;
  const RunClock& clock() const { return clock_; }
  // start_clock: time 0 of the run (and of its time limit) is now: called by the driver once
  // every client is connected (worker processes started), before any client thread starts.
  void start_clock() { clock_.restart(); }
  // start_clock_at: as start_clock, with time 0 at the base clock's instant `start`.
  void start_clock_at(Nanos start) { clock_.restart_at(start); }
  Recorder& recorder() { return recorder_; }

  // full_key: the Redis key for a logical key (prefix + name).
  std::string full_key(const std::string& logical_key) const;
  // client_index: the index of a client name from the scenario (validated by the loader).
  std::size_t client_index(const std::string& name) const;

  // should_stop: Ctrl-C was pressed, the time limit passed, the server was lost, a client process
  // broke, or a server of the topology died unplanned. Thread-safe.
  bool should_stop() const;
  // pause: sleeps `duration` (bounded by the time limit); false if the run must stop.
  bool pause(Nanos duration);
  bool timed_out() const { return clock_.now_ns() >= deadline_ns_; }

  // fail_worker: a client process broke the worker protocol (exited on its own, printed
  // something that is not a JSON object, stopped answering): the run stops and is a harness
  // failure, never a lock verdict. The first failure is kept. Thread-safe.
  void fail_worker(const std::string& text);
  std::string worker_failure() const;
  // fail_harness: the harness itself could not do what the scenario scripted (a server fault
  // failed): like a broken worker, the run stops and has no verdict.
  void fail_harness(const std::string& text) { fail_worker(text); }

  // note: adds a line to RunOutcome::notes, prefixed with the time in ms. Thread-safe.
  void note(const std::string& text);
  // add_note: adds a line already prefixed with its time (a client process's note).
  void add_note(std::string line);
  std::vector<std::string> take_notes();

  // Shared step/state bookkeeping for scripted scenarios; guarded by `mutex`.
  std::mutex mutex;
  std::condition_variable changed;  // notified on every change below
  // stop_changed: notified by notify_stop only; pause() waits on it, so that a client waiting
  // out its poll interval or its work is not woken by every other client's step (on the
  // simulator each such wake-up was an event of its own).
  std::condition_variable stop_changed;
  std::size_t steps_started = 0;    // steps [0, steps_started) have started
  std::vector<bool> step_started;
  std::vector<bool> step_finished;  // a `done` condition on a step id reads it
  // step_window_open: a server fault step's window is open (its fault done, its window being
  // held); an `open` condition reads it.
  std::vector<bool> step_window_open;
  // step_client: by step, its client's index (the client count for a server action); read at
  // every turn, so looked up once. Never changes.
  std::vector<std::size_t> step_client;
  // Steps [0, steps_started_and_acquired) have started, and those that acquire have finished.
  std::size_t steps_started_and_acquired = 0;
  std::vector<bool> inside;          // by client index
  std::vector<bool> crashed;         // by client index
  std::vector<int> renewals;         // by client index: renewal calls made so far (monotonic)
  // waiting: by client index: the client's acquire found the lock held and it waits for it.
  std::vector<bool> waiting;

  // Workload progress (cycles finished by all clients). Thread-safe.
  std::atomic<std::int64_t> cycles_done{0};
  // Set by a client that stopped before its last step or cycle because should_stop() was true.
  std::atomic<bool> stopped_early{false};
  // Set by the driver's server watch when the server stopped answering.
  std::atomic<bool> server_lost{false};
  // Set by fail_worker.
  std::atomic<bool> worker_failed{false};
  // Set by the driver when a process of the topology died unplanned and the run cannot go on as
  // scripted (should_stop() then answers true).
  std::atomic<bool> stopped_for_death{false};
  // harness_log: the harness's own events (client kHarnessClient); written only by the driver's
  // own thread.
  ClientLog& harness_log() { return recorder_.log(plan_.clients().size()); }
  // nemesis_log: the nemesis's events (client kNemesisClient); written only through nemesis().
  ClientLog& nemesis_log() { return recorder_.log(plan_.clients().size() + 1); }

 private:
  mutable std::mutex failure_mutex_;
  std::string worker_failure_;
  const RunRequest& request_;
  Runtime& runtime_;
  const Plan& plan_;
  RunClock clock_;
  Nanos deadline_ns_;
  Recorder recorder_;
  Nemesis nemesis_;
  // By client, by server; empty: direct links.
  std::vector<std::vector<Endpoint>> link_endpoints_;
  std::mutex notes_mutex_;
  std::vector<std::string> notes_;
};

}  // namespace locksim
