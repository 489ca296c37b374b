// timeline.h: KeyTimeline, the per-key facts every checker reads, built in one pass over a history.
//
// Internal to the checker. The history interleaves clients and keys; the checkers want, per key,
// definite hold windows (with their lease end after renewals, and whether a fault was injected
// inside), possible-hold intervals, failed and indeterminate acquires, deleting releases made by a
// client that no longer held the key, releases that deleted nothing while the lease ran, crashes
// inside, and the naive log windows. Building these once keeps every checker a sort plus a sweep.
//
//   Timelines timelines = build_timelines(history);
//   for (const KeyTimeline& key : timelines.keys) sweep(key.windows);
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "sim/checker/check.h"
#include "sim/core/clock.h"
#include "sim/history/event.h"

namespace locksim::checker_internal {

// kNever: an instant after every event (a lease without TTL never runs out).
constexpr Nanos kNever = std::numeric_limits<Nanos>::max();

// WindowRecord: a definite hold window plus what the mutual exclusion causes need.
struct WindowRecord {
  int client = -1;
  Nanos acquire_invoke_ns = 0;
  Nanos acquire_ok_ns = 0;
  // acquire_sent_ns: when the successful attempt was sent (its invoke, in histories without it):
  // the key was set after it, so a server fault after it can have taken the key.
  Nanos acquire_sent_ns = 0;
  Nanos start_ns = 0;
  Nanos end_ns = 0;
  std::int64_t ttl_ms = -1;
  // lease_end_ns: the acquire ok, or the last successful extension's ok up to the window's end,
  // plus its ttl; kNever without TTL.
  Nanos lease_end_ns = kNever;
  // lease_end_lower_ns: the earliest the lease can have run out: when the successful acquire
  // attempt (or the last successful extension) was sent, plus its ttl; kNever without TTL.
  Nanos lease_end_lower_ns = kNever;
  Nanos renewed_ns = -1;  // the last successful extension's ok, or -1 if never renewed
  HoldWindow::End end = HoldWindow::End::kExit;
  bool faulted = false;  // the client recorded a fault event inside the window
  StringId token = 0;
  // A reentrant lock's window opened by a nested acquire that granted the lock afresh (the
  // client's hold before it had lost its key): why it had ("lease_expired", "lock_lost"; "" for
  // every other window) and from when. The server counts one hold, so the client's next inner
  // release frees the lock.
  const char* regrant_cause = "";
  Nanos regrant_lost_ns = -1;
  // read: a read-write lock's read hold (every grant of the window was a read one): read windows
  // may overlap each other.
  bool read = false;
};

// ForeignDelete: a release that deleted a key (count >= 1) although its client was no longer the
// holder when it invoked it: its lease had run out, or another client had entered since its own
// acquire succeeded (the key may have been someone else's).
//
// Whether it was is judged against each possible victim by `grant_sent_ns`: a release is stale
// only if the key it deleted had been granted to another client after the releaser's own grant.
// A client granted certainly before (its acquire answered by the time the releaser's successful
// attempt was sent) had lost its key by then: the releaser's SET NX found the key free, so what
// the release deleted was the releaser's own key or a later one, never that client's.
struct ForeignDelete {
  int client = -1;
  // grant_sent_ns: when the releaser's own successful acquire attempt was sent, the earliest its
  // grant can have happened; -1 when the release follows no known grant (an acquire whose reply
  // was lost, or none): then every client inside can be its victim.
  Nanos grant_sent_ns = -1;
  // grant_ok_ns: when the releaser's own grant was answered (-1 with grant_sent_ns): a victim
  // whose successful attempt was sent before it may have been granted first.
  Nanos grant_ok_ns = -1;
  ServerGrant granted;  // the servers of the releaser's own grant (a multi-server lock's)
  // key_end_lower_ns: the earliest the releaser's own key can have expired on a server that kept
  // it: its TTL from the successful attempt's send (or the last renewal's), not a shorter
  // validity the lock promised (Redlock's).
  Nanos key_end_lower_ns = kNever;
  Nanos invoke_ns = 0;
  // ok_ns: when the release returned. A multi-command release (GET, compare, DEL) deletes at some
  // point in [invoke_ns, ok_ns], so a lease that ran out before ok_ns makes it foreign too.
  Nanos ok_ns = 0;
  Nanos lease_end_ns = kNever;  // the earliest the releaser's lease can have run out
  bool lease_ran_out = false;
  int newer_holder = -1;  // the client that had entered since, or -1
  // deleted: how many keys it deleted (servers, for a multi-server lock); a release never
  // answered counts as deleting on every server (kAllDeleted).
  static constexpr std::int32_t kAllDeleted = 1 << 30;
  std::int32_t deleted = kAllDeleted;
  // read: the releaser held a read-write lock's read hold: it deletes the key only as the last
  // reader, so a reader inside is no victim of it (a writer is).
  bool read = false;
};

// granted_before: a grant answered at `other_ok_ns` certainly happened before a grant whose
// successful attempt was sent at `own_sent_ns` (-1: no known grant, so nothing is before it). The
// other SET ran before its reply was read, this one after its request was sent.
constexpr bool granted_before(Nanos other_ok_ns, Nanos own_sent_ns) {
  return own_sent_ns >= 0 && other_ok_ns <= own_sent_ns;
}

// HoldEnd: why a possible-hold interval ended; used to explain a stuck lock.
enum class HoldEnd {
  kReleased,             // release ok that deleted the key
  kReleaseDidNotDelete,  // release ok with count 0, or a release that failed
  kReleaseUnknown,       // release info: it may or may not have deleted the key
  kCrash,                // the client crashed; the interval is extended to its lease end
  kIdle,                 // release ok with count 0 while the lease ran: held until the lease end
  kEndOfHistory,
};

// PossibleHold: [acquire invoke, release completed] of a client that may have held the key. A
// crash cuts it (a crashed client is not live), except that a lease keeps the key held until it
// runs out: then the interval ends at the lease end.
struct PossibleHold {
  int client = -1;
  Nanos start_ns = 0;
  Nanos end_ns = 0;
  HoldEnd how = HoldEnd::kEndOfHistory;
  Nanos completed_ns = 0;  // the release completion, crash or last event that ended it
  bool acquired = false;   // false: only an indeterminate or interrupted acquire
  std::int64_t ttl_ms = -1;
};

// FailedAcquire: an acquire that ended in `fail`.
struct FailedAcquire {
  int client = -1;
  Nanos invoke_ns = 0;
  Nanos fail_ns = 0;
  bool waited = true;  // it gave up waiting (or was stopped); false: it failed on an error
};

// GrantedAcquire: an acquire that succeeded only after waiting: [invoke, when the successful
// attempt was sent] is its wait (histories without the send time have no such record).
struct GrantedAcquire {
  int client = -1;
  Nanos invoke_ns = 0;
  Nanos sent_ns = 0;
  Nanos ok_ns = 0;
  int attempts = -1;  // attempts made, the successful one included; -1: not said
  bool read = false;  // a read-write lock's read acquire
};

// CrashInside: a client crashed between enter and exit, with its lease as it stood.
struct CrashInside {
  int client = -1;
  Nanos crash_ns = 0;
  std::int64_t ttl_ms = -1;
  Nanos lease_end_ns = kNever;  // the latest its lease can have run out
  Nanos renewed_ns = -1;        // its last successful extension's ok, or -1
};

// StolenExtend: a successful extension (extended >= 1) made while another client, which entered
// after the extender's own acquire succeeded, was inside: it extended that client's lock.
struct StolenExtend {
  int client = -1;  // the extender
  int holder = -1;  // the client whose key it extended
  Nanos invoke_ns = 0;
  Nanos ok_ns = 0;
  Nanos holder_since_ns = 0;  // when the holder entered
};

// MaybeAcquire: an acquire that ended in `info`, or was still in flight at a crash or at the end
// of the history, with the interval during which it may have held the key.
struct MaybeAcquire {
  int client = -1;
  Nanos invoke_ns = 0;
  Nanos end_ns = 0;
  std::string error;  // the info event's error; empty when interrupted by a crash or the end
  bool interrupted = false;
};

// IdleRelease: a release ok with count 0 by a client whose lease was still running when it invoked
// it, while no other client was inside: the key stays held by nobody until the lease runs out.
struct IdleRelease {
  int client = -1;
  Nanos invoke_ns = 0;
  Nanos ok_ns = 0;  // its reply: a server fault before it can have taken the key first
  Nanos lease_end_ns = 0;
};

// DeletingRelease: a release whose reply said it deleted a key, and when it was under way.
struct DeletingRelease {
  int client = -1;
  Nanos invoke_ns = 0;
  Nanos ok_ns = 0;
};

// EarlyFree: an inner release of a reentrant lock (its client still inside) that deleted the key.
// `early`: the server still counted more than one hold of the client's (its key lived on since
// its last grant), so the lock was freed before its owner's depth reached zero: the lock's bug.
// Otherwise the hold it released was the only one left (a nested acquire had granted the lock
// afresh after the key was lost).
struct EarlyFree {
  int client = -1;
  Nanos invoke_ns = 0;
  Nanos ok_ns = 0;
  int depth = 0;  // the client's holds before the release, as the server counted them
  bool early = false;
};

// NestedRefusal: a reentrant lock's nested acquire (its client inside) that was answered busy:
// until it gave up, at its single try, or before it was granted after all (`granted`).
struct NestedRefusal {
  int client = -1;
  Nanos invoke_ns = 0;
  Nanos fail_ns = 0;  // when it gave up, or was granted
  bool granted = false;
  Nanos held_since_ns = 0;            // the client's enter
  Nanos lease_end_lower_ns = kNever;  // the earliest its lease can have run out, at the invoke
  int depth = 0;                      // the client's holds at the invoke
};

// UpgradeRefusal: a read-write lock's holder of a read hold whose acquire of the write lock was
// refused until it gave up (it waited for every read hold, its own included).
struct UpgradeRefusal {
  int client = -1;
  Nanos invoke_ns = 0;
  Nanos fail_ns = 0;
  Nanos held_since_ns = 0;
};

// WriteWait: a read-write lock's acquire of a write hold (not by a holder), from its first busy
// answer (since when it certainly waited; its end if never) to its end.
struct WriteWait {
  int client = -1;
  Nanos invoke_ns = 0;  // the acquire's invoke: its first attempt may have reached a server since
  Nanos asked_ns = 0;
  Nanos end_ns = 0;
  bool granted = false;
};

// NaiveWindow: [acquire invoke of a successful acquire, completion of the next release], or the
// crash or end of history: what logs written around lock()/unlock() calls would call a hold.
struct NaiveWindow {
  int client = -1;
  Nanos start_ns = 0;
  Nanos end_ns = 0;
};

struct KeyTimeline {
  std::string key;
  KeyId key_id = 0;
  std::vector<WindowRecord> windows;           // sorted by start_ns, then end_ns
  std::vector<PossibleHold> possible_holds;    // in the order they ended
  std::vector<ForeignDelete> foreign_deletes;  // sorted by invoke_ns
  // unanswered_releases: releases whose reply never came (timed out, indeterminate): their
  // command may reach the server at any time after the invoke (a delayed packet the link lets go
  // after the caller gave up), so each is a possible late delete; ok_ns is kNever. In the order
  // they completed (their invokes in order too: one release at a time per client, checked below).
  std::vector<ForeignDelete> unanswered_releases;
  std::vector<FailedAcquire> failed_acquires;
  std::vector<GrantedAcquire> granted_acquires;  // those that waited (more than one attempt)
  std::vector<CrashInside> crashes_inside;
  std::vector<StolenExtend> stolen_extends;  // in the order they completed
  std::int64_t acquires_completed = 0;       // ok, fail or info
  std::int64_t acquires_ok = 0;
  std::vector<MaybeAcquire> maybe_acquires;
  std::vector<IdleRelease> idle_releases;  // in the order they completed
  // Every release that deleted a key, in the order they completed (what may have deleted the
  // key of a release that found none: an idle hold's other explanation).
  std::vector<DeletingRelease> deleting_releases;
  std::vector<NaiveWindow> naive_windows;  // in the order they ended
  // A reentrant lock's (History::reentrant), in the order they completed:
  std::vector<EarlyFree> inner_frees;
  std::vector<NestedRefusal> nested_refusals;
  // A read-write lock's (History::read_write), in the order they completed:
  std::vector<UpgradeRefusal> upgrade_refusals;
  std::vector<WriteWait> write_waits;
};

struct Timelines {
  std::vector<KeyTimeline> keys;  // in order of first appearance
  Nanos first_ns = 0;
  Nanos last_ns = 0;
};

// build_timelines: one pass over `history` (sorted by time, as History promises).
Timelines build_timelines(const History& history);

// to_hold_window: the public view of a window record on the history key `key`.
HoldWindow to_hold_window(const WindowRecord& record, KeyId key);

}  // namespace locksim::checker_internal
