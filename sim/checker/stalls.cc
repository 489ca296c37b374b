// Unplanned stalls: a call that timed out with no fault planned, an acquire answered only after the
// lease it set could have run out, a waiter that stopped trying while the others went on, and a
// renewing holder that lost
// its lease although its renewals were on a schedule that keeps it, and no fault was planned
// anywhere near: a renewal that fell due in time was answered only after the lease could have run
// out. That is the machine (a server, the loopback or locksim itself descheduled for longer than
// the TTL), not the lock: a correct lock renewed by a watchdog every 20 ms with a 200 ms TTL loses
// its key when the server stops answering for 300 ms, as a real deployment would. The finding says
// so; it supports no verdict, and `locksim run` runs an outcome that differs from its expectation
// and has one again (run_command.cc).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "sim/checker/checkers.h"
#include "sim/checker/explain.h"

namespace locksim::checker_internal {
namespace {

// Lease: what a client knows of its current lease on one key.
struct Lease {
  bool held = false;
  Nanos sent_ns = 0;   // when the call that set it was sent: the lease can end ttl after
  Nanos reply_ns = 0;  // when that call was answered: the watchdog's next renewal is due a
                       // period later
  std::int64_t ttl_ms = -1;
  Nanos extend_invoke_ns = -1;  // an extend under way
  std::int64_t extend_ttl_ms = -1;
  std::int64_t acquire_ttl_ms = -1;
  bool renewed = false;  // a renewal extended it: the holder renews
};

bool fault_between(const std::vector<FaultWindow>& faults, Nanos from_ns, Nanos to_ns) {
  return std::any_of(faults.begin(), faults.end(), [&](const FaultWindow& f) {
    return f.from_ns <= to_ns && f.to_ns >= from_ns;
  });
}

}  // namespace

// stall: an unplanned_stall finding of `cause` for client event `e`'s key and client, over
// [from_ns, to_ns], in `words`.
Finding stall(const History& history, const Event& e, std::string cause, Nanos from_ns, Nanos to_ns,
              std::string words) {
  return Finding{
      .kind = FindingKind::kUnplannedStall,
      .cause = std::move(cause),
      .key = history.keys.at(e.key),
      .clients = {e.client},
      .from_ns = from_ns,
      .to_ns = to_ns,
      .amount = 0,
      .record = "",
      .words = std::move(words),
  };
}

// timeouts: a call that got no reply within the client's reply timeout on a loopback with no
// fault planned around it: the server or locksim did not run for that long.
void check_timeouts(const History& history, const std::vector<FaultWindow>& faults,
                    CheckResult& result) {
  std::vector<Nanos> invoked(history.clients.size(), -1);
  // Each client's previous completed call: a fault armed since (a lost reply is an instant,
  // recorded when armed, before the call it hits) may explain the timeout.
  std::vector<Nanos> previous_done(history.clients.size(), 0);
  for (const Event& e : history.events) {
    if (e.client < 0 || static_cast<std::size_t>(e.client) >= invoked.size()) continue;
    if (e.f != Op::kAcquire && e.f != Op::kRelease && e.f != Op::kExtend) continue;
    const auto c = static_cast<std::size_t>(e.client);
    Nanos& invoke_ns = invoked[c];
    if (e.type == EventType::kInvoke) {
      invoke_ns = e.time_ns;
      continue;
    }
    const Nanos since_ns = previous_done[c];
    previous_done[c] = e.time_ns;
    if (e.error != ErrorKind::kTimeout || invoke_ns < 0) continue;
    const bool explained = std::any_of(faults.begin(), faults.end(), [&](const FaultWindow& f) {
      return (f.client == e.client || f.server != 0) && f.from_ns <= e.time_ns &&
             f.to_ns >= since_ns;
    });
    if (explained || fault_between(faults, invoke_ns, e.time_ns)) continue;
    const std::string who = client_name(history, e.client);
    const std::string key = history.keys.at(e.key);
    const std::string op(to_string(e.f));
    result.findings.push_back(
        stall(history, e, "reply_timeout", invoke_ns, e.time_ns,
              who + "'s " + op + " of " + key + " at " + format_ms(invoke_ns) +
                  " got no reply until it timed out at " + format_ms(e.time_ns) +
                  ", with no fault planned: the machine stalled (the server or locksim), not "
                  "the lock."));
  }
}

// late_acquires: an acquire granted by an attempt whose reply came only after the lease it set
// could have run out (sent + TTL), on a loopback with no fault planned in between: the server was
// stopped or descheduled between running the SET and answering it, or locksim between sending
// and reading. The holder then works under a lease that may be over before it starts.
void check_late_acquires(const History& history, const std::vector<FaultWindow>& faults,
                         CheckResult& result) {
  for (const Event& e : history.events) {
    if (e.f != Op::kAcquire || e.type != EventType::kOk || e.client < 0) continue;
    // Only where the granting attempt's send is known (a library that retries inside one call
    // and does not say when its last attempt left is not judged).
    const Nanos sent_ns = e.acquire().sent_ns;
    if (sent_ns < 0 || e.ttl_ms <= 0) continue;
    const Nanos lease_end_ns = sent_ns + ms_to_ns(e.ttl_ms);
    if (e.time_ns <= lease_end_ns || fault_between(faults, sent_ns, e.time_ns)) continue;
    const std::string who = client_name(history, e.client);
    const std::string key = history.keys.at(e.key);
    result.findings.push_back(
        stall(history, e, "late_acquire", sent_ns, e.time_ns,
              who + "'s acquire of " + key + ", sent at " + format_ms(sent_ns) +
                  ", was answered only at " + format_ms(e.time_ns) +
                  ", after the lease it set could have run out (" + format_ms(lease_end_ns) + ": " +
                  std::to_string(e.ttl_ms) +
                  " ms TTL); no fault was planned there, so the machine stalled (the server, the "
                  "loopback or locksim), not the lock: what followed says nothing about it."));
  }
}

// AcquireWait: one acquire's wait for the lock: from its invoke to the send of the attempt that
// got it (or to its end), and the attempts it made meanwhile.
struct AcquireWait {
  int client = -1;
  KeyId key = 0;
  const Event* end = nullptr;  // its completion
  Nanos from_ns = 0;
  Nanos to_ns = 0;
  int attempts = 0;
  Nanos period_ns() const { return (to_ns - from_ns) / std::max(1, attempts); }
};

// stalled_waiters: a waiter that made far fewer attempts than the other clients waiting on the
// same key at the same time, with the same wait strategy, no fault planned: its thread (or its
// process) did not run for most of its wait, as a loaded machine deschedules one. A lock that
// lets only the first waiter in (a fair queue) is then free and taken by nobody until it runs
// again; that stretch is the machine's, not the lock's. The waiter's attempts are its own count
// (the acquire's completion says how many); the others' median spacing is the yardstick, so a
// library's own pace is compared with itself.
void check_stalled_waiters(const History& history, const std::vector<FaultWindow>& faults,
                           const CheckOptions& options, CheckResult& result) {
  std::vector<AcquireWait> waits;
  std::vector<Nanos> invoked(history.clients.size(), -1);
  for (const Event& e : history.events) {
    if (e.f != Op::kAcquire || e.client < 0 ||
        static_cast<std::size_t>(e.client) >= invoked.size()) {
      continue;
    }
    Nanos& invoke_ns = invoked[static_cast<std::size_t>(e.client)];
    if (e.type == EventType::kInvoke) {
      invoke_ns = e.time_ns;
      continue;
    }
    const int attempts = e.acquire().attempts;
    const Nanos sent_ns = e.type == EventType::kOk && e.acquire().sent_ns >= 0
                              ? e.acquire().sent_ns
                              : e.time_ns;
    // Kept: a wait long enough to be judged, or one with the pace of several attempts to judge
    // others by (a run's other acquires cost no memory here).
    if (invoke_ns >= 0 && attempts >= 1 && sent_ns > invoke_ns &&
        (attempts >= 2 || sent_ns - invoke_ns >= options.stuck_threshold_ns)) {
      waits.push_back(AcquireWait{e.client, e.key, &e, invoke_ns, sent_ns, attempts});
    }
    invoke_ns = -1;
  }
  constexpr Nanos kSparser = 20;  // a waiter this many times sparser than the others stalled
  for (const AcquireWait& wait : waits) {
    const Nanos waited_ns = wait.to_ns - wait.from_ns;
    if (waited_ns < options.stuck_threshold_ns || fault_between(faults, wait.from_ns, wait.to_ns)) {
      continue;
    }
    // The others' spacing: every other client's wait on the key that overlaps half of this one.
    std::vector<Nanos> periods;
    for (const AcquireWait& other : waits) {
      if (other.client == wait.client || other.key != wait.key || other.attempts < 2) continue;
      const Nanos overlap_ns =
          std::min(other.to_ns, wait.to_ns) - std::max(other.from_ns, wait.from_ns);
      if (overlap_ns * 2 >= waited_ns) periods.push_back(other.period_ns());
    }
    if (periods.size() < 2) continue;  // no yardstick
    std::nth_element(periods.begin(), periods.begin() + static_cast<std::ptrdiff_t>(periods.size() / 2),
                     periods.end());
    const Nanos usual_ns = std::max<Nanos>(periods[periods.size() / 2], 1);
    // What it did not run: its wait less its attempts at the others' pace.
    const Nanos idle_ns = waited_ns - wait.attempts * usual_ns;
    if (wait.period_ns() < kSparser * usual_ns || idle_ns < options.stuck_threshold_ns) continue;
    const std::string who = client_name(history, wait.client);
    const std::string key = history.keys.at(wait.key);
    result.findings.push_back(stall(
        history, *wait.end, "stalled_waiter", wait.from_ns, wait.to_ns,
        who + "'s acquire of " + key + " waited " + format_ms(waited_ns) + " from " +
            format_ms(wait.from_ns) + " and made " + std::to_string(wait.attempts) +
            (wait.attempts == 1 ? " attempt" : " attempts") + ", one every " +
            format_ms(wait.period_ns()) + ", while the other waiters tried every " +
            format_ms(usual_ns) + ", with no fault planned: " + who +
            " did not run for about " + format_ms(idle_ns) +
            " of it (the machine descheduled locksim), not the lock; a lock that lets only its "
            "first waiter in stays free until that waiter runs again."));
  }
}

void check_stalls(const History& history, const CheckOptions& options, CheckResult& result) {
  const std::vector<FaultWindow> faults = fault_windows(history);
  check_timeouts(history, faults, result);
  check_late_acquires(history, faults, result);
  check_stalled_waiters(history, faults, options, result);
  if (options.renew_period_ms <= 0) return;
  const Nanos period_ns = ms_to_ns(options.renew_period_ms);
  // By client, then by key id.
  std::vector<std::vector<Lease>> leases(history.clients.size());
  const auto lease_of = [&](const Event& e) -> Lease& {
    std::vector<Lease>& by_key = leases[static_cast<std::size_t>(e.client)];
    if (by_key.size() <= e.key) by_key.resize(e.key + 1);
    return by_key[e.key];
  };
  for (const Event& e : history.events) {
    if (e.client < 0 || static_cast<std::size_t>(e.client) >= leases.size()) continue;
    if (e.f == Op::kCrash) {
      for (Lease& lease : leases[static_cast<std::size_t>(e.client)]) lease = Lease{};
      continue;
    }
    if (e.f != Op::kAcquire && e.f != Op::kExtend && e.f != Op::kRelease) continue;
    Lease& lease = lease_of(e);
    if (e.f == Op::kRelease) {
      if (e.type == EventType::kInvoke) {
        // A renewing holder that left after its lease could have run out with no renewal sent
        // since the last one (none under way), on a schedule that keeps the lease and with no
        // fault planned: its renewal thread did not run (a renewal never sent is as late as one
        // sent late).
        const Nanos lease_end_ns = lease.sent_ns + ms_to_ns(lease.ttl_ms);
        const Nanos due_ns = lease.reply_ns + period_ns;
        if (lease.held && lease.renewed && lease.extend_invoke_ns < 0 && lease.ttl_ms > 0 &&
            due_ns + (lease.reply_ns - lease.sent_ns) + ms_to_ns(lease.ttl_ms) / 10 <
                lease_end_ns &&
            e.time_ns > lease_end_ns && !fault_between(faults, lease.sent_ns, e.time_ns)) {
          result.findings.push_back(
              stall(history, e, "late_send", lease.reply_ns, e.time_ns,
                    client_name(history, e.client) + "'s renewal of " + history.keys.at(e.key) +
                        ", due at " + format_ms(due_ns) + ", was never sent before it left at " +
                        format_ms(e.time_ns) + ", after its lease could have run out (" +
                        format_ms(lease_end_ns) + ": " + std::to_string(lease.ttl_ms) +
                        " ms TTL, a renewal every " + std::to_string(options.renew_period_ms) +
                        " ms); no fault was planned there, so the machine stalled (locksim's own "
                        "process), not the lock: what followed says nothing about it."));
        }
        lease = Lease{};
      }
      continue;
    }
    if (e.f == Op::kAcquire) {
      if (e.type == EventType::kInvoke) {
        lease = Lease{};
        lease.acquire_ttl_ms = e.ttl_ms;
      } else if (e.type == EventType::kOk) {
        lease.held = true;
        lease.sent_ns = e.acquire().sent_ns >= 0 ? e.acquire().sent_ns : e.time_ns;
        lease.reply_ns = e.time_ns;
        lease.ttl_ms = e.ttl_ms >= 0 ? e.ttl_ms : lease.acquire_ttl_ms;
      }
      continue;
    }
    // An extend.
    if (e.type == EventType::kInvoke) {
      lease.extend_invoke_ns = e.time_ns;
      lease.extend_ttl_ms = e.ttl_ms;
      continue;
    }
    const Nanos invoke_ns = lease.extend_invoke_ns;
    lease.extend_invoke_ns = -1;
    if (!lease.held || invoke_ns < 0 || lease.ttl_ms <= 0) continue;
    if (e.type == EventType::kOk && e.extend().extended >= 1) {
      lease.renewed = true;
      lease.sent_ns = invoke_ns;
      lease.reply_ns = e.time_ns;
      if (lease.extend_ttl_ms > 0) lease.ttl_ms = lease.extend_ttl_ms;
      continue;
    }
    // A renewal that did not extend. Was the lease lost to a stall?
    const Nanos lease_end_ns = lease.sent_ns + ms_to_ns(lease.ttl_ms);
    const Nanos last_round_trip_ns = lease.reply_ns - lease.sent_ns;
    const Nanos due_ns = lease.reply_ns + period_ns;
    // The schedule keeps the lease: the renewal due next, as slow as the last round trip, is
    // answered with a tenth of the TTL to spare. A period too long for the TTL is the plan's
    // doing, not a stall.
    const bool schedule_keeps_it =
        due_ns + last_round_trip_ns + ms_to_ns(lease.ttl_ms) / 10 < lease_end_ns;
    const bool answered_after_lease = e.time_ns > lease_end_ns;
    if (schedule_keeps_it && answered_after_lease &&
        !fault_between(faults, lease.sent_ns, e.time_ns)) {
      const Nanos send_late_ns = std::max<Nanos>(0, invoke_ns - due_ns);
      const Nanos round_trip_ns = e.time_ns - invoke_ns;
      const bool late_send = send_late_ns >= round_trip_ns;
      const std::string who = client_name(history, e.client);
      const std::string key = history.keys.at(e.key);
      result.findings.push_back(
          stall(history, e, late_send ? "late_send" : "late_reply", lease.reply_ns, e.time_ns,
                who + "'s renewal of " + key + ", due at " + format_ms(due_ns) +
                    (late_send ? ", was sent only at " + format_ms(invoke_ns)
                               : ", was sent at " + format_ms(invoke_ns) +
                                     " and answered only at " + format_ms(e.time_ns)) +
                    ", after its lease could have run out (" + format_ms(lease_end_ns) + ": " +
                    std::to_string(lease.ttl_ms) + " ms TTL, a renewal every " +
                    std::to_string(options.renew_period_ms) +
                    " ms); no fault was planned there, so the machine stalled (" +
                    (late_send ? "locksim's own process" : "the server or the loopback") +
                    "), not the lock: what followed says nothing about it."));
    }
    lease.held = false;
  }
}

}  // namespace locksim::checker_internal
