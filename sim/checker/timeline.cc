#include "sim/checker/timeline.h"

#include <algorithm>
#include <string_view>
#include <utility>

namespace locksim::checker_internal {
namespace {

// ClientKeyState: where one client stands with one key while the history is read.
struct ClientKeyState {
  bool seen = false;
  // An acquire in flight (invoked, no reply yet).
  Nanos acquire_invoke_ns = -1;
  std::int64_t acquire_ttl_ms = -1;
  // The last successful acquire, while the client believes it holds the key (until its release
  // completes).
  bool acquired = false;
  Nanos ok_invoke_ns = 0;
  Nanos ok_ns = 0;
  Nanos ok_sent_ns = 0;  // the successful attempt's send (its invoke, without one)
  std::int64_t ok_ttl_ms = -1;
  Nanos lease_end_ns = kNever;
  Nanos lease_end_lower_ns = kNever;  // see WindowRecord::lease_end_lower_ns
  Nanos extend_invoke_ns = -1;
  Nanos renewed_ns = -1;            // the last successful extension's ok
  std::int64_t extend_ttl_ms = -1;  // of the extension in flight
  StringId token = 0;
  ServerGrant granted;        // the servers of the last successful acquire (multi-server locks)
  Nanos enter_ns = -1;        // >= 0 while inside
  int depth = 0;              // a reentrant lock's holds while inside (nested acquires add one)
  bool hold_read = false;     // a read-write lock's hold is a read one (no write grant in it)
  // A read-write lock's upgrade: the depth of its write hold (0: none), and the read hold it was
  // granted in, which the client is left with once it releases the write hold.
  int upgrade_depth = 0;
  struct ReadHold {
    Nanos ok_invoke_ns = 0;
    Nanos ok_ns = 0;
    Nanos ok_sent_ns = 0;
    std::int64_t ok_ttl_ms = -1;
    Nanos lease_end_ns = kNever;
    Nanos lease_end_lower_ns = kNever;
    Nanos renewed_ns = -1;
    StringId token = 0;
  } before_upgrade;
  bool freed_early = false;   // an inner release of this hold deleted the key (inner_frees)
  // A hold a reentrant lock's nested acquire granted afresh (its key had expired, or a server
  // had forgotten it): why ("lease_expired", "lock_lost"; "" for any other hold) and from when.
  const char* regrant_cause = "";
  Nanos regrant_lost_ns = -1;
  // A reentrant lock's: the latest lease end of a hold whose release went unanswered (its key may
  // have lived on), and whether the current hold was granted while it may have: then the server
  // may count the old hold too, and a release that deletes nothing is no idle hold.
  Nanos unknown_release_lease_end_ns = -1;
  bool count_uncertain = false;
  Nanos inner_invoke_ns = -1;  // a reentrant lock's inner release in flight
  Nanos naive_start_ns = -1;  // the naive log window in progress: the successful acquire's invoke
  // The possible hold in progress: from the first acquire that may have succeeded.
  Nanos hold_start_ns = -1;
  Nanos hold_lease_end_ns = -1;  // the latest lease end behind it; kNever if one has no TTL
  std::int64_t hold_ttl_ms = -1;
  std::vector<int> open_maybes;  // maybe_acquires whose possible window is still open
  // A release in flight, judged when it was invoked.
  bool releasing = false;
  Nanos release_invoke_ns = 0;
  bool release_lease_ran_out = false;
  int release_newer_holder = -1;
  Nanos release_lease_end_ns = kNever;
  Nanos release_lease_end_lower_ns = kNever;
  bool release_others_inside = false;
};

// KeyState: the latest enter on a key, to tell whether a release deleted someone else's key, and
// how many clients are inside now.
struct KeyState {
  int last_enter_client = -1;
  Nanos last_enter_ns = -1;
  int inside = 0;
  // A read-write lock's: whether the last enter was a read hold's, and the earliest the key can
  // have expired by the read grants so far (each resets the whole key's lease): a reader's own
  // lease is the key's, which later readers keep alive.
  bool last_enter_read = false;
  Nanos read_lease_end_lower_ns = -1;
};

Nanos lease_end(Nanos from_ns, std::int64_t ttl_ms) {
  return ttl_ms >= 0 ? from_ns + ms_to_ns(ttl_ms) : kNever;
}

// release_of: the release `client` is ending (state `s`) as a possible delete of another's key,
// answered at `ok_ns` (kNever: never answered), its lease run out and every key deleted until the
// caller says otherwise.
ForeignDelete release_of(int client, const ClientKeyState& s, Nanos ok_ns) {
  return ForeignDelete{
      .client = client,
      .grant_sent_ns = s.acquired ? s.ok_sent_ns : -1,
      .grant_ok_ns = s.acquired ? s.ok_ns : -1,
      .granted = s.acquired ? s.granted : ServerGrant{},
      .key_end_lower_ns = s.acquired
                              ? std::max(lease_end(s.ok_sent_ns, s.ok_ttl_ms), s.lease_end_lower_ns)
                              : kNever,
      .invoke_ns = s.release_invoke_ns,
      .ok_ns = ok_ns,
      .lease_end_ns = s.lease_end_lower_ns,
      .lease_ran_out = true,
      .newer_holder = s.release_newer_holder,
      .read = s.hold_read,
  };
}

class TimelineBuilder {
 public:
  Timelines build(const History& history) {
    history_ = &history;
    if (!history.events.empty()) {
      timelines_.first_ns = history.events.front().time_ns;
      timelines_.last_ns = history.events.back().time_ns;
    }
    for (const Event& event : history.events) {
      if (event.client < 0) continue;  // not attributable to a client: nothing to judge
      if (event.f == Op::kCrash) {
        crash(event.client, event.time_ns);
        continue;
      }
      if (event.f == Op::kFault && traits(event.fault().kind).forgets_key) {
        last_key_loss_ns_ = event.time_ns;
      }
      if (event.f == Op::kFault) {
        // A nemesis fault counts for the client it was aimed at.
        const std::int32_t target = event.fault().target;
        fault(target >= 0 ? target : event.client, event.time_ns);
        continue;
      }
      if (event.f != Op::kAcquire && event.f != Op::kRelease && event.f != Op::kExtend &&
          event.f != Op::kEnter && event.f != Op::kExit) {
        continue;
      }
      const int key = key_index(event.key);
      ClientKeyState& s = state(event.client, key);
      switch (event.f) {
        case Op::kAcquire:
          on_acquire(event, key, s);
          break;
        case Op::kEnter:
          on_enter(event, key, s);
          break;
        case Op::kExit:
          on_exit(event, key, s);
          break;
        case Op::kRelease:
          on_release(event, key, s);
          break;
        case Op::kExtend:
          on_extend(event, key, s);
          break;
        default:
          break;
      }
    }
    finish();
    for (KeyTimeline& timeline : timelines_.keys) {
      std::sort(timeline.windows.begin(), timeline.windows.end(),
                [](const WindowRecord& a, const WindowRecord& b) {
                  return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns < b.end_ns;
                });
      std::stable_sort(
          timeline.foreign_deletes.begin(), timeline.foreign_deletes.end(),
          [](const ForeignDelete& a, const ForeignDelete& b) { return a.invoke_ns < b.invoke_ns; });
      std::stable_sort(
          timeline.unanswered_releases.begin(), timeline.unanswered_releases.end(),
          [](const ForeignDelete& a, const ForeignDelete& b) { return a.invoke_ns < b.invoke_ns; });
    }
    return std::move(timelines_);
  }

