#include "sim/client/record.h"

#include <algorithm>
#include <utility>

#include "sim/core/assert.h"

namespace locksim {
namespace {

std::int32_t clamp32(std::int64_t value) {
  return static_cast<std::int32_t>(std::clamp<std::int64_t>(value, INT32_MIN, INT32_MAX));
}

// server_grant: the grant of a multi-server acquire: `granted_on` holds the indices of the
// servers that granted it, of `servers` servers (an index outside is dropped); none if it names
// no server.
ServerGrant server_grant(const std::vector<int>& granted_on, std::size_t servers) {
  ServerGrant grant;
  grant.of = static_cast<std::uint8_t>(std::min(servers, kMaxGrantServers));
  for (const int server : granted_on) {
    if (server >= 0 && server < grant.of) grant.on |= 1U << server;
  }
  return grant.on == 0 ? ServerGrant{} : grant;
}

}  // namespace

ErrorKind error_kind(RedisErrorKind kind) {
  switch (kind) {
    case RedisErrorKind::kNone:
      return ErrorKind::kNone;
    case RedisErrorKind::kTimeout:
      return ErrorKind::kTimeout;
    case RedisErrorKind::kClosed:
      return ErrorKind::kClosed;
    case RedisErrorKind::kRefused:
      return ErrorKind::kRefused;
    case RedisErrorKind::kProtocol:
      return ErrorKind::kProtocol;
    case RedisErrorKind::kReplyError:
      return ErrorKind::kReplyError;
    case RedisErrorKind::kUnexpectedReply:
      return ErrorKind::kUnexpectedReply;
  }
  return ErrorKind::kProtocol;
}

CallFailure failure_of(const RedisResult& error) {
  return CallFailure{error.indeterminate(), error_kind(error.error), error.message};
}

AcquireOutcome outcome_of(const AcquireEnd& end) {
  AcquireOutcome outcome;
  outcome.attempts = end.attempts;
  outcome.busy_ns = end.busy_ns;
  const AcquireAttempt& attempt = end.attempt;
  switch (end.kind) {
    case AcquireEnd::Kind::kAcquired:
      outcome.granted = true;
      outcome.token = attempt.token;
      outcome.fencing = attempt.fencing;
      outcome.validity_ms = attempt.validity_ms;
      outcome.granted_on = attempt.granted_on;
      outcome.sent_ns = end.sent_ns;
      break;
    case AcquireEnd::Kind::kError:
      outcome.failure = failure_of(attempt.error);
      break;
    case AcquireEnd::Kind::kGaveUp:
      outcome.failure = CallFailure{false, ErrorKind::kGaveUp, {}};
      break;
    case AcquireEnd::Kind::kStopped:
      outcome.failure = CallFailure{false, ErrorKind::kStopped, {}};
      break;
  }
  return outcome;
}

AcquireOutcome outcome_of(AcquireEnd&& end) {
  // Taken out first, so that the copy below copies nothing of them.
  std::string token = std::move(end.attempt.token);
  std::vector<int> granted_on = std::move(end.attempt.granted_on);
  AcquireOutcome outcome = outcome_of(std::as_const(end));
  if (outcome.granted) {
    outcome.token = std::move(token);
    outcome.granted_on = std::move(granted_on);
  }
  return outcome;
}

ReleaseOutcome outcome_of(const ReleaseResult& result) {
  ReleaseOutcome outcome;
  if (result.outcome == ReleaseResult::Outcome::kError) {
    outcome.failure = failure_of(result.error);
  } else {
    outcome.ok = true;
    outcome.deleted = std::max<std::int64_t>(result.deleted, 0);
  }
  return outcome;
}

ExtendOutcome outcome_of(const ExtendResult& result) {
  ExtendOutcome outcome;
  if (result.outcome == ExtendResult::Outcome::kError) {
    outcome.failure = failure_of(result.error);
  } else {
    outcome.ok = true;
    outcome.extended = result.outcome == ExtendResult::Outcome::kExtended ? 1 : 0;
  }
  return outcome;
}

ClientTerms client_terms(const LockVariant& variant, std::int64_t ttl_ms, std::size_t servers) {
  return ClientTerms{variant.uses_ttl(), ttl_ms, servers};
}

void ClientRecord::fail(Event& event, const CallFailure& failure) {
  event.error = failure.error;
  event.message = log_.intern(failure.message);
}

Nanos ClientRecord::invoke_acquire(const std::string& logical_key, Nanos intended_ns) {
  LOCKSIM_ASSERT(!crashed_ && (!holding_ || logical_key == held_key_));
  nested_ = holding_;
  acquiring_key_ = logical_key;
  release_pending_ = false;  // a new acquire gives up a release that was never finished
  Event& invoke = log_.record(EventType::kInvoke, Op::kAcquire, logical_key);
  invoke.mode = acquire_mode_;
  if (terms_.uses_ttl) invoke.ttl_ms = clamp32(terms_.ttl_ms);
  if (intended_ns >= 0) invoke.schedule().intended_ns = std::min(intended_ns, invoke.time_ns);
  return invoke.time_ns;
}

namespace {

// queued_at: since when an acquire that ends at `end_ns` certainly waited: its first busy answer,
// or, never answered busy, its end (it never certainly waited).
Nanos queued_at(const AcquireOutcome& outcome, Nanos end_ns) {
  return outcome.busy_ns >= 0 ? std::min(outcome.busy_ns, end_ns) : end_ns;
}

}  // namespace

AcquireStatus ClientRecord::end_acquire(const AcquireOutcome& outcome) {
  const std::string& key = acquiring_key_;
  if (!outcome.granted) {
    Event& failed =
        log_.record(outcome.failure.maybe ? EventType::kInfo : EventType::kFail, Op::kAcquire, key);
    failed.mode = acquire_mode_;
    fail(failed, outcome.failure);
    failed.acquire().attempts = outcome.attempts;
    set_queued_ns(failed, queued_at(outcome, failed.time_ns));
    if (outcome.failure.maybe) return AcquireStatus::kIndeterminate;
    return outcome.failure.error == ErrorKind::kStopped ? AcquireStatus::kStopped
                                                        : AcquireStatus::kFailed;
  }
  // ok first, then enter: both after the reply was read (the conservative point).
  Event& ok = log_.record(EventType::kOk, Op::kAcquire, key);
  ok.mode = acquire_mode_;
  ok.token = log_.intern(outcome.token);
  ok.acquire().attempts = outcome.attempts;
  set_queued_ns(ok, queued_at(outcome, ok.time_ns));
  // When the granting attempt was sent: never after its reply was read.
  if (outcome.sent_ns >= 0) ok.acquire().sent_ns = std::min(outcome.sent_ns, ok.time_ns);
  ok.acquire().fencing = outcome.fencing;
  if (outcome.validity_ms >= 0) ok.acquire().validity_ms = clamp32(outcome.validity_ms);
  if (!outcome.granted_on.empty() && terms_.servers > 0) {
    ok.acquire().granted = server_grant(outcome.granted_on, terms_.servers);
  }
  if (terms_.uses_ttl) ok.ttl_ms = clamp32(terms_.ttl_ms);
  if (nested_) {
    // A nested acquire (a reentrant lock's, or a read-write lock's second hold): the client is
    // inside already, one hold deeper.
    ++depth_;
    nested_tokens_.push_back(outcome.token);
    return AcquireStatus::kAcquired;
  }
  log_.record(EventType::kOk, Op::kEnter, key);
  depth_ = 1;
  nested_tokens_.clear();
  holding_ = true;
  held_key_ = key;
  held_token_ = outcome.token;
  held_fencing_ = outcome.fencing;
  return AcquireStatus::kAcquired;
}

void ClientRecord::crashed_in_acquire(bool waiting, int attempts) {
  if (waiting) {
    // It was answered busy before it died: the acquire definitely failed.
    Event& failed = log_.record(EventType::kFail, Op::kAcquire, acquiring_key_);
    failed.error = ErrorKind::kCrashed;
    failed.acquire().attempts = attempts;
  }
}

void ClientRecord::exit() {
  LOCKSIM_ASSERT((holding_ || release_pending_) && !crashed_);
  if (holding_) log_.record(EventType::kOk, Op::kExit, held_key_);
  holding_ = false;
}

void ClientRecord::prepare_unheld_release(const std::string& logical_key) {
  LOCKSIM_ASSERT(!holding_ && !release_pending_ && !crashed_);
  held_key_ = logical_key;
  held_token_.clear();
  unheld_release_ = true;
}

std::string ClientRecord::invoke_release(bool unsaved_token) {
  // Inside still only for an inner release of a reentrant lock (a hold of several).
  LOCKSIM_ASSERT((!holding_ || depth_ > 1) && !crashed_);
  inner_release_ = holding_;
  unheld_release_ = false;
  release_pending_ = false;
  // Doc C's bug: the value stored at acquire time was never kept, so the release sends another.
  // An inner release releases the latest hold (a reentrant lock's tokens are all its owner's).
  const std::string& held =
      inner_release_ && !nested_tokens_.empty() ? nested_tokens_.back() : held_token_;
  std::string token = unsaved_token ? std::string() : held;
  log_.record(EventType::kInvoke, Op::kRelease, held_key_).token = log_.intern(token);
  return token;
}

void ClientRecord::end_release(const ReleaseOutcome& outcome) {
  if (outcome.ok && outcome.deleted >= 0) {
    log_.record(EventType::kOk, Op::kRelease, held_key_).release().deleted =
        clamp32(std::max<std::int64_t>(outcome.deleted, 0));
  } else if (outcome.ok) {
    // What the release did is unknown: as a script's reply outside the contract.
    Event& odd = log_.record(EventType::kInfo, Op::kRelease, held_key_);
    odd.error = ErrorKind::kUnexpectedReply;
    odd.message = log_.intern(outcome.odd);
  } else {
    Event& failed = log_.record(outcome.failure.maybe ? EventType::kInfo : EventType::kFail,
                                Op::kRelease, held_key_);
    fail(failed, outcome.failure);
    // A cancelled release may be tried again, with the same lock, as an application would.
    release_pending_ = outcome.failure.error == ErrorKind::kCancelled && !inner_release_;
  }
  if (inner_release_) {
    // One hold of several undone (whatever the reply: the caller goes on as if it were).
    inner_release_ = false;
    --depth_;
    if (!nested_tokens_.empty()) nested_tokens_.pop_back();
    return;
  }
  depth_ = 0;
  if (!release_pending_) {
    held_token_.clear();
    held_fencing_ = -1;
  }
}

void ClientRecord::invoke_extend() {
  LOCKSIM_ASSERT(holding_ && !crashed_);
  Event& invoke = log_.record(EventType::kInvoke, Op::kExtend, held_key_);
  invoke.ttl_ms = clamp32(terms_.ttl_ms);
  invoke.token = log_.intern(held_token_);
}

namespace {

void record_extend_end(ClientLog& log, const std::string& key, std::int64_t ttl_ms,
                       const ExtendOutcome& outcome) {
  if (outcome.ok && (outcome.extended == 0 || outcome.extended == 1)) {
    Event& ok = log.record(EventType::kOk, Op::kExtend, key);
    ok.extend().extended = outcome.extended;
    ok.ttl_ms = clamp32(ttl_ms);
  } else if (outcome.ok) {
    Event& odd = log.record(EventType::kInfo, Op::kExtend, key);
    odd.error = ErrorKind::kUnexpectedReply;
    odd.message = log.intern("the extend answered ok without \"extended\": 0 or 1");
  } else {
    Event& failed = log.record(outcome.failure.maybe ? EventType::kInfo : EventType::kFail,
                               Op::kExtend, key);
    failed.error = outcome.failure.error;
    failed.message = log.intern(outcome.failure.message);
  }
}

}  // namespace

void ClientRecord::end_extend(const ExtendOutcome& outcome) {
  record_extend_end(log_, held_key_, terms_.ttl_ms, outcome);
}

void ClientRecord::crash() {
  LOCKSIM_ASSERT(!crashed_);
  log_.record(EventType::kInfo, Op::kCrash, held_key_);
  crashed_ = true;
  holding_ = false;
  depth_ = 0;
}

void ClientRecord::fault(FaultKind kind) {
  log_.record(EventType::kInfo, Op::kFault, held_key_).fault().kind = kind;
}

void ClientRecord::work(std::int64_t planned_ms) {
  log_.record(EventType::kInfo, Op::kWork, held_key_).work().planned_ms =
      static_cast<std::int32_t>(std::min<std::int64_t>(planned_ms, INT32_MAX));
}

void ClientRecord::end_read(const ResourceTerms& resource, const std::string& record_id,
                            const CallFailure* failure, std::int64_t value) {
  // Recorded when the reply was read, as every completion is; a failed read is a failure
  // whatever its error (nothing a read does needs undoing).
  Event& event =
      log_.record(failure == nullptr ? EventType::kOk : EventType::kFail, Op::kRead, resource.name);
  if (!resource.counts) event.resource().record = log_.intern(record_id);
  if (failure != nullptr) {
    fail(event, *failure);
    last_read_ = -1;
  } else {
    last_read_ = value;
    event.resource().value = value;
  }
}

std::optional<std::int64_t> ClientRecord::write_value(const ResourceTerms& resource) const {
  // The application logic of the documents: sell only if stock was left; create only if the
  // record was not found. Nothing is written otherwise.
  if (resource.counts ? last_read_ <= 0 : last_read_ != 0) return std::nullopt;
  return resource.counts ? last_read_ - 1 : 1;
}

void ClientRecord::end_write(const ResourceTerms& resource, const std::string& record_id,
                             std::int64_t value, const CallFailure* failure,
                             const std::string* refusal) {
  Event& event = log_.record(failure == nullptr && refusal == nullptr ? EventType::kOk
                                                                      : EventType::kFail,
                             Op::kWrite, resource.name);
  if (!resource.counts) event.resource().record = log_.intern(record_id);
  if (refusal != nullptr) {
    event.error = ErrorKind::kFenced;
    event.message = log_.intern(*refusal);
  } else if (failure != nullptr) {
    fail(event, *failure);
  }
  event.resource().value = value;
  event.resource().base = last_read_;
  event.resource().has_base = true;
  if (resource.fenced) event.resource().fencing = held_fencing_;
  last_read_ = -1;
}

void RenewalRecord::invoke(const std::string& logical_key, const std::string& token,
                           Nanos sent_ns) {
  const Nanos previous = log_.size() > 0 ? log_.last().time_ns : 0;
  Event& invoke = log_.record(EventType::kInvoke, Op::kExtend, logical_key);
  invoke.ttl_ms = clamp32(ttl_ms_);
  invoke.token = log_.intern(token);
  // The log stays in time order: a send instant told later is put between the previous event
  // and now.
  if (sent_ns >= 0) invoke.time_ns = std::clamp(sent_ns, previous, invoke.time_ns);
}

void RenewalRecord::end(const std::string& logical_key, const ExtendOutcome& outcome) {
  record_extend_end(log_, logical_key, ttl_ms_, outcome);
}

}  // namespace locksim
