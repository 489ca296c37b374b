// event.h: Event and History, the record of one run that every checker judges.
//
// Jepsen-like: each operation is an `invoke` followed by `ok`, `fail` or `info` ("may or may not
// have happened": a timeout is never silently turned into a fail). Single-moment events are
// recorded once: `enter` and `exit` as `ok`; `crash`, `work`, `fault` and the harness's `stop` and
// `server_lost` and `server_died` as `info`.
//
// Timestamps are conservative: `enter` is taken after the acquire reply was read, `exit` before
// the release request is sent, so a correct lock can never show two overlapping hold windows.
//
// Events are typed and compact (72 bytes): every field has one meaning; strings (keys, tokens,
// error messages, record ids) live once in the History's tables and events hold their ids, and
// the servers of a grant are bits of the History's server list; what only one operation has
// lives in that operation's facts (`acquire()`, `release()`, ...).
//
//   Event e = Event::make(EventType::kOk, Op::kAcquire);
//   e.acquire().attempts = 3;
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sim/core/clock.h"
#include "sim/core/lock_mode.h"
#include "sim/fault/fault.h"

namespace locksim {

// kHistorySchemaVersion: the version history.jsonl's header line carries.
// 3: fault events carry their target client and window phase (the nemesis).
// 4: `server_died` events (a topology's process that died unplanned).
// 5: a multi-server acquire's ok names the servers that granted it (`granted_on`, `granted_of`;
//    before, its message said "granted by n1, n2, n4 of 5"), and the header lists the servers.
inline constexpr int kHistorySchemaVersion = 5;
// kMaxPermits: the most permits a semaphore may have (lock.permits, a history's "permits").
inline constexpr int kMaxPermits = 1000;

enum class EventType : std::uint8_t { kInvoke, kOk, kFail, kInfo };

// Op: what the event is about (`f` in JSON).
enum class Op : std::uint8_t {
  kAcquire,     // invoke/ok/fail/info; ok carries the token; facts: AcquireFacts
  kRelease,     // invoke carries the token; ok: ReleaseFacts::deleted; fail/info: error
  kExtend,      // invoke carries the token and ttl_ms; ok: ExtendFacts::extended
  kEnter,       // ok: the client is inside the critical section (taken right after acquire ok)
  kExit,        // ok: the client leaves the critical section (taken before the release request)
  kCrash,       // info: the client stopped without releasing; its connection is closed
  kWork,        // info: the client works inside the critical section; WorkFacts
  kWrite,       // ok/fail: a write to the protected resource; ResourceFacts; fail "fenced": a
                // fenced store refused it (a definite answer: nothing was written)
  kRead,        // ok/fail: a read of the protected resource; ResourceFacts
  kFault,       // info: a fault injected by the harness; FaultFacts
  kStop,        // info (harness): the run was stopped before it finished; StopFacts
  kServerLost,  // info (harness): the Redis server stopped answering; message says how
  kServerDied,  // info (harness): a process locksim started for the run's topology (a server or
                // Sentinel) died without the scenario killing it; ServerFacts; message says how
  // info: a client's command on a Redis Cluster was redirected (MOVED or ASK) and followed;
  // message: "MOVED slot 5798 from 127.0.0.1:40001 to 127.0.0.1:40002" (cluster_connection.h).
  kRedirect,
};

// ErrorKind: why a call did not succeed, as recorded (`error` in JSON).
enum class ErrorKind : std::uint8_t {
  kNone,
  kGaveUp,           // acquire: the lock was still held when the acquire timeout ran out
  kStopped,          // the run stopped (Ctrl-C, time limit) before the call completed
  kTimeout,          // no reply within the command timeout: may or may not have run
  kClosed,           // the connection closed: may or may not have run
  kRefused,          // could not connect: did not run
  kProtocol,         // a malformed reply or another I/O error: may or may not have run
  kReplyError,       // the server answered with an error (a Lua error, NOPERM, BUSY...)
  kUnexpectedReply,  // a reply outside the variant's contract: what it did is unknown
  kCrashed,          // acquire: the client died while waiting, after a busy answer; it holds
                     // nothing (a crash fault at a variant's after_busy checkpoint)
  kFenced,           // write: a fenced store refused it, because the fencing number it presented
                     // is lower than one the store had already accepted; nothing was written
  kCancelled,        // the caller cancelled the call before its reply (a scenario's
                     // cancel_after_ms, an asyncio Task.cancel): what it had sent may have run
  kNotHeld,          // release, extend: the library refused without a command, holding no token
                     // (the retry of a cancelled release, redis/redis-py#3847)
};

// is_indeterminate: the call may have taken effect although no usable reply was read.
constexpr bool is_indeterminate(ErrorKind kind) {
  return kind == ErrorKind::kTimeout || kind == ErrorKind::kClosed ||
         kind == ErrorKind::kProtocol || kind == ErrorKind::kUnexpectedReply ||
         kind == ErrorKind::kCancelled;
}
// is_io_error: the connection, not the lock, failed (may or may not have run, or did not run).
constexpr bool is_io_error(ErrorKind kind) {
  return kind == ErrorKind::kTimeout || kind == ErrorKind::kClosed || kind == ErrorKind::kRefused ||
         kind == ErrorKind::kProtocol;
}
// is_lock_error: the lock under test answered outside its contract (its script failed or replied
// something a lock may not reply); a correct lock never does this.
constexpr bool is_lock_error(ErrorKind kind) {
  return kind == ErrorKind::kReplyError || kind == ErrorKind::kUnexpectedReply;
}

// StopReason: why the harness stopped a run early.
enum class StopReason : std::uint8_t { kTimeLimit, kInterrupted };

std::string_view to_string(EventType type);
std::string_view to_string(Op op);
std::string_view to_string(ErrorKind kind);
std::string_view to_string(StopReason reason);
std::optional<EventType> event_type_from_string(std::string_view word);
std::optional<Op> op_from_string(std::string_view word);
std::optional<ErrorKind> error_kind_from_string(std::string_view word);
std::optional<StopReason> stop_reason_from_string(std::string_view word);

// StringId: an index into History::strings (or a ClientLog's table while recording); 0 is "".
using StringId = std::uint32_t;
// KeyId: an index into History::keys.
using KeyId = std::uint32_t;

// kMaxGrantServers: how many servers a history can name in grants (ServerGrant's bits); a
// topology has at most 9.
inline constexpr std::size_t kMaxGrantServers = 32;

// ServerGrant: which servers granted a multi-server acquire (Redlock): bit i of `on` stands for
// History::servers[i]; `of` is how many servers the acquire asked (0: not a multi-server grant).
struct ServerGrant {
  std::uint32_t on = 0;
  std::uint8_t of = 0;
};

// AcquireFacts (f == kAcquire, type ok, fail or info).
struct AcquireFacts {
  Nanos sent_ns = -1;          // ok: when the successful attempt was sent (the lease began after)
  std::int64_t fencing = -1;   // ok: the fencing number the grant carried; -1: none
  std::int32_t attempts = -1;  // ok, fail, info: attempts made
  std::int32_t validity_ms = -1;  // ok: the lease the lock promises if not ttl_ms; -1: ttl_ms
  // ok of a multi-server lock: the servers that granted it (its tail padding holds `queued`).
  [[no_unique_address]] ServerGrant granted;
  // queued: ok, fail, info: since when it certainly waited (its first busy answer was read; a lock
  // with a queue had queued it), or its end if it never did: how many whole microseconds before
  // the event, plus one, in the grant's padding (0: not said; read it with queued_ns). At most
  // 16.7 s before: an earlier one is kept as 16.7 s, later than it was, never earlier.
  std::uint8_t queued[3] = {0, 0, 0};
};
// queued_ns: since when the acquire ending with `event` certainly waited (AcquireFacts::queued);
// -1: not said. set_queued_ns: keeps `queued_ns` (<= the event's time) in it.
Nanos queued_ns(const struct Event& event);
void set_queued_ns(struct Event& event, Nanos queued_ns);
// ScheduleFacts (f == kAcquire, type invoke).
struct ScheduleFacts {
  // Open-loop contention studies: when the acquire was due by the client's schedule, at or
  // before the invoke; latency is measured from it. -1: the invoke's own time.
  Nanos intended_ns = -1;
};
// ReleaseFacts (f == kRelease).
struct ReleaseFacts {
  std::int32_t deleted = -1;  // ok: keys deleted as the server reported (0: refused or gone)
};
// ExtendFacts (f == kExtend).
struct ExtendFacts {
  std::int32_t extended = -1;  // ok: 1 the lease was extended, 0 not held
};
// WorkFacts (f == kWork).
struct WorkFacts {
  std::int32_t planned_ms = -1;  // how long the client meant to stay inside
};
// ResourceFacts (f == kRead, kWrite).
struct ResourceFacts {
  std::int64_t value = 0;     // read: counter value or 1/0 (record exists); write: the value
                              // written (fail: the value it tried to write)
  std::int64_t base = 0;      // write: the value it was computed from (valid if has_base)
  std::int64_t fencing = -1;  // write: the fencing number presented; -1: none
  StringId record = 0;        // find_or_create: the record id
  bool has_base = false;
};
// FaultFacts (f == kFault). The nemesis records these under its reserved client, aimed at a
// client or a server; a fault a client does to itself (Doc D's lose_lock) has no target.
struct FaultFacts {
  FaultKind kind = FaultKind::kPause;  // what happened (sim/fault); every recorder sets it
  FaultPhase phase = FaultPhase::kInstant;
  std::int32_t target = -1;  // the client the fault was aimed at; -1: the event's own client
  StringId server = 0;       // a server fault: the server it was aimed at (topology name); a link
                             // fault: the servers of the links it was on ("n1,n2"); 0: none
};
// ServerFacts (f == kServerDied).
struct ServerFacts {
  StringId server = 0;  // the server's topology name ("n2"), or "sentinel"
};
// StopFacts (f == kStop).
struct StopFacts {
  StopReason reason = StopReason::kTimeLimit;
};

// Event: one line of history.jsonl.
struct Event {
  Nanos time_ns = 0;        // monotonic, since run start
  std::int32_t client = 0;  // index into History::clients
  EventType type = EventType::kInfo;
  Op f = Op::kAcquire;
  ErrorKind error = ErrorKind::kNone;  // fail/info of a call: why
  LockMode mode = LockMode::kExclusive;  // acquire of a read-write lock: read or write
  KeyId key = 0;                       // the lock key (or resource) without the run prefix
  StringId token = 0;                  // acquire ok, release invoke, extend invoke: lock token
  StringId message = 0;                // the error's or harness event's detail in words
  std::int32_t ttl_ms = -1;            // acquire, extend: the lease requested; -1: none
  std::variant<std::monostate, AcquireFacts, ScheduleFacts, ReleaseFacts, ExtendFacts, WorkFacts,
               ResourceFacts, FaultFacts, StopFacts, ServerFacts>
      facts;