 private:
  static constexpr std::size_t kFirstRoom = 8;

  // key_index: the timeline of a history key id, in order of first appearance.
  int key_index(KeyId key) {
    if (key_indexes_.size() <= key) key_indexes_.resize(key + 1, -1);
    int& index = key_indexes_[key];
    if (index < 0) {
      index = static_cast<int>(timelines_.keys.size());
      timelines_.keys.emplace_back().key = history_->keys.at(key);
      timelines_.keys.back().key_id = key;
      // Room for a few holds at once: growing from nothing cost three allocations each.
      timelines_.keys.back().windows.reserve(kFirstRoom);
      timelines_.keys.back().possible_holds.reserve(kFirstRoom);
      key_states_.emplace_back();
      states_.emplace_back();
    }
    return index;
  }

  ClientKeyState& state(int client, int key) {
    std::vector<ClientKeyState>& by_client = states_[static_cast<std::size_t>(key)];
    const auto c = static_cast<std::size_t>(client);
    if (by_client.size() <= c) by_client.resize(c + 1);
    if (client_keys_.size() <= c) {
      client_keys_.resize(c + 1);
      fault_times_.resize(c + 1);
    }
    ClientKeyState& s = by_client[c];
    if (!s.seen) {
      s.seen = true;
      client_keys_[c].push_back(key);
    }
    return s;
  }

  KeyTimeline& timeline(int key) { return timelines_.keys[static_cast<std::size_t>(key)]; }

  // open_hold: the client may hold the key from `start_ns` until its release completes.
  static void open_hold(ClientKeyState& s, Nanos start_ns, Nanos lease_end_ns,
                        std::int64_t ttl_ms) {
    if (s.hold_start_ns < 0) s.hold_start_ns = start_ns;
    s.hold_lease_end_ns = std::max(s.hold_lease_end_ns, lease_end_ns);
    s.hold_ttl_ms = ttl_ms;
  }

