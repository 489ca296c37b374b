#include "sim/report/run_record.h"

#include <algorithm>
#include <set>

namespace locksim {
namespace {

std::string with_causes(Verdict verdict, const std::vector<std::string>& causes) {
  std::string text(to_string(verdict));
  if (causes.empty()) return text;
  text += " (";
  for (std::size_t i = 0; i < causes.size(); ++i) text += (i ? ", " : "") + causes[i];
  return text + ")";
}

}  // namespace

std::string finding_signature(const Finding& finding) {
  return std::string(to_string(finding.kind)) + (finding.cause.empty() ? "" : " (" + finding.cause + ")");
}

bool matches_expectation(const Expectation& expected, const CheckResult& result,
                         const std::vector<std::string>& clients) {
  if (expected.finding) {
    const std::set<std::string> wanted(expected.finding->clients.begin(),
                                       expected.finding->clients.end());
    const bool shown = std::any_of(
        result.findings.begin(), result.findings.end(), [&](const Finding& f) {
          if (finding_signature(f) != expected.finding->signature) return false;
          if (wanted.empty()) return true;
          std::set<std::string> involved;
          for (const int c : f.clients) {
            involved.insert(c >= 0 && static_cast<std::size_t>(c) < clients.size()
                                ? clients[static_cast<std::size_t>(c)]
                                : "#" + std::to_string(c));
          }
          return involved == wanted;
        });
    if (!shown) return false;
  }
  if (!expected.any && expected.verdict != result.verdict) return false;
  if (expected.causes) {
    const std::vector<std::string> observed = result.causes();
    if (std::set<std::string>(observed.begin(), observed.end()) != *expected.causes) return false;
  }
  if (expected.resource_intact && *expected.resource_intact != result.resource_intact()) {
    return false;
  }
  if (expected.stolen_renewal &&
      *expected.stolen_renewal != (result.count(FindingKind::kStolenRenewal) > 0)) {
    return false;
  }
  if (expected.idle_hold && *expected.idle_hold != (result.count(FindingKind::kIdleHold) > 0)) {
    return false;
  }
  if (expected.max_violations_outside_faults &&
      result.violations_outside_faults > *expected.max_violations_outside_faults) {
    return false;
  }
  if (expected.no_own_findings && !own_findings(result).empty()) return false;
  return true;
}

std::vector<std::string> own_findings(const CheckResult& result) {
  std::set<std::string> own;
  for (const Finding& f : result.findings) {
    if (is_own_finding(f)) own.insert(finding_signature(f));
  }
  return {own.begin(), own.end()};
}

std::string describe_expectation(const Expectation& expected) {
  std::string text =
      expected.any ? std::string(expected.finding ? "" : "any")
      : expected.causes
          ? with_causes(expected.verdict,
                        std::vector<std::string>(expected.causes->begin(), expected.causes->end()))
          : std::string(to_string(expected.verdict));
  if (expected.resource_intact) text += *expected.resource_intact ? ", intact" : ", corrupted";
  if (expected.max_violations_outside_faults) {
    text += ", <=" + std::to_string(*expected.max_violations_outside_faults) + " unfaulted";
  }
  if (expected.stolen_renewal)
    text += *expected.stolen_renewal ? ", stolen renewal" : ", no stolen renewal";
  if (expected.idle_hold) text += *expected.idle_hold ? ", idle hold" : ", no idle hold";
  if (expected.no_own_findings) text += ", no finding of its own";
  if (expected.finding) {
    text += (text.empty() ? "showing " : ", showing ") + expected.finding->signature;
    if (!expected.finding->clients.empty()) {
      text += " of";
      for (const std::string& c : expected.finding->clients) text += " " + c;
    }
  }
  return text;
}

std::string describe_observation(const CheckResult& result) {
  std::string text = with_causes(result.verdict, result.causes());
  if (!result.resource_intact()) text += ", corrupted";
  if (result.count(FindingKind::kStolenRenewal) > 0) text += ", stolen renewal";
  if (result.count(FindingKind::kIdleHold) > 0) text += ", idle hold";
  if (result.count(FindingKind::kBarging) > 0) text += ", barging";
  if (result.count(FindingKind::kEarlyRelease) > 0) text += ", early release";
  // What kept the resource intact although the windows overlapped: a fenced store said no.
  if (result.stats.stale_writes_rejected > 0) text += ", stale write rejected";
  return text;
}

CheckOptions check_options(const Scenario& scenario) {
  CheckOptions options;
  options.stuck_threshold_ns = ms_to_ns(scenario.check.stuck_ms);
  options.barging = scenario.check.barging;
  options.writer_wait_ns = ms_to_ns(scenario.check.writer_wait_ms);
  options.queue_timeout_ns = ms_to_ns(scenario.lock.queue_timeout_ms);
  options.renew_period_ms = scenario.lock.renew_period_ms;
  if (scenario.lock.wait.strategy == "poll" || scenario.lock.wait.strategy == "retry_sleep") {
    options.attempt_spacing_ns = ms_to_ns(scenario.lock.wait.interval_ms);
  }
  switch (scenario.resource.kind) {
    case ResourceConfig::Kind::kNone:
      options.resource.kind = ResourceSpec::Kind::kNone;
      break;
    case ResourceConfig::Kind::kCounter:
      options.resource.kind = ResourceSpec::Kind::kCounter;
      break;
    case ResourceConfig::Kind::kFindOrCreate:
      options.resource.kind = ResourceSpec::Kind::kFindOrCreate;
      break;
    case ResourceConfig::Kind::kFencedCounter:
      options.resource.kind = ResourceSpec::Kind::kFencedCounter;
      break;
  }
  options.resource.name = scenario.resource.name;
  options.resource.initial = scenario.resource.initial;
  return options;
}

}  // namespace locksim
