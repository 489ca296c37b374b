// Stale writes: a write to the protected resource by a client whose grant had been superseded,
// because another client was granted the same lock after it, before the write (Kleppmann's client
// 1, paused past its lease, writing with token 33 after client 2 got 34). Grants are ordered by
// their fencing numbers when both carry one (the server's own order), otherwise by when they
// were recorded.
//
// Whether the resource let such a write through is what fencing is about: "accepted" (the write
// succeeded: an unfenced store, or a fenced one the newer holder had not written to yet) or
// "rejected" (a fenced store refused it, error "fenced"). Neither supports a verdict: the harm an
// accepted one did shows as a corrupted resource, judged from the accepted writes alone.
#include <string>
#include <unordered_map>

#include "sim/checker/checkers.h"
#include "sim/checker/explain.h"

namespace locksim::checker_internal {
namespace {

// Grant: one successful acquire.
struct Grant {
  int client = -1;
  KeyId key = 0;
  Nanos time_ns = -1;
  std::int64_t fencing = -1;
};

// newer: whether `a` was granted after `b`.
bool newer(const Grant& a, const Grant& b) {
  if (a.fencing >= 0 && b.fencing >= 0) return a.fencing > b.fencing;
  return a.time_ns > b.time_ns;
}

std::string with_fencing(const Grant& grant) {
  return grant.fencing >= 0 ? " (fencing " + std::to_string(grant.fencing) + ")" : "";
}

// stale_write_words: "A wrote 9 to stock at 512.3 ms under its grant of lock at 2.0 ms
// (fencing 1), superseded by B's at 310.0 ms (fencing 2): the store accepted it."
std::string stale_write_words(const History& history, const Event& write, const Grant& own,
                              const Grant& newest, std::int64_t highest_accepted) {
  const std::string who = client_name(history, write.client);
  std::string words = who + " wrote " + std::to_string(write.resource().value) + " to " +
                      history.key_name(write) + " at " + format_ms(write.time_ns) +
                      " under its grant of " + history.keys.at(own.key) + " at " +
                      format_ms(own.time_ns) + with_fencing(own) + ", superseded by " +
                      client_name(history, newest.client) + "'s at " + format_ms(newest.time_ns) +
                      with_fencing(newest) + ": ";
  if (write.type == EventType::kOk) return words + "the store accepted it.";
  words += "the fenced store rejected it";
  if (highest_accepted >= 0) {
    words += " (it had accepted fencing " + std::to_string(highest_accepted) + ")";
  }
  return words + ", so it changed nothing.";
}

}  // namespace

void check_stale_writes(const History& history, const ResourceSpec& resource, CheckResult& result) {
  if (resource.kind == ResourceSpec::Kind::kNone) return;
  std::unordered_map<int, Grant> held;      // by client: its latest grant
  std::unordered_map<KeyId, Grant> newest;  // by lock key: the newest grant
  std::int64_t highest_accepted = -1;       // the highest fencing number of an accepted write
  for (const Event& event : history.events) {
    if (event.f == Op::kAcquire && event.type == EventType::kOk) {
      const Grant grant{event.client, event.key, event.time_ns, event.acquire().fencing};
      held[event.client] = grant;
      Grant& latest = newest[event.key];
      if (latest.client < 0 || newer(grant, latest)) latest = grant;
      continue;
    }
    if (event.f != Op::kWrite || history.key_name(event) != resource.name) continue;
    const bool accepted = event.type == EventType::kOk;
    const bool rejected = event.type == EventType::kFail && event.error == ErrorKind::kFenced;
    // A write that failed otherwise may or may not have happened: it is no evidence either way.
    if (!accepted && !rejected) continue;
    const auto own = held.find(event.client);
    if (own != held.end()) {
      const Grant& latest = newest.at(own->second.key);
      if (latest.client != event.client && newer(latest, own->second)) {
        (accepted ? result.stats.stale_writes_accepted : result.stats.stale_writes_rejected) += 1;
        result.findings.push_back(Finding{
            .kind = FindingKind::kStaleWrite,
            .cause = accepted ? "accepted" : "rejected",
            .key = resource.name,
            .clients = {event.client, latest.client},
            .from_ns = latest.time_ns,
            .to_ns = event.time_ns,
            .amount = 0,
            .record = "",
            .words = stale_write_words(history, event, own->second, latest, highest_accepted),
        });
      }
    }
    if (accepted && event.resource().fencing > highest_accepted) {
      highest_accepted = event.resource().fencing;
    }
  }
}

}  // namespace locksim::checker_internal
