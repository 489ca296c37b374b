// scenario_parts.h: the parsers for the two scenario forms, shared by loader.cc.
//
// Internal to the scenario module. Each parser reads its part of the document through a
// JsonReader (so every error names file and path) and has a matching `resolved_*` function that
// writes the part back with every default filled in, in a form the parser accepts again.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "sim/scenario/json_reader.h"
#include "sim/scenario/scenario.h"

namespace locksim::scenario_internal {

// parse_script: the "clients" and "steps" of a scripted scenario, into scenario.clients and
// scenario.steps. `root` is the whole document.
void parse_script(const JsonReader& root, Scenario& scenario);
nlohmann::json resolved_steps(const std::vector<Step>& steps);

// parse_workload: the "workload" object.
Workload parse_workload(const JsonReader& node);
nlohmann::json resolved_workload(const Workload& workload);

}  // namespace locksim::scenario_internal