  // make: an event of `f` with that operation's facts in their default state (an acquire's
  // invoke has ScheduleFacts, its outcome AcquireFacts).
  static Event make(EventType type, Op f);

  // Typed access to the facts; each asserts that the event is of that operation.
  AcquireFacts& acquire();
  const AcquireFacts& acquire() const;
  ScheduleFacts& schedule();
  const ScheduleFacts& schedule() const;
  ReleaseFacts& release();
  const ReleaseFacts& release() const;
  ExtendFacts& extend();
  const ExtendFacts& extend() const;
  WorkFacts& work();
  const WorkFacts& work() const;
  ResourceFacts& resource();
  const ResourceFacts& resource() const;
  FaultFacts& fault();
  const FaultFacts& fault() const;
  StopFacts& stop();
  const StopFacts& stop() const;
  ServerFacts& server();
  const ServerFacts& server() const;
};

// for_each_string: calls `f(StringId&)` on every string id an event holds (token, message and
// those of its facts), for code that moves an event between string tables.
template <typename F>
void for_each_string(Event& event, F&& f) {
  f(event.token);
  f(event.message);
  if (auto* resource = std::get_if<ResourceFacts>(&event.facts)) {
    f(resource->record);
  } else if (auto* fault = std::get_if<FaultFacts>(&event.facts)) {
    f(fault->server);
  } else if (auto* server = std::get_if<ServerFacts>(&event.facts)) {
    f(server->server);
  }
}

// StringTable: append-only strings addressed by StringId; id 0 is the empty string. Compact: one
// character buffer and one offset per string.
class StringTable {
 public:
  StringTable() = default;
  // add: appends `text` and returns its id ("" is always 0). Does not look for duplicates. Bytes
  // of `text` that are not valid UTF-8 are stored as "\xNN" (sim/history/utf8.h), so every
  // output that carries a history's strings is valid UTF-8.
  StringId add(std::string_view text);
  // get: the string of `id`; "" for 0 or an unknown id.
  std::string_view get(StringId id) const;
  std::size_t size() const { return ends_.size() + 1; }
  std::size_t bytes() const { return chars_.capacity() + ends_.capacity() * sizeof(std::uint32_t); }

