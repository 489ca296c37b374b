// "sweep" (a file that expands into one scenario per value) and the "sweep_point" each expanded
// scenario carries in its resolved form.
#include <map>
#include <regex>
#include <string>

#include "sim/json/pointer.h"
#include "sim/scenario/scenario_parts.h"

namespace locksim::scenario_internal {
namespace {

constexpr std::size_t kMaxSweepValues = 20;
constexpr std::size_t kMaxSweepTargets = 16;
constexpr double kMaxTtlOverWork = 1000.0;
// Each point's name carries its value, so a value must be short in its shortest plain form
// (which has no exponent: 1e-300 would be 300 characters).
constexpr std::size_t kMaxValueCharacters = 20;
constexpr std::size_t kMaxUnitCharacters = 16;

const std::regex& parameter_pattern() {
  static const std::regex pattern("[a-z][a-z0-9_]{0,31}");
  return pattern;
}
constexpr std::string_view kParameterWords =
    "a parameter name of 1 to 32 lowercase letters, digits or '_', starting with a letter";

// ttl_over_work: a ratio of lease to mean work time, in (0, 1000].
double ttl_over_work(const JsonReader& node) {
  const double value = node.number("a ratio of TTL to mean work time");
  if (!(value > 0.0 && value <= kMaxTtlOverWork)) {
    node.fail("expected a ratio of TTL to mean work time above 0 and at most 1000, got " +
              describe(node.value()));
  }
  return value;
}

// swept_number: a value of the general form. Any number: the field it is written to checks its
// own range; only its length is bounded here, for the point's name.
double swept_number(const JsonReader& node) {
  const double value = node.number("a value of the swept parameter");
  if (shortest_number(value).size() > kMaxValueCharacters) {
    node.fail("expected a number of at most " + std::to_string(kMaxValueCharacters) +
              " characters written without an exponent (each point's name carries it), got " +
              describe(node.value()));
  }
  return value;
}

// unit: a unit for reports, "ms" or "%": a few printable characters on one line.
std::string unit(const JsonReader& node) {
  static const std::regex kPrintable("[^\\x00-\\x1f\\x7f|]+");
  const std::string text = node.non_empty_string(kMaxUnitCharacters);
  if (!std::regex_match(text, kPrintable)) {
    node.fail("expected a unit of printable characters without '|', e.g. \"ms\" or \"%\", got " +
              describe(node.value()));
  }
  return text;
}

// parse_values: 1 to 20 distinct values, each read by `read`.
std::vector<SweepValue> parse_values(const JsonReader& node, double (*read)(const JsonReader&)) {
  const std::vector<JsonReader> elements = node.elements(/*non_empty=*/true);
  if (elements.size() > kMaxSweepValues) {
    node.fail("expected 1 to " + std::to_string(kMaxSweepValues) + " values, got " +
              std::to_string(elements.size()));
  }
  std::vector<SweepValue> values;
  std::map<std::string, std::string> path_of;  // key -> path, to name duplicates
  for (const JsonReader& element : elements) {
    SweepValue value;
    value.value = read(element);
    value.key = shortest_number(value.value);
    value.path = element.path();
    value.node = element.value();
    const auto [previous, inserted] = path_of.emplace(value.key, element.path());
    if (!inserted) {
      element.fail("duplicate value " + value.key + " (also at " + previous->second + ")");
    }
    values.push_back(std::move(value));
  }
  return values;
}

// parse_targets: "set", the pointers each value is written to: each names a number in the file,
// outside "sweep", and no two name the same value.
std::vector<SweepTarget> parse_targets(const JsonReader& root, const JsonReader& node) {
  const std::vector<JsonReader> elements = node.elements(/*non_empty=*/true);
  if (elements.size() > kMaxSweepTargets) {
    node.fail("expected 1 to " + std::to_string(kMaxSweepTargets) + " JSON Pointers, got " +
              std::to_string(elements.size()));
  }
  std::vector<SweepTarget> targets;
  std::map<std::string, std::string> set_path_of;  // JSON path named -> $.sweep.set[i]
  for (const JsonReader& element : elements) {
    if (!element.value().is_string()) {
      element.fail(
          "expected a JSON Pointer (RFC 6901) to a number in this file, e.g. "
          "\"/lock/ttl_ms\", got " +
          describe(element.value()));
    }
    SweepTarget target;
    target.pointer = element.string();
    target.path = element.path();
    const std::string quoted = describe(nlohmann::json(target.pointer));
    const json::PointerTarget named = json::resolve_pointer(root.value(), target.pointer);
    if (!named.error.empty()) {
      element.fail(quoted + " names nothing in this file (" + named.error +
                   "); expected a JSON Pointer to a number in this file");
    }
    if (!named.tokens.empty() && named.tokens.front() == "sweep") {
      element.fail(quoted +
                   " points into $.sweep itself; expected a JSON Pointer to a number "
                   "elsewhere in this file");
    }
    if (!named.value->is_number()) {
      element.fail(quoted + " names " + named.path + ", which is " + describe(*named.value) +
                   "; expected a JSON Pointer to a number (the value each point replaces)");
    }
    const auto [previous, inserted] = set_path_of.emplace(named.path, element.path());
    if (!inserted) {
      element.fail(quoted + " names " + named.path + " again (also at " + previous->second + ")");
    }
    target.tokens = named.tokens;
    targets.push_back(std::move(target));
  }
  return targets;
}

}  // namespace

Sweep parse_sweep(const JsonReader& root) {
  const JsonReader node = root.member("sweep");
  node.expect_object({"ttl_over_work", "parameter", "set", "values", "unit"});
  Sweep sweep;
  if (node.has("ttl_over_work")) {
    for (const char* key : {"parameter", "set", "values", "unit"}) {
      if (node.has(key)) {
        node.member(key).fail(
            "not allowed with \"ttl_over_work\"; a sweep is either {\"ttl_over_work\": [...]} or "
            "{\"parameter\": ..., \"set\": [...], \"values\": [...]}");
      }
    }
    const JsonReader values = node.member("ttl_over_work");
    sweep.parameter = "ttl_over_work";
    sweep.values_path = values.path();
    sweep.values = parse_values(values, ttl_over_work);
    return sweep;
  }
  if (!node.has("parameter") && !node.has("set") && !node.has("values")) {
    node.fail(
        "expected {\"parameter\": name, \"set\": [JSON Pointers], \"values\": [numbers]} or "
        "{\"ttl_over_work\": [ratios]}");
  }
  sweep.parameter = node.member("parameter").matching(parameter_pattern(), kParameterWords);
  if (sweep.parameter == "ttl_over_work") {
    node.member("parameter")
        .fail(
            "\"ttl_over_work\" is the name of the form {\"ttl_over_work\": [...]}, which sets "
            "lock.ttl_ms from the mean work time; give this parameter another name");
  }
  if (const auto unit_node = node.optional_member("unit")) sweep.unit = unit(*unit_node);
  sweep.targets = parse_targets(root, node.member("set"));
  const JsonReader values = node.member("values");
  sweep.values_path = values.path();
  sweep.values = parse_values(values, swept_number);
  return sweep;
}

nlohmann::json sweep_point_document(const nlohmann::json& document, const Sweep& sweep,
                                    std::size_t index) {
  nlohmann::json point = document;
  for (const SweepTarget& target : sweep.targets) {
    json::pointed_value(point, target.tokens) = sweep.values[index].node;
  }
  return point;
}

SweepPoint parse_sweep_point(const JsonReader& node) {
  static const std::regex kGroupPattern("[a-z0-9][a-z0-9-]{0,63}");
  node.expect_object({"group", "parameter", "value", "unit"});
  SweepPoint point;
  point.group = node.member("group").matching(
      kGroupPattern, "the sweep file's name (1 to 64 lowercase letters, digits or '-')");
  point.parameter = node.member("parameter").matching(parameter_pattern(), kParameterWords);
  point.value = point.parameter == "ttl_over_work" ? ttl_over_work(node.member("value"))
                                                   : swept_number(node.member("value"));
  if (const auto unit_node = node.optional_member("unit")) point.unit = unit(*unit_node);
  return point;
}

nlohmann::json resolved_sweep_point(const SweepPoint& point) {
  nlohmann::json resolved = {
      {"group", point.group}, {"parameter", point.parameter}, {"value", point.value}};
  if (!point.unit.empty()) resolved["unit"] = point.unit;
  return resolved;
}

}  // namespace locksim::scenario_internal
