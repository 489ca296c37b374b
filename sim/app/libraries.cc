// Third-party lock libraries (adapters/libraries.json): registered as variants, checked for
// their runtime, and added to the scenarios their adapters can run.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "sim/app/commands.h"
#include "sim/app/did_you_mean.h"
#include "sim/core/clock.h"
#include "sim/core/error.h"
#include "sim/lock/library_variant.h"
#include "sim/lock/registry.h"
#include "sim/scenario/scenario.h"

extern char** environ;

namespace locksim {
namespace {

// runs: whether `command` exits 0 within 20 s (its output discarded).
bool runs(const std::vector<std::string>& command) {
  std::vector<char*> argv;
  for (const std::string& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return false;
  int status = 0;
  for (int waited_ms = 0; waited_ms < 20000; waited_ms += 10) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (done < 0) return false;
    real_clock().sleep_for(ms_to_ns(10));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return false;
}

std::vector<LibrarySpec>& registered() {
  static std::vector<LibrarySpec> libraries;
  return libraries;
}

}  // namespace

const std::vector<LibrarySpec>& register_libraries() {
  std::vector<LibrarySpec>& libraries = registered();
  if (!libraries.empty()) return libraries;
  const std::filesystem::path manifest = adapters_dir() / "libraries.json";
  std::error_code error;
  if (!std::filesystem::exists(manifest, error)) return libraries;  // a build without adapters
  libraries = load_library_manifest(manifest, variant_names());
  for (const LibrarySpec& spec : libraries) register_variant(make_library_variant(spec));
  return libraries;
}

std::vector<LibrarySpec> select_libraries(const std::vector<std::string>& names) {
  const std::vector<LibrarySpec>& libraries = register_libraries();
  std::vector<std::string> known;
  for (const LibrarySpec& spec : libraries) known.push_back(spec.name);
  std::vector<LibrarySpec> chosen;
  const auto choose = [&chosen](const LibrarySpec& spec) {
    if (std::none_of(chosen.begin(), chosen.end(),
                     [&](const LibrarySpec& c) { return c.name == spec.name; })) {
      chosen.push_back(spec);
    }
  };
  for (const std::string& name : names) {
    if (name == "all") {
      for (const LibrarySpec& spec : libraries) choose(spec);
      continue;
    }
    const std::string full = name.rfind("lib:", 0) == 0 ? name : "lib:" + name;
    const auto found = std::find_if(libraries.begin(), libraries.end(),
                                    [&](const LibrarySpec& spec) { return spec.name == full; });
    if (found == libraries.end()) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      throw InputError("--library " + name + ": unknown library" + did_you_mean(full, known) +
                       "; known: " + (list.empty() ? "none (no adapters/libraries.json)" : list) +
                       ", or all");
    }
    choose(*found);
  }
  return chosen;
}

std::string library_names_text() {
  try {
    std::string text;
    for (const LibrarySpec& spec : register_libraries()) {
      text += (text.empty() ? "" : ", ") + spec.name.substr(spec.name.rfind(':') + 1);
    }
    return text.empty() ? "none (no adapters/libraries.json)" : text;
  } catch (const InputError& e) {
    return std::string("none: ") + e.what();
  }
}

bool runtime_installed(const LibrarySpec& spec) {
  return spec.runtime_check.empty() || runs(spec.runtime_check);
}

std::string missing_runtime(const std::vector<LibrarySpec>& libraries) {
  for (const LibrarySpec& spec : libraries) {
    if (spec.runtime_check.empty() || runs(spec.runtime_check)) continue;
    return spec.name + " cannot start: its runtime is missing (`" +
           [&] {
             std::string text;
             for (const std::string& arg : spec.runtime_check) text += (text.empty() ? "" : " ") + arg;
             return text;
           }() +
           "` failed). Install it with: " + spec.install;
  }
  return "";
}

std::string library_refusal(const Scenario& scenario, const LibrarySpec& library) {
  const bool cluster = scenario.topology && scenario.topology->cluster;
  if (cluster && library.quorum) {
    return "its topology is a Redis Cluster, whose nodes a quorum library's adapter would take for "
           "independent servers (connect's \"servers\" names every node, replicas too); Redlock "
           "over one cluster's primaries runs as the built-in redlock";
  }
  if (cluster && !library.cluster) {
    if (!library.cluster_refusal.empty()) {
      return "its topology is a Redis Cluster, and the adapter cannot use one (" +
             library.cluster_refusal + ")";
    }
    return "its topology is a Redis Cluster, and the adapter connects to one server (it has no "
           "cluster client: its libraries.json entry does not say \"cluster\": true)";
  }
  // A cluster client follows a failover by itself (MOVED, a refreshed slot map).
  if (scenario.changes_primary() && !cluster) {
    return "it moves the primary to another server (promote, failover), and an adapter connects "
           "to the primary of the start";
  }
  if (scenario.workload) {
    if (scenario.executor == Executor::kEventLoop) return "its workload runs on the event loop";
    return "";
  }
  for (const Step& step : scenario.steps) {
    if (!step.crash_at.empty() || !step.pause_at.empty()) {
      return step.json_path + " stops inside a call (crash_at/pause_at), which a library's API "
             "has no checkpoint for";
    }
    if (step.finally_release && !library.reentrant) {
      return step.json_path +
             " releases a lock its client may not hold (finally), which a "
             "library's lock object cannot be asked to do (a reentrant library's can: its lock is "
             "the client's)";
    }
    if (step.unsaved_token) {
      return step.json_path + " releases with a token never saved (Doc C), which a library keeps "
             "for itself";
    }
  }
  return "";
}

std::string cancel_refusal(const Scenario& scenario, const std::string& variant,
                           const LibrarySpec* spec) {
  if (spec != nullptr && spec->cancels()) return "";
  for (const Step& step : scenario.steps) {
    if (step.cancel_after_ms < 0) continue;
    return step.json_path + ".cancel_after_ms: " + variant + " cannot cancel a call (" +
           (spec == nullptr ? std::string("locksim's own clients do not; a cancellation is asked "
                                          "of a library adapter whose libraries.json entry says "
                                          "how it cancels, \"cancel\"")
            : spec->cancel.empty()
                ? std::string("its libraries.json entry has no \"cancel\": its adapter offers no "
                              "way to cancel a call")
                : "libraries.json: \"" + spec->cancel + "\"") +
           ")";
  }
  return "";
}

std::vector<std::string> add_library_variants(std::vector<Scenario>& scenarios,
                                              const std::vector<LibrarySpec>& libraries) {
  std::vector<std::string> skipped;
  for (Scenario& scenario : scenarios) {
    for (const LibrarySpec& spec : libraries) {
      const auto& listed = scenario.variants;
      if (std::find(listed.begin(), listed.end(), spec.name) != listed.end()) continue;
      if (std::find(listed.begin(), listed.end(), spec.like) == listed.end()) continue;
      if (const std::string why = library_refusal(scenario, spec); !why.empty()) {
        skipped.push_back(spec.name + " skips " + scenario.name + ": " + why);
        continue;
      }
      if (const std::string why = cancel_refusal(scenario, spec.name, &spec); !why.empty()) {
        skipped.push_back(spec.name + " skips " + scenario.name + ": " + why);
        continue;
      }
      Expectation expected = scenario.expect.at(spec.like);
      nlohmann::json resolved = scenario.resolved["expect"][spec.like];
      if (!spec.assert_like || spec.reported_in.count(scenario.name) > 0) {
        expected = Expectation{};
        expected.any = true;
        resolved = {{"verdict", "any"}};
      }
      scenario.variants.push_back(spec.name);
      scenario.expect[spec.name] = expected;
      scenario.resolved["variants"].push_back(spec.name);
      scenario.resolved["expect"][spec.name] = resolved;
    }
  }
  return skipped;
}

}  // namespace locksim