  void on_acquire(const Event& event, int key, ClientKeyState& s) {
    const Nanos t = event.time_ns;
    const Nanos invoke_ns = s.acquire_invoke_ns >= 0 ? s.acquire_invoke_ns : t;
    if (event.type != EventType::kInvoke) ++timeline(key).acquires_completed;
    // A reentrant lock's nested acquire (its client inside): granted, one hold more (its lease
    // restarts, as below); refused, the owner was kept out by its own lock. Either way no waiter
    // of the lock's.
    if (history_->read_write && on_read_write_acquire(event, key, s, invoke_ns)) return;
    const bool nested = history_->reentrant && s.enter_ns >= 0;
    // The holds the server counts are the client's only while its key lived on since its last
    // grant: a nested acquire sent after its lease may have run out, or after a server may have
    // forgotten the key, found the lock free (or another's) and made a new grant of one hold.
    const bool unbroken =
        nested && (s.lease_end_lower_ns == kNever || invoke_ns < s.lease_end_lower_ns) &&
        last_key_loss_ns_ < s.ok_sent_ns && !others_entered_since(key, event.client, s);
    bool regranted = false;
    if (nested && event.type == EventType::kOk) {
      // It may have run as late as its reply (a millisecond kept for the server's expiry).
      regranted = (s.lease_end_lower_ns != kNever && t + ms_to_ns(1) >= s.lease_end_lower_ns) ||
                  last_key_loss_ns_ >= s.ok_sent_ns;
      if (event.acquire().attempts > 1 && unbroken) {
        // Answered busy before it got in: refused while its owner held it, until then.
        timeline(key).nested_refusals.push_back(
            NestedRefusal{.client = event.client,
                          .invoke_ns = invoke_ns,
                          .fail_ns = t,
                          .granted = true,
                          .held_since_ns = s.enter_ns,
                          .lease_end_lower_ns = s.acquired ? s.lease_end_lower_ns : kNever,
                          .depth = s.depth});
      }
      if (regranted) {
        // A new grant, not a hold more: the hold before it ended with its key (a window of its
        // own, so a client that got in meanwhile overlaps it), and a new one starts here.
        close_window(event.client, key, s, t, HoldWindow::End::kExit);
        s.regrant_cause = last_key_loss_ns_ >= s.ok_sent_ns ? "lock_lost" : "lease_expired";
        s.regrant_lost_ns =
            last_key_loss_ns_ >= s.ok_sent_ns ? last_key_loss_ns_ : s.lease_end_lower_ns;
      } else {
        ++s.depth;
      }
    }
    if (nested && event.type == EventType::kFail) {
      if (unbroken && (event.error == ErrorKind::kGaveUp || event.error == ErrorKind::kNone)) {
        timeline(key).nested_refusals.push_back(
            NestedRefusal{.client = event.client,
                          .invoke_ns = invoke_ns,
                          .fail_ns = t,
                          .held_since_ns = s.enter_ns,
                          .lease_end_lower_ns = s.acquired ? s.lease_end_lower_ns : kNever,
                          .depth = s.depth});
      }
      s.acquire_invoke_ns = -1;
      return;
    }
    switch (event.type) {
      case EventType::kInvoke:
        s.acquire_invoke_ns = t;
        s.acquire_ttl_ms = event.ttl_ms;
        return;
      case EventType::kOk: {
        ++timeline(key).acquires_ok;
        const std::int64_t ttl_ms = event.ttl_ms >= 0 ? event.ttl_ms : s.acquire_ttl_ms;
        s.acquired = true;
        s.ok_invoke_ns = invoke_ns;
        s.ok_ns = t;
        s.ok_ttl_ms = ttl_ms;
        s.lease_end_ns = lease_end(t, ttl_ms);
        // The SET ran after the successful attempt was sent (recorded as sent_ns; histories
        // without it have only the invoke of the whole acquire, an earlier bound).
        const Nanos sent_ns = event.acquire().sent_ns;
        s.ok_sent_ns = sent_ns >= 0 ? sent_ns : invoke_ns;
        s.lease_end_lower_ns = lease_end(s.ok_sent_ns, ttl_ms);
        if (event.acquire().validity_ms >= 0) {
          // A lock that promises less than its TTL (Redlock's validity time: the TTL less the
          // time the acquire took and the clock drift) is held to its promise, from the reply.
          s.lease_end_ns = s.lease_end_lower_ns = lease_end(t, event.acquire().validity_ms);
        }
        s.renewed_ns = -1;
        s.token = event.token;
        s.granted = event.acquire().granted;
        if (s.naive_start_ns < 0) s.naive_start_ns = invoke_ns;
        // Every attempt before the successful one was answered "busy": the client can hold the
        // key only from when that attempt was sent, and waited before it.
        if (sent_ns > invoke_ns) {
          timeline(key).granted_acquires.push_back(
              GrantedAcquire{.client = event.client,
                             .invoke_ns = invoke_ns,
                             .sent_ns = sent_ns,
                             .ok_ns = t,
                             .attempts = event.acquire().attempts,
                             .read = history_->read_write && event.mode == LockMode::kRead});
        }
        open_hold(s, sent_ns >= 0 ? sent_ns : invoke_ns, s.lease_end_ns, ttl_ms);
        if (regranted) on_enter(event, key, s);  // the new hold a reentrant lock granted afresh
        if (history_->reentrant && !nested) {
          // (A millisecond kept for the server's whole-millisecond expiry.)
          s.count_uncertain = s.unknown_release_lease_end_ns >= 0 &&
                              s.unknown_release_lease_end_ns + ms_to_ns(1) > s.ok_sent_ns;
        }
        break;
      }
      case EventType::kFail:
        // Only an acquire that kept finding the lock held and gave up (or was stopped, or died,
        // while waiting) tells whether the lock was obtainable; one that failed on an error did
        // not wait.
        timeline(key).failed_acquires.push_back(FailedAcquire{
            .client = event.client,
            .invoke_ns = invoke_ns,
            .fail_ns = t,
            .waited = event.error == ErrorKind::kGaveUp || event.error == ErrorKind::kStopped ||
                      event.error == ErrorKind::kCrashed || event.error == ErrorKind::kNone});
        break;
      case EventType::kInfo: {
        // The SET may have run at any point up to the reply that never came.
        open_hold(s, invoke_ns, lease_end(t, s.acquire_ttl_ms), s.acquire_ttl_ms);
        std::vector<MaybeAcquire>& maybes = timeline(key).maybe_acquires;
        s.open_maybes.push_back(static_cast<int>(maybes.size()));
        maybes.push_back(MaybeAcquire{.client = event.client,
                                      .invoke_ns = invoke_ns,
                                      .end_ns = -1,
                                      .error = describe_error(event),
                                      .interrupted = false});
        break;
      }
    }
    s.acquire_invoke_ns = -1;
  }

  void on_enter(const Event& event, int key, ClientKeyState& s) {
    if (s.enter_ns >= 0) close_window(event.client, key, s, event.time_ns, HoldWindow::End::kExit);
    if (!s.acquired) {
      // An enter without a recorded acquire: the window still counts, with what we know.
      s.ok_invoke_ns = s.ok_ns = s.ok_sent_ns = event.time_ns;
      s.ok_ttl_ms = -1;
      s.lease_end_ns = kNever;
      s.lease_end_lower_ns = kNever;
      s.renewed_ns = -1;
    }
    s.enter_ns = event.time_ns;
    s.depth = 1;
    s.freed_early = false;
    KeyState& k = key_states_[static_cast<std::size_t>(key)];
    k.last_enter_client = event.client;
    k.last_enter_ns = event.time_ns;
    k.last_enter_read = history_->read_write && s.hold_read;
    if (k.last_enter_read) {
      k.read_lease_end_lower_ns = std::max(k.read_lease_end_lower_ns, s.lease_end_lower_ns);
    }
    ++k.inside;
  }

