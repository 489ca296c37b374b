// run_record.h: RunInfo and VariantRun, what the report writers are given about a run.
//
// A *scenario run* runs one scenario once per variant; each variant's run has its own history and
// check result. Writers are pure functions of these records (plus the file system for writing).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/checker/check.h"
#include "sim/history/event.h"
#include "sim/scenario/scenario.h"

namespace locksim {

// RunInfo: the context block of results.json.
struct RunInfo {
  std::string run_id;  // "20261122-073012-s42-9f3a1c" (see app/run_id.h)
  std::uint64_t seed = 0;
  int repetition = 1;          // 1-based, with --repeat
  std::string redis_version;   // "7.0.15"
  std::string redis_endpoint;  // redacted URL, or "private redis-server"
  std::string commit;          // git commit locksim was built from
  std::string machine;         // "hostname, 2 cores, Linux 6.1"
  std::string started_at;      // UTC, ISO 8601
  double peak_rss_mb = 0;      // the process's peak resident memory so far (getrusage), in MB
};

// VariantRun: one variant's run of a scenario and its judgement.
struct VariantRun {
  std::string variant;
  Expectation expected;
  CheckResult result;
  History history;
  std::vector<std::string> notes;  // driver notes
  bool interrupted = false;
  bool timed_out = false;
  bool matches = false;  // matches_expectation(expected, result) and the run completed
  // For a mutex_violation: "own" (the lock's own bug) or "limit" (a limit every lease of its kind
  // has), judged against its kind's reference in the same scenario (judge_violations,
  // sim/explore/judge.h), and why in words; empty when not judged.
  std::string judged;
  std::string judged_why;
};

// matches_expectation: the verdict is the expected one (unless "any") and, where the expectation
// says so, the set of violation causes is exactly that set, the resource is intact or corrupted,
// and no more violations than allowed happened outside faulted windows, and the expected finding
// (if any) is among the run's, with exactly its clients (named by `clients`, the history's client
// names: History::clients).
bool matches_expectation(const Expectation& expected, const CheckResult& result,
                         const std::vector<std::string>& clients = {});
// own_findings: the run's findings that are a lock's own bug whatever the fault (a stale release,
// a racy acquire, a stolen renewal, an idle hold, barging), as signatures, sorted.
std::vector<std::string> own_findings(const CheckResult& result);
// finding_signature: a finding as explore names it: "<kind>" or "<kind> (<cause>)".
std::string finding_signature(const Finding& finding);

// check_options: the checker parameters a scenario asks for (stuck threshold, resource). `run`
// and `check` both use it, so a saved run is re-judged exactly as it was judged.
CheckOptions check_options(const Scenario& scenario);

// describe_expectation: "mutex_violation (lease_expired, stale_release)" or "ok".
std::string describe_expectation(const Expectation& expected);
// describe_observation: the same form for what was observed, with what the verdict does not say
// (a corrupted resource, a stolen renewal, an idle hold, barging past a waiter).
std::string describe_observation(const CheckResult& result);

}  // namespace locksim
