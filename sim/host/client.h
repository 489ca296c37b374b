// client.h: DriverClient, the Jepsen "client": one lock variant on one
// connection, with every call recorded in this client's log at the conservative points, and
// ThreadClient, the client run as a thread of locksim (ProcessClient, process_client.h, runs it
// as a worker process).
//
// Faults reach the variant only through checkpoints: for one call the driver may ask to crash or
// to pause when the variant reaches a named point between two of its commands (CallFaults).
// Variants that renew get a renewal thread while the lock is held; it records `extend` events
// into its own log under this client's name.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "sim/client/acquire.h"
#include "sim/client/record.h"
#include "sim/core/random.h"
#include "sim/run/run_context.h"
#include "sim/client/wait.h"
#include "sim/client/watchdog.h"
#include "sim/client/workload.h"
#include "sim/lock/variant.h"
#include "sim/nemesis/nemesis.h"
#include "sim/redis/connection.h"

namespace locksim::host {

// kWaitStream: the wait strategy's random stream (jitter), forked from the client's own.
inline constexpr std::uint64_t kWaitStream = 0x77616974;  // "wait"

// client_record_terms: what a client of `run` records with (sim/client/record.h).
ClientTerms client_record_terms(const RunContext& run);
// resource_terms: the run's protected resource, as a client records its reads and writes.
ClientRecord::ResourceTerms resource_terms(const RunContext& run);

// record_renewal_end: an extension of client `index`'s renewal returned `result`: recorded in
// its renewal's log, and counted for the run's conditions (a step may wait for renewals).
void record_renewal_end(RunContext& run, RenewalRecord& record, int index,
                        const std::string& logical_key, const ExtendResult& result);

// CallFaults: what to do at a variant's checkpoints during one call.
struct CallFaults {
  std::string crash_at;  // crash when the variant reaches this point
  std::string pause_at;  // pause at this point until pause_until holds (at most pause_max_ns)
  std::vector<Condition> pause_until;
  Nanos pause_max_ns = 0;
  bool reached = false;  // set when crash_at or pause_at was reached
  // crashed_waiting: the crash fired at an after_busy checkpoint: the client died waiting for
  // the lock, holding nothing, so its acquire is recorded as failed (error "crashed").
  bool crashed_waiting = false;
  // cancel_after_ms: the caller cancels the call if it has not ended after this long (a
  // library adapter that offers cancellation; the call then ends info "cancelled"); -1: never.
  std::int64_t cancel_after_ms = -1;
};

// node_timeout: the connect and command timeout of a multi-server variant's node connections: a
// node that does not answer within a tenth of the lease counts as not granting (the Redis docs:
// a per-node timeout small against the TTL), bounded to [50, 1000] ms.
std::chrono::milliseconds node_timeout(std::int64_t ttl_ms);

// client_connection: the options of a client's own connections (commands and renewals): the
// scenario's lock.reply_timeout_ms is how long a call waits for its reply.
ConnectionOptions client_connection(const LockConfig& lock);

// DriverClient: what the runners (scripted.cc, workload.cc) drive, whatever executes the client:
// a ThreadClient inside locksim or a ProcessClient behind the worker protocol. Each records its
// client's events in the client's own log at the conservative points (enter after the acquire
// reply was read, exit before the release is sent), and is the nemesis's FaultTarget.
class DriverClient : public FaultTarget {
 public:
  DriverClient(RunContext& run, int index);
  ~DriverClient() override = default;

  // connect: opens the client's connection (starts its worker); an error description or "".
  virtual std::string connect() = 0;