  void on_exit(const Event& event, int key, ClientKeyState& s) {
    if (s.enter_ns >= 0) close_window(event.client, key, s, event.time_ns, HoldWindow::End::kExit);
  }

  // on_extend: a renewal (from the client's renewal thread, so it may interleave with the
  // client's other events). Only an ok that extended something (count >= 1) moves the lease end:
  // the server set the lease to ttl_ms at receipt, so ok + ttl_ms is its latest end.
  void on_extend(const Event& event, int key, ClientKeyState& s) {
    if (event.type == EventType::kInvoke) {
      s.extend_ttl_ms = event.ttl_ms;
      s.extend_invoke_ns = event.time_ns;
      return;
    }
    std::int64_t ttl_ms = event.ttl_ms >= 0 ? event.ttl_ms : s.extend_ttl_ms;
    if (ttl_ms < 0) ttl_ms = s.ok_ttl_ms;
    s.extend_ttl_ms = -1;
    const Nanos extend_invoke_ns = s.extend_invoke_ns >= 0 ? s.extend_invoke_ns : event.time_ns;
    s.extend_invoke_ns = -1;
    const bool definite = event.type == EventType::kOk ||
                          (event.type == EventType::kFail && !is_indeterminate(event.error));
    if (!definite) {
      // No definite answer: the extension may have reached the server as late as now, so a key
      // this client may hold can live until now + ttl_ms (its live hold is not cut short there).
      if (s.acquired && ttl_ms >= 0) {
        s.hold_lease_end_ns = std::max(s.hold_lease_end_ns, lease_end(event.time_ns, ttl_ms));
      }
      return;
    }
    if (event.type != EventType::kOk || event.extend().extended < 1 || !s.acquired || ttl_ms < 0) {
      return;
    }
    // Someone else entered since this client's acquire and is inside: the key the extension
    // found may have been theirs. It was (the renewal is stolen) only if their grant came after
    // this client's own and before the extension took effect: it was answered before the
    // extension was sent, or this client's own key had certainly expired by then (a key was
    // extended, and it was not this client's). A renewal sent before their grant and answered
    // after it may have run first, on this client's own key (lua_owner_renew seed 2478 with a
    // clock jump): an owner-checked renewal that returned 1 did.
    // On one server, a fault since the other holder entered that may have made the server forget
    // its key leaves the key the extension found in doubt: it may be this client's own, brought
    // back (explore seed 26571 of lua_owner_renew on a Redis Cluster: B's key reached r1, A's did
    // not, CLUSTER FAILOVER TAKEOVER made r1 the primary and B renewed its own key there).
    const KeyState& k = key_states_[static_cast<std::size_t>(key)];
    const int others_inside = k.inside - (s.enter_ns >= 0 ? 1 : 0);
    // From their grant's send on: a fault while its reply was on its way counts (seed 350490: the
    // takeover came as A's SET on p1 was being answered).
    bool theirs_forgotten = false;
    const std::vector<ClientKeyState>& by_client = states_[static_cast<std::size_t>(key)];
    if (s.granted.of == 0 && last_key_loss_ns_ >= 0 && k.last_enter_client >= 0 &&
        static_cast<std::size_t>(k.last_enter_client) < by_client.size()) {
      const ClientKeyState& theirs = by_client[static_cast<std::size_t>(k.last_enter_client)];
      theirs_forgotten = last_key_loss_ns_ > std::min(theirs.ok_sent_ns, k.last_enter_ns);
    }
    if (others_inside > 0 && k.last_enter_client != event.client && k.last_enter_ns > s.ok_ns &&
        !theirs_forgotten && took_over_before(key, k.last_enter_client, s, extend_invoke_ns)) {
      timeline(key).stolen_extends.push_back(StolenExtend{.client = event.client,
                                                          .holder = k.last_enter_client,
                                                          .invoke_ns = extend_invoke_ns,
                                                          .ok_ns = event.time_ns,
                                                          .holder_since_ns = k.last_enter_ns});
      return;
    }
    s.lease_end_ns = lease_end(event.time_ns, ttl_ms);
    s.lease_end_lower_ns = lease_end(extend_invoke_ns, ttl_ms);
    s.renewed_ns = event.time_ns;
    s.hold_lease_end_ns = std::max(s.hold_lease_end_ns, s.lease_end_ns);
  }

  // took_over_before: `holder`'s grant on `key` came certainly after `s`'s own grant and before
  // `at_ns` (answered by then), or `s`'s own key had certainly expired by `at_ns` (its latest
  // end: the TTL from the acquire's reply, not a shorter validity; every renewal, even one with
  // no answer).
  bool took_over_before(int key, int holder, const ClientKeyState& s, Nanos at_ns) {
    // The holder entered, so its state exists (looked up without state(), which may grow the
    // vector `s` lives in).
    const ClientKeyState& h =
        states_[static_cast<std::size_t>(key)].at(static_cast<std::size_t>(holder));
    // Certainly after: its successful attempt was sent once `s`'s grant was answered. Grants made
    // at once (both attempts under way together, around a clock jump) leave the order to the
    // replies (lua_owner_renew seed 38638 with clock_jump: the other's renewal found no key).
    if (!granted_before(s.ok_ns, h.ok_sent_ns)) return false;
    if (h.ok_ns <= at_ns) return true;
    const Nanos own_key_end_ns =
        std::max({lease_end(s.ok_ns, s.ok_ttl_ms), s.lease_end_ns, s.hold_lease_end_ns});
    return own_key_end_ns <= at_ns;
  }

