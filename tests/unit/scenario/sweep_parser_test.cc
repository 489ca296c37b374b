// sweep_parser_test: both sweep forms expand into a scenario per value; bad ones are named by path.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/scenario/loader.h"
#include "tests/unit/scenario/scenario_test_support.h"

namespace locksim {
namespace {

using nlohmann::json;
using test::drawn_keys;
using test::error_for;
using test::expand;
using test::expect_contains;
using test::kFile;
using test::kVariants;
using test::sweep_document;
using test::sweep_error_after;
using test::workload_document;

// A sweep expands in order into one named scenario per value, each with its lease, point and
// expectations, and a resolved form that is a plain workload document.
TEST(ScenarioLoaderTest, SweepExpandsIntoOneScenarioPerValue) {
  const std::vector<Scenario> points = expand(sweep_document());
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0].name, "doc-e-ttl-ratio-ttl-x0.5");
  EXPECT_EQ(points[1].name, "doc-e-ttl-ratio-ttl-x2");
  EXPECT_EQ(points[2].name, "doc-e-ttl-ratio-ttl-x30");
  EXPECT_EQ(points[0].lock.ttl_ms, 50);
  EXPECT_EQ(points[1].lock.ttl_ms, 200);
  EXPECT_EQ(points[2].lock.ttl_ms, 3000);
  EXPECT_EQ(points[0].lock.renew_period_ms, 16);  // defaults follow each point's lease
  EXPECT_EQ(drawn_keys(*points[2].workload)["lose_sleep_ms"], 9000);
  const double values[] = {0.5, 2, 30};
  for (std::size_t i = 0; i < points.size(); ++i) {
    ASSERT_TRUE(points[i].sweep.has_value());
    EXPECT_EQ(points[i].sweep->group, "doc-e-ttl-ratio");
    EXPECT_EQ(points[i].sweep->parameter, "ttl_over_work");
    EXPECT_DOUBLE_EQ(points[i].sweep->value, values[i]);
    EXPECT_EQ(points[i].file, kFile);
    EXPECT_EQ(points[i].lock.wait.strategy, "backoff");
    EXPECT_EQ(points[i].workload->clients, 3);
    EXPECT_FALSE(points[i].resolved.contains("sweep"));
    EXPECT_EQ(points[i].resolved["lock"]["ttl_ms"], points[i].lock.ttl_ms);
    EXPECT_EQ(points[i].resolved["sweep_point"]["group"], "doc-e-ttl-ratio");
    EXPECT_EQ(points[i].resolved["name"], points[i].name);
  }
  EXPECT_EQ(points[0].expect.at("naive").verdict, Verdict::kMutexViolation);
  EXPECT_EQ(points[0].expect.at("lua_owner").causes, (std::set<std::string>{"lease_expired"}));
  EXPECT_TRUE(points[1].expect.at("naive").any);
  EXPECT_TRUE(points[1].expect.at("lua_owner").any);
  EXPECT_EQ(points[2].expect.at("naive").verdict, Verdict::kOk);
  EXPECT_FALSE(points[2].expect.at("naive").any);
  EXPECT_EQ(points[2].expect.at("lua_owner").max_violations_outside_faults, 0);
  EXPECT_EQ(points[2].resolved["expect"]["lua_owner"],
            json::parse(R"({"verdict": "ok", "max_violations_outside_faults": 0})"));

  // A document without "sweep" gives exactly one scenario.
  const std::vector<Scenario> single = expand(workload_document());
  ASSERT_EQ(single.size(), 1u);
  EXPECT_FALSE(single[0].sweep.has_value());
  EXPECT_EQ(single[0].name, "contention-8");
}

// Point keys use the shortest form of each value; leases round to the nearest ms, at least 1.
TEST(ScenarioLoaderTest, SweepValuesRoundAndFormat) {
  json document = sweep_document();
  document["workload"]["work_ms"] = json::parse(R"({"min": 1, "max": 2})");  // mean 1.5
  document["sweep"]["ttl_over_work"] = json::parse("[0.1, 3, 1000, 2.5e-1]");
  document["expect"] = json::parse(R"({"naive": {"0.1": "any", "3": "any", "1000": "any",
                                                "0.25": "any"},
                                      "lua_owner": {"0.1": "any", "3": "any", "1000": "any",
                                                    "0.25": "any"}})");
  const std::vector<Scenario> points = expand(document);
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0].name, "doc-e-ttl-ratio-ttl-x0.1");
  EXPECT_EQ(points[0].lock.ttl_ms, 1);  // 0.15 ms rounds to 0, raised to 1
  EXPECT_EQ(points[1].lock.ttl_ms, 5);  // 4.5 rounds half away from zero
  EXPECT_EQ(points[2].name, "doc-e-ttl-ratio-ttl-x1000");
  EXPECT_EQ(points[2].lock.ttl_ms, 1500);
  EXPECT_EQ(points[3].name, "doc-e-ttl-ratio-ttl-x0.25");
}

