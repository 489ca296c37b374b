// scenario.h: Scenario, the validated, plain form of one scenarios/*.json file.
//
// Two forms share one struct: a *scripted* scenario (ordered steps over named clients, to
// reproduce a documented failure exactly) has `steps`; a *workload* (N clients looping
// acquire -> work -> release with seeded random timings) has `workload`. Durations carry their unit
// in the name. See docs/scenarios.md "Scenario format" for the JSON and loader.h for loading.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/clock.h"
#include "sim/core/lock_mode.h"
#include "sim/core/verdict.h"
#include "sim/fault/drawn_fault.h"
#include "sim/fault/fault.h"
#include "sim/fault/link_fault.h"
#include "sim/fault/server_fault.h"
#include "sim/scenario/executor.h"

namespace locksim {

// WaitConfig: how a client waits between acquire attempts ("wait" in JSON).
struct WaitConfig {
  // "poll": fixed interval_ms between attempts (Doc D: 100 ms).
  // "backoff": initial_ms, multiplied by factor after each busy answer, capped at max_ms
  //            (Doc A: 100 ms doubling, capped at 5000 ms).
  // "retry_sleep": Doc B's fixed long sleep before retrying (interval_ms, default 3000).
  // "notify": block until a releaser pushes a wake-up (BLPOP on "<key>:notify"), re-trying at
  //           least every fallback_ms because an expiry wakes nobody.
  // "pubsub": Doc B's and Redisson's way: waiters SUBSCRIBE to "<key>:released" and a releaser
  //           PUBLISHes to it, waking every waiter; pub/sub is at-most-once (a message sent
  //           before the subscription, or lost with the connection, wakes nobody), so waiters
  //           re-try at least every fallback_ms.
  std::string strategy = "poll";
  std::int64_t interval_ms = 10;   // poll, retry_sleep: 1..60000
  std::int64_t initial_ms = 100;   // backoff: 1..60000
  double factor = 2.0;             // backoff: 1..10
  std::int64_t max_ms = 5000;      // backoff: initial_ms..600000
  // backoff: "none"; "full": a uniform draw in [0, delay]; "equal": delay/2 + a uniform draw in
  // [0, delay/2] (the two jitters of AWS's "Exponential Backoff and Jitter"), so that clients
  // that collided do not retry in lockstep.
  std::string jitter = "none";
  std::int64_t fallback_ms = 100;  // notify, pubsub: 1..60000
};

// LockConfig: the lock under test ("lock" in JSON). Applies to every variant of the scenario.
struct LockConfig {
  std::string key = "lock";                // logical key; the run prefix is added by the driver
  std::int64_t ttl_ms = 1000;              // lease for TTL variants, 1..3600000
  std::int64_t acquire_timeout_ms = 2000;  // give up acquiring after this, 0..3600000 (0 = one try)
  // reply_timeout_ms: how long a client waits for the reply to one command before the call ends
  // without one (`info`, error timeout), 1..600000. A lost reply costs this, so a scenario that
  // loses replies sets it short against its TTL; one that delays commands sets it past the delay.
  std::int64_t reply_timeout_ms = 2000;
  WaitConfig wait;
  // Variants that renew (lua_owner_renew) extend the lease every renew_period_ms while held. The
  // loader fills in the default, max(1, ttl_ms / 3); 0 only in a LockConfig nobody loaded.
  std::int64_t renew_period_ms = 0;
  // Queueing variants (lua_fair_queue) drop a waiter from the queue when it has not tried again
  // for queue_timeout_ms, 1..3600000. The loader fills in the default, max(ttl_ms, 3 x the wait
  // strategy's longest pause); 0 only in a LockConfig nobody loaded.
  std::int64_t queue_timeout_ms = 0;
  // permits: how many holders a semaphore admits at once (LockVariant::semaphore), 1 to
  // kMaxLockPermits; a mutex variant ignores it and is held to one holder.
  std::int64_t permits = 1;
};

// kMaxLockPermits: the most lock.permits; a history's own bound (kMaxPermits, sim/history) is
// the same number (the driver asserts it).
inline constexpr std::int64_t kMaxLockPermits = 1000;

// kMaxClockDriftMsPerS: the largest drift of a client's own clock either way (client_clocks'
// drift_ms_per_s): at 1000 ms/s a clock runs at twice the others' speed, or stands still.
inline constexpr std::int64_t kMaxClockDriftMsPerS = 1000;

// ResourceConfig: a protected resource touched inside the critical section ("resource" in JSON).
struct ResourceConfig {
  enum class Kind {
    kNone,
    kCounter,       // Doc C's stock: read the count, write count - 1 (a sale)
    kFindOrCreate,  // Doc B's find_or_initialize_by: read whether a record exists, create if not
    // The counter behind Kleppmann's fenced storage service: a write presents the fencing number
    // of its writer's grant, and the store refuses one lower than the highest it has accepted.
    // A write without a number (a lock that hands out none) is accepted: an unfenced client
    // cannot be protected.
    kFencedCounter,
  };
  Kind kind = Kind::kNone;
  std::string name = "resource";  // logical key of the resource
  std::int64_t initial = 1;       // counter, fenced_counter: initial stock, 0..1000000000
  int ids = 1;                    // find_or_create: distinct record ids, 1..1000000

