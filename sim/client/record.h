// record.h: what a lock client records, written once for every host. A call's end is first put
// in a host-independent outcome (AcquireOutcome, ReleaseOutcome, ExtendOutcome), whether it came
// from the acquire loop in this process (outcome_of) or from a worker process's reply line (the
// worker protocol's codec, sim/host/worker_codec.h); ClientRecord then records it into the
// client's log, at the conservative points, and keeps what the client holds.
//
//   ClientRecord record(log, terms);
//   record.invoke_acquire(key, intended_ns);           // the invoke, before the first attempt
//   AcquireStatus status = record.end_acquire(outcome_of(end));  // ok + enter, or fail / info
//   record.exit();                                     // before the release is sent
//   std::string token = record.invoke_release(false);
//   record.end_release(outcome_of(result));
//
// The points: an acquire's ok and enter after its reply was read; the exit before the release is
// sent; every completion when its reply was read. A client's renewals (the watchdog) go to a log
// of their own through RenewalRecord.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/client/acquire.h"
#include "sim/history/recorder.h"
#include "sim/lock/variant.h"

namespace locksim {

// AcquireStatus: how a client's acquire ended, for whoever drives the client.
enum class AcquireStatus { kAcquired, kFailed, kIndeterminate, kStopped, kCrashed };

// CallFailure: a call that did not succeed, as recorded: fail (it did not take effect) or info
// (it may have), with its typed error and the server's, hiredis' or the library's words.
struct CallFailure {
  bool maybe = false;  // info: may have taken effect
  ErrorKind error = ErrorKind::kProtocol;
  std::string message;
};

// failure_of: a Redis call's error as a CallFailure (info when indeterminate).
CallFailure failure_of(const RedisResult& error);
// error_kind: a connection's error kind as the history's.
ErrorKind error_kind(RedisErrorKind kind);

// AcquireOutcome: how an acquire ended, whichever host ran it.
struct AcquireOutcome {
  bool granted = false;
  CallFailure failure;    // !granted
  int attempts = -1;      // -1: not said
  // granted:
  std::string token;
  std::int64_t fencing = -1;      // -1: none
  std::int64_t validity_ms = -1;  // a quorum lock's validity; -1: none
  std::vector<int> granted_on;    // a multi-server lock's granting servers (indices)
  Nanos sent_ns = -1;             // when the granting attempt was sent (the run's clock); -1
  Nanos busy_ns = -1;             // when the first busy answer was read (the run's clock); -1
};
// outcome_of: an acquire loop's end (a gave-up or stopped acquire fails with kGaveUp, kStopped).
AcquireOutcome outcome_of(const AcquireEnd& end);
// outcome_of: the same from an end that is not read again: its token and servers are moved.
AcquireOutcome outcome_of(AcquireEnd&& end);

// ReleaseOutcome: how a release ended. `deleted` < 0 on a success: the reply did not say what the
// release did (recorded info, as a reply outside the contract).
struct ReleaseOutcome {
  bool ok = false;
  CallFailure failure;
  std::int64_t deleted = 0;
  std::string odd;  // ok with deleted < 0: what the reply said instead
};
ReleaseOutcome outcome_of(const ReleaseResult& result);

// ExtendOutcome: how an extension ended; `extended` is 0 or 1 on a success, else the reply was
// outside the contract (recorded info).
struct ExtendOutcome {
  bool ok = false;
  CallFailure failure;
  int extended = 0;
};
ExtendOutcome outcome_of(const ExtendResult& result);

// ClientTerms: what the recording needs to know of the run.
struct ClientTerms {
  bool uses_ttl = false;  // the variant's lock has a TTL (recorded on acquire invoke and ok)
  std::int64_t ttl_ms = 0;
  std::size_t servers = 0;  // a topology's servers (grants name them by index); 0: one server
};
ClientTerms client_terms(const LockVariant& variant, std::int64_t ttl_ms, std::size_t servers);

// ClientRecord: one client's events and what it holds. Used from the client's own thread only.
class ClientRecord {
 public:
  ClientRecord(ClientLog& log, ClientTerms terms) : log_(log), terms_(terms) {}

  // invoke_acquire: the acquire's invoke (`intended_ns` >= 0: when an open-loop schedule had it
  // due); returns its instant (a deadline counts from it). A client that holds the lock may
  // acquire it again only if the lock is reentrant (the caller's to know): a nested acquire.
  Nanos invoke_acquire(const std::string& logical_key, Nanos intended_ns = -1);
  // end_acquire: its completion; granted, also enter, and the client holds the lock; a nested
  // acquire granted records no enter (the client is inside already) and holds one more.
  AcquireStatus end_acquire(const AcquireOutcome& outcome);
  // crashed_in_acquire: the client died during the acquire (crash() follows); `waiting`: after
  // a busy answer, so it holds nothing: the acquire fails "crashed". Otherwise the acquire stays
  // without completion: the checker treats it as "may hold".
  void crashed_in_acquire(bool waiting, int attempts = -1);

