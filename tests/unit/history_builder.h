// history_builder.h: HistoryBuilder, hand-written histories for checker and stats tests.
//
//   const History h = HistoryBuilder().hold(0, ms(0), ms(1), ms(5), ms(6), 100).build();
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/history/event.h"

namespace locksim::test {

inline Nanos ms(double value) { return static_cast<Nanos>(std::llround(value * 1e6)); }

// HistoryBuilder: appends events in any order; build() sorts them by time as History promises.
class HistoryBuilder {
 public:
  explicit HistoryBuilder(std::vector<std::string> clients = {"A", "B", "C"}) {
    history_.clients = std::move(clients);
  }

  HistoryBuilder& event(Nanos t, int client, EventType type, Op f,
                        const std::string& key = "lock") {
    Event e = Event::make(type, f);
    e.time_ns = t;
    e.client = client;
    e.key = history_.key_id(key);
    history_.events.push_back(e);
    return *this;
  }
  Event& last() { return history_.events.back(); }
  std::vector<Event>& events() { return history_.events; }
  StringId str(const std::string& text) { return history_.strings.add(text); }

  HistoryBuilder& acquire_invoke(Nanos t, int client, std::int64_t ttl_ms = -1,
                                 const std::string& key = "lock") {
    event(t, client, EventType::kInvoke, Op::kAcquire, key);
    last().ttl_ms = static_cast<std::int32_t>(ttl_ms);
    return *this;
  }
  // acquire_ok: the ok and the enter right after it.
  HistoryBuilder& acquire_ok(Nanos t, int client, std::int64_t ttl_ms = -1,
                             const std::string& key = "lock") {
    event(t, client, EventType::kOk, Op::kAcquire, key);
    last().ttl_ms = static_cast<std::int32_t>(ttl_ms);
    last().token = str("token-" + std::to_string(history_.events.size()));
    last().acquire().attempts = 1;
    return event(t, client, EventType::kOk, Op::kEnter, key);
  }
  // sent_at: gives the latest acquire ok the send time of its granting attempt.
  HistoryBuilder& sent_at(Nanos t) {
    for (auto it = history_.events.rbegin(); it != history_.events.rend(); ++it) {
      if (it->f == Op::kAcquire && it->type == EventType::kOk) {
        it->acquire().sent_ns = t;
        break;
      }
    }
    return *this;
  }
  // grant_fencing: gives the latest acquire ok the fencing number its grant carried.
  HistoryBuilder& grant_fencing(std::int64_t number) {
    for (auto it = history_.events.rbegin(); it != history_.events.rend(); ++it) {
      if (it->f == Op::kAcquire && it->type == EventType::kOk) {
        it->acquire().fencing = number;
        break;
      }
    }
    return *this;
  }
  // servers: the topology's servers, which grants name by index.
  HistoryBuilder& servers(std::vector<std::string> names) {
    history_.servers = std::move(names);
    return *this;
  }
  // granted_on: gives the latest acquire ok the servers (indices) that granted it, of them all.
  HistoryBuilder& granted_on(const std::vector<int>& indices) {
    for (auto it = history_.events.rbegin(); it != history_.events.rend(); ++it) {
      if (it->f == Op::kAcquire && it->type == EventType::kOk) {
        for (const int i : indices) it->acquire().granted.on |= 1U << i;
        it->acquire().granted.of = static_cast<std::uint8_t>(history_.servers.size());
        break;
      }
    }
    return *this;
  }
  HistoryBuilder& acquire_end(Nanos t, int client, EventType type,
                              const std::string& key = "lock") {
    event(t, client, type, Op::kAcquire, key);
    last().error = type == EventType::kInfo ? ErrorKind::kTimeout : ErrorKind::kGaveUp;
    last().message = str(type == EventType::kInfo ? "no reply" : "gave up");
    return *this;
  }
  // release: exit, release invoke at the same instant, release ok deleting `count` at `done`.
  HistoryBuilder& release(Nanos exit, Nanos done, int client, std::int64_t count = 1,
                          const std::string& key = "lock") {
    event(exit, client, EventType::kOk, Op::kExit, key);
    event(exit, client, EventType::kInvoke, Op::kRelease, key);
    event(done, client, EventType::kOk, Op::kRelease, key);
    last().release().deleted = static_cast<std::int32_t>(count);
    return *this;
  }
  // hold: a whole successful cycle.
  HistoryBuilder& hold(int client, Nanos invoke, Nanos ok, Nanos exit, Nanos done,
                       std::int64_t ttl_ms = -1, const std::string& key = "lock") {
    acquire_invoke(invoke, client, ttl_ms, key);
    acquire_ok(ok, client, ttl_ms, key);
    return release(exit, done, client, 1, key);
  }
  HistoryBuilder& crash(Nanos t, int client) {
    return event(t, client, EventType::kInfo, Op::kCrash, "");
  }
  // extend: a renewal invoked at `invoke` whose ok (1: extended, 0: refused) came at `done`.
  HistoryBuilder& extend(Nanos invoke, Nanos done, int client, std::int64_t ttl_ms,
                         std::int64_t count = 1, const std::string& key = "lock") {
    event(invoke, client, EventType::kInvoke, Op::kExtend, key);
    last().ttl_ms = static_cast<std::int32_t>(ttl_ms);
    last().token = str("renewal");
    event(done, client, EventType::kOk, Op::kExtend, key);
    last().extend().extended = static_cast<std::int32_t>(count);
    return *this;
  }
  // renewals: extends every `period` from `first` while before `until`, each ok 0.5 ms later.
  HistoryBuilder& renewals(Nanos first, Nanos until, Nanos period, int client,
                           std::int64_t ttl_ms) {
    for (Nanos t = first; t < until; t += period) extend(t, t + ms(0.5), client, ttl_ms);
    return *this;
  }
  // fault: a fault the client records about itself (Doc D's lose_lock).
  HistoryBuilder& fault(Nanos t, int client, FaultKind kind = FaultKind::kLoseLock) {
    event(t, client, EventType::kInfo, Op::kFault);
    last().fault().kind = kind;
    return *this;
  }
  // nemesis: a fault of the nemesis (client `self`) aimed at `target`, in `phase`.
  HistoryBuilder& nemesis(Nanos t, int self, int target, FaultKind kind, FaultPhase phase) {
    event(t, self, EventType::kInfo, Op::kFault, "");
    last().fault().kind = kind;
    last().fault().target = target;
    last().fault().phase = phase;
    return *this;
  }
  // server_fault: a fault of the nemesis (client `self`) aimed at server `server`, in `phase`.
  HistoryBuilder& server_fault(Nanos t, int self, FaultKind kind, const std::string& server,
                               FaultPhase phase = FaultPhase::kInstant) {
    event(t, self, EventType::kInfo, Op::kFault, "");
    last().fault().kind = kind;
    last().fault().server = str(server);
    last().fault().phase = phase;
    return *this;
  }
  // read, write: the protected resource (counter value or record id with 1/0 exists).
  HistoryBuilder& read(Nanos t, int client, const std::string& resource, std::int64_t count,
                       const std::string& record_id = "") {
    event(t, client, EventType::kOk, Op::kRead, resource);
    last().resource().value = count;
    last().resource().record = str(record_id);
    return *this;
  }
  HistoryBuilder& write(Nanos t, int client, const std::string& resource, std::int64_t count,
                        std::optional<std::int64_t> base, const std::string& record_id = "") {
    event(t, client, EventType::kOk, Op::kWrite, resource);
    last().resource().value = count;
    last().resource().has_base = base.has_value();
    last().resource().base = base.value_or(0);
    last().resource().record = str(record_id);
    return *this;
  }

  // fenced_write: a counter write presenting `fencing` that the store accepted (ok) or refused
  // (fail, error "fenced").
  HistoryBuilder& fenced_write(Nanos t, int client, const std::string& resource, std::int64_t count,
                               std::int64_t base, std::int64_t fencing, bool accepted) {
    write(t, client, resource, count, base);
    if (!accepted) {
      last().type = EventType::kFail;
      last().error = ErrorKind::kFenced;
    }
    last().resource().fencing = fencing;
    return *this;
  }

  History build() const {
    History h = history_;
    std::stable_sort(h.events.begin(), h.events.end(),
                     [](const Event& a, const Event& b) { return a.time_ns < b.time_ns; });
    return h;
  }

 private:
  History history_;
};

}  // namespace locksim::test
