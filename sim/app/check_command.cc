// `locksim check <run-dir>`: re-judge saved histories without Redis. Accepts a variant directory
// (holding history.jsonl) or a scenario run directory (holding one such directory per variant).
// The thresholds and expectations come from the run's saved scenario.json.
#include <filesystem>
#include <iostream>

#include "sim/app/commands.h"
#include "sim/checker/check.h"
#include "sim/core/error.h"
#include "sim/history/jsonl.h"
#include "sim/json/file.h"
#include "sim/lock/registry.h"
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

}  // namespace

int check_command(const CheckCommandOptions& options) {
  try {
    const fs::path dir = fs::path(options.run_dir).lexically_normal();
    if (!fs::is_directory(dir)) {
      throw InputError(options.run_dir + ": not a directory (expected a run directory)");
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
      throw InputError(options.run_dir + ": no history.jsonl in it or in its subdirectories");
    }
    register_variant_files(options.variant_files);
    const Scenario scenario =
        load_scenario(find_scenario_file(variant_dirs.front()), variant_names());
    int mismatched = 0;
    for (const fs::path& variant_dir : variant_dirs) {
      const std::string variant = variant_dir.filename().string();
      // A FIFO or a device named history.jsonl would block or never end the reader.
      json::require_regular_file(variant_dir / "history.jsonl", "history file");
      const History history = read_history_jsonl(variant_dir / "history.jsonl");
      const CheckResult result = check_history(history, check_options(scenario));
      const auto expected = scenario.expect.find(variant);
      const bool matches =
          expected != scenario.expect.end() && matches_expectation(expected->second, result);
      if (!matches) ++mismatched;
      std::cout << scenario.name << " / " << variant << ": observed "
                << describe_observation(result) << ", expected "
                << (expected == scenario.expect.end() ? std::string("nothing (no expectation)")
                                                      : describe_expectation(expected->second))
                << (matches ? "  ok" : "  MISMATCH") << " (" << history.events.size()
                << " events)\n";
      for (const MutexViolation& v : result.violations)
        std::cout << "  - " << v.explanation << "\n";
      for (const StaleRelease& s : result.stale_releases)
        std::cout << "  - " << s.explanation << "\n";
      for (const Deadlock& d : result.deadlocks) std::cout << "  - " << d.explanation << "\n";
      for (const Recovery& r : result.recoveries) std::cout << "  - " << r.explanation << "\n";
      for (const Indeterminate& i : result.indeterminate)
        std::cout << "  - " << i.explanation << "\n";
      for (const IdleHold& i : result.idle_holds) std::cout << "  - " << i.explanation << "\n";
      for (const ResourceFinding& f : result.resource_findings) {
        std::cout << "  - " << f.explanation << "\n";
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
