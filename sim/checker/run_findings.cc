// Run-level findings: what keeps a run from being evidence. The lock's own errors (a script that
// fails or answers outside the contract), the harness's early stop (time limit, Ctrl-C) and a
// server that stopped answering are all recorded in the history, so `locksim check` re-judges
// them exactly as the run did.
#include <algorithm>
#include <map>
#include <string>

#include "sim/checker/checkers.h"
#include "sim/checker/explain.h"

namespace locksim::checker_internal {
namespace {

// LockErrors: one kind of error of one operation: how many, and the first in words.
struct LockErrors {
  std::int64_t count = 0;
  std::vector<int> clients;
  Nanos first_ns = -1;
  std::string first_message;
  std::string first_key;
};

// server_died_finding: an unplanned death, and what the lock did after it: the next grants, with
// the servers that granted them where the lock says (Redlock), so that a lock that rightly
// survives it says how.
Finding server_died_finding(const History& history, const Event& died) {
  const std::string server(history.str(died.server().server));
  std::string words = (server.empty() ? std::string("a server") : server) +
                      " was found dead at " + format_ms(died.time_ns) +
                      " without the scenario having killed it";
  if (died.message != 0) words += " (" + std::string(history.message(died)) + ")";
  words += ": the run did not go as scripted, so it decides nothing about the lock.";
  constexpr int kGrantsNamed = 3;
  int named = 0;
  int later = 0;
  for (const Event& e : history.events) {
    if (e.time_ns < died.time_ns || e.f != Op::kAcquire || e.type != EventType::kOk) continue;
    if (named == kGrantsNamed) {
      ++later;
      continue;
    }
    words += std::string(named == 0 ? " Afterwards " : "; ") + client_name(history, e.client) +
             " was granted the lock at " + format_ms(e.time_ns);
    const std::string granted = grant_phrase(history, e.acquire().granted);
    if (!granted.empty()) words += " (" + granted + ")";
    ++named;
  }
  if (later > 0) words += "; and " + std::to_string(later) + " more grant(s)";
  words += named == 0 ? " Nobody was granted the lock afterwards." : ".";
  return Finding{
      .kind = FindingKind::kServerDied,
      .cause = "unplanned",
      .key = "",
      .clients = {},
      .from_ns = died.time_ns,
      .to_ns = died.time_ns,
      .amount = named + later,
      .record = "",
      .words = words,
  };
}

}  // namespace

void check_run(const History& history, CheckResult& result) {
  std::map<std::pair<Op, ErrorKind>, LockErrors> errors;
  // A run in which no client even asked for the lock (nor touched the resource) tested nothing:
  // never a silent ok.
  const bool asked = std::any_of(history.events.begin(), history.events.end(), [](const Event& e) {
    return (e.f == Op::kAcquire && e.type == EventType::kInvoke) || e.f == Op::kRead ||
           e.f == Op::kWrite;
  });
  if (!asked) {
    result.findings.push_back(Finding{
        .kind = FindingKind::kIncomplete,
        .cause = "nothing_ran",
        .key = "",
        .clients = {},
        .from_ns = -1,
        .to_ns = -1,
        .amount = 0,
        .record = "",
        .words = "no client asked for the lock in this run: it tested nothing, so it cannot be "
                 "judged.",
    });
  }
  for (const Event& event : history.events) {
    switch (event.f) {
      case Op::kAcquire:
      case Op::kRelease:
      case Op::kExtend: {
        if (event.type == EventType::kInvoke || !is_lock_error(event.error)) break;
        LockErrors& e = errors[{event.f, event.error}];
        if (e.count++ == 0) {
          e.first_ns = event.time_ns;
          e.first_message = std::string(history.message(event));
          e.first_key = history.key_name(event);
        }
        if (std::find(e.clients.begin(), e.clients.end(), event.client) == e.clients.end()) {
          e.clients.push_back(event.client);
        }
        break;
      }
      case Op::kStop: {
        const bool time_limit = event.stop().reason == StopReason::kTimeLimit;
        std::string words = time_limit
                                ? "the run reached its time limit at " + format_ms(event.time_ns) +
                                      " and was stopped before every step or cycle had run"
                                : "the run was interrupted at " + format_ms(event.time_ns);
        if (event.message != 0) words += " (" + std::string(history.message(event)) + ")";
        result.findings.push_back(Finding{
            .kind = FindingKind::kIncomplete,
            .cause = std::string(to_string(event.stop().reason)),
            .key = "",
            .clients = {},
            .from_ns = event.time_ns,
            .to_ns = event.time_ns,
            .amount = 0,
            .record = "",
            .words = words + ": what did not run cannot be judged.",
        });
        break;
      }
      case Op::kServerLost:
        result.findings.push_back(Finding{
            .kind = FindingKind::kServerLost,
            .cause = "",
            .key = "",
            .clients = {},
            .from_ns = event.time_ns,
            .to_ns = event.time_ns,
            .amount = 0,
            .record = "",
            .words = "the Redis server stopped answering at " + format_ms(event.time_ns) + " (" +
                     std::string(history.message(event)) +
                     "); the run could not be carried out to its end.",
        });
        break;
      case Op::kServerDied:
        result.findings.push_back(server_died_finding(history, event));
        break;
      default:
        break;
    }
  }
  for (const auto& [what, e] : errors) {
    result.stats.lock_errors += e.count;
    std::string words = std::to_string(e.count) + " " + std::string(to_string(what.first)) +
                        " call(s) ended in " + std::string(to_string(what.second)) +
                        "; the first, by " + client_name(history, e.clients.front()) + " at " +
                        format_ms(e.first_ns);
    std::string message = e.first_message;
    while (!message.empty() && (message.back() == '.' || message.back() == ' ')) message.pop_back();
    if (!message.empty()) words += ": " + message;
    result.findings.push_back(Finding{
        .kind = FindingKind::kLockError,
        .cause = std::string(to_string(what.second)),
        .key = e.first_key,
        .clients = e.clients,
        .from_ns = e.first_ns,
        .to_ns = e.first_ns,
        .amount = e.count,
        .record = "",
        .words = words + ". A correct lock never answers so.",
    });
  }
}

}  // namespace locksim::checker_internal
