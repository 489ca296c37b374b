// findings.h: how every report renders a Finding, so results.json, summary.md, trace.json and
// `locksim check` say the same thing the same way.
//
//   out << finding_line(history, finding);   // "**Mutual exclusion violated** (lease_expired):
//   ..." j["findings"] = findings_json(history, result);
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "sim/checker/check.h"
#include "sim/history/event.h"

namespace locksim {

// kMaxFindingsPerKind: how many findings of one kind results.json and summary.md list; the rest
// are counted ("and 812 more"), so a run with thousands of overlaps stays readable and small.
inline constexpr std::size_t kMaxFindingsPerKind = 200;
inline constexpr std::size_t kMaxSummaryFindingsPerKind = 20;
// kMaxExportedHolds: hold windows written to results.json (for plots); the rest are counted.
inline constexpr std::size_t kMaxExportedHolds = 5000;

// finding_label: the heading of a kind in words ("Mutual exclusion violated", "Recovery").
std::string_view finding_label(FindingKind kind);
// finding_is_bad: whether the kind supports a verdict other than ok (printed in bold).
bool finding_is_bad(FindingKind kind);
// finding_line: "**Label** (cause): words" (bold only for kinds that support a verdict).
std::string finding_line(const Finding& finding);
// finding_json: one finding with client names and times in ms.
nlohmann::ordered_json finding_json(const History& history, const Finding& finding);
// findings_json: every finding (at most kMaxFindingsPerKind per kind) as an array, and in
// `omitted` how many of each kind were left out.
nlohmann::ordered_json findings_json(const History& history, const CheckResult& result,
                                     nlohmann::ordered_json& omitted);
// fault_windows_json: the fault windows, each {fault, client, start_ms, end_ms} (at most
// kMaxExportedHolds).
nlohmann::ordered_json fault_windows_json(const History& history, const CheckResult& result);
// holds_json: the hold windows with their lease ends (at most kMaxExportedHolds).
nlohmann::ordered_json holds_json(const History& history, const CheckResult& result);

}  // namespace locksim
