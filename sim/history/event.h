// event.h: Event and History, the record of one run that every checker judges.
//
// Jepsen-like: each operation is an `invoke` followed by `ok`, `fail` or `info` ("may or may not
// have happened": a timeout is never silently turned into a fail). Single-moment events are
// recorded once: `enter` and `exit` as `ok`; `crash`, `work` and `fault` as `info`.
//
// Timestamps are conservative: `enter` is taken after the acquire reply was read, `exit` before
// the release request is sent, so a correct lock can never show two overlapping hold windows.
//
//   Event e{.time_ns = t, .client = 0, .type = EventType::kOk, .f = Op::kAcquire, .key = "lock"};
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/clock.h"

namespace locksim {

enum class EventType : std::uint8_t { kInvoke, kOk, kFail, kInfo };

// Op: what the event is about (`f` in JSON).
enum class Op : std::uint8_t {
  kAcquire,  // invoke/ok/fail/info; ok carries token and ttl_ms; count = attempts made
  kRelease,  // invoke carries token; ok: count = keys deleted (1 or 0); fail: refused or error
  kExtend,   // invoke/ok/fail: lease extension (renewal)
  kEnter,    // ok: the client is inside the critical section (taken right after acquire ok)
  kExit,     // ok: the client leaves the critical section (taken before the release request)
  kCrash,    // info: the client stopped without releasing; its connection is closed
  kWork,     // info: the client works inside the critical section; count = planned ms
  kWrite,    // ok: a write to the protected resource: key = resource, token = record id,
             //     count = value written (counter) or 1 (record created); base = value read
  kRead,     // ok: a read of the protected resource: key, token = record id,
             //     count = value read (counter) or 1/0 (record exists or not)
  kFault,    // info: a fault injected by the harness (value in `error`/`token` fields)
};

std::string_view to_string(EventType type);
std::string_view to_string(Op op);
std::optional<EventType> event_type_from_string(std::string_view word);
std::optional<Op> op_from_string(std::string_view word);

// Event: one line of history.jsonl.
struct Event {
  std::int64_t index = 0;   // position in the merged history; assigned by Recorder::merge
  Nanos time_ns = 0;        // monotonic, since run start
  std::int32_t client = 0;  // index into History::clients
  EventType type = EventType::kInfo;
  Op f = Op::kAcquire;
  std::string key;           // logical key name from the scenario ("lock"), without run prefix
  std::string token;         // lock token (acquire ok, release invoke), or a fault's name
  std::int64_t ttl_ms = -1;  // lease length requested (acquire invoke/ok, extend); -1: none
  std::int64_t count = -1;   // acquire ok/fail: attempts; release ok: keys deleted; -1: none
  std::string error;         // error kind and message for fail/info ("timeout: ...")
  // write: the value the write was computed from. acquire ok: when the successful attempt was
  // sent (ns since run start), so its lease started no earlier than that.
  std::optional<std::int64_t> base;
};

// History: every event of one run, sorted by time_ns, index == position.
struct History {
  std::vector<std::string> clients;  // client names; Event::client indexes this
  std::vector<Event> events;

  // client_index: the index of `name`, or -1.
  int client_index(std::string_view name) const;
};

}  // namespace locksim
