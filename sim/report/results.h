// results.h: results.json, the versioned machine-readable outcome that plots and tools read.
//
// Schema (schema_version 1), per variant run:
//   {"schema_version":1, "context":{run_id, seed, repetition, variant, scenario, redis_version,
//    redis_endpoint, commit, machine, started_at},
//    "expected":{"verdict","causes"?}, "observed":{"verdict","causes"}, "matches":bool,
//    "interrupted", "timed_out", "violations":[...], "stale_releases":[...], "deadlocks":[...],
//    "recoveries":[...], "indeterminate":[...], "stats":{...}, "notes":[...],
//    "clients":[names]}
// Times are in milliseconds since run start (floats), named *_ms.
// The scenario-level results.json has the context (without variant) and "variants": [the above].
#pragma once

#include <nlohmann/json.hpp>

#include "sim/report/run_record.h"

namespace locksim {

constexpr int kResultsSchemaVersion = 1;

nlohmann::ordered_json variant_results_json(const Scenario& scenario, const VariantRun& run,
                                            const RunInfo& info);
nlohmann::ordered_json scenario_results_json(const Scenario& scenario,
                                             const std::vector<VariantRun>& runs,
                                             const RunInfo& info);

}  // namespace locksim