  // exit: the client leaves the critical section, before its release is sent (the conservative
  // point); nothing if it does not hold (a retry of a cancelled release has left already). Not
  // called for an inner release (depth() > 1): the client stays inside.
  void exit();
  // prepare_unheld_release: the next release is one by a client that holds nothing (a `finally`
  // that unlocks after a failed acquire): of `logical_key`, with no token ("").
  void prepare_unheld_release(const std::string& logical_key);
  bool unheld_release() const { return unheld_release_; }
  // invoke_release: the release's invoke, after exit() (or, inner, still inside); returns the
  // token to send (with `unsaved_token`, Doc C's bug, one that was never saved: "").
  std::string invoke_release(bool unsaved_token = false);
  // end_release: its completion. An inner release leaves the client inside, one hold fewer; a
  // cancelled release leaves release_pending() (it may be tried again); otherwise the client
  // holds nothing.
  void end_release(const ReleaseOutcome& outcome);

  // invoke_extend / end_extend: one extension of the lease held (a scenario's extend step).
  void invoke_extend();
  void end_extend(const ExtendOutcome& outcome);

  // crash: the client died; it holds nothing.
  void crash();
  // crashed_elsewhere: the client died and its crash is in a record made where it ran (a worker
  // that ran its own workload hands its history over): it holds nothing, and nothing is recorded.
  void crashed_elsewhere() {
    crashed_ = true;
    holding_ = false;
  }
  // fault: a fault event of `kind` the client itself knows of (Doc D's lost iteration), at the
  // key it holds.
  void fault(FaultKind kind);
  // work: the client works inside for `planned_ms`.
  void work(std::int64_t planned_ms);

  // The protected resource. end_read: a read's completion (value, or the failure); write_value:
  // the value a write would write by the documents' application logic (sell one if stock was
  // left; create if the record was absent), none if nothing is to be written; end_write: its
  // completion (`refusal`: a fenced store refused the grant's fencing number).
  struct ResourceTerms {
    std::string name;
    bool counts = false;  // a counter; else a find-or-create record store
    bool fenced = false;
  };
  void end_read(const ResourceTerms& resource, const std::string& record_id,
                const CallFailure* failure, std::int64_t value);
  std::optional<std::int64_t> write_value(const ResourceTerms& resource) const;
  void end_write(const ResourceTerms& resource, const std::string& record_id, std::int64_t value,
                 const CallFailure* failure, const std::string* refusal);

  // set_acquire_mode: what the next acquires ask for (a read-write lock's read or write hold;
  // kExclusive for every other lock), recorded on their invoke and end.
  void set_acquire_mode(LockMode mode) { acquire_mode_ = mode; }
  LockMode acquire_mode() const { return acquire_mode_; }
  bool holding() const { return holding_; }
  // depth: how many holds the client has (a reentrant lock's nested acquires count one each).
  int depth() const { return depth_; }
  bool crashed() const { return crashed_; }
  bool release_pending() const { return release_pending_; }
  const std::string& held_key() const { return held_key_; }
  const std::string& held_token() const { return held_token_; }
  std::int64_t held_fencing() const { return held_fencing_; }
  ClientLog& log() { return log_; }

 private:
  void fail(Event& event, const CallFailure& failure);

  ClientLog& log_;
  ClientTerms terms_;
  std::string acquiring_key_;  // the key of the acquire under way
  bool holding_ = false;
  bool crashed_ = false;
  bool release_pending_ = false;
  int depth_ = 0;                // holds (1 once acquired; more with nested acquires)
  // The tokens of the nested grants, latest last: an inner release releases the latest hold.
  std::vector<std::string> nested_tokens_;
  LockMode acquire_mode_ = LockMode::kExclusive;
  bool nested_ = false;          // the acquire under way is a nested one
  bool inner_release_ = false;   // the release under way leaves holds behind
  bool unheld_release_ = false;  // the next release is by a client that holds nothing
  std::string held_key_;
  std::string held_token_;
  std::int64_t held_fencing_ = -1;
  std::int64_t last_read_ = -1;  // what the last read saw (-1: none, or it failed)
};

// RenewalRecord: a renewing client's extend events, in a log of their own (the watchdog runs
// beside the client). Used from the renewing thread only (or the harness's reader of a worker).
class RenewalRecord {
 public:
  RenewalRecord(ClientLog& log, std::int64_t ttl_ms) : log_(log), ttl_ms_(ttl_ms) {}
  // invoke: an extension of `token`'s lease on `logical_key` is sent; `sent_ns` >= 0: when it
  // was (the log stays in time order: never before the previous event, nor after now).
  void invoke(const std::string& logical_key, const std::string& token, Nanos sent_ns = -1);
  void end(const std::string& logical_key, const ExtendOutcome& outcome);

 private:
  ClientLog& log_;
  std::int64_t ttl_ms_;
};

}  // namespace locksim
