// check.h: check_history, the checkers' verdict on one run. Pure functions of a History.
//
// The checkers never see Redis: `locksim check run-dir/` re-judges an old history.jsonl. Every
// checker reports one type, Finding (kind, cause, key, clients, interval, amount, words), which
// every output renders the same way; each kind says which verdict it supports (finding.cc), and
// the verdict is the strongest of them (but unknown for a deadlock or an error beside a
// server_died, below). A new check is one file (checkers.h names it, check.cc
// calls it); a new kind of finding is its enumerator below, its row in finding.cc and the check
// that appends it.
//
// Hold windows. A client's *definite* hold window on a key is [enter, exit] (enter is recorded
// right after the acquire reply was read, exit right before the release request is sent), or
// [enter, crash] if it crashed inside, or [enter, end of history] if it never left.
//
// Lease end. A window's lease ends ttl_ms after the latest of its acquire ok and the oks of the
// holder's successful extends on that key up to the window's end, so a lock renewed in time never
// counts as expired. A window is `faulted` when a `fault` event aimed at its client (recorded by
// the client itself, or by the nemesis with the client as target) falls inside it, whatever its
// kind (Doc D's lose_lock, renewal stopped on purpose, is one).
//
// Findings, by kind (the verdict each supports in brackets):
//   mutex_violation [mutex_violation]: two definite windows of different clients on one key
//     overlap; clients = {earlier, later[, stale releaser]}, interval = the overlap; cause:
//     "stale_release" (a client's release deleted a key after its own hold had ended, between the
//     earlier holder's enter and the later's, letting the later one in), "lease_expired" (the
//     earlier holder's lease ran out before the later acquire completed, while it still worked,
//     or the later holder's own lease may have run out during its acquire, before the earlier
//     grant: its SET may have come first), "lock_lost" (a server fault made a server forget a key)
//     or "racy_acquire" (neither: both acquires succeeded on a held lock). A semaphore
//     (History::semaphore(), of History::permits): a window that starts while at least the permits
//     other clients are inside; clients = the holders inside, then the one that entered; cause
//     "lease_expired" (fewer than the permits still had a running lease), "lock_lost",
//     "client_clock" (a client_clock fault came before: a client's own clock ran off the others')
//     or "racy_acquire", the first that explains it.
//   resource_corrupted [resource_corrupted]: the protected resource was corrupted; cause
//     "oversell", "lost_update" or "duplicate" (record = the record id); amount = units. Judged
//     from the writes that took effect (ok): a write a fenced store rejected changed nothing.
//   deadlock [deadlock]: an acquire waited while, for at least stuck_threshold_ns, no live client
//     possibly held the key (possible hold: [acquire invoke, release completed], cut at a crash
//     but kept until the lease end when the crashed holder had a TTL); cause "never_recovered"
//     (the acquire failed) or "recovered_late" (it succeeded only after being stuck); interval =
//     the stuck stretch.
//   lock_error [error]: the lock's acquire, release or extend answered an error or a reply outside
//     its contract (a Lua error, NOPERM, a string where 1 or 0 belongs); amount = how many;
//     cause = the error kind.
//   never_granted [error]: a key was wanted (acquires completed) but never granted, not even
//     possibly (no indeterminate acquire).
//   server_lost [error]: the harness recorded that the Redis server stopped answering.
//   server_died [unknown]: a process the run's topology started (a server or Sentinel) died
//     without the scenario killing it: the run did not go as scripted, so it decides nothing,
//     whatever the lock did (the words say what it did afterwards: who was granted the lock, by
//     which servers). Its run is unknown even beside a deadlock or an error finding (which the
//     death may have caused: a node fewer keeps a waiter out); a violation (or a corrupted
//     resource) observed all the same is still reported as one.
//   indeterminate [unknown]: an acquire without a definite answer (info, or cut short by a crash)
//     whose possible window overlaps another client's definite window (a violation could hide),
//     or another client's acquire that gave up waiting (it was kept out by a holder that does
//     not know it holds the lock, or by nobody: a deadlock could hide); or, once per key, a key
//     no acquire was granted for certain while some may have been (amount = how many; clients =
//     theirs): the run decided nothing about it (grants.cc).
//   incomplete [unknown]: the harness stopped the run before it finished; cause "time_limit" or
//     "interrupted".
//   stale_release, stale_write, stolen_renewal, recovery, idle_hold [no verdict]: facts a reader
//     needs. stale_release: a release deleted a key after its lease ran out while another client
//     was inside (clients = {releaser, victim}), the victim's key granted after the releaser's own
//     grant (one granted before had lost its key then; docs/outputs.md has the rule); stale_write:
//     a write to the resource by a client whose grant of the lock had been superseded by another
//     client's (a higher fencing number or, without numbers, a later grant) before the write
//     (clients = {writer, newer holder}; interval = [newer grant, write]); cause "accepted" (it
//     took effect: the harm, if any, is a resource_corrupted finding) or "rejected" (a fenced store
//     refused it); stolen_renewal: an extend succeeded while another client, which acquired after
//     the extender, was inside (clients = {extender, holder}), that grant answered before the
//     extend was sent or the extender's own key certainly expired by then: it prolonged someone
//     else's lock; recovery: a crash inside and when the key was next acquired (clients = {crashed,
//     next}; interval = [crash, next enter] or to_ns = -1); idle_hold: a release that deleted
//     nothing while its own lease ran (Doc C's unsaved token) left the key held by nobody (interval
//     = the idle time); cause "refused_while_free": a waiter was answered busy while no client
//     possibly held the key (CheckOptions::attempt_spacing_ns; liveness.cc).
//   lease_overrun [no verdict]: a holder left after its lease had certainly run out (the latest
//     lease end, renewals counted, before its exit); clients = {holder}; interval = [lease end,
//     exit]; cause "faulted" (a fault was aimed at it inside the window) or "slow". The lock did
//     not protect it meanwhile: an `ok` beside it was luck (lease_overruns.cc).
//   barging [no verdict; only with CheckOptions::barging]: a client was granted a key while
//     another client's acquire of it, invoked earlier, was still waiting: it barged past a
//     waiter, which a fair (FIFO) lock must not let happen; clients = {newcomer, waiter};
//     interval = [waiter's invoke, grant] (barging.cc).
//   unplanned_stall [no verdict]: the machine stalled, not the lock, with no fault planned: a call
//     timed out (cause "reply_timeout"; interval = the call), an acquire was answered only after
//     the lease it set could have run out (cause "late_acquire"; interval = [the granting
//     attempt's send, its answer]), a waiter made at least 20 times fewer attempts than the other
//     clients waiting on the key with it (their median spacing) and so did not run for longer than
//     the stuck threshold (cause "stalled_waiter"; interval = its wait; a fair queue is free and
//     taken by nobody meanwhile), or (with CheckOptions::
//     renew_period_ms) a renewing holder's renewal, on a schedule that keeps its lease, was sent
//     or answered only after the lease could have run out, or never sent before the holder left
//     after it could have; clients = {holder}; interval = [the last renewal's reply, the late
//     answer or the release]; cause "late_send" (locksim itself) or "late_reply"
//     (the server or the loopback). `locksim run` runs an outcome that differs from its
//     expectation and has one again (stalls.cc).
//
// Naive-timestamp overlaps (Doc D's log artifact): pairs of different clients' windows taken as
// [successful acquire's invoke, completion of the next release] that overlap. Never a verdict.
//
// Verdict: strongest of mutex_violation > resource_corrupted > deadlock > error > unknown > ok.
//
//   CheckResult r = check_history(history, CheckOptions{.stuck_threshold_ns = ms_to_ns(500)});
//   for (const Finding* f : r.of(FindingKind::kMutexViolation)) std::cout << f->words;
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/clock.h"
#include "sim/core/verdict.h"
#include "sim/fault/fault.h"
#include "sim/history/event.h"