  // acquire: attempts until acquired, the timeout passes (fail), an indeterminate error (info),
  // the run stops, or a crash fault fires. Records invoke and its completion; on success records
  // enter right after and starts renewing if the variant renews. `intended_ns` (open loop): when
  // the acquire was due by the client's schedule; recorded on the invoke.
  virtual AcquireStatus acquire(const std::string& logical_key, std::int64_t timeout_ms,
                                CallFaults* faults = nullptr, Nanos intended_ns = -1) = 0;
  // release: stops renewing, records exit, then the release invoke and completion. With
  // `unsaved_token` the variant is given a token that was never saved (Doc C). Returns false if
  // a crash fault fired inside the release. Requires holding().
  virtual bool release(bool unsaved_token = false, CallFaults* faults = nullptr) = 0;
  // release_unheld: a release by a client that holds nothing (of `logical_key`, with no token):
  // the `finally { unlock() }` after an acquire that failed. A reentrant lock releases as the
  // client (its owner id), whatever it holds.
  bool release_unheld(const std::string& logical_key, CallFaults* faults = nullptr) {
    record_.prepare_unheld_release(logical_key);
    return release(false, faults);
  }
  // extend: one extension of the lease held, a scenario's extend step: records the extend
  // invoke and its completion (extend_call, sim/client/release.h). Requires holding().
  virtual void extend(CallFaults* faults) = 0;
  // release_pending: the client's last release was cancelled before its reply: it no longer
  // counts as holding, but may try the release again (what an application does after a
  // cancelled release, redis/redis-py#3847).
  bool release_pending() const { return record_.release_pending(); }
  // crash: the client dies without releasing (a process: SIGKILL); its connections close.
  virtual void crash() = 0;
  // end_renewal: stops renewing the lease held (an extension under way ends first).
  virtual void end_renewal() = 0;
  // record_fault: records a fault event the client itself knows of (ClientRecord::fault).
  void record_fault(FaultKind kind) { record_.fault(kind); }
  // resource_read / resource_write: one read or write of the scenario's protected resource,
  // recorded as read/write events. A write sells one unit (counter, fenced_counter, if the last
  // read was > 0) or creates `record_id` (find_or_create, if the last read found it absent). A
  // write to a fenced_counter presents the fencing number of the grant held (recorded on the
  // event); one the store refuses is recorded as failed with error "fenced".
  virtual void resource_read(const std::string& record_id) = 0;
  virtual void resource_write(const std::string& record_id) = 0;

  // work: records a work event; the caller then waits (plain sleep or a condition).
  void record_work(std::int64_t planned_ms);
  // pause_inside_call: a step's pause_at: the client stops inside the lock's call at that
  // checkpoint until `until` holds (at most max_ns), recorded as a pause window of its own (a
  // `pause` fault aimed at itself) so that a reader sees why the call stalled.
  void pause_inside_call(const CallFaults& faults);

  // runs_own_workload: whether this client runs its whole workload where it lives and hands
  // its record over at the end (locksim's own worker process: the same client code as a thread's,
  // with no round trip to the harness per call); run_own_workload does so.
  virtual bool runs_own_workload() const { return false; }
  virtual void run_own_workload() {}

  // set_acquire_mode: what the client's next acquires ask for (a read-write lock's read or
  // write hold; kExclusive for every other lock).
  void set_acquire_mode(LockMode mode) { record_.set_acquire_mode(mode); }
  bool holding() const { return record_.holding(); }
  // depth: the holds of a reentrant lock (nested acquires); 1 for any other lock held.
  int depth() const { return record_.depth(); }
  bool crashed() const { return record_.crashed(); }
  const std::string& name() const { return name_; }
  int index() const { return index_; }
  // observer: a second, direct connection for condition checks, never recorded (opened lazily).
  Connection& observer();
  // close_observer: a dead client watches nothing.
  void close_observer() { observer_.reset(); }

 protected:
  void set_state(bool inside, bool crashed);
  void set_waiting(bool waiting);
  // link_endpoint: where the client's lock connections go: its proxy, or the server itself.
  Endpoint link_endpoint() const;
  // lock_key: run.full_key(logical), kept for the client's next acquire or release of the same
  // key (valid until lock_key is asked for another).
  const std::string& lock_key(const std::string& logical);