 private:
  std::string chars_;
  std::vector<std::uint64_t> ends_;  // ends_[id - 1]: one past the last character of `id`
};

// History: every event of one run, sorted by time_ns, plus the tables its ids refer to.
struct History {
  std::vector<std::string> clients;                 // client names; Event::client indexes this
  std::vector<std::string> keys = {std::string()};  // Event::key indexes this; 0 is "no key"
  std::vector<std::string> servers;  // the topology's server names; ServerGrant bits index this
  // permits: 0 for a mutex; for a semaphore (LockVariant::semaphore), its lock.permits, 1 to
  // kMaxPermits: the checker then allows that many overlapping holds and no release of a permit
  // is taken for a delete of the key (each removes its own).
  int permits = 0;
  bool semaphore() const { return permits > 0; }
  // holders: how many may hold a key at once.
  int holders() const { return permits > 0 ? permits : 1; }
  // reentrant: the lock is reentrant (LockVariant::reentrant): a client inside may acquire it
  // again (an acquire ok with no enter after it) and release a hold while inside (an inner
  // release); the checker holds it to its depth (sim/checker/reentrancy.cc).
  bool reentrant = false;
  // read_write: the lock is a read-write lock (LockVariant::read_write): its acquires say their
  // mode; read holds may overlap each other, a write hold nothing; a writer kept waiting while
  // readers entered after it asked is starved (sim/checker/read_write.cc).
  bool read_write = false;
  // client_clocks: the lock reads its clients' own clocks (LockVariant::reads_client_clock): a
  // client's clock run off the others' (a client_clock fault) may then explain a holder too many.
  bool client_clocks = false;
  StringTable strings;               // tokens, messages, record ids, server names
  std::vector<Event> events;

  // client_index: the index of `name`, or -1.
  int client_index(std::string_view name) const;
  // key_id: the id of `key`, adding it if new ("" is 0). Linear in the number of keys.
  KeyId key_id(std::string_view key);
  // key_name / str: what an event's ids refer to.
  const std::string& key_name(const Event& event) const;
  std::string_view str(StringId id) const { return strings.get(id); }
  std::string_view token(const Event& event) const { return strings.get(event.token); }
  std::string_view message(const Event& event) const { return strings.get(event.message); }
  // granted_servers: the names of the servers of `grant`, in the order of `servers`
  // ("server#<i>" for a bit the list does not name).
  std::vector<std::string> granted_servers(const ServerGrant& grant) const;
};

}  // namespace locksim