namespace locksim {

// ResourceSpec: the protected resource the scenario used, if any (from the scenario file).
struct ResourceSpec {
  // kFencedCounter: a counter whose store refuses writes with a stale fencing number; judged as
  // a counter, from the writes it accepted.
  enum class Kind { kNone, kCounter, kFindOrCreate, kFencedCounter };
  Kind kind = Kind::kNone;
  std::string name = "resource";  // the `key` of its read/write events
  std::int64_t initial = 0;       // counter, fenced counter: initial stock
};

struct CheckOptions {
  Nanos stuck_threshold_ns = ms_to_ns(500);
  ResourceSpec resource = {};  // kind kNone: no resource check
  // barging: look for grants that barged past an earlier waiter (the scenario's check.barging;
  // for a lock that is not fair, barging is how it works, so only scenarios about fairness ask).
  bool barging = false;
  // queue_timeout_ns: how long a queue keeps a waiter's place after its last try (the scenario's
  // lock.queue_timeout_ms); 0: no place is kept between two acquires.
  Nanos queue_timeout_ns = 0;
  // renew_period_ms: the renewal period of a lock that renews (the scenario's lock), for the
  // unplanned_stall finding; 0: not known, no such finding.
  std::int64_t renew_period_ms = 0;
  // writer_wait_ns: a read-write lock's writer kept waiting longer than this while readers got
  // in after it asked is starved (the scenario's check.writer_wait_ms).
  Nanos writer_wait_ns = ms_to_ns(500);
  // attempt_spacing_ns: the least time between two attempts of one acquire (the scenario's wait
  // strategy: poll's and retry_sleep's interval_ms); 0: not known (backoff with jitter, notify,
  // pubsub), no refused_while_free finding.
  Nanos attempt_spacing_ns = 0;
  // words: false lets a checker leave a finding's words empty (its kind, clients, key and times
  // are the same): explore's search reads only the kinds of thousands of schedules, and a crash's
  // recovery, found in most of them, took a tenth of the checker's time to put in words.
  bool words = true;
};

// HoldWindow: one definite hold of a key by a client. Compact (ids into the History's tables):
// a run may have hundreds of thousands.
struct HoldWindow {
  int client = -1;
  KeyId key = 0;                // History::keys
  StringId token = 0;           // History::strings
  Nanos acquire_invoke_ns = 0;  // when the successful acquire was invoked
  Nanos start_ns = 0;           // enter
  Nanos end_ns = 0;             // exit, crash, or end of history
  std::int64_t ttl_ms = -1;     // lease requested; -1: no TTL
  enum class End { kExit, kCrash, kEndOfHistory } end = End::kExit;
  // lease_end_ns: when the lease ran out at the latest: the last successful acquire or extend
  // (ok time) by this holder up to the window's end, plus its ttl_ms; -1 without TTL.
  Nanos lease_end_ns = -1;
  // faulted: a fault event aimed at the client falls inside this window, whatever its kind
  // (Doc D's lose_lock, a pause, a partition, a lost reply).
  bool faulted = false;
};

// FaultWindow: a fault the history records, with its window: the nemesis's faults (a "start"
// and its "end"; an instant has from_ns == to_ns) and a client's own (Doc D's lose_lock).
struct FaultWindow {
  // kind: what happened; reports write its word, traits(kind).word.
  FaultKind kind = FaultKind::kPause;
  int client = -1;    // the client it was aimed at (the nemesis itself for a server fault)
  StringId server = 0;  // a server fault: the server's name; 0: none
  Nanos from_ns = 0;
  Nanos to_ns = 0;    // a window never closed (the run ended first) ends with the history
};

// FindingKind: what a finding is about; see the list above.
enum class FindingKind : std::uint8_t {
  kMutexViolation,
  kResourceCorrupted,
  kDeadlock,
  kLockError,
  kNeverGranted,
  kServerLost,
  kServerDied,
  kIndeterminate,
  kIncomplete,
  kStaleRelease,
  kStaleWrite,
  kStolenRenewal,
  kRecovery,
  kIdleHold,
  // A server fault and what the lock's users saw of it: how long until the lock was granted
  // again (recovery after a kill or a failover), and the acquires that failed meanwhile.
  kServerOutage,
  kLeaseOverrun,
  kBarging,
  kUnplannedStall,
  // A reentrant lock freed by an inner release, its owner still inside with holds left (reported;
  // a violation it let in has the cause early_release).
  kEarlyRelease,
};

// to_string: the kind's word in results.json ("mutex_violation", "stolen_renewal").
std::string_view to_string(FindingKind kind);
// verdict_of: the verdict a finding of this kind supports (kOk: reported, no verdict).
Verdict verdict_of(FindingKind kind);
// label_of: the kind's heading in every report ("Mutual exclusion violated", "Recovery").
std::string_view label_of(FindingKind kind);
// all_finding_kinds: every kind, in the order reports list them.
const std::vector<FindingKind>& all_finding_kinds();

// Finding: one thing the checkers found, as every report renders it.
struct Finding {
  FindingKind kind = FindingKind::kMutexViolation;
  std::string cause;         // refines the kind: "lease_expired", "oversell", "time_limit", ...
  std::string key;           // the lock key or resource; empty for run-level findings
  std::vector<int> clients;  // the clients involved, in the order the kind above lists them
  Nanos from_ns = -1;        // the interval the finding is about; -1 where it has none
  Nanos to_ns = -1;
  std::int64_t amount = 0;  // a count where the kind has one (units, errors)
  std::string record;       // resource_corrupted by duplicate: the record id
  std::string words;        // one or two sentences with names and ms, for people
};

// is_own_cause: whether a mutual-exclusion violation's cause is a lock's own bug whatever the
// fault ("stale_release", "racy_acquire", "client_clock", "early_release"), rather than a limit
// every lease has ("lease_expired", "lock_lost").
bool is_own_cause(std::string_view cause);
// is_own_finding: whether a finding is a lock's own bug whatever the fault: a stale release, a
// stolen renewal, an idle hold, barging (but a queue a server forgot, "queue_lost"), an early
// release, a violation of an own cause, or a
// reentrant lock's owner refused by its own lock ("nested_refused"), or a read-write lock's writer
// starved by readers ("writer_starved"); a refused upgrade is a limit of every read-write lock.
bool is_own_finding(const Finding& finding);

// CheckStats: counts and acquire latency, for summaries and contention tables.
struct CheckStats {
  std::int64_t events = 0;
  std::int64_t acquires_ok = 0;
  std::int64_t acquires_failed = 0;
  std::int64_t acquires_indeterminate = 0;
  std::int64_t releases_ok = 0;       // deleted >= 1
  std::int64_t releases_refused = 0;  // ok with deleted 0, or fail without an I/O error
  std::int64_t crashes = 0;
  std::vector<std::int64_t> holds_per_client;  // by client index
  // Acquire latency (invoke -> ok of successful acquires). A percentile is only stated when there
  // are enough samples to tell it from the maximum: p50 from 2 samples, p99 from 100; otherwise it
  // is -1.
  std::int64_t latency_samples = 0;
  Nanos acquire_latency_p50_ns = -1;
  Nanos acquire_latency_p99_ns = -1;
  Nanos acquire_latency_max_ns = -1;
  Nanos duration_ns = 0;                   // last event time - first event time
  std::int64_t holds = 0;                  // definite hold windows
  std::int64_t holds_in_violation = 0;     // windows that overlap another client's window
  std::int64_t extends_ok = 0;             // extend ok with extended >= 1
  std::int64_t extends_failed = 0;         // extend ok refused, fail or info
  std::int64_t resource_writes = 0;        // write ok events (of any key)
  std::int64_t stale_writes_accepted = 0;  // stale_write findings with cause "accepted"
  std::int64_t stale_writes_rejected = 0;  // stale_write findings with cause "rejected"
  std::int64_t lock_errors = 0;            // calls that answered outside the lock's contract
};

struct CheckResult {
  Verdict verdict = Verdict::kOk;
  std::vector<Finding> findings;  // by kind (in all_finding_kinds order), then as found
  std::vector<HoldWindow> holds;  // every definite hold window, by start time
  std::vector<FaultWindow> faults;  // every fault window, by start time
  // violations whose earlier window is not `faulted` (renewal should bring this to 0).
  std::int64_t violations_outside_faults = 0;
  // Doc D's log artifact: overlapping windows if hold windows were taken naively as
  // [acquire invoke, release completed] (a log line before acquiring and after releasing).
  std::int64_t naive_timestamp_overlaps = 0;
  CheckStats stats;

  // causes: the distinct causes of the mutex_violation findings, sorted.
  std::vector<std::string> causes() const;
  // of: the findings of one kind, in order; count: how many.
  std::vector<const Finding*> of(FindingKind kind) const;
  std::size_t count(FindingKind kind) const;
  bool resource_intact() const { return count(FindingKind::kResourceCorrupted) == 0; }
};

// check_history: runs every checker. O(n log n) in the number of events.
CheckResult check_history(const History& history, const CheckOptions& options);

}  // namespace locksim
