// sweep_map_test: the safe/unsafe map of a sweep, from hand-built run counts: where a series is
// safe, mixed and broken, the one-line map for every shape, and the map's Markdown and JSON.
#include "sim/report/sweep_map.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace locksim {
namespace {

// Rates: for each value, the verdicts of its runs ('v' mutex_violation, 'o' ok, 'u' unknown,
// 'e' error, 'd' deadlock).
struct Point {
  double value;
  std::string verdicts;
};

SweepMap map_of(const std::vector<Point>& points, const std::string& unit = "ms") {
  SweepMap map{"pause-sweep", "pause_ms", unit, {}};
  for (const Point& point : points) {
    for (const char verdict : point.verdicts) {
      map.add("lua_owner_renew", point.value,
              verdict == 'v'   ? Verdict::kMutexViolation
              : verdict == 'u' ? Verdict::kUnknown
              : verdict == 'e' ? Verdict::kError
              : verdict == 'd' ? Verdict::kDeadlock
                               : Verdict::kOk);
    }
  }
  return map;
}

std::string line_of(const std::vector<Point>& points, const std::string& unit = "ms") {
  const SweepMap map = map_of(points, unit);
  return sweep_map_line(map, map.series.at(0));
}

// A clean boundary: safe values, then breaking ones; the breaking value's rate is reported.
TEST(SweepMap, SafeThenBreaks) {
  EXPECT_EQ(line_of({{100, "oooo"}, {300, "oooo"}, {700, "vvvv"}, {1500, "vvvv"}}),
            "lua_owner_renew: safe with pause_ms up to 300 ms; breaks from 700 ms (rate 4/4)");
  // Values are ordered by value, not by when they ran.
  EXPECT_EQ(line_of({{1500, "vv"}, {100, "oo"}, {700, "vo"}, {300, "oo"}}),
            "lua_owner_renew: safe with pause_ms up to 300 ms; breaks from 700 ms (rate 1/2)");
}

// Values between the safe start and the breaking end are mixed, each with its rate, even one
// with rate 0 after a violation (the map does not assume the rate only grows).
TEST(SweepMap, MixedInBetween) {
  const std::vector<Point> points = {
      {100, "oooo"}, {300, "oooo"}, {500, "vvoo"}, {600, "oooo"}, {700, "vvvv"}};
  EXPECT_EQ(line_of(points),
            "lua_owner_renew: safe with pause_ms up to 300 ms; mixed at 500 ms (2/4), 600 ms "
            "(0/4); breaks from 700 ms (rate 4/4)");
  const SweepBoundary boundary = sweep_boundary(map_of(points).series.at(0));
  EXPECT_TRUE(boundary.breaks_when_larger);
  EXPECT_EQ(boundary.safe_edge, 300);
  EXPECT_EQ(boundary.breaking_edge, 700);
  EXPECT_EQ(boundary.mixed, (std::vector<double>{500, 600}));
  // Without a safe start, the mixed part names the parameter.
  EXPECT_EQ(line_of({{100, "vo"}, {300, "oo"}, {500, "vv"}}),
            "lua_owner_renew: mixed with pause_ms at 100 ms (1/2), 300 ms (0/2); breaks from 500 "
            "ms (rate 2/2)");
  // A rate above 0 at every value breaks everywhere, however low the rate.
  EXPECT_EQ(line_of({{100, "voo"}, {300, "vvv"}}),
            "lua_owner_renew: breaks at every value of pause_ms, from 100 ms (rate 1/3)");
  // Without a breaking end.
  EXPECT_EQ(
      line_of({{100, "oo"}, {300, "vo"}, {500, "oo"}}),
      "lua_owner_renew: safe with pause_ms up to 100 ms; mixed at 300 ms (1/2), 500 ms (0/2)");
}

// A lock that breaks as the parameter shrinks (a lease as a multiple of the work time) is read
// the other way round: it breaks up to a value and is safe from a larger one.
TEST(SweepMap, BreaksWhenSmaller) {
  EXPECT_EQ(line_of({{0.5, "vv"}, {1, "vo"}, {2, "oo"}, {30, "oo"}}, ""),
            "lua_owner_renew: breaks with pause_ms up to 1 (rate 1/2); safe from 2");
  EXPECT_EQ(line_of({{0.5, "vv"}, {1, "oo"}, {2, "vo"}, {30, "oo"}}, ""),
            "lua_owner_renew: breaks with pause_ms up to 0.5 (rate 2/2); mixed at 1 (0/2), 2 "
            "(1/2); safe from 30");
  EXPECT_EQ(line_of({{0.5, "uu"}, {1, "oo"}, {2, "oo"}}, ""),
            "lua_owner_renew: mixed with pause_ms at 0.5 (undecided); safe from 1");
  const SweepBoundary boundary =
      sweep_boundary(map_of({{0.5, "v"}, {1, "v"}, {2, "o"}, {30, "o"}}).series.at(0));
  EXPECT_FALSE(boundary.breaks_when_larger);
  EXPECT_EQ(boundary.breaking_edge, 1);
  EXPECT_EQ(boundary.safe_edge, 2);
  EXPECT_TRUE(boundary.mixed.empty());
  // A tie (each direction explains one value) is read as breaking when larger.
  EXPECT_TRUE(
      sweep_boundary(map_of({{1, "v"}, {2, "o"}, {3, "v"}}).series.at(0)).breaks_when_larger);
}

// Every value safe, or every value breaking, is said so in one phrase.
TEST(SweepMap, AllSafeOrAllBreaking) {
  EXPECT_EQ(line_of({{100, "oo"}, {300, "od"}, {1500, "oo"}}),
            "lua_owner_renew: safe at every value of pause_ms (100 to 1500 ms)");
  EXPECT_EQ(line_of({{100, "vo"}, {300, "vv"}}),
            "lua_owner_renew: breaks at every value of pause_ms, from 100 ms (rate 1/2)");
  EXPECT_EQ(line_of({{0.5, "o"}}, ""), "lua_owner_renew: safe at every value of pause_ms (0.5)");
  const SweepBoundary safe = sweep_boundary(map_of({{100, "oo"}, {300, "oo"}}).series.at(0));
  EXPECT_EQ(safe.safe_edge, 300);
  EXPECT_FALSE(safe.breaking_edge.has_value());
  EXPECT_TRUE(safe.mixed.empty());
  const SweepBoundary broken = sweep_boundary(map_of({{100, "v"}, {300, "v"}}).series.at(0));
  EXPECT_FALSE(broken.safe_edge.has_value());
  EXPECT_EQ(broken.breaking_edge, 100);
}

// Unknown and error runs decide nothing: they count in neither side of a rate, and a value with
// no decided run is neither safe nor breaking.
TEST(SweepMap, UndecidedRunsDecideNothing) {
  SweepMap map = map_of({{100, "oou"}, {300, "uu"}, {700, "vve"}});
  const SweepRate& rate = map.series.at(0).rates.at(700);
  EXPECT_EQ(rate.runs, 3);
  EXPECT_EQ(rate.decided, 2);
  EXPECT_EQ(rate.violations, 2);
  EXPECT_EQ(sweep_map_line(map, map.series.at(0)),
            "lua_owner_renew: safe with pause_ms up to 100 ms; mixed at 300 ms (undecided); "
            "breaks from 700 ms (rate 2/2)");
  EXPECT_EQ(line_of({{100, "u"}, {300, "e"}}),
            "lua_owner_renew: undecided at every value of pause_ms (100 to 300 ms): no run "
            "decided");
}

// Each variant is its own series, in the order first added; the Markdown has its line and a row
// per value; the JSON has the line, the boundary and every count.
TEST(SweepMap, MarkdownAndJson) {
  SweepMap map{"pause-sweep", "pause_ms", "ms", {}};
  for (int i = 0; i < 2; ++i) {
    map.add("lua_owner_renew", 100, Verdict::kOk);
    map.add("lua_owner", 100, Verdict::kMutexViolation);
    map.add("lua_owner_renew", 1500, Verdict::kMutexViolation);
    map.add("lua_owner", 1500, i == 0 ? Verdict::kMutexViolation : Verdict::kUnknown);
  }
  ASSERT_EQ(map.series.size(), 2u);
  EXPECT_EQ(map.series[0].variant, "lua_owner_renew");
  const std::string markdown = sweep_map_markdown(map, "seed 1, 2 repetitions");
  EXPECT_NE(markdown.find("# pause-sweep: where the lock breaks along pause_ms\n"),
            std::string::npos);
  EXPECT_NE(markdown.find("(seed 1, 2 repetitions; unknown and error runs decide nothing)"),
            std::string::npos);
  EXPECT_NE(markdown.find("- lua_owner_renew: safe with pause_ms up to 100 ms; breaks from 1500 "
                          "ms (rate 2/2)\n"),
            std::string::npos);
  EXPECT_NE(markdown.find("- lua_owner: breaks at every value of pause_ms, from 100 ms (rate "
                          "2/2)\n"),
            std::string::npos);
  EXPECT_NE(markdown.find("| pause_ms (ms) | lua_owner_renew | lua_owner |\n"), std::string::npos);
  EXPECT_NE(markdown.find("| 1500 | 2/2 | 1/1 (1 undecided) |\n"), std::string::npos);

  const nlohmann::ordered_json document = sweep_map_json(map, {{"seed", 1}});
  EXPECT_EQ(document["schema"], kSweepMapSchema);
  EXPECT_EQ(document["context"]["seed"], 1);
  EXPECT_EQ(document["parameter"], "pause_ms");
  EXPECT_EQ(document["unit"], "ms");
  const auto& renew = document["variants"][0];
  EXPECT_EQ(renew["variant"], "lua_owner_renew");
  EXPECT_EQ(renew["breaks_when"], "larger");
  EXPECT_EQ(renew["safe_edge"], 100.0);
  EXPECT_EQ(renew["breaking_edge"], 1500.0);
  EXPECT_EQ(renew["line"],
            "lua_owner_renew: safe with pause_ms up to 100 ms; breaks from 1500 ms (rate 2/2)");
  EXPECT_EQ(document["variants"][1]["safe_edge"], nullptr);
  EXPECT_EQ(document["variants"][1]["points"][1],
            nlohmann::ordered_json::parse(
                R"({"value": 1500.0, "runs": 2, "decided": 1, "violations": 1})"));
}

}  // namespace
}  // namespace locksim
