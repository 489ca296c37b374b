#include "sim/report/sweep_map.h"

#include <algorithm>
#include <iterator>

#include "sim/json/messages.h"

namespace locksim {
namespace {

using Json = nlohmann::ordered_json;

// with_unit: "300 ms", or "0.5" without a unit.
std::string with_unit(const SweepMap& map, double value) {
  return json::shortest_number(value) + (map.unit.empty() ? "" : " " + map.unit);
}

// fraction: "7/20", the violations over the decided runs.
std::string fraction(const SweepRate& rate) {
  return std::to_string(rate.violations) + "/" + std::to_string(rate.decided);
}

bool safe(const SweepRate& rate) { return rate.decided > 0 && rate.violations == 0; }
bool breaks(const SweepRate& rate) { return rate.violations > 0; }

// cell: a value's rate in the table: "7/20", "undecided", with the undecided runs if any.
std::string cell(const SweepRate& rate) {
  if (rate.decided == 0) return "undecided (" + std::to_string(rate.runs) + " runs)";
  std::string text = fraction(rate);
  if (rate.runs > rate.decided) {
    text += " (" + std::to_string(rate.runs - rate.decided) + " undecided)";
  }
  return text;
}

}  // namespace

void SweepMap::add(const std::string& variant, double value, Verdict verdict) {
  auto found = std::find_if(series.begin(), series.end(),
                            [&](const SweepSeries& s) { return s.variant == variant; });
  if (found == series.end()) {
    series.push_back(SweepSeries{variant, {}});
    found = std::prev(series.end());
  }
  SweepRate& rate = found->rates[value];
  rate.runs += 1;
  if (verdict == Verdict::kUnknown || verdict == Verdict::kError) return;
  rate.decided += 1;
  if (verdict == Verdict::kMutexViolation) rate.violations += 1;
}

SweepBoundary sweep_boundary(const SweepSeries& series) {
  const std::vector<std::pair<double, SweepRate>> points(series.rates.begin(), series.rates.end());
  const std::size_t n = points.size();
  // leading: how many values from the smallest on satisfy `side`; trailing: how many from the
  // largest down, not reaching into the first `taken`.
  const auto leading = [&](bool (*side)(const SweepRate&)) {
    std::size_t count = 0;
    while (count < n && side(points[count].second)) ++count;
    return count;
  };
  const auto trailing = [&](bool (*side)(const SweepRate&), std::size_t taken) {
    std::size_t count = 0;
    while (count < n - taken && side(points[n - 1 - count].second)) ++count;
    return count;
  };
  const std::size_t safe_start = leading(safe);
  const std::size_t breaking_end = trailing(breaks, safe_start);
  const std::size_t breaking_start = leading(breaks);
  const std::size_t safe_end = trailing(safe, breaking_start);
  SweepBoundary boundary;
  std::size_t low = 0;   // the first mixed value
  std::size_t high = 0;  // one past the last
  if (breaking_start + safe_end > safe_start + breaking_end) {
    boundary.breaks_when_larger = false;
    if (breaking_start > 0) boundary.breaking_edge = points[breaking_start - 1].first;
    if (safe_end > 0) boundary.safe_edge = points[n - safe_end].first;
    low = breaking_start;
    high = n - safe_end;
  } else {
    if (safe_start > 0) boundary.safe_edge = points[safe_start - 1].first;
    if (breaking_end > 0) boundary.breaking_edge = points[n - breaking_end].first;
    low = safe_start;
    high = n - breaking_end;
  }
  for (std::size_t i = low; i < high; ++i) boundary.mixed.push_back(points[i].first);
  return boundary;
}

std::string sweep_map_line(const SweepMap& map, const SweepSeries& series) {
  const std::string head = series.variant + ": ";
  if (series.rates.empty()) return head + "no run of " + map.parameter;
  const double smallest = series.rates.begin()->first;
  const double largest = series.rates.rbegin()->first;
  const std::string span = smallest == largest
                               ? with_unit(map, smallest)
                               : json::shortest_number(smallest) + " to " + with_unit(map, largest);
  const auto all = [&](bool (*side)(const SweepRate&)) {
    return std::all_of(series.rates.begin(), series.rates.end(),
                       [&](const auto& point) { return side(point.second); });
  };
  if (all(safe)) return head + "safe at every value of " + map.parameter + " (" + span + ")";
  if (all(breaks)) {
    return head + "breaks at every value of " + map.parameter + ", from " +
           with_unit(map, smallest) + " (rate " + fraction(series.rates.at(smallest)) + ")";
  }
  if (all([](const SweepRate& rate) { return rate.decided == 0; })) {
    return head + "undecided at every value of " + map.parameter + " (" + span +
           "): no run decided";
  }
  const SweepBoundary boundary = sweep_boundary(series);
  // The parts in the order of their values; the first one names the parameter.
  std::vector<std::string> parts;
  const auto with_parameter = [&](const std::string& verb) {
    return verb + (parts.empty() ? " with " + map.parameter : std::string()) + " ";
  };
  const auto breaking = [&](const char* preposition) {
    parts.push_back(with_parameter("breaks") + preposition + " " +
                    with_unit(map, *boundary.breaking_edge) + " (rate " +
                    fraction(series.rates.at(*boundary.breaking_edge)) + ")");
  };
  if (boundary.breaks_when_larger && boundary.safe_edge) {
    parts.push_back(with_parameter("safe") + "up to " + with_unit(map, *boundary.safe_edge));
  }
  if (!boundary.breaks_when_larger && boundary.breaking_edge) breaking("up to");
  if (!boundary.mixed.empty()) {
    std::string mixed = with_parameter("mixed") + "at ";
    for (std::size_t i = 0; i < boundary.mixed.size(); ++i) {
      const SweepRate& rate = series.rates.at(boundary.mixed[i]);
      mixed += (i == 0 ? "" : ", ") + with_unit(map, boundary.mixed[i]) + " (" +
               (rate.decided == 0 ? std::string("undecided") : fraction(rate)) + ")";
    }
    parts.push_back(std::move(mixed));
  }
  if (boundary.breaks_when_larger && boundary.breaking_edge) breaking("from");
  if (!boundary.breaks_when_larger && boundary.safe_edge) {
    parts.push_back(with_parameter("safe") + "from " + with_unit(map, *boundary.safe_edge));
  }
  std::string line = head;
  for (std::size_t i = 0; i < parts.size(); ++i) line += (i == 0 ? "" : "; ") + parts[i];
  return line;
}

std::string sweep_map_markdown(const SweepMap& map, const std::string& how) {
  const std::string column = map.parameter + (map.unit.empty() ? "" : " (" + map.unit + ")");
  std::string text = "# " + map.group + ": where the lock breaks along " + map.parameter + "\n\n";
  text += "Runs whose verdict was mutex_violation / runs with a decided verdict, per value of " +
          map.parameter + " (" + how +
          "; unknown and error runs decide nothing). \"Safe up to\": the largest value that, with "
          "every smaller one, had no violation; \"breaks from\": the smallest value from which "
          "every larger one had some (\"breaks up to\" and \"safe from\" for a lock that breaks "
          "as the parameter shrinks).\n\n";
  for (const SweepSeries& series : map.series) text += "- " + sweep_map_line(map, series) + "\n";
  std::map<double, bool> values;
  for (const SweepSeries& series : map.series) {
    for (const auto& [value, unused] : series.rates) values[value] = true;
  }
  text += "\n| " + column + " |";
  std::string rule = "|---:|";
  for (const SweepSeries& series : map.series) {
    text += " " + series.variant + " |";
    rule += "---|";
  }
  text += "\n" + rule + "\n";
  for (const auto& [value, unused] : values) {
    text += "| " + json::shortest_number(value) + " |";
    for (const SweepSeries& series : map.series) {
      const auto rate = series.rates.find(value);
      text +=
          " " + (rate == series.rates.end() ? std::string("not run") : cell(rate->second)) + " |";
    }
    text += "\n";
  }
  return text;
}

Json sweep_map_json(const SweepMap& map, const Json& context) {
  Json j;
  j["schema"] = kSweepMapSchema;
  j["context"] = context;
  j["group"] = map.group;
  j["parameter"] = map.parameter;
  j["unit"] = map.unit;
  Json variants = Json::array();
  for (const SweepSeries& series : map.series) {
    const SweepBoundary boundary = sweep_boundary(series);
    Json entry;
    entry["variant"] = series.variant;
    entry["line"] = sweep_map_line(map, series);
    entry["breaks_when"] = boundary.breaks_when_larger ? "larger" : "smaller";
    entry["safe_edge"] = boundary.safe_edge ? Json(*boundary.safe_edge) : Json(nullptr);
    entry["breaking_edge"] = boundary.breaking_edge ? Json(*boundary.breaking_edge) : Json(nullptr);
    Json points = Json::array();
    for (const auto& [value, rate] : series.rates) {
      points.push_back(Json{{"value", value},
                            {"runs", rate.runs},
                            {"decided", rate.decided},
                            {"violations", rate.violations}});
    }
    entry["points"] = std::move(points);
    variants.push_back(std::move(entry));
  }
  j["variants"] = std::move(variants);
  return j;
}

}  // namespace locksim