// A sweep needs a workload, sets the lease itself, and takes 1..20 distinct values in range.
TEST(ScenarioLoaderTest, BadSweepIsRejected) {
  expect_contains(sweep_error_after([](json& d) {
                    d.erase("workload");
                    d["clients"] = {"A"};
                    d["steps"] = json::parse(R"([{"client": "A", "do": "acquire"}])");
                  }),
                  {kFile, "$.sweep: only allowed in a workload scenario"});
  expect_contains(sweep_error_after([](json& d) { d["lock"]["ttl_ms"] = 100; }),
                  {kFile, "$.lock.ttl_ms: not allowed with \"sweep\""});
  expect_contains(sweep_error_after([](json& d) { d["sweep"]["ttl_over_work"][1] = 0.5; }),
                  {"$.sweep.ttl_over_work[1]: duplicate value 0.5 (also at "
                   "$.sweep.ttl_over_work[0])"});
  expect_contains(sweep_error_after([](json& d) { d["sweep"]["ttl_over_work"][0] = 0; }),
                  {"$.sweep.ttl_over_work[0]: expected a ratio of TTL to mean work time above 0 "
                   "and at most 1000, got 0"});
  expect_contains(sweep_error_after([](json& d) { d["sweep"]["ttl_over_work"][0] = 1000.5; }),
                  {"$.sweep.ttl_over_work[0]: expected a ratio"});
  expect_contains(sweep_error_after([](json& d) { d["sweep"]["ttl_over_work"] = json::array(); }),
                  {"$.sweep.ttl_over_work: expected a non-empty array"});
  expect_contains(sweep_error_after([](json& d) {
                    d["sweep"]["ttl_over_work"] = json::array();
                    for (int i = 1; i <= 21; ++i) d["sweep"]["ttl_over_work"].push_back(i);
                  }),
                  {"$.sweep.ttl_over_work: expected 1 to 20 values, got 21"});
  expect_contains(sweep_error_after([](json& d) { d["sweep"]["ttl_over_wrk"] = {1}; }),
                  {"$.sweep.ttl_over_wrk: unknown key (did you mean \"ttl_over_work\"?)"});
  // An explicit renewal period must fit every point's lease; the message names the point.
  expect_contains(sweep_error_after([](json& d) { d["lock"]["renew_period_ms"] = 60; }),
                  {"$.lock.renew_period_ms: expected less than lock.ttl_ms (50, set by sweep "
                   "point 0.5)"});
  expect_contains(sweep_error_after([](json& d) { d["workload"]["work_ms"] = 3600000; }),
                  {"$.sweep.ttl_over_work[1]: gives lock.ttl_ms 7200000 (2 x mean work_ms "
                   "3600000), above the maximum 3600000"});
  expect_contains(sweep_error_after([](json& d) { d["workload"]["work_ms"] = 0; }),
                  {"$.workload.work_ms: a \"ttl_over_work\" sweep needs a mean work time above 0"});
  expect_contains(sweep_error_after([](json& d) {
                    d["sweep_point"] =
                        json::parse(R"({"group": "x", "parameter": "ttl_over_work", "value": 1})");
                  }),
                  {"$.sweep_point: not allowed together with \"sweep\""});
}

