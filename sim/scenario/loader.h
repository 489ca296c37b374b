// loader.h: load_scenario and load_scenarios, strict JSON scenario loading.
//
// A file holds one scenario, or a "sweep" that expands into one scenario per swept value: with
// {"ttl_over_work": [...]} each point's lease follows the mean work time ("<name>-ttl-x<value>");
// with {"parameter": "pause_ms", "set": ["/steps/1/pause_ms"], "values": [...]} each point is the
// file with the value written at every JSON Pointer of "set" ("<name>-pause_ms-<value>"), loaded
// like any file. load_scenarios and parse_scenarios expand sweeps, the singular functions refuse
// them.
//
// Every error is an InputError whose message names the file, the JSON path and what was expected,
// e.g. `scenarios/x.json: $.lock.ttl_ms: expected a duration in ms between 1 and 3600000, got -5`
// or `scenarios/x.json: $.lock.ttll_ms: unknown key (did you mean "ttl_ms"?)`. Nothing runs
// before every file has loaded.
//
//   std::vector<Scenario> all = load_scenarios({"scenarios/"}, known_variant_names());
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "sim/scenario/scenario.h"

namespace locksim {

// Resolved: whether a parse fills Scenario::resolved (the scenario with every default, as reports
// write it). kSkip is for a scenario that is only run and never written (explore's schedules,
// thousands a second: the resolved form cost a third of their parse).
enum class Resolved { kFill, kSkip };

// parse_scenario: validates an already-parsed document; `file` is used in messages only.
// A sweep document is an InputError (use parse_scenarios).
Scenario parse_scenario(const nlohmann::json& document, const std::string& file,
                        const std::vector<std::string>& known_variants,
                        Resolved resolved = Resolved::kFill);
// workload_shape: what decides what a workload's clients do (clients, lock, resource, workload,
// time limit), from the Scenario itself in resolved form, for checking that a scenario
// re-parsed elsewhere (a worker process) is the one being run.
nlohmann::json workload_shape(const Scenario& scenario);
// parse_scenarios: like parse_scenario, but a sweep document expands into one scenario per value,
// in the listed order; any other document gives a single scenario.
std::vector<Scenario> parse_scenarios(const nlohmann::json& document, const std::string& file,
                                      const std::vector<std::string>& known_variants);
// load_scenario: reads and parses one file (syntax errors name line and column). A sweep file is
// an InputError (use load_scenarios).
Scenario load_scenario(const std::filesystem::path& path,
                       const std::vector<std::string>& known_variants);
// run_clients_as: runs `scenario`'s clients on `executor` (run --clients; a library's adapter
// processes), and says so in its resolved form. Throws InputError "<file>: <path>: <why>" for
// what `executor` cannot run.
void run_clients_as(Scenario& scenario, Executor executor);
// json_files: `paths` with each directory replaced by its *.json files in name order (not
// recursive); a directory without any is an InputError ("d: no *.json <what>s").
std::vector<std::filesystem::path> json_files(const std::vector<std::filesystem::path>& paths,
                                              std::string_view what);
// load_scenarios: files, or directories whose *.json files are loaded in name order; sweep files
// are expanded. Duplicate scenario names (after expansion) are an error.
std::vector<Scenario> load_scenarios(const std::vector<std::filesystem::path>& paths,
                                     const std::vector<std::string>& known_variants);

}  // namespace locksim
