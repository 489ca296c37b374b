#include "sim/report/results.h"

#include "sim/report/findings.h"

namespace locksim {
namespace {

using Json = nlohmann::ordered_json;

Json context_json(const Scenario& scenario, const RunInfo& info) {
  Json j;
  j["run_id"] = info.run_id;
  j["scenario"] = scenario.name;
  j["scenario_file"] = scenario.file;
  j["source"] = {{"doc", scenario.source.doc}, {"claim", scenario.source.claim}};
  j["seed"] = info.seed;
  j["repetition"] = info.repetition;
  j["redis_version"] = info.redis_version;
  j["redis_endpoint"] = info.redis_endpoint;
  j["commit"] = info.commit;
  j["machine"] = info.machine;
  j["started_at"] = info.started_at;
  if (info.peak_rss_mb > 0) j["peak_rss_mb"] = info.peak_rss_mb;
  if (scenario.sweep) {
    j["sweep_point"] = {{"group", scenario.sweep->group},
                        {"parameter", scenario.sweep->parameter},
                        {"value", scenario.sweep->value}};
    if (!scenario.sweep->unit.empty()) j["sweep_point"]["unit"] = scenario.sweep->unit;
  }
  return j;
}

Json verdict_json(Verdict verdict, const std::vector<std::string>& causes) {
  Json j;
  j["verdict"] = to_string(verdict);
  j["causes"] = causes;
  return j;
}

Json expectation_json(const Expectation& expected) {
  Json j;
  j["verdict"] = expected.any ? "any" : std::string(to_string(expected.verdict));
  if (expected.causes) j["causes"] = *expected.causes;
  if (expected.resource_intact) j["resource"] = *expected.resource_intact ? "intact" : "corrupted";
  if (expected.max_violations_outside_faults) {
    j["max_violations_outside_faults"] = *expected.max_violations_outside_faults;
  }
  if (expected.stolen_renewal) j["stolen_renewal"] = *expected.stolen_renewal;
  return j;
}

}  // namespace

Json variant_results_json(const Scenario& scenario, const VariantRun& run, const RunInfo& info) {
  const History& h = run.history;
  const CheckResult& r = run.result;
  Json j;
  j["schema_version"] = kResultsSchemaVersion;
  Json context = context_json(scenario, info);
  context["variant"] = run.variant;
  j["context"] = std::move(context);
  j["expected"] = expectation_json(run.expected);
  j["observed"] = verdict_json(r.verdict, r.causes());
  j["matches"] = run.matches;
  if (!run.judged.empty()) j["judged"] = {{"as", run.judged}, {"why", run.judged_why}};
  j["interrupted"] = run.interrupted;
  j["timed_out"] = run.timed_out;
  j["clients"] = h.clients;
  Json omitted;
  j["findings"] = findings_json(h, r, omitted);
  if (!omitted.empty()) j["findings_omitted"] = std::move(omitted);
  j["holds"] = holds_json(h, r);
  j["fault_windows"] = fault_windows_json(h, r);
  if (r.holds.size() > kMaxExportedHolds) j["holds_omitted"] = r.holds.size() - kMaxExportedHolds;
  if (scenario.resource.kind != ResourceConfig::Kind::kNone) {
    j["resource_intact"] = r.resource_intact();
  }
  j["violations_outside_faults"] = r.violations_outside_faults;
  j["naive_timestamp_overlaps"] = r.naive_timestamp_overlaps;

  const CheckStats& s = r.stats;
  Json holds = Json::object();
  for (std::size_t i = 0; i < s.holds_per_client.size() && i < h.clients.size(); ++i) {
    holds[h.clients[i]] = s.holds_per_client[i];
  }
  auto latency = [](Nanos ns) { return ns >= 0 ? Json(ns_to_ms(ns)) : Json(nullptr); };
  j["stats"] = {{"events", s.events},
                {"acquires_ok", s.acquires_ok},
                {"acquires_failed", s.acquires_failed},
                {"acquires_indeterminate", s.acquires_indeterminate},
                {"releases_ok", s.releases_ok},
                {"releases_refused", s.releases_refused},
                {"crashes", s.crashes},
                {"lock_errors", s.lock_errors},
                {"holds_per_client", std::move(holds)},
                {"latency_samples", s.latency_samples},
                {"acquire_latency_p50_ms", latency(s.acquire_latency_p50_ns)},
                {"acquire_latency_p99_ms", latency(s.acquire_latency_p99_ns)},
                {"acquire_latency_max_ms", latency(s.acquire_latency_max_ns)},
                {"duration_ms", ns_to_ms(s.duration_ns)},
                {"holds", s.holds},
                {"holds_in_violation", s.holds_in_violation},
                {"violation_rate", s.holds > 0 ? static_cast<double>(s.holds_in_violation) /
                                                     static_cast<double>(s.holds)
                                               : 0.0},
                {"extends_ok", s.extends_ok},
                {"extends_failed", s.extends_failed},
                {"resource_writes", s.resource_writes},
                {"stale_writes_accepted", s.stale_writes_accepted},
                {"stale_writes_rejected", s.stale_writes_rejected}};
  j["notes"] = run.notes;
  return j;
}

Json scenario_results_json(const Scenario& scenario, const std::vector<VariantRun>& runs,
                           const RunInfo& info) {
  Json j;
  j["schema_version"] = kResultsSchemaVersion;
  j["context"] = context_json(scenario, info);
  Json variants = Json::array();
  for (const VariantRun& run : runs) variants.push_back(variant_results_json(scenario, run, info));
  j["variants"] = std::move(variants);
  return j;
}

}  // namespace locksim