  // counts: a stock counter (counter or fenced_counter): reads get the count, writes sell one.
  bool counts() const { return kind == Kind::kCounter || kind == Kind::kFencedCounter; }
};

// Condition: something observable a scripted step can wait for.
struct Condition {
  enum class Kind {
    kInside,      // "inside": client name; the client has entered and not exited
    kOutside,     // "outside": client name; the client is not inside
    kKeyAbsent,   // "key_absent": logical key; the key does not exist on the server
    kKeyPresent,  // "key_present": logical key; the key exists on the server
    kDone,        // "done": step id; that step has finished
    kCrashed,     // "crashed": client name; the client has crashed
    kRenewed,     // "renewed": {"client", "times"}; the client's renewal has run (extend calls,
                  // whatever their outcome) at least `times` times since the wait began
    kOpen,        // "open": step id of a server fault with a window; its fault is done and its
                  // window is being held (a slot migrating, a server paused)
    kPrimary,     // "primary": server name; the server serves the lock's key as a primary (on a
                  // Redis Cluster: its own slot map says so and its cluster is ok)
  };
  Kind kind = Kind::kDone;
  std::string argument;  // the client, key or step id
  int times = 0;         // kRenewed
};

// LinkFault: what locksim's proxy does to one call's first command on the client's link.
enum class LinkFault {
  kNone,
  kLoseReply,  // the server executes it; its reply is dropped, so the client times out
  kDelay,      // the command is held in the proxy before the server sees it (a delayed packet)
};

// ServerSpec: one server of a topology ("topology" in JSON).
struct ServerSpec {
  std::string name;                  // "n1", "primary", ...: what server steps name
  std::string persistence = "none";  // "none", "aof_always", "aof_everysec"
  std::string replica_of;            // "": a primary; else the name of its primary
};

// ClusterSpec: a Redis Cluster topology's shape. Its servers are the primaries "p1".."pN" and
// their replicas "r1".."rN" (the first replica of each), then "s1".."sN" (the second); the first
// primary, p1, serves the slot of the run's lock key (lock.key with the run's prefix), so that
// steps can name the lock's primary and its replica.
struct ClusterSpec {
  int primaries = 3;
  int replicas_per_primary = 1;
  // node_timeout_ms: cluster-node-timeout: how long a node may not answer before the others
  // count it failing (and its replica is elected in its place).
  std::int64_t node_timeout_ms = 1000;
};

// TopologySpec: the private servers a scenario runs on. Without one, every scenario of a
// session shares one server (or --redis); with one, every run starts its own.
struct TopologySpec {
  // "single", "primary_replica", "sentinel", "redlock_3", "redlock_5", "redlock_7", or "custom"
  // (the scenario listed "servers" itself).
  std::string name = "single";
  std::vector<ServerSpec> servers;
  bool sentinel = false;     // a redis-sentinel watches the first primary (quorum 1)
  // cluster: the servers form a Redis Cluster (name "cluster", or {"cluster": {...}}).
  std::optional<ClusterSpec> cluster;
  // clock_shift: some step's kind jumps a server's clock (ServerFaultType::shifts_clock,
  // clock_jump): the servers run with the shim.
  bool clock_shift = false;
  // server_index: the index of a server name (validated by the loader).
  std::size_t server_index(const std::string& name) const;
};

// Step: one scripted step. A step starts once every earlier step has started, the previous step
// of the same client has finished, and its `wait_for` conditions hold (or wait_max_ms passed).
struct Step {
  enum class Action {
    kAcquire,  // acquire the lock with the variant and wait strategy
    kRelease,  // release it with the variant
    kExtend,   // extend the lease once (client processes only: the worker protocol's extend)
    kWork,     // stay inside for work_ms, or until `until` holds (bounded by max_ms)
    kCrash,    // stop without releasing; the connection closes; later steps are skipped
    kSleep,    // wait outside the critical section for work_ms
    kRead,     // read the resource (counter value, or whether record `record_id` exists)
    kWrite,    // write the resource (counter: last read - 1; find_or_create: create if absent)
    kPause,    // freeze the client for work_ms, or until `until` holds (bounded by max_ms): like a
               // GC or VM stall, its renewal stops too; a renewal that fell due runs on resume
    kPartition,  // cut the client's link for work_ms, or until `until` holds (bounded by max_ms),
                 // then heal it; a holder stays inside meanwhile (it works, cut off)
    // A link fault window of a kind with a LinkFaultType (traits(link_fault_kind).link_fault,
    // e.g. "drop_commands"): its policy runs on the client's links for work_ms, or until `until`
    // holds (bounded by max_ms). Unlike a partition, the client's next steps run inside the
    // window; the step is done when the window closes.
    kLinkFault,
    // A server fault: a step with a `server` instead of a `client` (or neither: failover), of a
    // kind with a ServerFaultType (server_fault->type(), e.g. "kill_server", "pause_server"; see
    // sim/fault/server_fault.h), run by the nemesis on its own thread. One enumerator for every
    // kind, as for the link faults, rather than one each: a kind's word, keys, topology needs,
    // JSON and run are its own file's, so nothing switches over the kinds and a new kind adds no
    // enumerator here. The history stays typed: the host's operations the kind runs record
    // FaultKinds (sim/fault/fault.h).
    kServerFault,
  };
  // server_action: whether the action is a server fault (a step with `server`, or failover).
  static bool server_action(Action action) { return action == Action::kServerFault; }
  std::string id;      // optional name for {"done": id}; defaults to "step-<n>" (1-based)
  std::string client;  // a name from Scenario::clients ("" for a server fault)
  std::string server;  // kServerFault: a name from the topology ("" for a kind aimed at none)
  Action action = Action::kWork;
  // work_ms: kWork, kSleep, kPause, kPartition, kLinkFault, and a kServerFault whose kind holds a
  // window (pause_server).
  std::int64_t work_ms = 0;
  std::vector<Condition> until;      // kWork, kPause, ...: all must hold to end it early
  std::int64_t max_ms = 0;           // kWork, kPause, ... with `until`: upper bound
  std::vector<Condition> wait_for;   // before the step starts: all must hold
  std::int64_t wait_max_ms = 10000;  // bound on wait_for; the step starts anyway after it
  std::optional<std::int64_t> acquire_timeout_ms;  // kAcquire: overrides lock.acquire_timeout_ms
  // kAcquire ("mode": "read" or "write"): what a read-write lock's acquire asks for; every other
  // lock's acquire is exclusive whatever it says. Default: write.
  LockMode mode = LockMode::kWrite;
  // kAcquire, kRelease: crash inside the variant's call at this checkpoint (e.g. "after_setnx",
  // "after_get"); if the variant has no such checkpoint, crash right after the call returns.
  std::string crash_at;
  // kAcquire, kRelease: pause inside the variant's call at this checkpoint until `pause_until`
  // holds (at most pause_max_ms); variants without the checkpoint do not pause.
  std::string pause_at;
  std::vector<Condition> pause_until;
  std::int64_t pause_max_ms = 0;
  bool unsaved_token = false;   // kRelease: release with a token that was never saved (Doc C)
  // kRelease ("finally"): release even if the client holds nothing, as a `finally { unlock() }`
  // after an acquire that failed does: with no token (a reentrant lock: as the client).
  bool finally_release = false;
  // kAcquire, kRelease, kExtend: the caller cancels the call if it has not ended after this many
  // ms (an asyncio task cancelled by a timeout); -1: never. Only a library whose adapter offers
  // cancellation (libraries.json "cancel") runs such a step; the call ends `info cancelled`.
  std::int64_t cancel_after_ms = -1;
  // kAcquire, kRelease, kExtend: a fault on the client's link for this call's first command.
  LinkFault link_fault = LinkFault::kNone;
  std::int64_t delay_ms = 0;           // kDelay: hold the command this long, or
  std::vector<Condition> delay_until;  // until these hold (bounded by delay_max_ms)
  std::int64_t delay_max_ms = 0;
  // kPartition: "mode": "hold" (false): nothing passes either way until the heal, as when
  // packets are dropped and TCP retransmits; "reset" (true): every connection is closed at once
  // and new ones are closed until the heal.
  bool partition_reset = false;
  // kPartition, kLinkFault, and kAcquire/kRelease with a link fault: the servers (topology names)
  // whose links to the client the fault is on; empty: every link of a partition, and for a lost
  // reply or a delay the link to the primary (every node's, for a multi-server variant).
  std::vector<std::string> link_servers;
  // kLinkFault: the kind (its word is the step's "do") and its own parameters, validated.
  FaultKind link_fault_kind = FaultKind::kDropCommands;
  std::shared_ptr<const LinkFaultSettings> link_fault_settings;
  // kServerFault: the kind (its word is the step's "do") and its own parameters, validated.
  std::shared_ptr<const ServerFault> server_fault;
  std::string record_id = "1";  // kRead, kWrite with find_or_create
  std::string json_path;        // "$.steps[2]", for messages
};

// Workload: N clients looping acquire -> work -> release -> rest ("workload" in JSON).
struct Workload {
  int clients = 4;                 // 1..256; named c0, c1, ...
  int cycles = 100;                // per client, 1..1000000
  int keys = 1;                    // distinct lock keys, 1..clients; client i uses key i % keys
  RangeMs work_ms{1, 1};           // time inside the critical section
  RangeMs rest_ms{0, 0};           // time outside between cycles
  // Time-bounded runs (contention studies): with duration_ms > 0 each client loops until
  // warmup_ms + duration_ms after the run's start, whatever `cycles` says; the metrics are taken
  // over [warmup_ms, warmup_ms + duration_ms).
  std::int64_t warmup_ms = 0;
  std::int64_t duration_ms = 0;
  // Open loop: > 0: each client's acquires are due at this rate (per second), on a fixed
  // schedule; a client behind schedule acquires at once and its latency counts from when the
  // acquire was due. There is no rest. 0: closed loop (acquire again after rest_ms).
  double arrival_per_s = 0;
  // read_share: a read-write lock's: the share of cycles (0..1) that take a read hold, each cycle
  // drawn from its client's own stream; the others take the write hold. A mutex (or any lock of
  // another kind) takes every hold exclusively, as it does a scripted step's "mode".
  double read_share = 0;
  // drawn_faults: the faults a cycle may draw (sim/fault/drawn_fault.h; their keys are each
  // kind's own, e.g. "crash_probability", "pause_probability" + "pause_ms"), one per kind of
  // drawn_fault_types() and in its order, each off unless its keys turn it on. Empty only in a
  // Workload no parser filled.
  std::vector<std::shared_ptr<const DrawnFault>> drawn_faults;

