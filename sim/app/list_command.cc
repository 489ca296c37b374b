// `locksim list`: the lock variants and the scenarios, one line each.
#include <filesystem>
#include <iostream>

#include "sim/app/commands.h"
#include "sim/app/console.h"
#include "sim/core/error.h"
#include "sim/lock/registry.h"
#include "sim/scenario/loader.h"

namespace locksim {

int list_command(const ListOptions& options) {
  try {
    register_variant_files(options.variant_files);
  } catch (const InputError& e) {
    std::cerr << "locksim: " << e.what() << "\n";
    return kExitUsage;
  }
  std::cout << "Variants:\n";
  for (const LockVariant* variant : all_variants()) {
    std::string name(variant->name());
    name.resize(std::max<std::size_t>(name.size() + 1, 20), ' ');
    std::cout << "  " << name << variant->summary() << "\n";
  }
  std::vector<std::filesystem::path> paths(options.paths.begin(), options.paths.end());
  if (paths.empty() && std::filesystem::is_directory("scenarios")) paths.emplace_back("scenarios");
  if (paths.empty()) {
    std::cout << "\nScenarios: none given and no ./scenarios directory\n";
    return kExitOk;
  }
  try {
    const std::vector<Scenario> scenarios = load_scenarios(paths, variant_names());
    print_notes(scenarios);
    std::cout << "\nScenarios:\n";
    for (const Scenario& s : scenarios) {
      std::string name = s.name;
      name.resize(std::max<std::size_t>(name.size() + 1, 28), ' ');
      std::cout << "  " << name << (s.scripted() ? "scripted " : "workload ") << "doc "
                << s.source.doc << ": " << s.source.claim << "\n";
    }
  } catch (const InputError& e) {
    std::cerr << "locksim: " << e.what() << "\n";
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace locksim
