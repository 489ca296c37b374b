#include "sim/report/findings.h"

#include <map>

#include "sim/fault/fault.h"

namespace locksim {
namespace {

using Json = nlohmann::ordered_json;

std::string client_name(const History& history, int client) {
  if (client < 0 || static_cast<std::size_t>(client) >= history.clients.size()) return "";
  return history.clients[static_cast<std::size_t>(client)];
}

}  // namespace

std::string_view finding_label(FindingKind kind) { return label_of(kind); }

bool finding_is_bad(FindingKind kind) {
  return verdict_of(kind) != Verdict::kOk || kind == FindingKind::kStaleRelease ||
         kind == FindingKind::kStolenRenewal;
}

std::string finding_line(const Finding& finding) {
  const std::string label(finding_label(finding.kind));
  std::string line = finding_is_bad(finding.kind) ? "**" + label + "**" : label;
  if (!finding.cause.empty()) line += " (" + finding.cause + ")";
  return line + ": " + finding.words;
}

Json finding_json(const History& history, const Finding& finding) {
  Json j;
  j["kind"] = to_string(finding.kind);
  if (!finding.cause.empty()) j["cause"] = finding.cause;
  if (!finding.key.empty()) j["key"] = finding.key;
  Json clients = Json::array();
  for (const int client : finding.clients) clients.push_back(client_name(history, client));
  j["clients"] = std::move(clients);
  if (finding.from_ns >= 0) j["from_ms"] = ns_to_ms(finding.from_ns);
  if (finding.to_ns >= 0) j["to_ms"] = ns_to_ms(finding.to_ns);
  if (finding.amount != 0) j["amount"] = finding.amount;
  if (!finding.record.empty()) j["record"] = finding.record;
  j["words"] = finding.words;
  return j;
}

Json findings_json(const History& history, const CheckResult& result, Json& omitted) {
  Json list = Json::array();
  std::map<FindingKind, std::size_t> listed;
  omitted = Json::object();
  for (const Finding& finding : result.findings) {
    if (listed[finding.kind]++ < kMaxFindingsPerKind) {
      list.push_back(finding_json(history, finding));
    } else {
      const std::string kind(to_string(finding.kind));
      omitted[kind] = omitted.value(kind, 0) + 1;
    }
  }
  return list;
}

Json fault_windows_json(const History& history, const CheckResult& result) {
  Json faults = Json::array();
  for (std::size_t i = 0; i < result.faults.size() && i < kMaxExportedHolds; ++i) {
    const FaultWindow& w = result.faults[i];
    Json fault = {{"fault", traits(w.kind).word},
                  {"client", client_name(history, w.client)},
                  {"start_ms", ns_to_ms(w.from_ns)},
                  {"end_ms", ns_to_ms(w.to_ns)}};
    if (w.server != 0) fault["server"] = history.str(w.server);
    faults.push_back(std::move(fault));
  }
  return faults;
}

Json holds_json(const History& history, const CheckResult& result) {
  static constexpr const char* kEnds[] = {"exit", "crash", "end_of_history"};
  Json holds = Json::array();
  for (std::size_t i = 0; i < result.holds.size() && i < kMaxExportedHolds; ++i) {
    const HoldWindow& w = result.holds[i];
    Json j;
    j["client"] = client_name(history, w.client);
    j["key"] = history.keys.at(w.key);
    j["start_ms"] = ns_to_ms(w.start_ns);
    j["end_ms"] = ns_to_ms(w.end_ns);
    j["ended_by"] = kEnds[static_cast<int>(w.end)];
    j["ttl_ms"] = w.ttl_ms;
    if (w.lease_end_ns >= 0) j["lease_end_ms"] = ns_to_ms(w.lease_end_ns);
    if (w.faulted) j["faulted"] = true;
    if (w.token != 0) j["token"] = history.str(w.token);
    holds.push_back(std::move(j));
  }
  return holds;
}

}  // namespace locksim