  // shared: `s` is a read-write lock's read hold.
  bool shared(const ClientKeyState& s) const { return history_->read_write && s.hold_read; }
  // lease_lower: the earliest `s`'s key can have expired: its own lease, or for a read hold the
  // key's, which every read grant resets.
  Nanos lease_lower(int key, const ClientKeyState& s) const {
    if (!shared(s)) return s.lease_end_lower_ns;
    return std::max(s.lease_end_lower_ns,
                    key_states_[static_cast<std::size_t>(key)].read_lease_end_lower_ns);
  }

  // others_entered_since: another client entered `key` after `s`'s last grant.
  bool others_entered_since(int key, int client, const ClientKeyState& s) const {
    const KeyState& k = key_states_[static_cast<std::size_t>(key)];
    return k.last_enter_client >= 0 && k.last_enter_client != client && k.last_enter_ns > s.ok_ns;
  }

  // on_read_write_acquire: what only a read-write lock's acquire tells; true when the event is
  // taken care of (a holder's acquire: a second hold or an upgrade).
  bool on_read_write_acquire(const Event& event, int key, ClientKeyState& s, Nanos invoke_ns) {
    const Nanos t = event.time_ns;
    if (event.type == EventType::kInvoke) return false;
    if (s.enter_ns < 0) {
      // Not a holder's: a write acquire is a writer that may have waited for readers.
      if (event.mode != LockMode::kRead &&
          (event.type == EventType::kOk || event.type == EventType::kFail)) {
        const Nanos queued = queued_ns(event);
        timeline(key).write_waits.push_back(WriteWait{.client = event.client,
                                                      .invoke_ns = invoke_ns,
                                                      .asked_ns = queued >= 0 ? queued : t,
                                                      .end_ns = t,
                                                      .granted = event.type == EventType::kOk});
      }
      if (event.type == EventType::kOk) s.hold_read = event.mode == LockMode::kRead;
      return false;
    }
    if (event.type == EventType::kOk && event.mode != LockMode::kRead && s.hold_read) {
      // An upgrade granted: the read hold ends here and an exclusive one starts, a window of its
      // own with the write grant's lease. (Made exclusive from the read hold's start, the
      // readers who shared it would overlap a writer: a false racy_acquire of rw_lock_fair.)
      ++timeline(key).acquires_ok;
      const int depth = s.depth;
      const ClientKeyState::ReadHold read{.ok_invoke_ns = s.ok_invoke_ns,
                                          .ok_ns = s.ok_ns,
                                          .ok_sent_ns = s.ok_sent_ns,
                                          .ok_ttl_ms = s.ok_ttl_ms,
                                          .lease_end_ns = s.lease_end_ns,
                                          .lease_end_lower_ns = s.lease_end_lower_ns,
                                          .renewed_ns = s.renewed_ns,
                                          .token = s.token};
      close_window(event.client, key, s, t, HoldWindow::End::kExit);
      s.before_upgrade = read;
      s.hold_read = false;
      const std::int64_t ttl_ms = event.ttl_ms >= 0 ? event.ttl_ms : s.acquire_ttl_ms;
      const Nanos sent_ns = event.acquire().sent_ns;
      s.ok_invoke_ns = invoke_ns;
      s.ok_ns = t;
      s.ok_ttl_ms = ttl_ms;
      s.ok_sent_ns = sent_ns >= 0 ? sent_ns : invoke_ns;
      s.lease_end_ns = lease_end(t, ttl_ms);
      s.lease_end_lower_ns = lease_end(s.ok_sent_ns, ttl_ms);
      s.renewed_ns = -1;
      s.token = event.token;
      open_hold(s, s.ok_sent_ns, s.lease_end_ns, ttl_ms);
      on_enter(event, key, s);
      s.depth = depth + 1;  // its read hold is still to be released, as a second hold is
      s.upgrade_depth = s.depth;
    } else if (event.type == EventType::kOk) {
      // A second hold inside: one hold more; a write one makes the hold exclusive.
      ++timeline(key).acquires_ok;
      ++s.depth;
      if (event.mode != LockMode::kRead) s.hold_read = false;
    } else if (event.type == EventType::kFail && event.mode != LockMode::kRead && s.hold_read &&
               (event.error == ErrorKind::kGaveUp || event.error == ErrorKind::kNone)) {
      timeline(key).upgrade_refusals.push_back(UpgradeRefusal{.client = event.client,
                                                              .invoke_ns = invoke_ns,
                                                              .fail_ns = t,
                                                              .held_since_ns = s.enter_ns});
    }
    s.acquire_invoke_ns = -1;
    return true;
  }

  // leave_upgrade: the client begins to release the write hold it upgraded to: it left its
  // exclusive hold then, and is inside the read hold it was granted in again (with that hold's
  // lease, which the write grant, made only once every read hold was gone, outlived): a reader
  // may share it, and a writer overlapping it overlaps an expired lease.
  void leave_upgrade(const Event& event, int key, ClientKeyState& s) {
    const int depth = s.depth;
    const ClientKeyState::ReadHold read = s.before_upgrade;
    close_window(event.client, key, s, event.time_ns, HoldWindow::End::kExit);
    s.hold_read = true;
    s.ok_invoke_ns = read.ok_invoke_ns;
    s.ok_ns = read.ok_ns;
    s.ok_sent_ns = read.ok_sent_ns;
    s.ok_ttl_ms = read.ok_ttl_ms;
    s.lease_end_ns = read.lease_end_ns;
    s.lease_end_lower_ns = read.lease_end_lower_ns;
    s.renewed_ns = read.renewed_ns;
    s.token = read.token;
    on_enter(event, key, s);
    s.depth = depth;  // the write hold's release, under way, takes one away
  }