// Loading a point's resolved document gives the same scenario, sweep point included.
TEST(ScenarioLoaderTest, ResolvedSweepPointReloadsToTheSameScenario) {
  for (const Scenario& point : expand(sweep_document())) {
    const Scenario again = parse_scenario(point.resolved, kFile, kVariants);
    EXPECT_EQ(again.name, point.name);
    EXPECT_EQ(again.lock.ttl_ms, point.lock.ttl_ms);
    EXPECT_EQ(again.lock.renew_period_ms, point.lock.renew_period_ms);
    EXPECT_EQ(again.lock.wait.max_ms, point.lock.wait.max_ms);
    EXPECT_EQ(drawn_keys(*again.workload), drawn_keys(*point.workload));
    EXPECT_EQ(again.workload->work_ms.max_ms, point.workload->work_ms.max_ms);
    ASSERT_TRUE(again.sweep.has_value());
    EXPECT_EQ(again.sweep->group, point.sweep->group);
    EXPECT_EQ(again.sweep->parameter, point.sweep->parameter);
    EXPECT_DOUBLE_EQ(again.sweep->value, point.sweep->value);
    for (const auto& [variant, expectation] : point.expect) {
      EXPECT_EQ(again.expect.at(variant).any, expectation.any);
      EXPECT_EQ(again.expect.at(variant).verdict, expectation.verdict);
      EXPECT_EQ(again.expect.at(variant).causes, expectation.causes);
    }
    EXPECT_EQ(again.resolved, point.resolved);
    EXPECT_EQ(expand(point.resolved).size(), 1u);
  }
}

// "sweep_point" is checked, and only it allows the longer expanded names.
TEST(ScenarioLoaderTest, BadSweepPointIsRejected) {
  json document = expand(sweep_document())[0].resolved;
  document["sweep_point"]["parameter"] = "TTL";
  expect_contains(error_for(document),
                  {"$.sweep_point.parameter: expected a parameter name of 1 to 32 lowercase "
                   "letters, digits or '_', starting with a letter, got \"TTL\""});
  document["sweep_point"]["parameter"] = "pause_ms";
  document["sweep_point"]["value"] = 1e-300;
  expect_contains(error_for(document), {"$.sweep_point.value: expected a number of at most 20"});
  document["sweep_point"]["value"] = 5;
  document["sweep_point"]["unit"] = "";
  expect_contains(error_for(document), {"$.sweep_point.unit: expected a non-empty string"});
  document = expand(sweep_document())[0].resolved;
  document["sweep_point"]["value"] = -1;
  expect_contains(error_for(document), {"$.sweep_point.value: expected a ratio"});
  document = expand(sweep_document())[0].resolved;
  document.erase("sweep_point");
  expect_contains(error_for(document), {"$.name: expected a name of 1 to 64"});
}

// A general sweep over a scripted scenario: a holder's pause, with a unit.
json pause_sweep_document() {
  return json::parse(R"({
    "name": "pause-sweep",
    "source": {"doc": "none", "claim": "A holder paused past its lease lets another in."},
    "variants": ["naive", "lua_owner"],
    "lock": {"ttl_ms": 1000, "acquire_timeout_ms": 5000},
    "clients": ["A", "B"],
    "steps": [
      {"client": "A", "do": "acquire"},
      {"client": "A", "do": "pause", "pause_ms": 1},
      {"client": "B", "do": "acquire"},
      {"client": "A", "do": "release"},
      {"client": "B", "do": "release"}
    ],
    "sweep": {"parameter": "pause_ms", "set": ["/steps/1/pause_ms"], "values": [100, 500, 1500],
              "unit": "ms"},
    "expect": {
      "naive": {"100": "ok", "500": "ok", "1500": "ok"},
      "lua_owner": {"100": "ok", "500": "any",
                    "1500": {"verdict": "mutex_violation", "causes": ["lease_expired"]}}
    }
  })");
}

