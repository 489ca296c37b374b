// check.h: check_history, the checkers' verdict on one run. Pure functions of a History.
//
// The checkers never see Redis: `locksim check run-dir/` re-judges an old history.jsonl.
//
// Hold windows. A client's *definite* hold window on a key is [enter, exit] (enter is recorded
// right after the acquire reply was read, exit right before the release request is sent), or
// [enter, crash] if it crashed inside, or [enter, end of history] if it never left.
//
// Lease end. A window's lease ends ttl_ms after the latest of its acquire ok and the oks of the
// holder's successful extends (count >= 1) on that key up to the window's end, so a lock renewed
// in time never counts as expired. Every lease estimate below uses it. A window is `faulted` when
// its client recorded a `fault` event inside it (Doc D's "lose_lock": renewal stopped on purpose).
//
// Mutual exclusion: two definite windows of different clients on one key that overlap are a
// violation, reported with both windows, the overlap and the likely cause:
//   - "stale_release": between the earlier holder's enter and the later holder's enter, a third
//     client's release deleted a key (count >= 1) after that client's own window had ended: it
//     deleted the holder's lock and let the later client in;
//   - "lease_expired": the earlier holder's lease (acquire ok + ttl_ms) had run out before the
//     later client's acquire completed, while the earlier holder was still inside;
//   - "racy_acquire": neither: both acquires succeeded on a held lock.
// A release with count >= 1 made after the releaser's lease ran out while another client was
// inside is reported as a StaleRelease finding even when nobody else got in.
// violations_outside_faults counts the violations whose earlier window is not faulted.
//
// Liveness: for every acquire that ended in `fail`, the longest part of its [invoke, fail] window
// during which no *live* client possibly held the key (possible hold: [acquire invoke, release
// completed], cut at a crash, but kept until the lease end when the crashed holder had a TTL, since
// the TTL frees it) is measured; if it is at least stuck_threshold_ns the lock was
// stuck: a Deadlock finding. A crash inside the critical section followed by a later successful
// acquire is a Recovery (the time until the lock was obtainable again), not a deadlock.
//
// Idle holds (Doc C): a release ok that deleted nothing (count 0), invoked while the releaser's own
// lease still ran and no other client was inside, left the key held by nobody: an IdleHold from
// the release to the next enter, or to the lease end if nobody entered before. It is a liveness
// cost, not a verdict; for liveness the key counts as possibly held until that lease end.
//
// Indeterminate: an acquire that ended in `info` (or was cut short by a crash) may have succeeded;
// if its possible window [invoke, that client's next release completion or end] overlaps another
// client's definite window, a violation could be hidden: the verdict is at least `unknown`. A crash
// deletes nothing, so after one the window lasts until the lease end (the end without TTL).
//
// Resource (options.resource, events whose key is its name), judged from its `write` oks alone:
//   - counter: with S sales (writes) from `initial`, "oversell" by S - initial (or by the most
//     negative value written), and "lost_update" by final - (initial - S) when the last written
//     value is higher than that; a write whose `base` is not the previous write's value is named.
//   - find_or_create: a record id written (created) more than once: "duplicate".
// Any ResourceFinding makes the verdict at least resource_corrupted.
//
// Naive-timestamp overlaps (Doc D's log artifact): pairs of different clients' windows taken as
// [successful acquire's invoke, completion of the next release] that overlap. Never a verdict: it
// shows how often logs around lock()/unlock() would "see" two holders on a correct run.
//
// Verdict: strongest of mutex_violation > resource_corrupted > deadlock > unknown > ok.
//
//   CheckResult r = check_history(history, CheckOptions{.stuck_threshold_ns = ms_to_ns(500)});
//   if (r.verdict == Verdict::kMutexViolation) std::cout << r.violations[0].explanation;
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/clock.h"
#include "sim/core/verdict.h"
#include "sim/history/event.h"