  // on_inner_release: a reentrant lock's release while its client is still inside: one hold of
  // several undone, the hold goes on. One that deleted the key freed the lock early.
  void on_inner_release(const Event& event, int key, ClientKeyState& s) {
    if (event.type == EventType::kInvoke) {
      s.inner_invoke_ns = event.time_ns;
      if (history_->read_write && s.upgrade_depth > 0 && s.depth == s.upgrade_depth) {
        leave_upgrade(event, key, s);
      }
      return;
    }
    if (!history_->reentrant) {
      // A read-write lock's second hold released: the hold goes on.
      s.inner_invoke_ns = -1;
      s.depth = std::max(1, s.depth - 1);
      return;
    }
    const Nanos invoke_ns = s.inner_invoke_ns >= 0 ? s.inner_invoke_ns : event.time_ns;
    s.inner_invoke_ns = -1;
    // Freed early only if the server still counted this hold's holds (the key lived on since the
    // last grant, and nobody else got in): else the holds it counted were fewer.
    const bool unbroken = (s.lease_end_lower_ns == kNever || invoke_ns < s.lease_end_lower_ns) &&
                          last_key_loss_ns_ < s.ok_sent_ns &&
                          !others_entered_since(key, event.client, s);
    if (event.type == EventType::kOk && event.release().deleted >= 1) {
      // Early if the server counted more than this hold; else a hold granted afresh (regrant) was
      // its only one, and its release freed the lock as it should.
      timeline(key).inner_frees.push_back(EarlyFree{.client = event.client,
                                                    .invoke_ns = invoke_ns,
                                                    .ok_ns = event.time_ns,
                                                    .depth = s.depth,
                                                    .early = s.depth > 1 && unbroken});
      s.freed_early = true;
    }
    if (event.type == EventType::kOk && event.release().deleted == 0 && s.acquired) {
      // A reentrant lock's release that leaves holds resets the lease (its contract, as
      // Redisson's unlock does): the key may live until a TTL from the reply, and certainly
      // until a TTL from the invoke if the release ran before the lease could have ended.
      s.lease_end_ns = std::max(s.lease_end_ns, lease_end(event.time_ns, s.ok_ttl_ms));
      if (s.lease_end_lower_ns != kNever && event.time_ns < s.lease_end_lower_ns) {
        s.lease_end_lower_ns = std::max(s.lease_end_lower_ns, lease_end(invoke_ns, s.ok_ttl_ms));
      }
      s.hold_lease_end_ns = std::max(s.hold_lease_end_ns, s.lease_end_ns);
    }
    s.depth = std::max(1, s.depth - 1);
  }