// Returns the InputError message for expanding `document` after `edit`, or "" (and a failure).
std::string expand_error_after(json document, const std::function<void(json&)>& edit) {
  edit(document);
  try {
    expand(document);
  } catch (const InputError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no InputError for " << document.dump();
  return "";
}

// A general sweep writes each value at its pointer and loads the result like any file: one
// scripted scenario per value, named <name>-<parameter>-<value>, with its point (unit included)
// and expectations; the resolved form of a point loads again to the same point.
TEST(ScenarioLoaderTest, GeneralSweepSetsAPointerInAScriptedScenario) {
  const std::vector<Scenario> points = expand(pause_sweep_document());
  ASSERT_EQ(points.size(), 3u);
  const std::int64_t values[] = {100, 500, 1500};
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Scenario& point = points[i];
    EXPECT_EQ(point.name, "pause-sweep-pause_ms-" + std::to_string(values[i]));
    EXPECT_TRUE(point.scripted());
    EXPECT_EQ(point.steps[1].action, Step::Action::kPause);
    EXPECT_EQ(point.steps[1].work_ms, values[i]);
    EXPECT_EQ(point.lock.ttl_ms, 1000);  // untouched: only the pointer's target changes
    ASSERT_TRUE(point.sweep.has_value());
    EXPECT_EQ(point.sweep->group, "pause-sweep");
    EXPECT_EQ(point.sweep->parameter, "pause_ms");
    EXPECT_EQ(point.sweep->unit, "ms");
    EXPECT_DOUBLE_EQ(point.sweep->value, static_cast<double>(values[i]));
    json expected_point =
        json::parse(R"({"group": "pause-sweep", "parameter": "pause_ms", "unit": "ms"})");
    expected_point["value"] = static_cast<double>(values[i]);
    EXPECT_EQ(point.resolved["sweep_point"], expected_point);
    EXPECT_FALSE(point.resolved.contains("sweep"));
    EXPECT_EQ(point.resolved["steps"][1]["pause_ms"], values[i]);
    const Scenario again = parse_scenario(point.resolved, kFile, kVariants);
    EXPECT_EQ(again.name, point.name);
    EXPECT_EQ(again.steps[1].work_ms, values[i]);
    ASSERT_TRUE(again.sweep.has_value());
    EXPECT_EQ(again.sweep->unit, "ms");
    EXPECT_EQ(again.resolved, point.resolved);
  }
  EXPECT_EQ(points[0].expect.at("lua_owner").verdict, Verdict::kOk);
  EXPECT_TRUE(points[1].expect.at("lua_owner").any);
  EXPECT_EQ(points[2].expect.at("lua_owner").causes, (std::set<std::string>{"lease_expired"}));
  EXPECT_EQ(points[2].expect.at("naive").verdict, Verdict::kOk);
}

// Several pointers take the same value: both ends of a workload's pause_ms range (a RangeMs), so
// each point pauses exactly that long; an integer value stays an integer where it is written.
TEST(ScenarioLoaderTest, GeneralSweepSetsEveryPointerOfAWorkload) {
  json document = workload_document();
  document["workload"]["pause_probability"] = 0.5;
  document["workload"]["pause_ms"] = json::parse(R"({"min": 1, "max": 2})");
  document["sweep"] = json::parse(R"({"parameter": "pause_ms",
      "set": ["/workload/pause_ms/min", "/workload/pause_ms/max"], "values": [10, 250]})");
  document["expect"] = json::parse(R"({"set_nx_ex": {"10": "ok", "250": "any"}})");
  const std::vector<Scenario> points = expand(document);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].name, "contention-8-pause_ms-10");
  EXPECT_EQ(drawn_keys(*points[0].workload)["pause_ms"], json::parse(R"({"min": 10, "max": 10})"));
  EXPECT_EQ(points[1].name, "contention-8-pause_ms-250");
  EXPECT_EQ(drawn_keys(*points[1].workload)["pause_ms"],
            json::parse(R"({"min": 250, "max": 250})"));
  EXPECT_EQ(points[1].workload->work_ms.max_ms, 5);  // the rest of the file as written
  EXPECT_EQ(points[1].sweep->unit, "");
  EXPECT_FALSE(points[1].resolved["sweep_point"].contains("unit"));
  EXPECT_TRUE(points[1].expect.at("set_nx_ex").any);
  // A pointer may name the lease, which the ttl_over_work form forbids setting by hand.
  document["sweep"]["set"] = json::parse(R"(["/lock/ttl_ms"])");
  document["lock"] = json::parse(R"({"ttl_ms": 100})");
  document["sweep"]["parameter"] = "ttl_ms";
  const std::vector<Scenario> leases = expand(document);
  EXPECT_EQ(leases[0].name, "contention-8-ttl_ms-10");
  EXPECT_EQ(leases[0].lock.ttl_ms, 10);
  EXPECT_EQ(leases[1].lock.ttl_ms, 250);
  EXPECT_EQ(leases[1].lock.renew_period_ms, 83);  // defaults follow the value written
}

