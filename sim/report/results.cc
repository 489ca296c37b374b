#include "sim/report/results.h"

namespace locksim {
namespace {

using Json = nlohmann::ordered_json;

std::string client_name(const History& history, int client) {
  if (client < 0 || static_cast<std::size_t>(client) >= history.clients.size()) return "";
  return history.clients[static_cast<std::size_t>(client)];
}

Json window_json(const History& history, const HoldWindow& w) {
  static constexpr const char* kEnds[] = {"exit", "crash", "end_of_history"};
  Json j;
  j["client"] = client_name(history, w.client);
  j["start_ms"] = ns_to_ms(w.start_ns);
  j["end_ms"] = ns_to_ms(w.end_ns);
  j["ended_by"] = kEnds[static_cast<int>(w.end)];
  j["ttl_ms"] = w.ttl_ms;
  if (!w.token.empty()) j["token"] = w.token;
  return j;
}

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
  if (scenario.sweep) {
    j["sweep_point"] = {{"group", scenario.sweep->group},
                        {"parameter", scenario.sweep->parameter},
                        {"value", scenario.sweep->value}};
  }
  return j;
}

Json verdict_json(Verdict verdict, const std::vector<std::string>& causes) {
  Json j;
  j["verdict"] = to_string(verdict);
  j["causes"] = causes;
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
  j["expected"] = run.expected.causes
                      ? verdict_json(run.expected.verdict,
                                     {run.expected.causes->begin(), run.expected.causes->end()})
                      : Json{{"verdict", to_string(run.expected.verdict)}};
  j["observed"] = verdict_json(r.verdict, r.causes());
  j["matches"] = run.matches;
  j["interrupted"] = run.interrupted;
  j["timed_out"] = run.timed_out;
  j["clients"] = h.clients;

  Json violations = Json::array();
  for (const MutexViolation& v : r.violations) {
    Json item;
    item["key"] = v.key;
    item["earlier"] = window_json(h, v.earlier);
    item["later"] = window_json(h, v.later);
    item["overlap_ms"] = ns_to_ms(v.overlap_ns);
    item["cause"] = v.cause;
    if (v.stale_releaser >= 0) {
      item["stale_releaser"] = client_name(h, v.stale_releaser);
      item["stale_release_ms"] = ns_to_ms(v.stale_release_ns);
    }
    item["explanation"] = v.explanation;
    violations.push_back(std::move(item));
  }
  j["violations"] = std::move(violations);

  Json stale = Json::array();
  for (const StaleRelease& s : r.stale_releases) {
    stale.push_back({{"key", s.key},
                     {"releaser", client_name(h, s.releaser)},
                     {"victim", client_name(h, s.victim)},
                     {"release_ms", ns_to_ms(s.release_ns)},
                     {"explanation", s.explanation}});
  }
  j["stale_releases"] = std::move(stale);

  Json deadlocks = Json::array();
  for (const Deadlock& d : r.deadlocks) {
    deadlocks.push_back({{"key", d.key},
                         {"waiter", client_name(h, d.waiter)},
                         {"stuck_from_ms", ns_to_ms(d.stuck_from_ns)},
                         {"stuck_to_ms", ns_to_ms(d.stuck_to_ns)},
                         {"stuck_ms", ns_to_ms(d.stuck_to_ns - d.stuck_from_ns)},
                         {"explanation", d.explanation}});
  }
  j["deadlocks"] = std::move(deadlocks);

  Json recoveries = Json::array();
  for (const Recovery& rec : r.recoveries) {
    Json item{{"key", rec.key},
              {"crashed", client_name(h, rec.crashed)},
              {"crash_ms", ns_to_ms(rec.crash_ns)}};
    if (rec.recovered_ns >= 0) {
      item["next_holder"] = client_name(h, rec.next_holder);
      item["recovered_ms"] = ns_to_ms(rec.recovered_ns);
      item["recovery_ms"] = ns_to_ms(rec.recovered_ns - rec.crash_ns);
    } else {
      item["recovered_ms"] = nullptr;
    }
    item["explanation"] = rec.explanation;
    recoveries.push_back(std::move(item));
  }
  j["recoveries"] = std::move(recoveries);

  Json indeterminate = Json::array();
  for (const Indeterminate& i : r.indeterminate) {
    indeterminate.push_back({{"key", i.key},
                             {"client", client_name(h, i.client)},
                             {"invoke_ms", ns_to_ms(i.invoke_ns)},
                             {"explanation", i.explanation}});
  }
  j["indeterminate"] = std::move(indeterminate);

  Json idle = Json::array();
  for (const IdleHold& i : r.idle_holds) {
    idle.push_back({{"key", i.key},
                    {"client", client_name(h, i.client)},
                    {"from_ms", ns_to_ms(i.from_ns)},
                    {"until_ms", ns_to_ms(i.until_ns)},
                    {"idle_ms", ns_to_ms(i.until_ns - i.from_ns)},
                    {"explanation", i.explanation}});
  }
  j["idle_holds"] = std::move(idle);
  Json resource = Json::array();
  for (const ResourceFinding& f : r.resource_findings) {
    Json item{{"kind", f.kind}, {"key", f.key}, {"amount", f.amount}};
    if (!f.record_id.empty()) item["record_id"] = f.record_id;
    item["explanation"] = f.explanation;
    resource.push_back(std::move(item));
  }
  j["resource_findings"] = std::move(resource);
  if (scenario.resource.kind != ResourceConfig::Kind::kNone) {
    j["resource_intact"] = r.resource_findings.empty();
  }
  j["violations_outside_faults"] = r.violations_outside_faults;
  j["naive_timestamp_overlaps"] = r.naive_timestamp_overlaps;

  const CheckStats& s = r.stats;
  Json holds = Json::object();
  for (std::size_t i = 0; i < s.holds_per_client.size() && i < h.clients.size(); ++i) {
    holds[h.clients[i]] = s.holds_per_client[i];
  }
  j["stats"] = {{"events", s.events},
                {"acquires_ok", s.acquires_ok},
                {"acquires_failed", s.acquires_failed},
                {"acquires_indeterminate", s.acquires_indeterminate},
                {"releases_ok", s.releases_ok},
                {"releases_refused", s.releases_refused},
                {"crashes", s.crashes},
                {"holds_per_client", std::move(holds)},
                {"acquire_latency_p50_ms", ns_to_ms(s.acquire_latency_p50_ns)},
                {"acquire_latency_p99_ms", ns_to_ms(s.acquire_latency_p99_ns)},
                {"acquire_latency_max_ms", ns_to_ms(s.acquire_latency_max_ns)},
                {"duration_ms", ns_to_ms(s.duration_ns)},
                {"holds", s.holds},
                {"holds_in_violation", s.holds_in_violation},
                {"violation_rate", s.holds > 0 ? static_cast<double>(s.holds_in_violation) /
                                                     static_cast<double>(s.holds)
                                               : 0.0},
                {"extends_ok", s.extends_ok},
                {"extends_failed", s.extends_failed},
                {"resource_writes", s.resource_writes}};
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
