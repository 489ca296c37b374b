// Mutual exclusion: a sweep over one key's windows sorted by start. The active list holds the
// windows still open at the current start; on a correct history it never holds more than one, so
// the sweep is linear after the sort. A semaphore (History::semaphore) is held to its permits
// instead: find_overflows.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/checker/checkers.h"
#include "sim/checker/explain.h"
#include "sim/checker/window_index.h"

namespace locksim::checker_internal {

LostLock server_faults_between(const History& history, Nanos from_ns, Nanos to_ns,
                               const std::vector<std::string>& held_on) {
  LostLock lost;
  for (const Event& event : history.events) {
    if (event.time_ns > to_ns) break;
    if (event.f != Op::kFault || event.time_ns <= from_ns) continue;
    const FaultFacts& fault = event.fault();
    if (fault.server == 0 || !traits(fault.kind).forgets_key) continue;
    const std::string server(history.str(fault.server));
    if (!held_on.empty() && std::find(held_on.begin(), held_on.end(), server) == held_on.end()) {
      continue;
    }
    std::string what;
    if (fault.kind == FaultKind::kRestartServer) {
      what = server + " was restarted at " + format_ms(event.time_ns) +
             " and came back without the key";
    } else if (fault.kind == FaultKind::kPromote || fault.kind == FaultKind::kFailover ||
               fault.kind == FaultKind::kClusterFailover) {
      // A failover is Sentinel's or a Redis Cluster's election: the history does not say which.
      what = server + " was promoted to primary at " + format_ms(event.time_ns) +
             (fault.kind == FaultKind::kFailover          ? " by an automatic failover"
              : fault.kind == FaultKind::kClusterFailover ? " by CLUSTER FAILOVER"
                                                          : "") +
             " without having received the key";
    } else if (fault.kind == FaultKind::kServerPartition) {
      what = fault.phase == FaultPhase::kEnd
                 ? server + " rejoined its cluster at " + format_ms(event.time_ns) +
                       ", and a write it took while cut off may be lost"
                 : server + " was cut off from the rest of its cluster at " +
                       format_ms(event.time_ns) + ", and a write it takes there may be lost";
    } else if (fault.kind == FaultKind::kClockJump) {
      what = server + "'s clock jumped ahead at " + format_ms(event.time_ns) +
             ", so the key expired there early";
    } else {
      // A kind that forgets keys and has no words of its own here yet still counts.
      what = server + "'s " + std::string(traits(fault.kind).word) + " at " +
             format_ms(event.time_ns) + " may have made it forget the key";
    }
    lost.words += (lost.words.empty() ? "" : "; ") + what;
    lost.at_ns = event.time_ns;
  }
  return lost;
}

namespace {

// clock_phrase: "C's own clock ran off the others' (client_clocks: offset +275 ms)" for the
// client_clock fault `clock` (the event says how the clock ran off when it was recorded with its
// words).
std::string clock_phrase(const History& history, const Event& clock) {
  const int target = clock.fault().target >= 0 ? clock.fault().target : clock.client;
  const std::string how =
      clock.message != 0 ? ": " + std::string(history.message(clock)) : std::string();
  return client_name(history, target) + "'s own clock ran off the others' (client_clocks" + how +
         ")";
}

std::string lease_phrase(const History& history, const WindowRecord& window) {
  std::string text = client_name(history, window.client) + "'s lease (ttl " +
                     std::to_string(window.ttl_ms) + " ms";
  if (window.renewed_ns >= 0) text += ", last renewed at " + format_ms(window.renewed_ns);
  return text + ")";
}

// grant_of: the servers a multi-server acquire was granted by, from its ok event (none for a
// lock of one server).
ServerGrant grant_of(const History& history, const WindowRecord& window) {
  for (const Event& event : history.events) {
    if (event.time_ns > window.acquire_ok_ns) break;
    if (event.time_ns == window.acquire_ok_ns && event.client == window.client &&
        event.f == Op::kAcquire && event.type == EventType::kOk) {
      return event.acquire().granted;
    }
  }
  return {};
}

// lost_lock: the server faults that may have made the earlier grant's servers forget it; all
// server faults in between if the grant does not say which servers it was on, or none of those
// faulted.
// From the earlier holder's successful send on: a fault while its SET was on its way back (the
// key set, the reply not yet read) can take the key before the holder even entered.
LostLock lost_lock(const History& history, const WindowRecord& earlier, Nanos to_ns) {
  const Nanos from_ns = std::min(earlier.acquire_sent_ns, earlier.start_ns);
  const LostLock on_its_servers = server_faults_between(
      history, from_ns, to_ns, history.granted_servers(grant_of(history, earlier)));
  if (on_its_servers.at_ns >= 0) return on_its_servers;
  return server_faults_between(history, from_ns, to_ns);
}

// other_release_between: a release of the key by another client than `releaser`, under way at
// some point in [from_ns, to_ns], that deleted a key or may have (no definite answer).
bool other_release_between(const History& history, KeyId key, int releaser, Nanos from_ns,
                           Nanos to_ns) {
  std::vector<Nanos> invoke_ns(history.clients.size(), -1);  // by client: a release in flight
  int in_flight = 0;
  for (const Event& event : history.events) {
    if (event.time_ns > to_ns && in_flight == 0) break;
    if (event.f != Op::kRelease || event.key != key || event.client == releaser) continue;
    Nanos& invoked = invoke_ns.at(static_cast<std::size_t>(event.client));
    if (event.type == EventType::kInvoke) {
      if (event.time_ns <= to_ns && invoked < 0) {
        invoked = event.time_ns;
        ++in_flight;
      }
      continue;
    }
    const bool was_in_flight = invoked >= 0;
    if (was_in_flight) --in_flight;
    invoked = -1;
    if (event.time_ns < from_ns) continue;
    const bool may_have_deleted = (event.type == EventType::kOk && event.release().deleted >= 1) ||
                                  event.type == EventType::kInfo ||
                                  (event.type == EventType::kFail && is_indeterminate(event.error));
    if (may_have_deleted) return true;
  }
  return false;
}

// deleted_own_key: `release` cannot have deleted `victim`'s key. A release is stale only if the
// key it deleted had been granted to another client after the releaser's own grant (and before
// the delete). The victim's key was not, when:
//  - the victim was granted before the releaser (answered before the releaser's successful
//    attempt was sent): its key was gone when the releaser's SET NX found the key free
//    (lua_owner seed 15007: the overlap is the victim's lease running out, nothing else);
//  - the victim's grant may have come before the releaser's: its successful attempt was sent
//    before the releaser's grant was answered, so the two SETs can have run in either order
//    (lua_owner_wait seed 594: B's SET ran, B paused past its TTL, then C was granted and C's
//    release deleted C's own key while B, answered late, was inside); only a grant certainly
//    after the releaser's makes the release stale;
//  - the victim was granted while the releaser's own key could not yet have expired, on servers
//    the releaser held, with no server fault that forgets keys and no other client's release that
//    may have deleted in between: then only the release itself can have removed the releaser's
//    key before the victim's SET, and it deletes once a server (Redlock seed 6634: a release of
//    five servers that took 35 ms while the next holder was granted on three of them).
bool deleted_own_key(const History& history, const KeyTimeline& timeline,
                     const ForeignDelete& release, const WindowRecord& victim) {
  if (granted_before(victim.acquire_ok_ns, release.grant_sent_ns)) return true;
  if (release.grant_ok_ns >= 0 && !granted_before(release.grant_ok_ns, victim.acquire_sent_ns)) {
    return true;
  }
  const ServerGrant victim_servers = grant_of(history, victim);
  // A multi-server release that deleted no more keys than the releaser held on servers the victim
  // was not granted on (where the releaser's own keys outlived the victim's SET NX) can have
  // deleted only those (Redlock seed 408321: A granted on five, B on the three where A's keys had
  // expired, then A's release deleted 2, its own on the other two; seed 518114: a clock jump on
  // the one server both held, A's release deleted 1 of its two others). Not when a server fault
  // since the releaser's grant may have taken its keys there: only the servers without one count
  // (Redlock seed 13512 of the swarm: clock jumps on three servers let C in, A's release then
  // deleted 1, its own key on n3, while n4, its other own server, had been killed and restarted).
  // Only a fault after the releaser's grant was answered surely came after its SET there: one
  // while the grant was under way may have come first, the key set after it (Redlock seed 155999
  // of explore with three faults: clock jumps on n1, n2 and n5 as A's acquire was under way, C got
  // n1, A's release deleted 2, its own keys on n2 and n5, set after their jumps).
  if (victim_servers.of > 0 && release.granted.of > 0 && release.grant_sent_ns >= 0) {
    const std::uint32_t only_its = release.granted.on & ~victim_servers.on;
    const Nanos set_by_ns =
        (release.grant_ok_ns >= 0 ? release.grant_ok_ns : release.grant_sent_ns) - 1;
    std::uint32_t kept = 0;  // of them, the servers no fault made forget the releaser's key
    for (std::uint32_t rest = only_its; rest != 0; rest &= rest - 1) {
      const std::uint32_t bit = rest & (~rest + 1);
      const ServerGrant one{.on = bit, .of = release.granted.of};
      if (server_faults_between(history, set_by_ns, release.ok_ns, history.granted_servers(one))
              .at_ns < 0) {
        kept |= bit;
      }
    }
    if (kept != 0 && release.deleted <= std::popcount(kept)) return true;
  }
  if (release.grant_sent_ns < 0 || release.invoke_ns > victim.acquire_ok_ns ||
      victim.acquire_ok_ns >= release.key_end_lower_ns) {
    return false;
  }
  if (victim_servers.of > 0 &&
      (release.granted.of == 0 || (victim_servers.on & ~release.granted.on) != 0)) {
    return false;  // the victim holds a server the releaser never did: a delete there is free
  }
  if (server_faults_between(history, release.grant_sent_ns - 1, victim.acquire_ok_ns).at_ns >= 0) {
    return false;
  }
  return !other_release_between(history, timeline.key_id, release.client, release.grant_sent_ns,
                                victim.acquire_ok_ns);
}

// lost_to_faults: the later holder of a multi-server lock was granted, on the servers it shares
// with the earlier one, only by servers that a fault may have made forget the earlier key since
// its grant: those faults explain the later grant without any release (Redlock seed 183422: a
// clock jump on the one server both grants shared). False for locks of one server.
bool lost_to_faults(const History& history, const WindowRecord& earlier,
                    const WindowRecord& later) {
  const ServerGrant first = grant_of(history, earlier);
  const ServerGrant second = grant_of(history, later);
  if (first.of == 0 || second.of == 0) return false;
  const ServerGrant shared{.on = first.on & second.on, .of = first.of};
  const Nanos from_ns = std::min(earlier.acquire_sent_ns, earlier.start_ns);
  for (const std::string& server : history.granted_servers(shared)) {
    if (server_faults_between(history, from_ns, later.start_ns, {server}).at_ns < 0) return false;
  }
  return true;
}

// forgotten_between: a server fault that forgets keys may have taken the earlier holder's key
// before the later one entered: on a multi-server lock, on every server the two grants shared
// (lost_to_faults); on one server, any such fault after the earlier grant was sent.
bool forgotten_between(const History& history, const WindowRecord& earlier,
                       const WindowRecord& later) {
  if (grant_of(history, earlier).of > 0 || grant_of(history, later).of > 0) {
    return lost_to_faults(history, earlier, later);
  }
  const Nanos from_ns = std::min(earlier.acquire_sent_ns, earlier.start_ns);
  return server_faults_between(history, from_ns, later.start_ns).at_ns >= 0;
}

// stale_release_between: the latest deleting release by another client than the earlier holder
// that was under way ([invoke, ok]) while the earlier holder was inside and invoked before the
// later one entered; nullptr if none. The later holder's own release from an earlier hold counts:
// a client whose late release deleted the holder's key can walk in itself. A release that cannot
// have deleted the earlier holder's key (deleted_own_key) does not count.
const ForeignDelete* stale_release_between(const History& history, const KeyTimeline& timeline,
                                           const WindowRecord& earlier, const WindowRecord& later) {
  const std::vector<ForeignDelete>& deletes = timeline.foreign_deletes;  // sorted by invoke
  if (deletes.empty() || lost_to_faults(history, earlier, later)) return nullptr;
  auto last = std::upper_bound(deletes.begin(), deletes.end(), later.start_ns,
                               [](Nanos t, const ForeignDelete& d) { return t < d.invoke_ns; });
  // Releases invoked before the earlier holder entered can still have deleted after it: look
  // back a bounded number of them (foreign deletes are rare; correct histories have none).
  int before_earlier = 0;
  while (last != deletes.begin() && before_earlier < 64) {
    --last;
    if (last->invoke_ns < earlier.start_ns) ++before_earlier;
    if (last->ok_ns < earlier.start_ns) continue;
    if (last->client == earlier.client || deleted_own_key(history, timeline, *last, earlier)) {
      continue;
    }
    // On one server, a release invoked after a fault that may have made the server forget the
    // earlier key cannot be said to have deleted it: what it deleted may be its own key, brought
    // back (explore seed 4296 on a Redis Cluster: C's key reached r1, A's, granted after a clock
    // jump on p1, did not; CLUSTER FAILOVER TAKEOVER made r1 the primary, and C's release there
    // deleted its own key). The fault explains the overlap: lock_lost.
    if (grant_of(history, earlier).of == 0 &&
        server_faults_between(history, std::min(earlier.acquire_sent_ns, earlier.start_ns),
                              last->invoke_ns)
                .at_ns >= 0) {
      continue;
    }
    // A read-write lock's reader deletes the key only as its last reader: a reader inside was
    // granted after that delete, not deleted by it (rw_lock_fair seed 5337 of explore's reader
    // streams: A's read lease ran out as C joined, A's release freed the key before C's grant).
    if (last->read && earlier.read) continue;
    // A release already under way when the earlier holder was granted may have deleted before
    // that grant's SET (its own key, then): a doubt. When the earlier holder's lease had
    // certainly run out before the later one got in, the lease explains the overlap without it
    // (Redlock seed 13626: a five-server release that took 36 ms).
    // So is a release during which a server fault made a key vanish where it was deleting: what
    // it deleted there (its own key before the fault, or another's after) is not known (Redlock
    // seed 173643 of the swarm: a clock jump on n1 while C's release of n1 and n5 was in flight).
    const bool under_way_at_grant = last->invoke_ns < earlier.acquire_ok_ns;
    const bool faulted_meanwhile =
        server_faults_between(history, last->invoke_ns, last->ok_ns).at_ns >= 0;
    // Likewise when a server fault may have made the server forget the earlier key before the
    // later holder entered (rw_lock_fair seed 35338 of explore's reader streams: A's read lease
    // could have run out as C was granted while A's release was under way, and a clock jump
    // then let A in again).
    if ((under_way_at_grant || faulted_meanwhile) &&
        (earlier.lease_end_lower_ns <= later.start_ns ||
         forgotten_between(history, earlier, later))) {
      continue;
    }
    return &*last;
  }
  return nullptr;
}

// unanswered_release_before: the latest release by another client than the earlier holder whose
// reply never came (its command may have reached the server at any time after its invoke: a
// delayed packet the link let go after the caller gave up) and that was invoked before the later
// holder entered; nullptr if none, or if it cannot have deleted the earlier holder's key
// (deleted_own_key). The last explanation before a racy acquire: a late delete is what lets the
// later holder in when both grants were otherwise sound (set_nx_ex, a DEL held past its call's
// timeout and delivered once B held the lock).
const ForeignDelete* unanswered_release_before(const History& history, const KeyTimeline& timeline,
                                               const WindowRecord& earlier,
                                               const WindowRecord& later) {
  if (timeline.unanswered_releases.empty() || lost_to_faults(history, earlier, later)) {
    return nullptr;
  }
  const ForeignDelete* found = nullptr;
  for (const ForeignDelete& release : timeline.unanswered_releases) {
    if (release.invoke_ns >= later.start_ns) break;
    if (release.client == earlier.client || deleted_own_key(history, timeline, release, earlier)) {
      continue;
    }
    found = &release;
  }
  return found;
}

// granted_first_and_expired: the later holder's own grant may have come before the earlier
// one's, its key gone by then with its TTL: its successful attempt was sent so long before the
// earlier grant was answered that the key it set (after the send) can have expired first. Then
// the earlier SET NX found the lock free and the later holder entered on a lease that had run
// out during its own acquire (lua_owner_wait seed 594: B's SET, then a pause at after_set past
// its TTL, C granted meanwhile, then B's WAIT returned). A lock that SETs without NX acquired
// late on a held lock only if the acquire took no longer than its TTL: that stays racy.
bool granted_first_and_expired(const WindowRecord& earlier, const WindowRecord& later) {
  return later.ttl_ms >= 0 &&
         later.acquire_sent_ns + ms_to_ns(later.ttl_ms) <= earlier.acquire_ok_ns;
}

// paused_during: " (B was paused from X to Y)" for the fault windows aimed at `window`'s client
// that held its acquire back between the send and the reply; "" if none.
std::string paused_during(const History& history, const WindowRecord& window) {
  std::string text;
  for (const FaultWindow& fault : fault_windows(history)) {
    if (fault.client != window.client || fault.from_ns >= fault.to_ns ||
        fault.to_ns <= window.acquire_sent_ns || fault.from_ns >= window.acquire_ok_ns) {
      continue;
    }
    text += (text.empty() ? "" : ", ") + std::string(traits(fault.kind).word) + " from " +
            format_ms(fault.from_ns) + " to " + format_ms(fault.to_ns);
  }
  return text.empty() ? "" : " (" + client_name(history, window.client) + "'s " + text + ")";
}

// cancelled_extend: " Its extend at X was cancelled ..." when the earlier holder's last extend
// of the key inside its window, before `to_ns`, was cancelled by its caller: a renewal nobody can
// count on, which the holder worked on after all; "" otherwise.
std::string cancelled_extend(const History& history, const KeyTimeline& timeline,
                             const WindowRecord& earlier, Nanos to_ns) {
  const auto first =
      std::lower_bound(history.events.begin(), history.events.end(), earlier.start_ns,
                       [](const Event& e, Nanos t) { return e.time_ns < t; });
  Nanos invoke_ns = -1;
  std::string text;
  for (auto it = first; it != history.events.end() && it->time_ns <= to_ns; ++it) {
    if (it->client != earlier.client || it->key != timeline.key_id || it->f != Op::kExtend) {
      continue;
    }
    if (it->type == EventType::kInvoke) {
      invoke_ns = it->time_ns;
    } else if (it->type == EventType::kInfo && it->error == ErrorKind::kCancelled &&
               invoke_ns >= 0) {
      text = " Its extend at " + format_ms(invoke_ns) + " was cancelled by its caller at " +
             format_ms(it->time_ns) + ", before its reply: nothing says the lease was renewed, " +
             "and " + client_name(history, earlier.client) + " worked on as if it had been.";
    } else {
      text.clear();  // a later extend that was answered
    }
  }
  return text;
}

// inner_free_before: the last inner release of `earlier`'s reentrant hold that deleted the key
// before `later` entered, or nullptr.
const EarlyFree* inner_free_before(const KeyTimeline& timeline, const WindowRecord& earlier,
                                   const WindowRecord& later) {
  const EarlyFree* found = nullptr;
  for (const EarlyFree& free : timeline.inner_frees) {
    if (free.client == earlier.client && free.invoke_ns >= earlier.start_ns &&
        free.invoke_ns < later.start_ns) {
      found = &free;
    }
  }
  return found;
}

// make_violation: the violation of `later` getting in while `earlier` held the key, and its cause;
// its words only if `words` (explore's search reads only kinds and causes).
Finding make_violation(const History& history, const KeyTimeline& timeline,
                       const WindowRecord& earlier, const WindowRecord& later, bool words) {
  Finding v;
  v.kind = FindingKind::kMutexViolation;
  v.key = timeline.key;
  v.clients = {earlier.client, later.client};
  v.from_ns = later.start_ns;
  v.to_ns = std::min(earlier.end_ns, later.end_ns);

  const std::string x = client_name(history, earlier.client);
  const std::string y = client_name(history, later.client);
  std::string text;
  if (words) {
    text = y + " acquired " + timeline.key + " at " + format_ms(later.start_ns) + " while " + x +
           " was still inside (" + x + " held it since " + format_ms(earlier.start_ns) + ", " +
           window_end_phrase(earlier.end, earlier.end_ns) + "): overlap " +
           format_ms(v.to_ns - v.from_ns) + ". ";
  }

  const EarlyFree* inner_free = inner_free_before(timeline, earlier, later);
  if (inner_free != nullptr && inner_free->early) {
    v.cause = "early_release";
    if (words)
      text += x + "'s release at " + format_ms(inner_free->invoke_ns) + " undid one of its " +
              std::to_string(inner_free->depth) + " holds and deleted the lock: a reentrant lock " +
              "is freed only when its owner's last hold is released, and " + x +
              " was still inside, so " + y + " got in.";
  } else if (inner_free != nullptr && *earlier.regrant_cause != '\0') {
    // The hold the inner release freed was the only one the server counted: the client's key
    // had been lost before its nested acquire granted the lock afresh.
    v.cause = earlier.regrant_cause;
    const bool lost = v.cause == "lock_lost";
    if (words)
      text += x + "'s key " + (lost ? "may have been forgotten by a server" : "may have expired") +
              " from " + format_ms(earlier.regrant_lost_ns) + " on, so its nested acquire at " +
              format_ms(earlier.acquire_ok_ns) + " took the lock afresh, one hold deep; " + x +
              "'s release at " + format_ms(inner_free->invoke_ns) +
              " of what it counted as an inner hold freed the lock while " + x +
              " was still inside, and let " + y + " in.";
  } else if (const ForeignDelete* stale =
                 stale_release_between(history, timeline, earlier, later)) {
    v.cause = "stale_release";
    v.clients.push_back(stale->client);
    if (!words) return v;
    const std::string z = client_name(history, stale->client);
    const bool late_delete = stale->lease_ran_out && stale->lease_end_ns > stale->invoke_ns;
    const bool held_nothing = stale->grant_sent_ns < 0 && !late_delete && stale->newer_holder >= 0;
    const std::string why = held_nothing  ? "made while " + z + " held nothing"
                            : late_delete ? "returned at " + format_ms(stale->ok_ns) +
                                                ", after its own lease had run out (from " +
                                                format_ms(stale->lease_end_ns) + " on)"
                            : stale->lease_ran_out
                                ? "made after its own lease had run out (from " +
                                      format_ms(stale->lease_end_ns) + " on)"
                                : "made after " + client_name(history, stale->newer_holder) +
                                      " had taken the lock over";
    const std::string who = z == y ? z + "'s own earlier release" : z + "'s release";
    text += who + " " + (late_delete ? "invoked " : "") + "at " + format_ms(stale->invoke_ns) +
            ", " + why + ", deleted " + x + "'s lock and let " + y + " in.";
  } else if (earlier.lease_end_ns <= later.start_ns) {
    v.cause = "lease_expired";
    if (words)
      text += lease_phrase(history, earlier) + " ran out at " + format_ms(earlier.lease_end_ns) +
              " while " + x + " was still working." +
              cancelled_extend(history, timeline, earlier, later.start_ns);
  } else if (earlier.lease_end_lower_ns <= later.start_ns) {
    // The lease may have ended just before the later acquire: the earlier holder's reply was
    // read late. A racy acquire is claimed only when the lease was certainly still valid.
    v.cause = "lease_expired";
    if (words)
      text += lease_phrase(history, earlier) + " ran out between " +
              format_ms(earlier.lease_end_lower_ns) + " and " + format_ms(earlier.lease_end_ns) +
              " (its acquire reply was read late), before " + y + " got in, while " + x +
              " was still working." + cancelled_extend(history, timeline, earlier, later.start_ns);
  } else if (const LostLock lost = lost_lock(history, earlier, later.start_ns); lost.at_ns >= 0) {
    // The lease was still valid and no client deleted the key: a server forgot it.
    v.cause = "lock_lost";
    if (!words) return v;
    text += lease_phrase(history, earlier) + " was still valid until " +
            format_ms(earlier.lease_end_ns) + ", but " + lost.words + ".";
    const std::string x_granted = grant_phrase(history, grant_of(history, earlier));
    const std::string y_granted = grant_phrase(history, grant_of(history, later));
    if (!x_granted.empty() && !y_granted.empty()) {
      text += " " + y + "'s acquire was " + y_granted + ", while " + x + "'s was " + x_granted +
              ": two majorities.";
    }
  } else if (granted_first_and_expired(earlier, later)) {
    v.cause = "lease_expired";
    if (words)
      text += y + "'s own acquire was sent at " + format_ms(later.acquire_sent_ns) +
              " and answered only at " + format_ms(later.acquire_ok_ns) +
              paused_during(history, later) + ": its key, set in between, can have run out (ttl " +
              std::to_string(later.ttl_ms) + " ms) from " +
              format_ms(later.acquire_sent_ns + ms_to_ns(later.ttl_ms)) + " on, before " + x +
              " was granted at " + format_ms(earlier.acquire_ok_ns) + ", so " + x +
              " found the lock free and " + y + " entered on a lease that had run out.";
  } else if (const LostLock lost_first = later.acquire_sent_ns < earlier.acquire_ok_ns
                                             ? lost_lock(history, later, earlier.acquire_ok_ns)
                                             : LostLock{};
             lost_first.at_ns >= 0) {
    // The later holder's grant may have come first (its attempt sent before the earlier grant
    // was answered) and a server forgot its key before the earlier SET (lua_owner_renew seed
    // 124703 with clock_jump: two grants under way at once around the jump).
    v.cause = "lock_lost";
    if (words)
      text += y + "'s acquire, sent at " + format_ms(later.acquire_sent_ns) +
              ", may have been granted before " + x + "'s (answered at " +
              format_ms(earlier.acquire_ok_ns) + "), but " + lost_first.words + ".";
  } else if (const ForeignDelete* late =
                 unanswered_release_before(history, timeline, earlier, later)) {
    v.cause = "stale_release";
    v.clients.push_back(late->client);
    if (!words) return v;
    const std::string z = client_name(history, late->client);
    text += (z == y ? z + "'s own earlier release" : z + "'s release") + " invoked at " +
            format_ms(late->invoke_ns) + " was never answered (the call gave up), so its " +
            "command may have reached the server later: with " + x + "'s lease still valid " +
            "until " + format_ms(earlier.lease_end_ns) + ", only such a late delete of " + x +
            "'s lock lets " + y + " in.";
  } else if (const Event* clock =
                 history.client_clocks ? client_clock_before(history, later.start_ns) : nullptr) {
    // A lock that times its lease with its clients' clocks: one clock ahead takes a live lease
    // for run out, one behind writes a lease that others take for run out.
    v.cause = "client_clock";
    if (!words) return v;
    text += lease_phrase(history, earlier) + " was still valid until " +
            format_ms(earlier.lease_end_ns) + ", but " + clock_phrase(history, *clock) +
            ": a lock that times its lease with its clients' clocks takes a live lease for run "
            "out (a clock ahead) or writes one that others take for run out (a clock behind).";
  } else {
    v.cause = "racy_acquire";
    if (!words) return v;
    text += earlier.ttl_ms >= 0
                ? lease_phrase(history, earlier) + " was still valid until " +
                      format_ms(earlier.lease_end_ns) +
                      ": both acquires succeeded on a held lock (or the lock set its key to live "
                      "shorter than the lease it was asked for)."
                : x + "'s lock has no TTL: both acquires succeeded on a held lock.";
  }
  v.words = std::move(text);
  return v;
}

// ended_before: `earlier` was left by the time `later` began. A window still open at the end of
// the history (its end only the last event's time) was not: a client that enters at that last
// instant is inside with it (a zero-length overlap at the end is one all the same).
bool ended_before(const WindowRecord& earlier, const WindowRecord& later) {
  if (earlier.end == HoldWindow::End::kEndOfHistory) return earlier.end_ns < later.start_ns;
  return earlier.end_ns <= later.start_ns;
}

void find_overlaps(const History& history, const KeyTimeline& timeline, bool words,
                   CheckResult& result) {
  const std::vector<WindowRecord>& windows = timeline.windows;
  std::vector<std::size_t> active;
  std::vector<bool> in_violation;  // sized only once a violation is found
  for (std::size_t i = 0; i < windows.size(); ++i) {
    const WindowRecord& later = windows[i];
    // Touching windows (one ends exactly when the next starts) share no time: not a violation;
    // but one still open when the history ended was inside with a window that starts then.
    std::erase_if(active, [&](std::size_t a) { return ended_before(windows[a], later); });
    for (std::size_t a : active) {
      if (windows[a].client == later.client) continue;
      if (windows[a].read && later.read) continue;  // a read-write lock's readers share it
      result.findings.push_back(make_violation(history, timeline, windows[a], later, words));
      if (!windows[a].faulted) ++result.violations_outside_faults;
      if (in_violation.empty()) in_violation.resize(windows.size(), false);
      in_violation[a] = in_violation[i] = true;
    }
    active.push_back(i);
  }
  result.stats.holds_in_violation +=
      static_cast<std::int64_t>(std::count(in_violation.begin(), in_violation.end(), true));
}

// make_overflow: the violation of a semaphore of history.permits permits that `later` entered
// while `holders` (one window per other client, at least the permits) were inside. Its cause:
// "lease_expired" when the holders whose leases still ran were fewer than the permits (a permit
// freed by its lease, the limit of every lease); else "lock_lost" when a server fault may have
// made the server forget permits; else "client_clock" when a client's own clock ran off the
// others' before it and the semaphore reads its clients' clocks (History::client_clocks: timed by
// them, its own bug); else "racy_acquire" (a clock run off excuses no lock that never reads it).
Finding make_overflow(const History& history, const KeyTimeline& timeline,
                      const std::vector<const WindowRecord*>& holders, const WindowRecord& later) {
  Finding v;
  v.kind = FindingKind::kMutexViolation;
  v.key = timeline.key;
  v.from_ns = later.start_ns;
  v.to_ns = later.end_ns;
  Nanos earliest_sent_ns = later.acquire_sent_ns;
  std::string inside;
  std::vector<const WindowRecord*> expired;
  for (const WindowRecord* w : holders) {
    v.clients.push_back(w->client);
    v.to_ns = std::min(v.to_ns, w->end_ns);
    earliest_sent_ns = std::min(earliest_sent_ns, w->acquire_sent_ns);
    inside += (inside.empty() ? "" : ", ") + client_name(history, w->client) + " (since " +
              format_ms(w->start_ns) + ")";
    if (w->lease_end_lower_ns <= later.start_ns) expired.push_back(w);
  }
  v.clients.push_back(later.client);
  const std::string y = client_name(history, later.client);
  const std::string permits = std::to_string(history.permits);
  std::string text = y + " acquired " + timeline.key + " at " + format_ms(later.start_ns) +
                     " while " + std::to_string(holders.size()) +
                     (holders.size() == 1 ? " holder was inside, " : " holders were inside, ") +
                     inside + ": " + std::to_string(holders.size() + 1) + " holders of a " +
                     permits + "-permit semaphore, overlap " + format_ms(v.to_ns - v.from_ns) +
                     ". ";
  if (holders.size() - expired.size() < static_cast<std::size_t>(history.permits)) {
    v.cause = "lease_expired";
    const WindowRecord& w = *expired.front();
    text += client_name(history, w.client) + "'s permit's lease (ttl " + std::to_string(w.ttl_ms) +
            " ms) ran out at " + format_ms(w.lease_end_ns) + " while " +
            client_name(history, w.client) + " was still working: its permit was free again.";
  } else if (const LostLock lost = server_faults_between(history, earliest_sent_ns, later.start_ns);
             lost.at_ns >= 0) {
    // Before a client's clock: a server that forgot permits explains the overflow whatever the
    // semaphore times them by (zset_semaphore_server seed 912: a clock jump on n1 between A's
    // grant and C's, with A's own clock offset too).
    v.cause = "lock_lost";
    text += "Every holder's lease still ran, but " + lost.words + ".";
  } else if (const Event* clock =
                 history.client_clocks ? client_clock_before(history, later.start_ns) : nullptr) {
    v.cause = "client_clock";
    text += "Every holder's lease still ran, but " + clock_phrase(history, *clock) +
            ": a semaphore that times its "
            "permits with its clients' clocks counts live permits as expired (a clock ahead, or "
            "a permit its holder's clock behind scored in the past) or ranks a new one before "
            "them (a clock behind).";
  } else {
    v.cause = "racy_acquire";
    text += "Every holder's lease still ran: the semaphore granted more permits than it has.";
  }
  v.words = std::move(text);
  return v;
}

// find_overflows: a semaphore's mutual exclusion: never more holders than its permits. A sweep
// over the key's windows by start; a violation when a window starts while at least the permits
// other clients are inside (one finding per such entry).
void find_overflows(const History& history, const KeyTimeline& timeline, CheckResult& result) {
  const std::vector<WindowRecord>& windows = timeline.windows;
  std::vector<std::size_t> active;
  std::vector<bool> in_violation;
  for (std::size_t i = 0; i < windows.size(); ++i) {
    const WindowRecord& later = windows[i];
    std::erase_if(active, [&](std::size_t a) { return ended_before(windows[a], later); });
    std::vector<const WindowRecord*> holders;  // the latest window of each other client inside
    for (std::size_t a : active) {
      if (windows[a].client == later.client) continue;
      const auto same = std::find_if(holders.begin(), holders.end(), [&](const WindowRecord* w) {
        return w->client == windows[a].client;
      });
      if (same == holders.end())
        holders.push_back(&windows[a]);
      else
        *same = &windows[a];
    }
    if (holders.size() >= static_cast<std::size_t>(history.permits)) {
      result.findings.push_back(make_overflow(history, timeline, holders, later));
      if (std::none_of(holders.begin(), holders.end(),
                       [](const WindowRecord* w) { return w->faulted; })) {
        ++result.violations_outside_faults;
      }
      if (in_violation.empty()) in_violation.resize(windows.size(), false);
      in_violation[i] = true;
      for (const WindowRecord* w : holders) {
        in_violation[static_cast<std::size_t>(w - windows.data())] = true;
      }
    }
    active.push_back(i);
  }
  result.stats.holds_in_violation +=
      static_cast<std::int64_t>(std::count(in_violation.begin(), in_violation.end(), true));
}

void find_stale_releases(const History& history, const KeyTimeline& timeline, CheckResult& result) {
  if (timeline.foreign_deletes.empty()) return;
  const WindowIndex index(timeline.windows);
  std::vector<FaultWindow> faults;
  bool faults_read = false;
  for (const ForeignDelete& release : timeline.foreign_deletes) {
    if (!release.lease_ran_out) continue;
    // Judged where the lease had certainly run out: at the invoke, or else at the completion.
    const bool at_invoke = release.lease_end_ns <= release.invoke_ns;
    const Nanos t = at_invoke ? release.invoke_ns : release.ok_ns;
    // Inside at t: entered at or before t and not yet left, holding a key the release may have
    // deleted (deleted_own_key).
    // On one server, a fault that may have made the server forget the victim's key from its
    // grant's send until the release was answered leaves what the release deleted in doubt: its
    // own key brought back, or nothing of the victim's (rw_lock_fair seed 11082 of explore with
    // three faults on a Redis Cluster: a clock jump on p1 expired B's read hold there, A got the
    // write lock on p1, CLUSTER FAILOVER TAKEOVER made r1, which still had B's hold and never got
    // A's, the primary, and B's release deleted its own hold on r1). The overlap is the fault's:
    // lock_lost, a limit.
    const auto forgotten_since_grant = [&](const WindowRecord& w) {
      return grant_of(history, w).of == 0 &&
             server_faults_between(history, std::min(w.acquire_sent_ns, w.start_ns) - 1,
                                   release.ok_ns)
                     .at_ns >= 0;
    };
    const int victim = index.find(t, t + 1, [&](const WindowRecord& w) {
      return w.client != release.client && !(release.read && w.read) &&
             !deleted_own_key(history, timeline, release, w) && !forgotten_since_grant(w);
    });
    if (victim < 0) continue;
    const WindowRecord& window = timeline.windows[static_cast<std::size_t>(victim)];
    if (!at_invoke) {
      // The victim entered while the release was under way: its SET may have come after the
      // release's delete (which then deleted the releaser's own key). Certain when the release
      // was held back (a pause inside it, a delayed command) until after the victim entered
      // (its delete came after the victim's SET), or when someone else got in while the victim
      // was still inside and its lease still ran (its key was gone; after the lease it would
      // have been gone anyway, redlock seed 19442), unless both read a read-write lock: a reader
      // shares the victim's key (rw_lock_fair seed 55226 with three faults).
      if (!faults_read) {
        faults = fault_windows(history);
        faults_read = true;
      }
      const bool held_past_entry =
          std::any_of(faults.begin(), faults.end(), [&](const FaultWindow& f) {
            // An instant fault, or one that began as the release returned (a lost reply aimed
            // at the next acquire, Redlock seed 56594), held nothing back.
            return f.client == release.client && f.from_ns < release.ok_ns && f.from_ns < f.to_ns &&
                   f.to_ns >= window.start_ns && f.to_ns <= release.ok_ns &&
                   f.to_ns >= release.invoke_ns;
          });
      const bool walked_in =
          std::any_of(timeline.windows.begin(), timeline.windows.end(), [&](const WindowRecord& w) {
            return w.client != window.client && w.client != release.client &&
                   !(window.read && w.read) && w.start_ns > window.start_ns &&
                   w.start_ns < window.end_ns && w.start_ns > release.invoke_ns &&
                   w.start_ns < window.lease_end_lower_ns && !forgotten_between(history, window, w);
          });
      if (!held_past_entry && !walked_in) continue;
    }
    const std::string z = client_name(history, release.client);
    const std::string v = client_name(history, window.client);
    result.findings.push_back(Finding{
        .kind = FindingKind::kStaleRelease,
        .cause = "",
        .key = timeline.key,
        .clients = {release.client, window.client},
        .from_ns = t,
        .to_ns = t,
        .amount = 0,
        .record = "",
        .words = z + "'s release of " + timeline.key + " at " + format_ms(t) +
                 " came after its lease had run out (from " + format_ms(release.lease_end_ns) +
                 " on)" + " and deleted the lock while " + v + " was inside (since " +
                 format_ms(window.start_ns) + ").",
    });
  }
}

}  // namespace

// client_clock_before: the first client_clock fault recorded before `to_ns` (a client whose own
// clock ran off the others'), or nullptr.
const Event* client_clock_before(const History& history, Nanos to_ns) {
  for (const Event& e : history.events) {
    if (e.time_ns > to_ns) break;
    if (e.f == Op::kFault && e.fault().kind == FaultKind::kClientClock) return &e;
  }
  return nullptr;
}

void check_mutual_exclusion(const History& history, const KeyTimeline& timeline, bool words,
                            CheckResult& result) {
  // A semaphore's holders overlap by design, and each releases its own permit: only their count
  // is judged.
  if (history.semaphore()) {
    find_overflows(history, timeline, result);
    return;
  }
  find_overlaps(history, timeline, words, result);
  find_stale_releases(history, timeline, result);
}

}  // namespace locksim::checker_internal
