// `locksim list`: what locksim can run, grouped: the built-in lock variants, the user's locks
// (--variant-file), the third-party libraries (with whether their runtime is installed) and the
// scenarios. Every group comes from its registry (the variant registry, adapters/libraries.json,
// the scenario files), so the list cannot go stale; --json prints the same as one document.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

#include "sim/app/commands.h"
#include "sim/app/console.h"
#include "sim/core/error.h"
#include "sim/lock/registry.h"
#include "sim/report/run_record.h"
#include "sim/scenario/loader.h"

namespace locksim {
namespace {

std::string padded(std::string text, std::size_t width) {
  text.resize(std::max(text.size() + 1, width), ' ');
  return text;
}

// library_joins: the scenarios `spec` joins (run --library), each with the expectation it must
// meet there (its reference's, or "any"), as `run` would add them; and what it skips, in words.
nlohmann::ordered_json library_joins(const LibrarySpec& spec,
                                     const std::vector<Scenario>& scenarios) {
  std::vector<Scenario> joined = scenarios;
  const std::vector<std::string> skips = add_library_variants(joined, {spec});
  nlohmann::ordered_json joins = nlohmann::ordered_json::array();
  for (const Scenario& s : joined) {
    if (std::find(s.variants.begin(), s.variants.end(), spec.name) == s.variants.end()) continue;
    joins.push_back({{"scenario", s.name},
                     {"expected", describe_expectation(s.expect.at(spec.name))},
                     {"expect", s.resolved["expect"][spec.name]}});
  }
  return {{"joins", joins}, {"skips", skips}};
}

}  // namespace

int list_command(const ListOptions& options) {
  std::vector<UserVariant> users;
  std::vector<LibrarySpec> libraries;
  std::vector<Scenario> scenarios;
  bool scenarios_given = true;
  try {
    users = register_variant_files(options.variant_files);
    libraries = register_libraries();
    std::vector<std::filesystem::path> paths(options.paths.begin(), options.paths.end());
    if (paths.empty() && std::filesystem::is_directory("scenarios"))
      paths.emplace_back("scenarios");
    scenarios_given = !paths.empty();
    if (scenarios_given) scenarios = load_scenarios(paths, variant_names());
  } catch (const InputError& e) {
    std::cerr << "locksim: " << e.what() << "\n";
    return kExitUsage;
  }
  std::set<std::string> not_built_in;
  for (const UserVariant& user : users) not_built_in.insert(user.name);
  for (const LibrarySpec& spec : libraries) not_built_in.insert(spec.name);
  std::vector<const LockVariant*> built_in;
  for (const LockVariant* variant : all_variants()) {
    if (!not_built_in.contains(std::string(variant->name()))) built_in.push_back(variant);
  }
  std::vector<bool> installed;
  for (const LibrarySpec& spec : libraries) installed.push_back(runtime_installed(spec));

  if (options.json) {
    nlohmann::ordered_json doc;
    doc["variants"] = nlohmann::ordered_json::array();
    for (const LockVariant* v : built_in) {
      doc["variants"].push_back({{"name", v->name()},
                                 {"summary", v->summary()},
                                 {"ttl", v->uses_ttl()},
                                 {"renews", v->renews()},
                                 {"multi_server", v->multi_server()},
                                 {"semaphore", v->semaphore()},
                                 {"reentrant", v->reentrant()},
                                 {"read_write", v->read_write()}});
    }
    doc["user_variants"] = nlohmann::ordered_json::array();
    for (const UserVariant& user : users) {
      doc["user_variants"].push_back({{"name", user.name},
                                      {"summary", user.spec.summary},
                                      {"file", user.spec.file},
                                      {"like", user.like}});
    }
    doc["libraries"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < libraries.size(); ++i) {
      const LibrarySpec& spec = libraries[i];
      const nlohmann::ordered_json joins = library_joins(spec, scenarios);
      doc["libraries"].push_back({{"name", spec.name},
                                  {"summary", spec.summary},
                                  {"like", spec.like},
                                  {"installed", static_cast<bool>(installed[i])},
                                  {"install", spec.install},
                                  {"joins", joins["joins"]},
                                  {"skips", joins["skips"]}});
    }
    doc["scenarios"] = nlohmann::ordered_json::array();
    for (const Scenario& s : scenarios) {
      doc["scenarios"].push_back({{"name", s.name},
                                  {"file", s.file},
                                  {"kind", s.scripted() ? "scripted" : "workload"},
                                  {"doc", s.source.doc},
                                  {"claim", s.source.claim},
                                  {"variants", s.variants},
                                  {"expect", s.resolved["expect"]}});
    }
    std::cout << doc.dump(2) << "\n";
    return kExitOk;
  }

  // The names' column is as wide as the longest name (zset_semaphore_server) and a space.
  std::size_t width = 20;
  for (const LockVariant* variant : built_in) width = std::max(width, variant->name().size() + 2);
  std::cout << "Variants (built in):\n";
  for (const LockVariant* variant : built_in) {
    std::cout << "  " << padded(std::string(variant->name()), width) << variant->summary() << "\n";
  }
  if (!users.empty()) {
    std::cout << "\nYour locks (--variant-file):\n";
    for (const UserVariant& user : users) {
      // Its reference always shows, after a summary of the user's own too.
      const std::string judged = "judged as " + reference_variant(user.spec);
      std::cout << "  " << padded(user.name, 20) << user.spec.summary
                << (user.spec.summary.ends_with(judged) ? "" : "; " + judged) << "\n";
    }
  }
  std::cout << "\nLibraries (run --library NAME; adapters/libraries.json):\n";
  if (libraries.empty()) std::cout << "  none: no adapters/libraries.json\n";
  for (std::size_t i = 0; i < libraries.size(); ++i) {
    const LibrarySpec& spec = libraries[i];
    std::cout << "  " << padded(spec.name.substr(spec.name.rfind(':') + 1), 28)
              << (installed[i] ? "installed      " : "NOT INSTALLED  ") << "like " << spec.like
              << ": " << spec.summary << "\n";
    if (!installed[i]) std::cout << "  " << padded("", 28) << "install: " << spec.install << "\n";
  }
  if (!scenarios_given) {
    std::cout << "\nScenarios: none given and no ./scenarios directory\n";
    return kExitOk;
  }
  print_notes(scenarios);
  std::cout << "\nScenarios (scripted):\n";
  for (const Scenario& s : scenarios) {
    if (!s.scripted()) continue;
    std::cout << "  " << padded(s.name, 32) << "doc " << s.source.doc << ": " << s.source.claim
              << "\n";
  }
  std::cout << "\nScenarios (workloads):\n";
  for (const Scenario& s : scenarios) {
    if (s.scripted()) continue;
    std::cout << "  " << padded(s.name, 32) << "doc " << s.source.doc << ": " << s.source.claim
              << "\n";
  }
  return kExitOk;
}

}  // namespace locksim
