// results.h: results.json, the versioned machine-readable outcome that plots and tools read.
//
// Schema (schema_version 2), per variant run:
//   {"schema_version":2, "context":{run_id, seed, repetition, variant, scenario, redis_version,
//    redis_endpoint, commit, machine, started_at},
//    "expected":{"verdict","causes"?,...}, "observed":{"verdict","causes"}, "matches":bool,
//    "interrupted", "timed_out", "clients":[names],
//    "findings":[{"kind","cause"?,"key"?,"clients":[names],"from_ms"?,"to_ms"?,"amount"?,
//                 "record"?,"words"}], "findings_omitted"?:{kind: count},
//    "holds":[{"client","key","start_ms","end_ms","ended_by","ttl_ms","lease_end_ms"?,
//              "faulted"?,"token"?}], "holds_omitted"?,
//    "resource_intact"?, "violations_outside_faults", "naive_timestamp_overlaps",
//    "stats":{...}, "notes":[...]}
// Times are in milliseconds since run start (floats), named *_ms. Finding kinds and their fields
// are described in sim/checker/check.h.
// The scenario-level results.json has the context (without variant) and "variants": [the above].
#pragma once

#include <nlohmann/json.hpp>

#include "sim/report/run_record.h"

namespace locksim {

constexpr int kResultsSchemaVersion = 2;

nlohmann::ordered_json variant_results_json(const Scenario& scenario, const VariantRun& run,
                                            const RunInfo& info);
nlohmann::ordered_json scenario_results_json(const Scenario& scenario,
                                             const std::vector<VariantRun>& runs,
                                             const RunInfo& info);

}  // namespace locksim