namespace locksim {

// ResourceSpec: the protected resource the scenario used, if any (from the scenario file).
struct ResourceSpec {
  enum class Kind { kNone, kCounter, kFindOrCreate };
  Kind kind = Kind::kNone;
  std::string name = "resource";  // the `key` of its read/write events
  std::int64_t initial = 0;       // counter: initial stock
};

struct CheckOptions {
  Nanos stuck_threshold_ns = ms_to_ns(500);
  ResourceSpec resource = {};  // kind kNone: no resource check
};

// HoldWindow: one definite hold of a key by a client.
struct HoldWindow {
  int client = -1;
  std::string key;
  Nanos acquire_invoke_ns = 0;  // when the successful acquire was invoked
  Nanos start_ns = 0;           // enter
  Nanos end_ns = 0;             // exit, crash, or end of history
  std::string token;
  std::int64_t ttl_ms = -1;  // lease requested; -1: no TTL
  enum class End { kExit, kCrash, kEndOfHistory } end = End::kExit;
  // lease_end_ns: when the lease ran out at the latest: the last successful acquire or extend
  // (ok time, count >= 1) by this holder up to the window's end, plus its ttl_ms; -1 without TTL.
  Nanos lease_end_ns = -1;
  // faulted: the client recorded a `fault` event inside this window (e.g. Doc D's "lose_lock").
  bool faulted = false;
};

// MutexViolation: two overlapping definite windows; `earlier.start_ns <= later.start_ns`.
struct MutexViolation {
  std::string key;
  HoldWindow earlier;
  HoldWindow later;
  Nanos overlap_ns = 0;
  std::string cause;            // "stale_release", "lease_expired", "racy_acquire"
  int stale_releaser = -1;      // stale_release: the client whose release deleted the lock
  Nanos stale_release_ns = -1;  // stale_release: when that release was invoked
  std::string explanation;      // one or two sentences with names and ms
};

// StaleRelease: a release that deleted a key after its lease ran out while another client held
// the key (whether or not someone else then got in).
struct StaleRelease {
  std::string key;
  int releaser = -1;
  int victim = -1;  // the client inside when the release deleted the key
  Nanos release_ns = 0;
  std::string explanation;
};

// Deadlock: an acquire failed while, for stuck_ns, no live client possibly held the key.
struct Deadlock {
  std::string key;
  int waiter = -1;
  Nanos stuck_from_ns = 0;  // start of the longest uncovered stretch
  Nanos stuck_to_ns = 0;    // end of that stretch: usually when the acquire gave up
  std::string explanation;
};

// Recovery: a crash inside the critical section, and when the key was next acquired.
struct Recovery {
  std::string key;
  int crashed = -1;
  Nanos crash_ns = 0;
  int next_holder = -1;     // -1: nobody acquired it afterwards
  Nanos recovered_ns = -1;  // next holder's enter; -1 if never
  std::string explanation;
};

// IdleHold: the holder's release deleted nothing although its lease was still running and nobody
// else was inside (Doc C's release with a token that was never saved): the key stayed held by
// nobody until it expired. A refused release after the lease ran out, or while another client was
// inside (a stale release refused, as it should be), is not one.
struct IdleHold {
  std::string key;
  int client = -1;
  Nanos from_ns = 0;   // the refused release
  Nanos until_ns = 0;  // next enter on the key if before the lease end, else the lease end
  std::string explanation;
};

// ResourceFinding: the protected resource was corrupted.
struct ResourceFinding {
  std::string kind;         // "lost_update", "oversell", "duplicate"
  std::string key;          // the resource
  std::string record_id;    // duplicate: which record
  std::int64_t amount = 0;  // lost updates, units oversold, or extra records created
  std::string explanation;
};

// Indeterminate: an `info` acquire whose possible window overlaps another client's hold.
struct Indeterminate {
  std::string key;
  int client = -1;
  Nanos invoke_ns = 0;
  std::string explanation;
};

// CheckStats: counts and acquire latency, for summaries and contention tables.
struct CheckStats {
  std::int64_t events = 0;
  std::int64_t acquires_ok = 0;
  std::int64_t acquires_failed = 0;
  std::int64_t acquires_indeterminate = 0;
  std::int64_t releases_ok = 0;       // deleted >= 1
  std::int64_t releases_refused = 0;  // ok with count 0, or fail without an I/O error
  std::int64_t crashes = 0;
  std::vector<std::int64_t> holds_per_client;  // by client index
  Nanos acquire_latency_p50_ns = 0;            // invoke -> ok of successful acquires
  Nanos acquire_latency_p99_ns = 0;
  Nanos acquire_latency_max_ns = 0;
  Nanos duration_ns = 0;                // last event time - first event time
  std::int64_t holds = 0;               // definite hold windows
  std::int64_t holds_in_violation = 0;  // windows that overlap another client's window
  std::int64_t extends_ok = 0;          // extend ok with count >= 1
  std::int64_t extends_failed = 0;      // extend ok with count < 1 (refused), fail or info
  std::int64_t resource_writes = 0;     // write ok events (of any key)
};

struct CheckResult {
  Verdict verdict = Verdict::kOk;
  std::vector<MutexViolation> violations;
  std::vector<StaleRelease> stale_releases;
  std::vector<Deadlock> deadlocks;
  std::vector<Recovery> recoveries;
  std::vector<Indeterminate> indeterminate;
  std::vector<IdleHold> idle_holds;
  std::vector<ResourceFinding> resource_findings;
  // violations whose earlier window is not `faulted` (renewal should bring this to 0).
  std::int64_t violations_outside_faults = 0;
  // Doc D's log artifact: overlapping windows if hold windows were taken naively as
  // [acquire invoke, release completed] (a log line before acquiring and after releasing).
  std::int64_t naive_timestamp_overlaps = 0;
  CheckStats stats;

  // causes: the distinct causes of `violations`, sorted.
  std::vector<std::string> causes() const;
};

// check_history: runs every checker. O(n log n) in the number of events.
CheckResult check_history(const History& history, const CheckOptions& options);

// hold_windows: the definite hold windows of the history, by start time (exposed for reports).
std::vector<HoldWindow> hold_windows(const History& history);

}  // namespace locksim