  // drawn_fault: the settings of the kind whose word is `word` ("crash"); asserts it exists.
  const DrawnFault& drawn_fault(std::string_view word) const;
  // draws: whether some kind that is on has the trait `trait` (&DrawnFaultType::loses_lock).
  bool draws(bool DrawnFaultType::*trait) const;
};

// Expectation: what a variant must observe for the scenario to pass ("expect" in JSON).
struct Expectation {
  bool any = false;  // "any": the verdict is reported but not asserted (sweep points in between)
  Verdict verdict = Verdict::kOk;
  // If set, the exact set of mutual-exclusion causes ("lease_expired", "stale_release",
  // "racy_acquire", "lock_lost") the run must show.
  std::optional<std::set<std::string>> causes;
  // If set: whether the protected resource must be intact (true) or corrupted (false).
  std::optional<bool> resource_intact;
  // If set: at most this many violations whose earlier holder was not in a faulted window
  // (e.g. 0: renewal removed every violation outside Doc D's "lost" iterations).
  std::optional<std::int64_t> max_violations_outside_faults;
  // If set: whether the run must show (true) or must not show (false) a stolen renewal: an
  // extension that prolonged another client's lock.
  std::optional<bool> stolen_renewal;
  // If set: whether the run must show (true) or must not show (false) an idle hold: a key left
  // held by nobody who knew it (a release that deleted nothing, a cancelled call) until its lease.
  std::optional<bool> idle_hold;
  // If set: a finding the run must show (what `locksim explore` writes into a minimal scenario):
  // its signature, "<kind>" or "<kind> (<cause>)" as explore prints it ("mutex_violation
  // (stale_release)", "idle_hold"), and, if not empty, exactly the clients it involves.
  struct Finding {
    std::string signature;
    std::vector<std::string> clients;
  };
  std::optional<Finding> finding;
  // If true: the run must show no finding that is a lock's own bug (a stale release, a racy
  // acquire, a stolen renewal, an idle hold, barging past a waiter), whatever its verdict. A user
  // lock is held to it beside its reference's expectation ("own_findings": "none").
  bool no_own_findings = false;
};

// SweepPoint: set on each scenario a "sweep" file expands into, so that reports can group the
// points of one sweep and order them by value.
struct SweepPoint {
  std::string group;      // the sweep file's name
  // "ttl_over_work": lock.ttl_ms = value x workload mean work_ms; otherwise the name a general
  // sweep gives the number it writes into the file ("pause_ms").
  std::string parameter;
  double value = 0;
  std::string unit;  // optional, for reports: "ms", "%"; "" for none
};

// CheckConfig: checker parameters ("check" in JSON).
struct CheckConfig {
  // A failed acquire that found the lock held by no live client for at least this long is a
  // deadlock. Default: max(500 ms, 5 x poll interval).
  std::int64_t stuck_ms = 500;
  // barging ("barging", default false): report grants that barged past an earlier waiter (the
  // finding `barging`), for scenarios about a fair lock.
  bool barging = false;
  // writer_wait_ms: a read-write lock's writer kept waiting longer than this while readers got
  // in after it asked is starved (a deadlock, cause writer_starved). Default: stuck_ms.
  std::int64_t writer_wait_ms = 0;
};

// Source: the document and claim the scenario reproduces ("source" in JSON).
struct Source {
  std::string doc;    // "A".."E" (SEEDS.md) or "none"
  std::string claim;  // one sentence
};

// lock_properties: the properties of a lock a scenario can show ("shows" in JSON), which
// `locksim audit` reports one line each:
//   exclusive_without_faults   no two holders when nothing goes wrong
//   survives_crash             a holder that dies does not block the others for good
//   refuses_stale_release      a release after the lease ended deletes nobody else's lock
//   renewal_keeps_live_holder  a live holder that works past the TTL keeps its lock
//   renewal_never_steals       a renewal never extends another client's lock
//   recovers_after_ttl         after a crash the lock is free one TTL after the last renewal
//   survives_dead_waiter       a queueing lock: a waiter that dies in the queue blocks the others
//                              for at most the queue timeout
//   release_frees_lock         the holder's release, within its lease, frees the lock for the next
//   fair_no_barging            a queueing lock: a newcomer never gets the lock while a client that
//                              asked earlier still waits for it
//   holders_within_permits     a semaphore: never more holders than permits, whatever the
//                              clients' own clocks say
//   reentrant_nested_acquire   a reentrant lock: its owner gets in again at once, and nobody else
//                              until the owner's last hold is released
//   writer_not_starved         a read-write lock: a waiting writer is not kept out past the
//                              scenario's bound by readers that come after it
const std::vector<std::string>& lock_properties();

struct Scenario {
  std::string name;         // from "name"; also the report directory name
  std::string file;         // path it was loaded from
  std::string description;  // optional free text
  Source source;
  std::vector<std::string> variants;  // variant names, validated against the registry
  std::vector<std::string> shows;     // lock properties this scenario shows (lock_properties)
  LockConfig lock;
  std::vector<std::string> clients;  // scripted: client names; workload: generated c0..cN-1
  std::vector<Step> steps;           // scripted form
  std::optional<Workload> workload;  // workload form
  ResourceConfig resource;           // kNone unless "resource" is given
  std::optional<SweepPoint> sweep;   // set when this scenario is one point of a sweep
  // topology: set: every run starts these servers of its own ("topology" in JSON).
  std::optional<TopologySpec> topology;
  std::map<std::string, Expectation> expect;  // by variant name; every variant has one
  CheckConfig check;
  // client_clocks: by client name, how far that client's own clock runs ahead of the others'
  // (negative: behind), in ms ("client_clocks": {"C": {"offset_ms": 3000}}); only a variant that
  // times permits with the client's clock reads it (zset_semaphore). Absent: 0.
  std::map<std::string, std::int64_t> client_clock_offset_ms;
  // client_clock_drift_ms_per_s: by client name, how many ms that client's own clock gains each
  // second of the run (negative: loses), counted from the run's time 0, where only its offset
  // separates it from the others' ("client_clocks": {"C": {"drift_ms_per_s": 500}}); within
  // kMaxClockDriftMsPerS either way. Absent: 0.
  std::map<std::string, std::int64_t> client_clock_drift_ms_per_s;
  std::int64_t time_limit_ms = 60000;  // a run is stopped (verdict unknown) after this
  // executor ("clients_run_as"): kThreads (default) runs the clients inside locksim;
  // kProcesses runs each as a `locksim worker` process (the worker protocol), so a pause is a
  // real SIGSTOP and a crash a real SIGKILL; kEventLoop runs every client of a workload (the same
  // coroutine client) on its own asynchronous connection, all driven by one libevent loop (as
  // redis-benchmark drives its clients), so that 50 clients on 2 cores are not 50 threads
  // switching: only for variants whose acquire and release are one command each, the sleeping
  // wait strategies, no drawn fault that needs renewal or the nemesis (lose, pause, lost_reply:
  // DrawnFault::event_loop_refusal) and no resource. --clients on the command line overrides it
  // (run_clients_as in loader.h).
  Executor executor = Executor::kThreads;
  nlohmann::json resolved;  // the scenario with all defaults filled in, written to reports
  // notes: what loading found that the user should know but that is no error (a deprecated
  // spelling), each naming the file and field. The commands print each once to stderr.
  std::vector<std::string> notes;