  void on_release(const Event& event, int key, ClientKeyState& s) {
    const Nanos t = event.time_ns;
    if ((history_->reentrant || history_->read_write) && s.enter_ns >= 0) {
      on_inner_release(event, key, s);
      return;
    }
    if (event.type == EventType::kInvoke) {
      const KeyState& k = key_states_[static_cast<std::size_t>(key)];
      s.releasing = true;
      s.release_invoke_ns = t;
      s.release_lease_ran_out = s.acquired && lease_lower(key, s) <= t;
      // A read hold shares the lock with the readers who came after it: only a writer took over.
      const bool someone_else_entered =
          k.last_enter_client >= 0 && k.last_enter_client != event.client &&
          (!s.acquired || k.last_enter_ns > s.ok_ns) && !(shared(s) && k.last_enter_read);
      s.release_newer_holder = someone_else_entered ? k.last_enter_client : -1;
      snapshot_release(key, s);
      return;
    }
    if (!s.releasing) {
      // A completion without its invoke: judge it at the completion.
      s.release_invoke_ns = t;
      s.release_lease_ran_out = s.acquired && lease_lower(key, s) <= t;
      s.release_newer_holder = -1;
      snapshot_release(key, s);
    }
    HoldEnd how = HoldEnd::kReleaseDidNotDelete;
    Nanos hold_end_ns = t;
    const std::int32_t deleted = event.type == EventType::kOk ? event.release().deleted : -1;
    // The release surely reached the server inside the lease only if it was answered before the
    // lease's earliest end (from the acquire's send), a millisecond kept for the server's
    // whole-millisecond expiry: a release that came later may have found the key expired.
    const bool inside_lease =
        s.release_lease_end_lower_ns != kNever && t + ms_to_ns(1) < s.release_lease_end_lower_ns;
    // (A reentrant hold whose inner release deleted the key has nothing left to delete: its lock
    // was freed early, not left idle. A read-write lock's read hold frees the lock only with the
    // last reader, whose release may still be on its way.)
    if (event.type == EventType::kOk && deleted == 0 && s.acquired && inside_lease &&
        !s.release_others_inside && !s.freed_early && !s.count_uncertain &&
        !(history_->read_write && s.hold_read)) {
      // It deleted nothing while its own lease ran and nobody else was inside: the key is still
      // held (by a token nobody will present) until the lease runs out.
      how = HoldEnd::kIdle;
      hold_end_ns = s.release_lease_end_ns;
      timeline(key).idle_releases.push_back(IdleRelease{.client = event.client,
                                                        .invoke_ns = s.release_invoke_ns,
                                                        .ok_ns = t,
                                                        .lease_end_ns = s.release_lease_end_ns});
    } else if (event.type == EventType::kOk && deleted == 0 && s.count_uncertain) {
      // A hold the server may have counted with an older one: the key may live on, its lease
      // reset by this release, for the client's next hold too.
      s.unknown_release_lease_end_ns =
          std::max(s.unknown_release_lease_end_ns, lease_end(t, s.ok_ttl_ms));
    } else if (event.type == EventType::kOk && deleted >= 1) {
      how = HoldEnd::kReleased;
      timeline(key).deleting_releases.push_back(
          DeletingRelease{.client = event.client, .invoke_ns = s.release_invoke_ns, .ok_ns = t});
      // The lease is also judged at the completion: a release that checks ownership and then
      // deletes in a second command (GET then DEL) may delete after its lease ran out. Whether
      // someone else entered is judged at the invoke only, because in a correct hand-off the
      // next holder routinely enters before the releaser has read its reply.
      // Judged by the earliest the lease can have ended: a release that deleted a key after that
      // may have deleted someone else's (it only becomes a finding with a victim inside).
      const bool ran_out_by_completion = s.acquired && lease_lower(key, s) <= t;
      if (s.release_lease_ran_out || ran_out_by_completion || s.release_newer_holder >= 0) {
        ForeignDelete release = release_of(event.client, s, t);
        release.lease_ran_out = s.release_lease_ran_out || ran_out_by_completion;
        release.deleted = deleted;
        timeline(key).foreign_deletes.push_back(release);
      }
    } else if (event.type == EventType::kInfo ||
               (event.type == EventType::kFail && is_indeterminate(event.error))) {
      how = HoldEnd::kReleaseUnknown;
      if (s.acquired) {
        s.unknown_release_lease_end_ns = std::max(s.unknown_release_lease_end_ns, s.lease_end_ns);
      }
      timeline(key).unanswered_releases.push_back(release_of(event.client, s, kNever));
      // Deleted or not: the key may still be there until every lease behind it has run out (a
      // lost request never deleted it), and is gone then (no extension in flight can have set a
      // new one). So the hold lasts until the lease end, however early or late the client gave
      // up on the reply: a waiter held back until then was not stuck, and one who found the lock
      // free after it and gave up was.
      if (s.acquired && s.extend_invoke_ns < 0 && s.hold_lease_end_ns >= 0 &&
          s.hold_lease_end_ns != kNever) {
        hold_end_ns = s.hold_lease_end_ns;
      }
    }
    end_hold(event.client, key, s, hold_end_ns, t, how);
    end_naive(key, event.client, s, t);
    for (int maybe : s.open_maybes) {
      timeline(key).maybe_acquires[static_cast<std::size_t>(maybe)].end_ns = t;
    }
    s.open_maybes.clear();
    s.acquired = false;
    s.releasing = false;
  }

  // snapshot_release: what a release's completion is judged by, as it stood at its invoke.
  void snapshot_release(int key, ClientKeyState& s) {
    const int inside = key_states_[static_cast<std::size_t>(key)].inside;
    s.release_lease_end_ns = s.acquired ? s.lease_end_ns : kNever;
    s.release_lease_end_lower_ns = s.acquired ? s.lease_end_lower_ns : kNever;
    s.release_others_inside = inside - (s.enter_ns >= 0 ? 1 : 0) > 0;
  }

  void close_window(int client, int key, ClientKeyState& s, Nanos end_ns, HoldWindow::End end) {
    // Faults are few and arrive in time order: the first one at or after the enter decides.
    const std::vector<Nanos>& faults = fault_times_[static_cast<std::size_t>(client)];
    const auto fault = std::lower_bound(faults.begin(), faults.end(), s.enter_ns);
    timeline(key).windows.push_back(WindowRecord{
        .client = client,
        .acquire_invoke_ns = s.ok_invoke_ns,
        .acquire_ok_ns = s.ok_ns,
        .acquire_sent_ns = s.ok_sent_ns,
        .start_ns = s.enter_ns,
        .end_ns = end_ns,
        .ttl_ms = s.ok_ttl_ms,
        .lease_end_ns = s.lease_end_ns,
        .lease_end_lower_ns = s.lease_end_lower_ns,
        .renewed_ns = s.renewed_ns,
        .end = end,
        .faulted = fault != faults.end() && *fault <= end_ns,
        .token = s.token,
        .regrant_cause = s.regrant_cause,
        .regrant_lost_ns = s.regrant_lost_ns,
        .read = history_->read_write && s.hold_read,
    });
    s.regrant_cause = "";
    s.regrant_lost_ns = -1;
    s.enter_ns = -1;
    s.depth = 0;
    s.upgrade_depth = 0;
    --key_states_[static_cast<std::size_t>(key)].inside;
  }

  void end_naive(int key, int client, ClientKeyState& s, Nanos end_ns) {
    if (s.naive_start_ns < 0) return;
    timeline(key).naive_windows.push_back(
        NaiveWindow{.client = client, .start_ns = s.naive_start_ns, .end_ns = end_ns});
    s.naive_start_ns = -1;
  }

  void fault(int client, Nanos t) {
    const auto c = static_cast<std::size_t>(client);
    if (fault_times_.size() <= c) {
      fault_times_.resize(c + 1);
      client_keys_.resize(c + 1);
    }
    fault_times_[c].push_back(t);
  }

