// `locksim check <run-dir>`: re-judge saved histories without Redis. Accepts a variant directory
// (holding history.jsonl), a scenario run directory (holding one such directory per variant), or
// a scenario's directory (holding run directories and `latest`, which it follows).
// The thresholds and expectations come from the run's saved scenario.json.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "sim/app/commands.h"
#include "sim/app/console.h"
#include "sim/checker/check.h"
#include "sim/core/error.h"
#include "sim/history/jsonl.h"
#include "sim/json/file.h"
#include "sim/lock/registry.h"
#include "sim/report/findings.h"
#include "sim/report/run_record.h"
#include "sim/scenario/loader.h"

namespace locksim {
namespace {

namespace fs = std::filesystem;

fs::path find_scenario_file(const fs::path& dir) {
  for (const fs::path& candidate : {dir / "scenario.json", dir.parent_path() / "scenario.json"}) {
    if (fs::exists(candidate)) return candidate;
  }
  throw InputError(dir.string() +
                   ": no scenario.json here or in the parent directory "
                   "(expected a run directory written by `locksim run`)");
}

// require_known_variants: a run of a user lock (--variant-file) can only be re-read with the same
// file; say so, naming the lock, rather than the loader's bare "unknown variant". A file that is
// not valid JSON is left for the loader to report.
void require_known_variants(const fs::path& scenario_file) {
  std::ifstream in(scenario_file);
  const nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("variants") || !doc["variants"].is_array()) return;
  const std::vector<std::string> known = variant_names();
  for (const nlohmann::json& variant : doc["variants"]) {
    if (!variant.is_string()) continue;
    const std::string name = variant.get<std::string>();
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    throw InputError(scenario_file.string() + ": the run used the lock \"" + name +
                     "\", which is not built in; pass the --variant-file that defines it, the "
                     "same file the run used (locksim check " +
                     scenario_file.parent_path().string() + " --variant-file <file defining " +
                     name + ">)");
  }
}

// saved_scenario: the run's scenario.json. A run saved before "clients_run_as" took
// "event_loop" says "clients_run_as": "threads" with "workload": {"client_mode": "event_loop"},
// which is read as the event loop it ran on.
Scenario saved_scenario(const fs::path& scenario_file) {
  nlohmann::json document =
      json::read_json_file(scenario_file, json::kScenarioFileLimits, "scenario file");
  nlohmann::json* workload = document.is_object() && document.contains("workload")
                                 ? &document["workload"]
                                 : nullptr;
  if (workload != nullptr && workload->is_object() && workload->contains("client_mode")) {
    document["clients_run_as"] = (*workload)["client_mode"];
    workload->erase("client_mode");
  }
  return parse_scenario(document, scenario_file.string(), variant_names());
}

}  // namespace

std::vector<fs::path> variant_dirs_of(const std::string& run_dir) {
  fs::path dir = fs::path(run_dir).lexically_normal();
  if (!dir.has_filename()) dir = dir.parent_path();  // "run/lua_owner/" names lua_owner
  if (!fs::is_directory(dir)) {
    throw InputError(run_dir + ": not a directory (expected a run directory)");
  }
  // reports/<scenario> holds run directories and `latest`: the latest run.
  if (!fs::exists(dir / "history.jsonl") && !fs::exists(dir / "scenario.json") &&
      fs::is_directory(dir / "latest")) {
    dir /= "latest";
    std::cerr << "locksim: reading " << dir.string() << " (the latest run)\n";
  }
  std::vector<fs::path> variant_dirs;
  if (fs::exists(dir / "history.jsonl")) {
    variant_dirs.push_back(dir);
  } else {
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.is_directory() && fs::exists(entry.path() / "history.jsonl")) {
        variant_dirs.push_back(entry.path());
      }
    }
    std::sort(variant_dirs.begin(), variant_dirs.end());
  }
  if (variant_dirs.empty()) {
    throw InputError(dir.string() + ": no history.jsonl in it or in its subdirectories");
  }
  return variant_dirs;
}

int check_command(const CheckCommandOptions& options) {
  try {
    const std::vector<fs::path> variant_dirs = variant_dirs_of(options.run_dir);
    register_variant_files(options.variant_files);
    const fs::path scenario_file = find_scenario_file(variant_dirs.front());
    require_known_variants(scenario_file);
    const Scenario scenario = saved_scenario(scenario_file);
    // The findings are written for summary.md's Markdown: a terminal gets them as plain text
    // (bold as ANSI bold), a file or a pipe as plain text.
    const bool styled = styled_stdout();
    int mismatched = 0;
    for (const fs::path& variant_dir : variant_dirs) {
      const std::string variant = variant_dir.filename().string();
      // A FIFO or a device named history.jsonl would block or never end the reader.
      json::require_regular_file(variant_dir / "history.jsonl", "history file");
      const History history = read_history_jsonl(variant_dir / "history.jsonl");
      const CheckResult result = check_history(history, check_options(scenario));
      const auto expected = scenario.expect.find(variant);
      const bool matches =
          expected != scenario.expect.end() && matches_expectation(expected->second, result, history.clients);
      if (!matches) ++mismatched;
      std::cout << scenario.name << " / " << variant << ": observed "
                << describe_observation(result) << ", expected "
                << (expected == scenario.expect.end() ? std::string("nothing (no expectation)")
                                                      : describe_expectation(expected->second))
                << (matches ? "  ok" : "  MISMATCH") << " (" << history.events.size()
                << " events)\n";
      for (const Finding& finding : result.findings) {
        std::cout << "  - " << terminal_text(finding_line(finding), styled) << "\n";
      }
    }
    return mismatched == 0 ? kExitOk : kExitMismatch;
  } catch (const InputError& e) {
    std::cerr << "locksim: " << e.what() << "\n";
    return kExitUsage;
  } catch (const fs::filesystem_error& e) {
    std::cerr << "locksim: " << e.what() << "\n";
    return kExitUsage;
  }
}

}  // namespace locksim