  bool scripted() const { return !workload.has_value(); }
  // clock_offset_ms: `client`'s clock offset (client_clocks), 0 if none.
  std::int64_t clock_offset_ms(const std::string& client) const {
    const auto found = client_clock_offset_ms.find(client);
    return found == client_clock_offset_ms.end() ? 0 : found->second;
  }
  // clock_drift_ms_per_s: `client`'s clock drift (client_clocks), 0 if none.
  std::int64_t clock_drift_ms_per_s(const std::string& client) const {
    const auto found = client_clock_drift_ms_per_s.find(client);
    return found == client_clock_drift_ms_per_s.end() ? 0 : found->second;
  }
  // clock_runs_off: whether `client`'s own clock is set apart from the others' (an offset or a
  // drift): the run records a client_clock fault for it.
  bool clock_runs_off(const std::string& client) const {
    return clock_offset_ms(client) != 0 || clock_drift_ms_per_s(client) != 0;
  }
  // link_faults: whether some step or the workload faults a client's link (needs the proxy).
  bool link_faults() const;
  // server_faults: whether some step restarts, pauses, fails over or shifts the clock of a
  // server (refused with --redis: locksim never harms a server it did not start).
  bool server_faults() const;
  // changes_primary: whether some step moves the primary to another server (a kind with
  // ServerFaultType::moves_primary: promote, failover), which a client must follow.
  bool changes_primary() const;
};

}  // namespace locksim