// A pointer must name a number in the file: each way it can fail is named at $.sweep.set[i],
// with the file and what was expected.
TEST(ScenarioLoaderTest, GeneralSweepPointersMustNameANumber) {
  const auto error = [](const std::function<void(json&)>& edit) {
    return expand_error_after(pause_sweep_document(), edit);
  };
  expect_contains(error([](json& d) { d["sweep"]["set"][0] = "/steps/9/pause_ms"; }),
                  {kFile,
                   ": $.sweep.set[0]: \"/steps/9/pause_ms\" names nothing in this file ($.steps "
                   "has 5 elements; expected an index from 0 to 4, got \"9\"); expected a JSON "
                   "Pointer to a number in this file"});
  expect_contains(error([](json& d) { d["sweep"]["set"][0] = "/steps/1/pause"; }),
                  {kFile,
                   ": $.sweep.set[0]: \"/steps/1/pause\" names nothing in this file "
                   "($.steps[1] has no key \"pause\")"});
  expect_contains(error([](json& d) { d["sweep"]["set"][0] = "/steps/1"; }),
                  {kFile,
                   ": $.sweep.set[0]: \"/steps/1\" names $.steps[1], which is an object; expected "
                   "a JSON Pointer to a number (the value each point replaces)"});
  expect_contains(error([](json& d) { d["sweep"]["set"][0] = "/steps/1/client"; }),
                  {kFile,
                   ": $.sweep.set[0]: \"/steps/1/client\" names $.steps[1].client, which "
                   "is \"A\"; expected a JSON Pointer to a number"});
  expect_contains(error([](json& d) { d["sweep"]["set"][0] = "/steps/1/pause_ms/x"; }),
                  {"$.sweep.set[0]: \"/steps/1/pause_ms/x\" names nothing in this file "
                   "($.steps[1].pause_ms is a number, not an object or array"});
  expect_contains(error([](json& d) { d["sweep"]["set"][0] = "steps/1/pause_ms"; }),
                  {"$.sweep.set[0]: \"steps/1/pause_ms\" names nothing in this file (expected a "
                   "JSON Pointer (RFC 6901) starting with '/'"});
  expect_contains(error([](json& d) { d["sweep"]["set"][0] = ""; }),
                  {"$.sweep.set[0]: \"\" names $, which is an object; expected a JSON Pointer to "
                   "a number"});
  expect_contains(error([](json& d) { d["sweep"]["set"][0] = "/sweep/values/0"; }),
                  {"$.sweep.set[0]: \"/sweep/values/0\" points into $.sweep itself"});
  expect_contains(error([](json& d) { d["sweep"]["set"][0] = 3; }),
                  {"$.sweep.set[0]: expected a JSON Pointer (RFC 6901) to a number in this file, "
                   "e.g. \"/lock/ttl_ms\", got 3"});
  expect_contains(error([](json& d) { d["sweep"]["set"].push_back("/steps/1/pause_ms"); }),
                  {"$.sweep.set[1]: \"/steps/1/pause_ms\" names $.steps[1].pause_ms again (also "
                   "at $.sweep.set[0])"});
  expect_contains(error([](json& d) { d["sweep"]["set"] = json::array(); }),
                  {"$.sweep.set: expected a non-empty array"});
  expect_contains(error([](json& d) {
                    for (int i = 0; i < 16; ++i) d["sweep"]["set"].push_back("/lock/ttl_ms");
                  }),
                  {"$.sweep.set: expected 1 to 16 JSON Pointers, got 17"});
  expect_contains(error([](json& d) { d["sweep"].erase("set"); }),
                  {"$.sweep: missing required key \"set\""});
}

