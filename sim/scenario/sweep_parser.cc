// "sweep" (a file that expands into one scenario per value) and the "sweep_point" each expanded
// scenario carries in its resolved form.
#include <map>
#include <regex>
#include <string>

#include "sim/scenario/scenario_parts.h"

namespace locksim::scenario_internal {
namespace {

constexpr std::size_t kMaxSweepValues = 20;
constexpr double kMaxTtlOverWork = 1000.0;

// ttl_over_work: a ratio of lease to mean work time, in (0, 1000].
double ttl_over_work(const JsonReader& node) {
  const double value = node.number("a ratio of TTL to mean work time");
  if (!(value > 0.0 && value <= kMaxTtlOverWork)) {
    node.fail("expected a ratio of TTL to mean work time above 0 and at most 1000, got " +
              describe(node.value()));
  }
  return value;
}

}  // namespace

std::vector<SweepValue> parse_sweep(const JsonReader& node) {
  node.expect_object({"ttl_over_work"});
  const std::vector<JsonReader> elements =
      node.member("ttl_over_work").elements(/*non_empty=*/true);
  if (elements.size() > kMaxSweepValues) {
    node.member("ttl_over_work")
        .fail("expected 1 to " + std::to_string(kMaxSweepValues) + " values, got " +
              std::to_string(elements.size()));
  }
  std::vector<SweepValue> values;
  std::map<std::string, std::string> path_of;  // key -> path, to name duplicates
  for (const JsonReader& element : elements) {
    SweepValue value;
    value.value = ttl_over_work(element);
    value.key = shortest_number(value.value);
    value.path = element.path();
    const auto [previous, inserted] = path_of.emplace(value.key, element.path());
    if (!inserted) {
      element.fail("duplicate value " + value.key + " (also at " + previous->second + ")");
    }
    values.push_back(std::move(value));
  }
  return values;
}

SweepPoint parse_sweep_point(const JsonReader& node) {
  static const std::regex kGroupPattern("[a-z0-9][a-z0-9-]{0,63}");
  node.expect_object({"group", "parameter", "value"});
  SweepPoint point;
  point.group = node.member("group").matching(
      kGroupPattern, "the sweep file's name (1 to 64 lowercase letters, digits or '-')");
  point.parameter = node.member("parameter").one_of({"ttl_over_work"}, "parameter", "allowed");
  point.value = ttl_over_work(node.member("value"));
  return point;
}

nlohmann::json resolved_sweep_point(const SweepPoint& point) {
  return {{"group", point.group}, {"parameter", point.parameter}, {"value", point.value}};
}

}  // namespace locksim::scenario_internal
