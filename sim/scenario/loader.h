// loader.h: load_scenario and load_scenarios, strict JSON scenario loading.
//
// Every error is an InputError whose message names the file, the JSON path and what was expected,
// e.g. `scenarios/x.json: $.lock.ttl_ms: expected a duration in ms between 1 and 3600000, got -5`
// or `scenarios/x.json: $.lock.ttll_ms: unknown key (did you mean "ttl_ms"?)`. Nothing runs
// before every file has loaded.
//
//   std::vector<Scenario> all = load_scenarios({"scenarios/"}, known_variant_names());
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/scenario/scenario.h"

namespace locksim {

// parse_scenario: validates an already-parsed document; `file` is used in messages only.
Scenario parse_scenario(const nlohmann::json& document, const std::string& file,
                        const std::vector<std::string>& known_variants);
// load_scenario: reads and parses one file (syntax errors name line and column).
Scenario load_scenario(const std::filesystem::path& path,
                       const std::vector<std::string>& known_variants);
// load_scenarios: files, or directories whose *.json files are loaded in name order.
// Duplicate scenario names are an error.
std::vector<Scenario> load_scenarios(const std::vector<std::filesystem::path>& paths,
                                     const std::vector<std::string>& known_variants);

}  // namespace locksim
