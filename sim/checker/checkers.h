// checkers.h: the individual checkers check_history runs, one per concept, most over one key.
//
// Internal to the checker. Each appends its findings to `result.findings` (and the counts only it
// can tell to result.stats) and never touches the verdict; check.cc combines them.
#pragma once

#include <cstdint>

#include "sim/checker/check.h"
#include "sim/checker/timeline.h"
#include "sim/history/event.h"

namespace locksim::checker_internal {

// check_mutual_exclusion: overlapping definite windows with their cause, and stale releases;
// also sets result.violations_outside_faults. A violation's words only if `words`
// (CheckOptions::words).
void check_mutual_exclusion(const History& history, const KeyTimeline& timeline, bool words,
                            CheckResult& result);

// check_liveness: deadlocks (waits while nobody live held the key) and recoveries.
void check_liveness(const History& history, const KeyTimeline& timeline,
                    const CheckOptions& options, CheckResult& result);

// check_reentrancy: a reentrant lock's nested acquires refused while their owner held the lock
// (deadlocks of its own, "nested_refused"); nothing for another lock.
void check_reentrancy(const History& history, const KeyTimeline& timeline, CheckResult& result);

// check_read_write: a read-write lock's writers starved by readers ("writer_starved") and its
// refused upgrades ("upgrade_deadlock"), both deadlocks; nothing for another lock.
void check_read_write(const History& history, const KeyTimeline& timeline,
                      const CheckOptions& options, CheckResult& result);

// check_indeterminacy: indeterminate acquires whose possible window overlaps another hold.
void check_indeterminacy(const History& history, const KeyTimeline& timeline, CheckResult& result);

// check_server_outages: for every server fault that can interrupt the lock (a kind whose traits
// say opens_outage: kill, pause, promotion, failover), how long until the lock was next granted and
// how many acquires failed meanwhile (an unreachable server, a quorum not reached).
void check_server_outages(const History& history, CheckResult& result);
// check_idle_holds: releases that deleted nothing while their lease ran (the key sat idle).
void check_idle_holds(const History& history, const KeyTimeline& timeline, CheckResult& result);

// check_lease_overruns: holders that left after their lease had certainly run out (their words
// only if `words`, CheckOptions::words).
void check_lease_overruns(const History& history, const KeyTimeline& timeline, bool words,
                          CheckResult& result);

// server_faults_between: the server faults that can make a server forget a lock (the kinds whose
// traits say forgets_key: a restart, a promotion, a clock jump) recorded in (from_ns, to_ns], in
// words, and the last one's time.
// `held_on` (server names, empty: any server) keeps only the faults of the servers the earlier
// grant was on: a server that never held the key forgets nothing.
struct LostLock {
  std::string words;
  Nanos at_ns = -1;
};
// client_clock_before: the first client_clock fault recorded at or before `to_ns` (a client whose
// own clock ran off the others'), or nullptr. A clock that drifts has its fault at time 0 as an
// offset does, though it is still in sync there: it is off from the next instant on, and what
// matters is that it was off before `to_ns`, not at it (a permit scored by a clock that was off
// stays in the set, and an offset and a drift that cancel out later do not take it back).
const Event* client_clock_before(const History& history, Nanos to_ns);
LostLock server_faults_between(const History& history, Nanos from_ns, Nanos to_ns,
                               const std::vector<std::string>& held_on = {});

// check_barging: grants that went to a client while another had been waiting longer, over every
// key (only with options.barging).
void check_barging(const History& history, const CheckOptions& options, CheckResult& result);

// check_renewals: extends that succeeded on a key another client had acquired since (stolen).
void check_renewals(const History& history, const KeyTimeline& timeline, CheckResult& result);

// check_stalls: renewals a stall of the machine made too late, with no fault planned (stalls.cc).
void check_stalls(const History& history, const CheckOptions& options, CheckResult& result);

// check_grants: a key wanted but never granted.
void check_grants(const History& history, const KeyTimeline& timeline, CheckResult& result);

// check_run: what concerns the run as a whole: the lock's errors, the harness's stops and a lost
// server.
void check_run(const History& history, CheckResult& result);

// count_naive_overlaps: pairs of naive log windows of different clients that overlap.
std::int64_t count_naive_overlaps(const KeyTimeline& timeline);

// check_resource: lost updates, oversell and duplicate records on the protected resource named
// by options.resource (nothing when its kind is kNone). Over the whole history, not one key.
void check_resource(const History& history, const ResourceSpec& resource, CheckResult& result);

// fault_windows: the fault windows of the history (fault_windows.cc), by start time.
std::vector<FaultWindow> fault_windows(const History& history);

// check_stale_writes: writes to the resource by a client whose grant had been superseded, and
// whether the resource accepted them; counts them in result.stats.
void check_stale_writes(const History& history, const ResourceSpec& resource, CheckResult& result);

// compute_stats: counts and acquire latency percentiles over the whole history.
CheckStats compute_stats(const History& history);

}  // namespace locksim::checker_internal
