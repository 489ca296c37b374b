// Barging: a grant to a client while another client's acquire of the same key, invoked earlier,
// was still waiting. A fair (FIFO) lock like Redisson's RedissonFairLock (or lua_fair_queue) hands
// a freed lock to the longest waiter; a lock that lets whoever asks first after a release take it
// lets a newcomer barge past the queue. Only where the scenario asks (check.barging): for a lock
// that does not promise fairness this is simply how it works.
//
// A queue keeps a waiter's place for the queue timeout after its last try
// (options.queue_timeout_ns), so a client whose acquire ended without the lock (given up, or with
// no definite reply) and who asks again within that time may ask with its first acquire's place:
// the queue serving it first is no barging. Whether it kept that place is not known (its last try
// may have been refused, or granted with the reply lost), so it counts both ways against it: as the
// one granted it asked at the earliest, as a waiter passed over at its new acquire. A server that
// could not keep the queue while the earlier waiter waited (one that was down, restarted without
// persistence, or whose clock jumped and expired the entries) is the cause "queue_lost": what every
// queue on such a server shows, not a lock's own unfairness.
#include <map>
#include <string>
#include <utility>

#include "sim/checker/checkers.h"
#include "sim/checker/explain.h"

namespace locksim::checker_internal {
namespace {

// queue_lost_between: in words, a server that could not keep a queue in (from_ns, to_ns]: a
// fault that forgets keys, or a server down at some point of it; "" if none.
std::string queue_lost_between(const History& history, Nanos from_ns, Nanos to_ns) {
  const LostLock lost = server_faults_between(history, from_ns, to_ns);
  if (lost.at_ns >= 0) return lost.words;
  std::map<StringId, Nanos> down_since;
  for (const Event& event : history.events) {
    if (event.time_ns > to_ns) break;
    if (event.f != Op::kFault || event.fault().kind != FaultKind::kDown) continue;
    const FaultFacts& fault = event.fault();
    if (fault.phase == FaultPhase::kStart) {
      down_since[fault.server] = event.time_ns;
    } else if (fault.phase == FaultPhase::kEnd) {
      const auto since = down_since.find(fault.server);
      if (since != down_since.end() && event.time_ns > from_ns) {
        return std::string(history.str(fault.server)) + " was down from " +
               format_ms(since->second) + " to " + format_ms(event.time_ns) +
               " (an ask made meanwhile never reached the queue)";
      }
      if (since != down_since.end()) down_since.erase(since);
    }
  }
  for (const auto& [server, since] : down_since) {
    return std::string(history.str(server)) + " was down from " + format_ms(since) + " on";
  }
  return "";
}

}  // namespace

void check_barging(const History& history, const CheckOptions& options, CheckResult& result) {
  if (!options.barging) return;
  // Per key, the acquires still open, by invoke time: (invoke, client). An acquire is open from
  // its invoke to its outcome (ok, fail or info), so one that ended (given up, crashed) never
  // counts as waiting.
  std::map<KeyId, std::map<std::pair<Nanos, int>, bool>> open;
  // (key, client) -> its open acquire's invoke, and the earliest it may have asked (a place kept
  // from an acquire before).
  std::map<std::pair<KeyId, int>, std::pair<Nanos, Nanos>> invoked;
  // (key, client) -> the earliest place an acquire that ended without the lock may keep in the
  // queue, and until when (its end plus the queue timeout).
  std::map<std::pair<KeyId, int>, std::pair<Nanos, Nanos>> kept;
  // (key, client) -> when its last granted acquire's successful attempt was sent: a fault since
  // may have undone that grant, and with it the removal of its place from the queue.
  std::map<std::pair<KeyId, int>, Nanos> granted_sent;
  // An acquire waits, for those that ask after it, from its first busy answer (its queued_ns):
  // two clients that ask at nearly the same time reach the queue in either order. (client,
  // invoke) -> since when it certainly waited; a history that does not say: its invoke.
  std::map<std::pair<int, Nanos>, Nanos> queued_since;
  {
    std::map<std::pair<KeyId, int>, Nanos> asked;
    for (const Event& e : history.events) {
      if (e.f != Op::kAcquire) continue;
      const auto who = std::make_pair(e.key, static_cast<int>(e.client));
      if (e.type == EventType::kInvoke) {
        asked[who] = e.time_ns;
        continue;
      }
      const auto invoke = asked.find(who);
      if (invoke == asked.end()) continue;
      const Nanos queued = queued_ns(e);
      queued_since[{e.client, invoke->second}] = queued >= 0 ? queued : invoke->second;
      asked.erase(invoke);
    }
  }
  for (const Event& e : history.events) {
    if (e.f != Op::kAcquire) continue;
    const auto who = std::make_pair(e.key, static_cast<int>(e.client));
    if (e.type == EventType::kInvoke) {
      Nanos earliest = e.time_ns;
      if (const auto place = kept.find(who); place != kept.end()) {
        if (e.time_ns <= place->second.second) earliest = place->second.first;
        kept.erase(place);
      }
      const auto queued = queued_since.find({e.client, e.time_ns});
      // Still open at the end of the history: it waited from its invoke.
      const Nanos waits_from = queued != queued_since.end() ? queued->second : e.time_ns;
      invoked[who] = {waits_from, earliest};
      open[e.key][{waits_from, e.client}] = true;
      continue;
    }
    const auto mine = invoked.find(who);
    if (mine == invoked.end()) continue;
    const auto [my_wait, my_earliest] = mine->second;
    invoked.erase(mine);
    auto& waiting = open[e.key];
    waiting.erase({my_wait, e.client});
    if (e.type != EventType::kOk) {
      if (options.queue_timeout_ns > 0) {
        kept[who] = {my_earliest, e.time_ns + options.queue_timeout_ns};
      }
      continue;
    }
    const Nanos sent = e.acquire().sent_ns;
    const auto recorded_before = granted_sent.find(who);
    const Nanos previous_sent =
        recorded_before != granted_sent.end() ? recorded_before->second : -1;
    granted_sent[who] = sent >= 0 ? sent : e.time_ns;
    if (waiting.empty()) continue;
    const auto& [earliest, _] = *waiting.begin();
    if (earliest.first >= my_earliest) continue;
    const int waiter = earliest.second;
    std::string text = client_name(history, e.client) + " got " + history.key_name(e) + " at " +
                       format_ms(e.time_ns) + " (it asked at " + format_ms(my_earliest) +
                       ") while " + client_name(history, waiter) +
                       ", who asked earlier, was still waiting for it (since " +
                       format_ms(earliest.first) + "): it barged past a waiter.";
    // From the waiter's ask on, not from its first busy answer: a fault while its ask was on its
    // way can take its place (explore seed 32695 of lua_fair_queue on a Redis Cluster: C's place,
    // written on p1 as CLUSTER FAILOVER FORCE made r1 the primary, never reached r1).
    Nanos asked = earliest.first;
    if (const auto ask = invoked.find({e.key, waiter}); ask != invoked.end()) {
      asked = std::min(asked, ask->second.second);
    }
    // And from the barger's previous grant on: a fault that undid it can have brought its old
    // place back to the head (explore seed 33091 of lua_fair_queue on a cluster: A's grant on p1
    // never reached r1, which FORCE then made the primary, with A first in its queue).
    if (previous_sent >= 0) asked = std::min(asked, previous_sent);
    const std::string lost = queue_lost_between(history, asked, e.time_ns);
    if (!lost.empty()) text += " Meanwhile " + lost + ": the queue was lost.";
    result.findings.push_back(Finding{
        .kind = FindingKind::kBarging,
        .cause = lost.empty() ? "" : "queue_lost",
        .key = history.key_name(e),
        .clients = {static_cast<int>(e.client), waiter},
        .from_ns = earliest.first,
        .to_ns = e.time_ns,
        .amount = 0,
        .record = "",
        .words = std::move(text),
    });
  }
}

}  // namespace locksim::checker_internal
