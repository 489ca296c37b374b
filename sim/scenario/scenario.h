// scenario.h: Scenario, the validated, plain form of one scenarios/*.json file.
//
// Two forms share one struct: a *scripted* scenario (ordered steps over named clients, to
// reproduce a documented failure exactly) has `steps`; a *workload* (N clients looping
// acquire -> work -> release with seeded random timings) has `workload`. Durations carry their unit
// in the name. See README.md "Scenario format" for the JSON and loader.h for loading.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/verdict.h"

namespace locksim {

// WaitConfig: how a client waits between acquire attempts ("wait" in JSON).
struct WaitConfig {
  std::string strategy = "poll";  // "poll": fixed interval between attempts
  std::int64_t interval_ms = 10;  // poll interval, 1..60000
};

// LockConfig: the lock under test ("lock" in JSON). Applies to every variant of the scenario.
struct LockConfig {
  std::string key = "lock";                // logical key; the run prefix is added by the driver
  std::int64_t ttl_ms = 1000;              // lease for TTL variants, 1..3600000
  std::int64_t acquire_timeout_ms = 2000;  // give up acquiring after this, 0..3600000 (0 = one try)
  WaitConfig wait;
};

// Condition: something observable a scripted step can wait for.
struct Condition {
  enum class Kind {
    kInside,      // "inside": client name; the client has entered and not exited
    kOutside,     // "outside": client name; the client is not inside
    kKeyAbsent,   // "key_absent": logical key; the key does not exist on the server
    kKeyPresent,  // "key_present": logical key; the key exists on the server
    kDone,        // "done": step id; that step has finished
    kCrashed,     // "crashed": client name; the client has crashed
  };
  Kind kind = Kind::kDone;
  std::string argument;
};

// Step: one scripted step. A step starts once every earlier step has started, the previous step
// of the same client has finished, and its `wait_for` conditions hold (or wait_max_ms passed).
struct Step {
  enum class Action {
    kAcquire,  // acquire the lock with the variant and wait strategy
    kRelease,  // release it with the variant
    kWork,     // stay inside for work_ms, or until `until` holds (bounded by max_ms)
    kCrash,    // stop without releasing; the connection closes; later steps are skipped
    kSleep,    // wait outside the critical section for work_ms
  };
  std::string id;                 // optional name for {"done": id}; defaults to "step-<n>" (1-based)
  std::string client;             // a name from Scenario::clients
  Action action = Action::kWork;
  std::int64_t work_ms = 0;       // kWork, kSleep
  std::vector<Condition> until;   // kWork: all must hold to end the work early
  std::int64_t max_ms = 0;        // kWork with `until`: upper bound of the work
  std::vector<Condition> wait_for;  // before the step starts: all must hold
  std::int64_t wait_max_ms = 10000;   // bound on wait_for; the step starts anyway after it
  std::optional<std::int64_t> acquire_timeout_ms;  // kAcquire: overrides lock.acquire_timeout_ms
  std::string json_path;          // "$.steps[2]", for messages
};

// Range: an inclusive range of milliseconds, drawn uniformly with the run's seeded Rng.
struct RangeMs {
  std::int64_t min_ms = 0;
  std::int64_t max_ms = 0;
};

// Workload: N clients looping acquire -> work -> release -> rest ("workload" in JSON).
struct Workload {
  int clients = 4;                 // 1..256; named c0, c1, ...
  int cycles = 100;                // per client, 1..1000000
  int keys = 1;                    // distinct lock keys, 1..clients; client i uses key i % keys
  RangeMs work_ms{1, 1};           // time inside the critical section
  RangeMs rest_ms{0, 0};           // time outside between cycles
  double crash_probability = 0.0;  // per cycle: crash inside instead of releasing, 0..1
};

// Expectation: what a variant must observe for the scenario to pass ("expect" in JSON).
struct Expectation {
  Verdict verdict = Verdict::kOk;
  // If set, the exact set of mutual-exclusion causes ("lease_expired", "stale_release",
  // "racy_acquire", "lock_lost") the run must show.
  std::optional<std::set<std::string>> causes;
};

// CheckConfig: checker parameters ("check" in JSON).
struct CheckConfig {
  // A failed acquire that found the lock held by no live client for at least this long is a
  // deadlock. Default: max(500 ms, 5 x poll interval).
  std::int64_t stuck_ms = 500;
};

// Source: the document and claim the scenario reproduces ("source" in JSON).
struct Source {
  std::string doc;    // "A".."E" (SEEDS.md) or "none"
  std::string claim;  // one sentence
};

struct Scenario {
  std::string name;         // from "name"; also the report directory name
  std::string file;         // path it was loaded from
  std::string description;  // optional free text
  Source source;
  std::vector<std::string> variants;  // variant names, validated against the registry
  LockConfig lock;
  std::vector<std::string> clients;   // scripted: client names; workload: generated c0..cN-1
  std::vector<Step> steps;            // scripted form
  std::optional<Workload> workload;   // workload form
  std::map<std::string, Expectation> expect;  // by variant name; every variant has one
  CheckConfig check;
  std::int64_t time_limit_ms = 60000;  // a run is stopped (verdict unknown) after this
  nlohmann::json resolved;  // the scenario with all defaults filled in, written to reports

  bool scripted() const { return !workload.has_value(); }
};

}  // namespace locksim