  void end_hold(int client, int key, ClientKeyState& s, Nanos end_ns, Nanos completed_ns,
                HoldEnd how) {
    if (s.hold_start_ns < 0) return;
    timeline(key).possible_holds.push_back(PossibleHold{
        .client = client,
        .start_ns = s.hold_start_ns,
        .end_ns = end_ns,
        .how = how,
        .completed_ns = completed_ns,
        .acquired = s.acquired,
        .ttl_ms = s.hold_ttl_ms,
    });
    s.hold_start_ns = -1;
    s.hold_lease_end_ns = -1;
    s.hold_ttl_ms = -1;
  }

  // crash: the client stopped. Its windows end here; a key it may hold stays held on the server
  // until its lease runs out (forever without TTL), but no live client holds it any more.
  void crash(int client, Nanos t) {
    if (static_cast<std::size_t>(client) >= client_keys_.size()) return;
    for (int key : client_keys_[static_cast<std::size_t>(client)]) {
      ClientKeyState& s = states_[static_cast<std::size_t>(key)][static_cast<std::size_t>(client)];
      KeyTimeline& line = timeline(key);
      if (s.enter_ns >= 0) {
        line.crashes_inside.push_back(CrashInside{.client = client,
                                                  .crash_ns = t,
                                                  .ttl_ms = s.ok_ttl_ms,
                                                  .lease_end_ns = s.lease_end_ns,
                                                  .renewed_ns = s.renewed_ns});
        close_window(client, key, s, t, HoldWindow::End::kCrash);
      }
      if (s.acquire_invoke_ns >= 0) {
        // The request may still have reached the server: an indeterminate acquire.
        open_hold(s, s.acquire_invoke_ns, lease_end(t, s.acquire_ttl_ms), s.acquire_ttl_ms);
        s.open_maybes.push_back(static_cast<int>(line.maybe_acquires.size()));
        line.maybe_acquires.push_back(MaybeAcquire{
            .client = client,
            .invoke_ns = s.acquire_invoke_ns,
            .end_ns = -1,
            .error = "",
            .interrupted = true,
        });
        s.acquire_invoke_ns = -1;
      }
      // A crash does not delete the key: what the client may hold, it holds until the lease ends.
      const Nanos server_hold_end_ns = std::max(t, s.hold_lease_end_ns);
      for (int maybe : s.open_maybes) {
        line.maybe_acquires[static_cast<std::size_t>(maybe)].end_ns = server_hold_end_ns;
      }
      s.open_maybes.clear();
      const Nanos live_hold_end_ns = s.hold_lease_end_ns == kNever ? t : server_hold_end_ns;
      end_hold(client, key, s, live_hold_end_ns, t, HoldEnd::kCrash);
      end_naive(key, client, s, t);
      s.acquired = false;
      s.releasing = false;
    }
  }

  void finish() {
    const Nanos last_ns = timelines_.last_ns;
    for (std::size_t key = 0; key < states_.size(); ++key) {
      KeyTimeline& line = timelines_.keys[key];
      for (std::size_t client = 0; client < states_[key].size(); ++client) {
        ClientKeyState& s = states_[key][client];
        const int c = static_cast<int>(client);
        const int k = static_cast<int>(key);
        if (s.enter_ns >= 0) close_window(c, k, s, last_ns, HoldWindow::End::kEndOfHistory);
        if (s.acquire_invoke_ns >= 0) {
          open_hold(s, s.acquire_invoke_ns, kNever, s.acquire_ttl_ms);
          s.open_maybes.push_back(static_cast<int>(line.maybe_acquires.size()));
          line.maybe_acquires.push_back(MaybeAcquire{.client = c,
                                                     .invoke_ns = s.acquire_invoke_ns,
                                                     .end_ns = last_ns,
                                                     .error = "",
                                                     .interrupted = true});
        }
        for (int maybe : s.open_maybes) {
          line.maybe_acquires[static_cast<std::size_t>(maybe)].end_ns = last_ns;
        }
        end_hold(c, k, s, last_ns, last_ns, HoldEnd::kEndOfHistory);
        end_naive(k, c, s, last_ns);
      }
      for (MaybeAcquire& maybe : line.maybe_acquires)
        maybe.end_ns = std::min(maybe.end_ns, last_ns);
    }
  }

  // describe_error: "timeout: Resource temporarily unavailable", for explanations.
  std::string describe_error(const Event& event) const {
    std::string text(to_string(event.error));
    const std::string_view message = history_->message(event);
    if (!message.empty()) text += ": " + std::string(message);
    return text;
  }

  const History* history_ = nullptr;
  Timelines timelines_;
  std::vector<int> key_indexes_;  // by history KeyId: the timeline's index, or -1
  std::vector<KeyState> key_states_;
  std::vector<std::vector<ClientKeyState>> states_;  // [key][client]
  std::vector<std::vector<int>> client_keys_;        // [client]: keys the client touched
  std::vector<std::vector<Nanos>> fault_times_;      // [client]: its fault events, in time order
  // last_key_loss_ns_: the latest fault so far that can make a server forget a key (forgets_key).
  Nanos last_key_loss_ns_ = -1;
};

}  // namespace

Timelines build_timelines(const History& history) { return TimelineBuilder().build(history); }

HoldWindow to_hold_window(const WindowRecord& record, KeyId key) {
  return HoldWindow{
      .client = record.client,
      .key = key,
      .token = record.token,
      .acquire_invoke_ns = record.acquire_invoke_ns,
      .start_ns = record.start_ns,
      .end_ns = record.end_ns,
      .ttl_ms = record.ttl_ms,
      .end = record.end,
      .lease_end_ns = record.lease_end_ns == kNever ? -1 : record.lease_end_ns,
      .faulted = record.faulted,
  };
}

}  // namespace locksim::checker_internal
