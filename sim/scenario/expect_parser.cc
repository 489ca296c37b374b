// The "expect" object: what each variant must observe, plain or per sweep point.
#include <algorithm>
#include <regex>
#include <set>
#include <string>

#include "sim/scenario/scenario_parts.h"

namespace locksim::scenario_internal {
namespace {

// Verdict words, then "any": a verdict that is reported but not asserted.
const std::vector<std::string> kVerdictWords = {
    "ok", "mutex_violation", "deadlock", "resource_corrupted", "error", "unknown", "any"};
const std::vector<std::string> kCauses = {"lease_expired", "stale_release", "racy_acquire",
                                          "lock_lost",     "client_clock",  "early_release"};

// set_verdict: a word from kVerdictWords into `expectation`.
void set_verdict(const JsonReader& node, Expectation& expectation) {
  const std::string word = node.one_of(kVerdictWords, "verdict", "allowed");
  expectation.any = word == "any";
  if (!expectation.any) expectation.verdict = *verdict_from_string(word);
}

std::set<std::string> parse_causes(const JsonReader& node) {
  std::set<std::string> causes;
  std::map<std::string, std::string> path_of;
  for (const JsonReader& element : node.elements(/*non_empty=*/false)) {
    std::string cause = element.one_of(kCauses, "cause", "allowed");
    const auto [previous, inserted] = path_of.emplace(cause, element.path());
    if (!inserted) {
      element.fail("duplicate cause \"" + cause + "\" (also at " + previous->second + ")");
    }
    causes.insert(std::move(cause));
  }
  return causes;
}

Expectation parse_expectation(const JsonReader& node, bool resource) {
  Expectation expectation;
  if (node.value().is_string()) {
    set_verdict(node, expectation);
    return expectation;
  }
  if (!node.value().is_object()) {
    node.fail("expected a verdict (" + join(kVerdictWords) +
              ") or {\"verdict\": ..., \"causes\": [...]}, got " + describe(node.value()));
  }
  node.expect_object({"verdict", "causes", "resource", "max_violations_outside_faults",
                      "stolen_renewal", "idle_hold", "finding", "own_findings"});
  set_verdict(node.member("verdict"), expectation);
  const bool asserts = !expectation.any;
  if (const auto causes_node = node.optional_member("causes")) {
    std::set<std::string> causes = parse_causes(*causes_node);
    // Causes explain a mutual-exclusion violation, and a violation outweighs every other
    // verdict, so causes with another verdict could never be observed.
    if (!causes.empty() && (!asserts || expectation.verdict != Verdict::kMutexViolation)) {
      causes_node->fail(
          "causes describe a mutual-exclusion violation; they need \"verdict\": "
          "\"mutex_violation\"");
    }
    expectation.causes = std::move(causes);
  }
  if (const auto resource_node = node.optional_member("resource")) {
    const bool intact =
        resource_node->one_of({"intact", "corrupted"}, "resource state", "allowed") == "intact";
    if (!resource) resource_node->fail("needs a top-level \"resource\" to check");
    // A corrupted resource makes the verdict at least resource_corrupted (only a mutual-exclusion
    // violation outweighs it), so the two must agree.
    if (asserts && !intact && expectation.verdict != Verdict::kMutexViolation &&
        expectation.verdict != Verdict::kResourceCorrupted) {
      resource_node->fail(
          "a corrupted resource makes the verdict \"resource_corrupted\" or \"mutex_violation\", "
          "not \"" +
          std::string(to_string(expectation.verdict)) + "\"");
    }
    if (asserts && intact && expectation.verdict == Verdict::kResourceCorrupted) {
      resource_node->fail("contradicts \"verdict\": \"resource_corrupted\"");
    }
    expectation.resource_intact = intact;
  }
  if (const auto max_node = node.optional_member("max_violations_outside_faults")) {
    expectation.max_violations_outside_faults = max_node->at_least(0, "a number of violations");
  }
  if (const auto stolen_node = node.optional_member("stolen_renewal")) {
    expectation.stolen_renewal = stolen_node->boolean();
  }
  if (const auto idle_node = node.optional_member("idle_hold")) {
    expectation.idle_hold = idle_node->boolean();
  }
  if (const auto own = node.optional_member("own_findings")) {
    expectation.no_own_findings = own->one_of({"none"}, "own_findings", "allowed") == "none";
  }
  if (const auto finding_node = node.optional_member("finding")) {
    finding_node->expect_object({"signature", "clients"});
    Expectation::Finding finding;
    const JsonReader signature = finding_node->member("signature");
    finding.signature = signature.string();
    // "<kind>" or "<kind> (<cause>)": lowercase words joined by '_', as explore prints them.
    static const std::regex kSignature("[a-z_]+( \\([a-z_]+\\))?");
    if (!std::regex_match(finding.signature, kSignature)) {
      signature.fail("expected a finding as explore names it, \"<kind>\" or \"<kind> (<cause>)\" "
                     "(e.g. \"mutex_violation (stale_release)\"), got \"" +
                     finding.signature + "\"");
    }
    if (const auto clients = finding_node->optional_member("clients")) {
      for (const JsonReader& client : clients->elements(/*non_empty=*/false)) {
        finding.clients.push_back(client.string());
      }
    }
    expectation.finding = std::move(finding);
  }
  return expectation;
}

// point_entry: in a sweep file, a variant's entry is keyed by every sweep value; returns the
// entry of the point being parsed.
JsonReader point_entry(const JsonReader& node, const SweepContext& sweep) {
  std::vector<std::string> keys;
  for (const SweepValue& value : sweep.sweep.values) keys.push_back(value.key);
  if (!node.value().is_object()) {
    node.fail("expected an object keyed by the sweep values (" + join(keys) +
              "), each an expectation, got " + describe(node.value()));
  }
  for (const auto& [key, unused] : node.value().items()) {
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    const auto hint = closest_match(key, keys);
    node.member(key).fail("\"" + key + "\" is not a value of " + sweep.sweep.values_path +
                          (hint ? " (did you mean \"" + *hint + "\"?)" : "") +
                          "; values: " + join(keys));
  }
  for (const std::string& key : keys) {
    if (!node.has(key)) {
      node.fail("missing an entry for sweep point \"" + key + "\"; every value of " +
                sweep.sweep.values_path + " needs an expectation");
    }
  }
  return node.member(sweep.point().key);
}

}  // namespace

std::map<std::string, Expectation> parse_expect(const JsonReader& node,
                                                const std::vector<std::string>& variants,
                                                bool resource, const SweepContext* sweep) {
  if (!node.value().is_object()) node.fail("expected an object, got " + describe(node.value()));
  std::map<std::string, Expectation> expect;
  for (const auto& [variant, unused] : node.value().items()) {
    if (std::find(variants.begin(), variants.end(), variant) == variants.end()) {
      const auto hint = closest_match(variant, variants);
      node.member(variant).fail("\"" + variant + "\" is not in $.variants" +
                                (hint ? " (did you mean \"" + *hint + "\"?)" : "") +
                                "; variants: " + join(variants));
    }
    const JsonReader entry = node.member(variant);
    expect[variant] = parse_expectation(sweep ? point_entry(entry, *sweep) : entry, resource);
  }
  for (const std::string& variant : variants) {
    if (!expect.contains(variant)) {
      node.fail("missing an entry for variant \"" + variant +
                "\"; every variant in $.variants needs an expected verdict");
    }
  }
  return expect;
}

nlohmann::json resolved_expect(const std::map<std::string, Expectation>& expect) {
  nlohmann::json result = nlohmann::json::object();
  for (const auto& [variant, expectation] : expect) {
    nlohmann::json entry = {
        {"verdict", expectation.any ? "any" : std::string(to_string(expectation.verdict))}};
    if (expectation.causes) entry["causes"] = *expectation.causes;
    if (expectation.resource_intact) {
      entry["resource"] = *expectation.resource_intact ? "intact" : "corrupted";
    }
    if (expectation.max_violations_outside_faults) {
      entry["max_violations_outside_faults"] = *expectation.max_violations_outside_faults;
    }
    if (expectation.stolen_renewal) entry["stolen_renewal"] = *expectation.stolen_renewal;
    if (expectation.idle_hold) entry["idle_hold"] = *expectation.idle_hold;
    if (expectation.no_own_findings) entry["own_findings"] = "none";
    if (expectation.finding) {
      entry["finding"] = {{"signature", expectation.finding->signature}};
      if (!expectation.finding->clients.empty()) {
        entry["finding"]["clients"] = expectation.finding->clients;
      }
    }
    result[variant] = std::move(entry);
  }
  return result;
}

}  // namespace locksim::scenario_internal
