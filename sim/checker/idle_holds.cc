// Idle holds (Doc C): a release that deleted nothing while its own lease ran leaves the key held
// by a token nobody will present; the lock sits idle until the lease runs out. The timeline finds
// those releases; this names how long the key stayed idle and who got it next.
#include <algorithm>
#include <string>
#include <vector>

#include "sim/checker/checkers.h"
#include "sim/checker/explain.h"

namespace locksim::checker_internal {

namespace {

// deleted_by_someone_else: another client's release deleted a key while `idle`'s client held it
// (its window up to its release): its own key is gone, so its refused release left the lock free,
// not idle. Foreign deletes are rare, so a scan is fine.
bool deleted_by_someone_else(const KeyTimeline& timeline, const IdleRelease& idle) {
  Nanos held_since = -1;
  for (const WindowRecord& w : timeline.windows) {
    if (w.client == idle.client && w.start_ns <= idle.invoke_ns) held_since = w.start_ns;
  }
  if (held_since < 0) return false;
  for (const ForeignDelete& d : timeline.foreign_deletes) {
    if (d.client != idle.client && d.ok_ns >= held_since && d.invoke_ns <= idle.invoke_ns) {
      return true;
    }
  }
  return false;
}

// waited_out: another client's acquire that waited (was refused at least once) from before
// `from_ns` and was granted only once `until_ns` had passed, with no other client's window in
// between: what kept it out was the key of the cancelled call. Its grant's reply time is compared,
// not the send time of its successful attempt: that is a lower bound (an adapter's own clock
// offset from the harness's invoke), as is `until_ns`, the lease's earliest end, and two lower
// bounds say nothing about each other; a key deleted early would have let it in at once, long
// before.
const GrantedAcquire* waited_out(const KeyTimeline& timeline, int client, Nanos from_ns,
                                 Nanos until_ns) {
  for (const GrantedAcquire& g : timeline.granted_acquires) {
    if (g.client == client || g.invoke_ns > from_ns || g.ok_ns < until_ns) continue;
    const bool someone_inside =
        std::any_of(timeline.windows.begin(), timeline.windows.end(), [&](const WindowRecord& w) {
          return w.client != client && w.client != g.client && w.start_ns < g.sent_ns &&
                 w.end_ns > g.invoke_ns;
        });
    if (!someone_inside) return &g;
  }
  return nullptr;
}

// cancelled_holds: a call cancelled by its caller that left the key held by nobody who knows it:
// a cancelled release that deleted nothing (the next client got the key only when the lease ran
// out), and a cancelled acquire that the server executed (the next client waited out a lease its
// caller believes it never got). Each is named with the cancelled call and what followed.
void cancelled_holds(const History& history, const KeyTimeline& timeline, CheckResult& result) {
  std::vector<Nanos> invoked(history.clients.size(), -1);  // each client's call under way
  for (std::size_t i = 0; i < history.events.size(); ++i) {
    const Event& e = history.events[i];
    if (e.client < 0 || static_cast<std::size_t>(e.client) >= invoked.size() ||
        e.key != timeline.key_id || (e.f != Op::kAcquire && e.f != Op::kRelease)) {
      continue;
    }
    Nanos& invoke_ns = invoked[static_cast<std::size_t>(e.client)];
    if (e.type == EventType::kInvoke) {
      invoke_ns = e.time_ns;
      continue;
    }
    if (e.type != EventType::kInfo || e.error != ErrorKind::kCancelled || invoke_ns < 0) continue;
    const std::string who = client_name(history, e.client);
    const std::string call = who + "'s " + (e.f == Op::kAcquire ? "acquire" : "release") + " of " +
                             timeline.key + " at " + format_ms(invoke_ns) +
                             " was cancelled by its caller at " + format_ms(e.time_ns) +
                             ", before its reply";
    std::string text;
    Nanos lease_end_ns = kNever;
    if (e.f == Op::kRelease) {
      // The lease as it stood when the holder left: its last window before the release.
      const WindowRecord* held = nullptr;
      for (const WindowRecord& w : timeline.windows) {
        if (w.client == e.client && w.end_ns <= invoke_ns) held = &w;
      }
      if (held == nullptr || held->lease_end_lower_ns <= invoke_ns) continue;
      lease_end_ns = held->lease_end_lower_ns;
      text = call;
      // What the caller did next: a retry the library refused holds no lock either.
      for (std::size_t j = i + 1; j < history.events.size(); ++j) {
        const Event& next = history.events[j];
        if (next.client != e.client || next.key != timeline.key_id) continue;
        if (next.f == Op::kRelease && next.type == EventType::kFail &&
            next.error == ErrorKind::kNotHeld) {
          text += "; its retry at " + format_ms(next.time_ns) +
                  " was refused by the library without a command (not_held: it had forgotten " +
                  "the token)";
          break;
        }
        if (next.f == Op::kAcquire) break;
      }
    } else {
      // A cancelled acquire the server executed holds the key for a lease from its send.
      const std::int64_t ttl_ms = e.ttl_ms >= 0 ? e.ttl_ms : -1;
      std::int64_t asked_ms = ttl_ms;
      for (std::size_t j = i; j-- > 0;) {
        const Event& before = history.events[j];
        if (before.client == e.client && before.f == Op::kAcquire &&
            before.type == EventType::kInvoke) {
          asked_ms = before.ttl_ms;
          break;
        }
      }
      if (asked_ms < 0) continue;
      lease_end_ns = invoke_ns + ms_to_ns(asked_ms);
      text = call + "; its caller believes it failed";
    }
    const GrantedAcquire* kept_out = waited_out(timeline, e.client, lease_end_ns, lease_end_ns);
    if (kept_out == nullptr) continue;
    const std::string other = client_name(history, kept_out->client);
    text += e.f == Op::kRelease
                ? ". The release had deleted nothing: the key stayed " + who +
                      "'s, held by nobody who knew it, and " + other + ", waiting since " +
                      format_ms(kept_out->invoke_ns) + ", got the lock only when " + who +
                      "'s lease ran out (" + format_ms(lease_end_ns) + "), at " +
                      format_ms(kept_out->ok_ns) + "."
                : ". But the server had executed it: the key was " + who + "'s, held by a " +
                      "caller that believes it failed, and " + other + ", waiting since " +
                      format_ms(kept_out->invoke_ns) + ", got the lock only when that lease ran " +
                      "out (" + format_ms(lease_end_ns) + " at the earliest), at " +
                      format_ms(kept_out->ok_ns) + ".";
    result.findings.push_back(Finding{
        .kind = FindingKind::kIdleHold,
        .cause = e.f == Op::kRelease ? "cancelled_release" : "cancelled_acquire",
        .key = timeline.key,
        .clients = {e.client, kept_out->client},
        .from_ns = invoke_ns,
        .to_ns = kept_out->ok_ns,
        .amount = 0,
        .record = "",
        .words = std::move(text),
    });
  }
}

// explained_by_a_fault: the release deleted nothing for a reason a fault gives, not because the
// key sat idle: a fault aimed at the releaser while its lease ran (a delayed or lost release
// runs late, after the key had become someone else's), or a fault that can make a server forget
// the key (a restart, a failover, a clock jump) while it held the lock or before its release was
// answered.
bool explained_by_a_fault(const KeyTimeline& timeline, const std::vector<FaultWindow>& faults,
                          const IdleRelease& idle) {
  // From its acquire's send: a fault while the SET's reply was on its way can take the key too.
  Nanos held_since = idle.invoke_ns;
  for (const WindowRecord& w : timeline.windows) {
    if (w.client == idle.client && w.start_ns <= idle.invoke_ns) {
      held_since = std::min(w.acquire_sent_ns, w.start_ns);
    }
  }
  return std::any_of(faults.begin(), faults.end(), [&](const FaultWindow& f) {
    if (f.client == idle.client && f.from_ns <= idle.lease_end_ns && f.to_ns >= idle.invoke_ns) {
      return true;
    }
    return traits(f.kind).forgets_key && f.from_ns >= held_since && f.from_ns <= idle.ok_ns;
  });
}

// evicted_in_overflow: a semaphore's holder whose permit another client's acquire may have
// removed: an overflow of the semaphore (a violation naming the holder) came while it held, or a
// client's own clock ran off the others' before its release (its clean-up removes live permits),
// so its release finding nothing left no permit held (zset_semaphore's client clocks: C's
// clean-up removed A's live permit, and A's release then removed nothing).
bool evicted_in_overflow(const History& history, const KeyTimeline& timeline,
                         const CheckResult& result, const IdleRelease& idle) {
  if (!history.semaphore()) return false;
  if (client_clock_before(history, idle.invoke_ns) != nullptr) return true;
  return std::any_of(result.findings.begin(), result.findings.end(), [&](const Finding& f) {
    return f.kind == FindingKind::kMutexViolation && f.key == timeline.key &&
           f.from_ns <= idle.invoke_ns &&
           std::find(f.clients.begin(), f.clients.end(), idle.client) != f.clients.end();
  });
}

// deleted_while_granted: another client's release that deleted a key and was under way while
// `idle`'s client was granted (invoked before that grant's reply, answered after its attempt was
// sent): it may have run after the grant and deleted this client's key, so the release that found
// nothing may have found the lock freed by a stale release rather than left idle; nullptr if none.
const DeletingRelease* deleted_while_granted(const KeyTimeline& timeline, const IdleRelease& idle) {
  const WindowRecord* held = nullptr;
  for (const WindowRecord& w : timeline.windows) {
    if (w.client == idle.client && w.start_ns <= idle.invoke_ns) held = &w;
  }
  if (held == nullptr) return nullptr;
  for (const DeletingRelease& d : timeline.deleting_releases) {
    if (d.client != idle.client && d.invoke_ns < held->acquire_ok_ns &&
        d.ok_ns > held->acquire_sent_ns && d.ok_ns <= idle.invoke_ns) {
      return &d;
    }
  }
  return nullptr;
}

}  // namespace

void check_idle_holds(const History& history, const KeyTimeline& timeline, CheckResult& result) {
  const std::vector<WindowRecord>& windows = timeline.windows;
  const std::vector<FaultWindow> faults =
      timeline.idle_releases.empty() ? std::vector<FaultWindow>{} : fault_windows(history);
  for (const IdleRelease& idle : timeline.idle_releases) {
    if (deleted_by_someone_else(timeline, idle)) continue;
    if (evicted_in_overflow(history, timeline, result, idle)) continue;
    if (explained_by_a_fault(timeline, faults, idle)) continue;
    const auto next =
        std::lower_bound(windows.begin(), windows.end(), idle.invoke_ns,
                         [](const WindowRecord& w, Nanos t) { return w.start_ns < t; });
    const bool taken_early = next != windows.end() && next->start_ns < idle.lease_end_ns;
    const Nanos until_ns = taken_early ? next->start_ns : idle.lease_end_ns;
    std::string text = client_name(history, idle.client) + "'s release of " + timeline.key +
                       " at " + format_ms(idle.invoke_ns) +
                       " deleted nothing though its lease ran until " +
                       format_ms(idle.lease_end_ns) + ": the lock sat idle, held by nobody, for " +
                       format_ms(until_ns - idle.invoke_ns);
    if (taken_early) {
      text += ", until " + client_name(history, next->client) + " got it at " +
              format_ms(next->start_ns) + ".";
    } else if (next != windows.end()) {
      text += " (" + client_name(history, next->client) + " got it at " +
              format_ms(next->start_ns) + ").";
    } else {
      text += " (nobody got it afterwards).";
    }
    // The same history fits a stale release too: which one, the history cannot tell (a blind
    // test's lock, whose release compared tokens as numbers, deleted the next holder's key so).
    if (const DeletingRelease* stale = deleted_while_granted(timeline, idle)) {
      const std::string who = client_name(history, idle.client);
      text += " Or " + client_name(history, stale->client) + "'s release, invoked at " +
              format_ms(stale->invoke_ns) + " before " + who + " was granted and answered at " +
              format_ms(stale->ok_ns) + " having deleted a key, deleted " + who +
              "'s key: a stale release.";
    }
    result.findings.push_back(Finding{
        .kind = FindingKind::kIdleHold,
        .cause = "",
        .key = timeline.key,
        .clients = {idle.client},
        .from_ns = idle.invoke_ns,
        .to_ns = until_ns,
        .amount = 0,
        .record = "",
        .words = std::move(text),
    });
  }
  cancelled_holds(history, timeline, result);
}

}  // namespace locksim::checker_internal