  RunContext& run_;
  int index_;
  std::string name_;
  ClientLog& log_;
  // What the client records and holds (the key held is logical, as recorded).
  ClientRecord record_;

 private:
  std::unique_ptr<Connection> observer_;
  std::string lock_key_logical_;  // lock_key's last question and answer
  std::string lock_key_full_;
};

// ThreadClient: the client as a thread of locksim with a blocking connection; renewing variants
// get a renewal thread, which freeze() stops as a stall of the whole process would.
class ThreadClient final : public DriverClient {
 public:
  ThreadClient(RunContext& run, int index);
  ~ThreadClient() override;

  std::string connect() override;
  AcquireStatus acquire(const std::string& logical_key, std::int64_t timeout_ms,
                        CallFaults* faults = nullptr, Nanos intended_ns = -1) override;
  bool release(bool unsaved_token = false, CallFaults* faults = nullptr) override;
  void extend(CallFaults* faults) override;
  void crash() override;
  void end_renewal() override { stop_renewal(); }
  void resource_read(const std::string& record_id) override;
  void resource_write(const std::string& record_id) override;

  // FaultTarget: a stall of the whole client (GC, VM). The caller (the client's own thread, on a
  // pause step) waits in between; while frozen the renewal thread renews nothing, and on thaw a
  // renewal that fell due runs at once.
  void freeze() override;
  void thaw() override;

 private:
  class Host;
  class Release;
  class Resource;
  class Extend;
  LockContext context(CallFaults* faults);
  // refresh_links: before a call: follows a new primary of the topology (a failover), and
  // reconnects node connections that broke (a multi-server variant).
  void refresh_links();
  void start_renewal(const std::string& logical_key, const std::string& token);
  void stop_renewal();

  Rng rng_;
  std::unique_ptr<WaitStrategy> wait_;
  std::optional<ReplaceableConnection> connection_;
  // A multi-server variant's connections, one per server of the topology (short timeouts).
  std::vector<std::unique_ptr<Connection>> nodes_;
  std::vector<Connection*> node_pointers_;
  std::uint64_t primary_generation_ = 0;  // the topology's, when connection_ was made

  // Renewal (only for variants that renew): extend events go to a log of their own.
  std::optional<RenewalRecord> renewal_record_;
  Watchdog watchdog_;
};

// BlockingWorkloadHost: a DriverClient as a WorkloadHost: every call returns when it is done.
class BlockingWorkloadHost final : public WorkloadHost {
 public:
  BlockingWorkloadHost(RunContext& run, DriverClient& client) : run_(run), client_(client) {}

  Task<AcquireStatus> acquire(std::string logical_key, std::int64_t timeout_ms,
                              Nanos intended_ns) override;
  Task<bool> release() override;
  Ask<bool> sleep(Nanos duration) override { return Ask<bool>(run_.pause(duration)); }
  void crash() override { client_.crash(); }
  void record_work(std::int64_t planned_ms) override { client_.record_work(planned_ms); }
  void set_acquire_mode(LockMode mode) override { client_.set_acquire_mode(mode); }
  Task<void> resource_read(std::string record_id) override {
    client_.resource_read(record_id);
    co_return;
  }
  Task<void> resource_write(std::string record_id) override {
    client_.resource_write(record_id);
    co_return;
  }
  Task<void> end_renewal() override {
    client_.end_renewal();
    co_return;
  }
  void record_fault(FaultKind kind) override { client_.record_fault(kind); }
  void lose_next_reply() override;
  void pause_holder() override;
  void resume_holder() override;
  void note(const std::string& line) override { run_.note(line); }

 private:
  RunContext& run_;
  DriverClient& client_;
};

// run_workload_client: loops acquire -> work -> release -> rest for the workload's cycles
// (workload_client on a BlockingWorkloadHost), or lets a client that runs its own workload (a
// worker process) run it.
void run_workload_client(RunContext& run, DriverClient& client);

}  // namespace locksim::host
