// sweep_map.h: SweepMap, the safe/unsafe map of a sweep: for each variant, the values of the
// swept parameter at which its runs stayed exclusive and those from which they broke, in one line.
//
//   SweepMap map{"pause-sweep", "pause_ms", "ms", {}};
//   map.add("lua_owner_renew", 100, Verdict::kOk);  // one run of one point, every repetition
//   ...
//   sweep_map_line(map, map.series[0]);
//   // "lua_owner_renew: safe with pause_ms up to 700 ms; breaks from 1500 ms (rate 20/20)"
//
// The rate at a value is the runs whose verdict is mutex_violation over the runs with a decided
// verdict: `unknown` (the run could not decide) and `error` (the lock or the server failed) decide
// nothing about exclusion, so they count in neither. Pure functions of the counts, no I/O.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/verdict.h"

namespace locksim {

// SweepRate: the runs of one variant at one value of a sweep.
struct SweepRate {
  int runs = 0;        // every run counted, decided or not
  int decided = 0;     // runs whose verdict was neither unknown nor error
  int violations = 0;  // decided runs whose verdict was mutex_violation
};

// SweepSeries: one variant across the values of a sweep, by value (ascending).
struct SweepSeries {
  std::string variant;
  std::map<double, SweepRate> rates;
};

// SweepMap: the runs of one sweep group (one sweep file) in one `locksim run`.
struct SweepMap {
  std::string group;                // the sweep file's name
  std::string parameter;            // "pause_ms", "ttl_over_work"
  std::string unit;                 // "" or "ms", "%"...
  std::vector<SweepSeries> series;  // one per variant, in the order they were first added

  // add: counts one run of `variant` at `value` with `verdict`.
  void add(const std::string& variant, double value, Verdict verdict);
};

// SweepBoundary: where one series turns from safe to breaking. Most parameters break as they grow
// (a longer pause): the series is safe at its small values and breaks at its large ones. Some
// break as they shrink (a shorter lease): sweep_boundary reads the series in the direction that
// explains more of its values, the growing one on a tie.
struct SweepBoundary {
  // Whether the series breaks at its large values (true) or at its small ones (false).
  bool breaks_when_larger = true;
  // The safe value nearest the boundary: breaking when larger, the largest value that, with every
  // smaller one, had rate 0 with a decided run ("safe up to"); breaking when smaller, the smallest
  // value from which every larger one had rate 0 ("safe from"). nullopt when there is none.
  std::optional<double> safe_edge;
  // The breaking value nearest the boundary: breaking when larger, the smallest value from which
  // every larger one had a rate above 0 ("breaks from"); breaking when smaller, the largest value
  // that, with every smaller one, had a rate above 0 ("breaks up to").
  std::optional<double> breaking_edge;
  // The values in between, ascending: rates that belong to neither side (a rate above 0 among
  // safe values, a 0 among breaking ones, or no decided run).
  std::vector<double> mixed;
};

// sweep_boundary: the boundary of one series.
SweepBoundary sweep_boundary(const SweepSeries& series);

// sweep_map_line: "<variant>: safe with <parameter> up to V <unit>; mixed at W <unit> (7/20);
// breaks from X <unit> (rate 20/20)"; for a series that breaks at its small values "<variant>:
// breaks with <parameter> up to X (rate a/b); mixed at ...; safe from V"; or "safe at every value
// of ...", "breaks at every value of ..., from V (rate a/b)", "undecided at every value of ..."
// when so.
std::string sweep_map_line(const SweepMap& map, const SweepSeries& series);

// sweep_map_markdown: <out>/<group>.map.md: the map lines and a value x variant table of rates.
// `how` says how the runs were made ("seed 1, 20 repetitions").
std::string sweep_map_markdown(const SweepMap& map, const std::string& how);

// sweep_map_json: <out>/<group>.map.json (schema 1), for plots: {"schema":1, "context":
// `context`, "group", "parameter", "unit", "variants": [{"variant", "line", "breaks_when":
// "larger" or "smaller", "safe_edge" (a value or null), "breaking_edge", "points": [{"value",
// "runs", "decided", "violations"}]}]}.
nlohmann::ordered_json sweep_map_json(const SweepMap& map, const nlohmann::ordered_json& context);

// kSweepMapSchema: the "schema" of <group>.map.json.
constexpr int kSweepMapSchema = 1;

}  // namespace locksim