// The general form's other keys: the parameter's name, the unit, the values, the two forms not
// mixed, and expectations keyed by the values. Each message names the file and the path.
TEST(ScenarioLoaderTest, BadGeneralSweepIsRejected) {
  const auto error = [](const std::function<void(json&)>& edit) {
    return expand_error_after(pause_sweep_document(), edit);
  };
  expect_contains(error([](json& d) { d["sweep"]["parameter"] = "Pause ms"; }),
                  {kFile,
                   ": $.sweep.parameter: expected a parameter name of 1 to 32 lowercase "
                   "letters, digits or '_', starting with a letter, got \"Pause ms\""});
  expect_contains(error([](json& d) { d["sweep"]["parameter"] = "ttl_over_work"; }),
                  {"$.sweep.parameter: \"ttl_over_work\" is the name of the form"});
  expect_contains(error([](json& d) { d["sweep"].erase("parameter"); }),
                  {"$.sweep: missing required key \"parameter\""});
  expect_contains(error([](json& d) { d["sweep"] = json::object(); }),
                  {"$.sweep: expected {\"parameter\": name, \"set\": [JSON Pointers], \"values\": "
                   "[numbers]} or {\"ttl_over_work\": [ratios]}"});
  expect_contains(error([](json& d) {
                    d["sweep"]["ttl_over_work"] = {1, 2};
                  }),
                  {"$.sweep.parameter: not allowed with \"ttl_over_work\""});
  expect_contains(error([](json& d) { d["sweep"]["vaules"] = {1}; }),
                  {"$.sweep.vaules: unknown key (did you mean \"values\"?)"});
  expect_contains(error([](json& d) { d["sweep"]["unit"] = ""; }),
                  {"$.sweep.unit: expected a non-empty string"});
  expect_contains(error([](json& d) { d["sweep"]["unit"] = "ms|s"; }),
                  {"$.sweep.unit: expected a unit of printable characters without '|'"});
  expect_contains(error([](json& d) { d["sweep"]["unit"] = "seventeen letters"; }),
                  {"$.sweep.unit: expected a string of at most 16 characters"});
  expect_contains(error([](json& d) { d["sweep"]["values"] = json::array(); }),
                  {"$.sweep.values: expected a non-empty array"});
  expect_contains(error([](json& d) {
                    d["sweep"]["values"] = json::array();
                    for (int i = 1; i <= 21; ++i) d["sweep"]["values"].push_back(i);
                  }),
                  {"$.sweep.values: expected 1 to 20 values, got 21"});
  expect_contains(error([](json& d) { d["sweep"]["values"][2] = 100.0; }),
                  {"$.sweep.values[2]: duplicate value 100 (also at $.sweep.values[0])"});
  expect_contains(
      error([](json& d) { d["sweep"]["values"][0] = "100"; }),
      {"$.sweep.values[0]: expected a value of the swept parameter (a number), got \"100\""});
  expect_contains(error([](json& d) { d["sweep"]["values"][0] = 1e-300; }),
                  {"$.sweep.values[0]: expected a number of at most 20 characters written "
                   "without an exponent"});
  expect_contains(error([](json& d) { d["expect"]["naive"].erase("1500"); }),
                  {kFile,
                   ": $.expect.naive: missing an entry for sweep point \"1500\"; every "
                   "value of $.sweep.values needs an expectation"});
  expect_contains(error([](json& d) { d["expect"]["naive"]["150"] = "ok"; }),
                  {"$.expect.naive[\"150\"]: \"150\" is not a value of $.sweep.values (did you "
                   "mean \"100\"?); values: 100, 500, 1500"});
  expect_contains(error([](json& d) {
                    d["sweep_point"] =
                        json::parse(R"({"group": "x", "parameter": "pause_ms", "value": 1})");
                  }),
                  {"$.sweep_point: not allowed together with \"sweep\""});
}

// A value is checked by the field it is written to, with that field's own message, and the
// message says which sweep point it came from; so is a point's name.
TEST(ScenarioLoaderTest, GeneralSweepValueIsCheckedByItsField) {
  const auto error = [](const std::function<void(json&)>& edit) {
    return expand_error_after(pause_sweep_document(), edit);
  };
  // set_value: value `index` replaced, with an expectation keyed by it.
  const auto set_value = [](json& d, std::size_t index, const json& value) {
    d["sweep"]["values"][index] = value;
    for (const char* variant : {"naive", "lua_owner"}) {
      json entries = json::object();
      for (const json& each : d["sweep"]["values"]) {
        entries[json::parse(each.dump()).dump()] = "any";
      }
      d["expect"][variant] = entries;
    }
  };
  expect_contains(error([&](json& d) { set_value(d, 2, 5000000); }),
                  {kFile,
                   ": $.steps[1].pause_ms: expected a duration in ms between 0 and 3600000, got "
                   "5000000 (in sweep point pause_ms = 5000000: $.sweep.values[2] written at each "
                   "pointer of $.sweep.set)"});
  expect_contains(error([&](json& d) { set_value(d, 1, 2.5); }),
                  {": $.steps[1].pause_ms: expected an integer number of milliseconds, got 2.5 "
                   "(in sweep point pause_ms = 2.5: $.sweep.values[1]"});
  expect_contains(error([&](json& d) {
                    d["sweep"]["set"] = {"/lock/ttl_ms"};
                    set_value(d, 0, 0);
                  }),
                  {": $.lock.ttl_ms: expected a duration in ms between 1 and 3600000, got 0 (in "
                   "sweep point pause_ms = 0"});
  expect_contains(error([](json& d) {
                    d["name"] = std::string(60, 'p');
                    d["sweep"]["parameter"] = "a_long_parameter_name";
                  }),
                  {": $.sweep.values[0]: the point's scenario name \"" + std::string(60, 'p') +
                   "-a_long_parameter_name-100\" is longer than 80 characters"});
}

}  // namespace
}  // namespace locksim
