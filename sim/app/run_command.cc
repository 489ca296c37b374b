// `locksim run`: load every scenario (nothing runs unless all load), start or reach Redis, run each
// scenario once per variant (and per repetition), judge each history, write the reports, print the
// scenario x variant outcome table, and exit 0 only if every outcome is the expected one.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <exception>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include "sim/app/commands.h"
#include "sim/app/console.h"
#include "sim/app/did_you_mean.h"
#include "sim/app/run_unit.h"
#include "sim/app/signals.h"
#include "sim/core/error.h"
#include "sim/core/random.h"
#include "sim/driver/driver.h"
#include "sim/history/recorder.h"
#include "sim/lock/registry.h"
#include "sim/lock/script_variant.h"
#include "sim/model/model_connection.h"
#include "sim/redis/connection.h"
#include "sim/redis/server.h"
#include "sim/report/files.h"
#include "sim/report/junit.h"
#include "sim/report/sweep_map.h"
#include "sim/scenario/loader.h"
#include "sim/explore/simulated_run.h"

namespace locksim {
namespace {

namespace fs = std::filesystem;

using run_internal::RunBoard;
using run_internal::RunDone;
using run_internal::RunSetup;
using run_internal::selected_variants;
using run_internal::Unit;
using run_internal::UnitResult;
using run_internal::UnitRunner;

struct Tally {
  int runs = 0;
  int matched = 0;
  std::string last_observed;
  std::string expected;
};

// sweep_map_of: the map of the sweep `point` belongs to, added to `maps` at its first run.
SweepMap& sweep_map_of(std::vector<SweepMap>& maps, const SweepPoint& point) {
  for (SweepMap& map : maps) {
    if (map.group == point.group) return map;
  }
  maps.push_back(SweepMap{point.group, point.parameter, point.unit, {}});
  return maps.back();
}

// report_sweep_maps: for each sweep that ran, writes <out>/<group>.map.md and .map.json and prints
// its map lines. Returns the error if a file could not be written, else "".
std::string report_sweep_maps(const std::vector<SweepMap>& maps, const RunOptions& options,
                              std::uint64_t seed, const std::string& started_at) {
  const std::string how =
      "seed " + std::to_string(seed) + ", " +
      (options.repeat > 1 ? std::to_string(options.repeat) + " repetitions" : "one run each");
  const nlohmann::ordered_json context = {{"seed", seed},
                                          {"repetitions", options.repeat},
                                          {"commit", build_commit()},
                                          {"started_at", started_at}};
  for (const SweepMap& map : maps) {
    const fs::path markdown = fs::path(options.out_dir) / (map.group + ".map.md");
    std::cout << "\nSweep " << map.group << ": runs with a violation / decided runs, by "
              << map.parameter << " (" << markdown.string() << ")\n";
    for (const SweepSeries& series : map.series) {
      std::cout << "  " << sweep_map_line(map, series) << "\n";
    }
    try {
      write_file_atomically(markdown, sweep_map_markdown(map, how));
      write_file_atomically(fs::path(options.out_dir) / (map.group + ".map.json"),
                            sweep_map_json(map, context).dump(2) + "\n");
    } catch (const EnvironmentError& e) {
      return e.what();
    }
  }
  return "";
}

// run_all_clients_as: --clients `word`: every scenario's clients run so; what that executor
// cannot run is an InputError naming the flag, the file and the field.
void run_all_clients_as(std::vector<Scenario>& scenarios, const std::string& word) {
  for (Scenario& s : scenarios) {
    try {
      run_clients_as(s, *executor_from(word));
    } catch (const InputError& e) {
      throw InputError("--clients " + word + ": " + e.what());
    }
  }
}

// skip_what_the_simulator_cannot_run: drops every scenario x variant the simulator refuses,
// saying why; an InputError if nothing is left.
void skip_what_the_simulator_cannot_run(std::vector<Scenario>& scenarios,
                                        const std::vector<std::string>& filter) {
  std::size_t left = 0;
  std::size_t skipped = 0;
  for (Scenario& scenario : scenarios) {
    std::vector<std::string> kept;
    for (const std::string& name : scenario.variants) {
      const bool selected =
          filter.empty() || std::find(filter.begin(), filter.end(), name) != filter.end();
      const LockVariant* variant = find_variant(name);
      const std::string why =
          variant == nullptr ? std::string() : simulator_refusal(scenario, *variant);
      if (selected && !why.empty()) {
        std::cout << "locksim: skipped on the simulator: " << scenario.name << " / " << name << ": "
                  << why << "\n";
        ++skipped;
        continue;
      }
      if (selected) ++left;
      kept.push_back(name);
    }
    scenario.variants = std::move(kept);
  }
  std::erase_if(scenarios, [](const Scenario& s) { return s.variants.empty(); });
  if (left == 0 && skipped == 0) {
    // Nothing was selected at all: said as on a real server.
    throw InputError("--variant: none of the given variants is listed by these scenarios");
  }
  if (left == 0) {
    throw InputError("--backend sim: the simulator can run none of the " + std::to_string(skipped) +
                     " selected outcome(s) (each is skipped above, with the reason); run them "
                     "without --backend sim");
  }
}

// redis_refusal: why `scenario` cannot run on a --redis server ("" if it can). locksim never
// restarts, pauses, fails over or shifts the clock of a server it did not start, and cannot make
// several servers (Redlock's nodes, a replica, Sentinel) out of one URL; everything else (client
// processes, link faults through locksim's proxy, libraries) runs on the user's server.
std::string redis_refusal(const Scenario& scenario) {
  if (!scenario.topology) return "";
  return std::string(scenario.server_faults() ? "harms its servers ("
                                              : "runs on servers of its own (") +
         scenario.topology->name + " topology)";
}

// same_file: whether paths `a` and `b` name one file (as written, or once made absolute).
bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code error;
  return a == b || fs::weakly_canonical(a, error) == fs::weakly_canonical(b, error);
}

// skip_what_redis_cannot_run: with --redis, drops every scenario found in a directory that needs
// servers locksim starts itself, listing each with the reason; such a scenario named on the
// command line itself is an InputError (the user asked for it by name), as is nothing left.
void skip_what_redis_cannot_run(std::vector<Scenario>& scenarios,
                                const std::vector<std::string>& paths) {
  std::vector<fs::path> named;
  for (const std::string& path : paths) {
    std::error_code error;
    if (!fs::is_directory(path, error)) named.emplace_back(path);
  }
  const std::string rule =
      "locksim never restarts, pauses, fails over or shifts the clock of a server it did not "
      "start, and cannot make several servers out of one URL";
  std::vector<std::string> lines;
  std::set<std::string> files_listed;  // a sweep's points share their file: one line for it
  for (const Scenario& s : scenarios) {
    const std::string why = redis_refusal(s);
    if (why.empty()) continue;
    for (const fs::path& path : named) {
      if (same_file(path, s.file)) {
        throw InputError(s.file + ": $.topology: scenario " + s.name + " " + why +
                         ", which locksim starts itself: it cannot run on --redis (" + rule +
                         "); drop --redis, or leave this file out");
      }
    }
    if (files_listed.insert(s.file).second) {
      lines.push_back("  " + (s.sweep ? s.sweep->group : s.name) + ": " + why);
    }
  }
  if (lines.empty()) return;
  std::erase_if(scenarios, [](const Scenario& s) { return !redis_refusal(s).empty(); });
  std::cout << "locksim: --redis: skipped " << lines.size()
            << " scenario file(s) that need servers locksim starts itself (" << rule
            << "; run them without --redis):\n";
  for (const std::string& line : lines) std::cout << line << "\n";
  if (scenarios.empty()) {
    throw InputError("--redis: every scenario given needs servers locksim starts itself (listed "
                     "above); run them without --redis");
  }
}

}  // namespace

int run_command(const RunOptions& options, StopSignal& stop) {
  // 1. Input: everything is validated before anything runs.
  std::vector<Scenario> scenarios;
  std::vector<UserVariant> users;
  std::vector<LibrarySpec> libraries;
  try {
    users = register_variant_files(options.variant_files);
    register_libraries();
    std::vector<fs::path> paths(options.paths.begin(), options.paths.end());
    scenarios = load_scenarios(paths, variant_names());
    print_notes(scenarios);
    if (!options.clients.empty()) run_all_clients_as(scenarios, options.clients);
    add_user_variants(scenarios, users);
    // Libraries: --library, and any --variant that names one.
    std::vector<std::string> library_names = options.libraries;
    for (const std::string& v : options.variants) {
      if (v.rfind("lib:", 0) == 0 && find_variant(v) != nullptr) library_names.push_back(v);
    }
    libraries = select_libraries(library_names);
    for (const std::string& skip : add_library_variants(scenarios, libraries)) {
      std::cout << "locksim: " << skip << "\n";
    }
    // Where the executor comes from, for messages: --clients, or each file's own field.
    const std::string clients_flag = options.clients.empty() ? "" : "--clients " + options.clients;
    for (const Scenario& s : scenarios) {
      for (const std::string& v : selected_variants(s, options.variants)) {
        if (const LockVariant* variant = find_variant(v)) {
          if (const std::string why = clients_run_as_refusal(s, *variant); !why.empty()) {
            throw InputError((clients_flag.empty() ? s.file + ": $.clients_run_as"
                                                   : clients_flag + ": " + s.file) +
                             ": " + why);
          }
          if (const std::string why = cancel_refusal(s, v, library_spec(*variant)); !why.empty()) {
            throw InputError(s.file + ": " + why);
          }
        }
      }
    }
    for (const std::string& v : options.variants) {
      if (!find_variant(v)) {
        std::string known;
        for (const std::string& name : variant_names()) known += (known.empty() ? "" : ", ") + name;
        throw InputError("--variant " + v + ": unknown variant" + did_you_mean(v, variant_names()) +
                         "; known: " + known);
      }
    }
    if (options.backend == "sim") {
      if (!options.redis_url.empty()) {
        throw InputError(
            "--backend sim runs on the simulator's own in-memory Redis; drop --redis (or run "
            "on that server without --backend sim)");
      }
      skip_what_the_simulator_cannot_run(scenarios, options.variants);
    } else if (!options.redis_url.empty()) {
      skip_what_redis_cannot_run(scenarios, options.paths);
    }
    // Before the runs, not after them: a long run would otherwise end without its report.
    if (!options.junit_path.empty()) {
      if (const std::string problem = junit_path_problem(options.junit_path); !problem.empty()) {
        throw InputError(problem);
      }
    }
  } catch (const InputError& e) {
    std::cerr << "locksim: " << e.what() << "\n";
    return kExitUsage;
  }
  // A library whose runtime is missing cannot run at all: a harness failure, said before
  // anything is written, with the command that installs it.
  if (const std::string missing = missing_runtime(libraries); !missing.empty()) {
    std::cerr << "locksim: " << missing << "\n";
    return kExitEnvironment;
  }
  return run_scenarios(options, std::move(scenarios), users, stop, nullptr);
}

namespace {

// What a run directory takes on disk, for the estimate of --repeat, as measured on the simulator
// (tests/hostile/valid and the catalogue's scripted scenarios, 35-100 KB a run): the run's own
// files (report.html, results.json, summary.md, scenario.json), each variant's (results, summary,
// trace), and each recorded event across history.jsonl, trace.json and the report's timeline.
constexpr double kRunDirectoryBytes = 16e3;
constexpr double kVariantDirectoryBytes = 9e3;
constexpr double kDiskBytesPerEvent = 250;
// kRepeatNoticeRuns, kRepeatNoticeBytes: from this many repetitions, or this many bytes at
// least, a --repeat says before it starts what it will write (100,000 repetitions wrote 4.3 GB in
// 120 s without a word).
constexpr int kRepeatNoticeRuns = 1000;
constexpr double kRepeatNoticeBytes = 1e9;

// free_bytes_under: the space available to a new file under `dir` (its nearest existing
// ancestor); 0 if unknown.
std::uintmax_t free_bytes_under(fs::path dir) {
  std::error_code error;
  while (!fs::exists(dir, error) && dir.has_relative_path() && dir.has_parent_path()) {
    dir = dir.parent_path();
  }
  if (dir.empty()) dir = ".";
  const fs::space_info space = fs::space(dir, error);
  return error ? 0 : space.available;
}

// size_text: a byte count in MB below a gigabyte, else in GB ("3.4 MB", "4.30 GB").
std::string size_text(double bytes) {
  char text[32];
  if (bytes < 1e9) {
    std::snprintf(text, sizeof text, "%.1f MB", bytes / 1e6);
  } else {
    std::snprintf(text, sizeof text, "%.2f GB", bytes / 1e9);
  }
  return text;
}

// check_repeat_disk: --repeat keeps every repetition's run directory (each is a seed that
// replays it). Says what that will write when it is much, from at least (the files every run
// writes) to at most (with estimated_events, an upper estimate), and refuses (exit 2) what would
// not fit on the output's file system even at least; 0 if the runs may go on.
int check_repeat_disk(const RunOptions& options, const std::vector<Scenario>& scenarios) {
  if (options.repeat <= 1) return 0;
  double least_per_repetition = 0;
  double most_per_repetition = 0;
  std::size_t directories_per_repetition = 0;
  for (const Scenario& s : scenarios) {
    const std::vector<std::string> variants = selected_variants(s, options.variants);
    if (variants.empty()) continue;
    ++directories_per_repetition;
    least_per_repetition += kRunDirectoryBytes;
    most_per_repetition += kRunDirectoryBytes;
    for (const std::string& v : variants) {
      least_per_repetition += kVariantDirectoryBytes;
      most_per_repetition +=
          kVariantDirectoryBytes + estimated_events(s, *find_variant(v)) * kDiskBytesPerEvent;
    }
  }
  const double least = least_per_repetition * options.repeat;
  const double most = most_per_repetition * options.repeat;
  const double directories = static_cast<double>(directories_per_repetition) * options.repeat;
  const std::uintmax_t available = free_bytes_under(options.out_dir);
  char text[512];
  if (available > 0 && least > static_cast<double>(available)) {
    std::snprintf(text, sizeof text,
                  "--repeat %d: the runs would write %.0f run directories under %s, at least "
                  "%s (%.0f KB a repetition), more than the %s free there; lower --repeat, or "
                  "make room",
                  options.repeat, directories, options.out_dir.c_str(), size_text(least).c_str(),
                  least_per_repetition / 1e3, size_text(static_cast<double>(available)).c_str());
    std::cerr << "locksim: " << text << "\n";
    return kExitUsage;
  }
  if (options.repeat >= kRepeatNoticeRuns || least >= kRepeatNoticeBytes) {
    std::snprintf(text, sizeof text,
                  "--repeat %d: every repetition keeps its run directory (a seed to replay): "
                  "%.0f run directories under %s, %s to %s by estimate (%.0f to %.0f KB a "
                  "repetition); Ctrl-C stops the runs and keeps what ran",
                  options.repeat, directories, options.out_dir.c_str(), size_text(least).c_str(),
                  size_text(most).c_str(), least_per_repetition / 1e3, most_per_repetition / 1e3);
    std::cerr << "locksim: " << text << std::endl;
  }
  return 0;
}

// refuse_what_would_not_fit: a run keeps its whole history until it is judged; what would not fit
// in memory is refused (exit 2), else 0.
int refuse_what_would_not_fit(const RunOptions& options, const std::vector<Scenario>& scenarios) {
  // With --jobs N, N histories may be kept at once: each gets its share.
  const double limit_bytes =
      (options.max_memory_mb > 0 ? static_cast<double>(options.max_memory_mb) * 1e6
                                 : 0.8 * static_cast<double>(available_memory_bytes())) /
      std::max(1, options.jobs);
  for (const Scenario& s : scenarios) {
    for (const std::string& v : selected_variants(s, options.variants)) {
      const double events = estimated_events(s, *find_variant(v));
      const double bytes = events * static_cast<double>(kEventMemoryBytes);
      if (limit_bytes > 0 && bytes > limit_bytes) {
        char text[512];
        std::snprintf(
            text, sizeof text,
            "%s: $.workload: %s with %s would record about %.3g events, about %.0f MB "
            "of memory (%zu bytes an event), more than the %.0f MB allowed (%s); "
            "lower $.workload.clients or $.workload.cycles",
            s.file.c_str(), s.name.c_str(), v.c_str(), events, bytes / 1e6, kEventMemoryBytes,
            limit_bytes / 1e6,
            options.jobs > 1 ? "its share of --max-memory (or of 80% of the memory available) "
                               "among --jobs"
            : options.max_memory_mb > 0 ? "--max-memory"
                                        : "80% of the memory available; see --max-memory");
        std::cerr << "locksim: " << text << "\n";
        return kExitUsage;
      }
    }
  }
  return 0;
}

// refuse_on_redis_url: a bad --redis URL, or a scenario with a topology on it, is refused (exit
// 2), else 0.
int refuse_on_redis_url(const RunOptions& options, const std::vector<Scenario>& scenarios) {
  if (options.redis_url.empty()) return 0;
  try {
    parse_redis_url(options.redis_url);
  } catch (const InputError& e) {
    std::cerr << "locksim: --redis: " << e.what() << "\n";
    return kExitUsage;
  }
  // locksim never restarts, pauses, fails over or shifts the clock of a server it did not
  // start, and cannot make several servers out of one URL.
  for (const Scenario& s : scenarios) {
    if (!s.topology) continue;
    std::cerr << "locksim: " << s.file << ": $.topology: scenario " << s.name << " runs on "
              << (s.server_faults() ? "servers it harms (" : "servers of its own (")
              << s.topology->name << " topology), which locksim starts itself; it cannot run "
              << "on --redis (locksim never restarts, pauses, fails over or shifts the clock "
              << "of a server it did not start); drop --redis or leave this scenario out\n";
    return kExitUsage;
  }
  return 0;
}

// refuse_what_cannot_run: the exit code of what cannot run as asked (memory, no pair selected,
// disk for --repeat, --redis), said on stderr; 0 if the runs may start.
int refuse_what_cannot_run(const RunOptions& options, const std::vector<Scenario>& scenarios,
                           std::size_t pair_count) {
  if (const int refused = refuse_what_would_not_fit(options, scenarios); refused != 0) {
    return refused;
  }
  if (pair_count == 0) {
    std::cerr << "locksim: --variant: none of the given variants is listed by these scenarios\n";
    return kExitUsage;
  }
  if (const int refused = check_repeat_disk(options, scenarios); refused != 0) return refused;
  return refuse_on_redis_url(options, scenarios);
}

// reach_redis: the Redis the runs use: a private server unless --redis was given; none on the
// simulator (whose seed is printed here). nullopt: it could not be reached (said; exit 3).
std::optional<RedisTarget> reach_redis(const RunOptions& options, std::uint64_t& seed) {
  if (options.backend != "sim") return start_session(options.redis_url, options.seed, seed);
  seed = options.seed.value_or(random_seed());
  std::cout << "locksim: seed " << seed << " (repeat this run with --seed " << seed << ")"
            << std::endl;
  std::optional<RedisTarget> target;
  target.emplace();
  target->label = "the simulator: an in-memory Redis on virtual time";
  target->version = "7.0 model (the simulator)";
  return target;
}

// compile_user_scripts: user scripts are compiled before anything runs, so a Lua syntax error is
// bad input (said; false).
bool compile_user_scripts(const std::vector<UserVariant>& users, bool simulated,
                          const Endpoint& endpoint) {
  // On the simulator the model compiles them (its Lua is the one Redis embeds).
  ModelServer model;
  std::unique_ptr<Connection> connection =
      simulated
          ? std::unique_ptr<Connection>(std::make_unique<ModelConnection>(model, real_clock()))
          : std::make_unique<HiredisConnection>(endpoint, ConnectionOptions{});
  for (const UserVariant& user : users) {
    const std::string error = compile_script_variant(user.spec, *connection);
    if (!error.empty()) {
      std::cerr << "locksim: " << error << "\n";
      return false;
    }
  }
  return true;
}

// stop_unneeded_server: a run whose every scenario brings the servers of its topology has no use
// for the private server beside them: it is stopped once the user scripts are compiled, rather
// than left to be killed unnoticed (only a topology's processes are watched). Returns the
// servers' label for the header line.
std::string stop_unneeded_server(const RunOptions& options, const std::vector<Scenario>& scenarios,
                                 RedisTarget& target) {
  const bool topologies_only =
      std::all_of(scenarios.begin(), scenarios.end(), [&options](const Scenario& s) {
        return s.topology.has_value() || selected_variants(s, options.variants).empty();
      });
  if (!target.server || !topologies_only) return target.label;
  set_server_pid_for_signals(-1);
  target.server->stop();
  return "the servers of each scenario's topology; no other";
}

// dry_run: --dry-run: what the runs would be, once everything is resolved (files, variants, user
// scripts compiled by the model's Lua, --redis reached with its credentials), and nothing run,
// started or written. Exit 0, 2 for a user script that does not compile, 3 for a --redis server
// that cannot be reached.
int dry_run(const RunOptions& options, const std::vector<Scenario>& scenarios,
            const std::vector<UserVariant>& users, std::size_t pair_count) {
  if (!users.empty() && !compile_user_scripts(users, /*simulated=*/true, Endpoint{})) {
    return kExitUsage;
  }
  std::string where = "a private redis-server (not started)";
  if (options.backend == "sim") {
    where = "the simulator";
  } else if (!options.redis_url.empty()) {
    try {
      const RedisTarget target = open_redis(options.redis_url);
      where = "redis " + target.version + " at " + target.label + " (reached)";
    } catch (const EnvironmentError& e) {
      std::cerr << "locksim: " << e.what() << "\n";
      return kExitEnvironment;
    }
  }
  std::size_t scenario_count = 0;
  for (const Scenario& s : scenarios) {
    if (!selected_variants(s, options.variants).empty()) ++scenario_count;
  }
  std::cout << "locksim: dry run, nothing is run or written: " << scenario_count
            << " scenario(s), " << pair_count * static_cast<std::size_t>(options.repeat)
            << " variant run(s)"
            << (options.repeat > 1 ? " (" + std::to_string(options.repeat) + " repetitions)" : "")
            << " on " << where << "\n";
  for (const Scenario& s : scenarios) {
    const std::vector<std::string> variants = selected_variants(s, options.variants);
    if (variants.empty()) continue;
    std::string line = "  " + s.name + ":";
    for (const std::string& v : variants) line += " " + v;
    std::cout << line << "\n";
  }
  return kExitOk;
}

// plan_units: every repetition of every scenario with a selected variant, repetition by
// repetition, each in file order.
std::vector<Unit> plan_units(const RunOptions& options, const std::vector<Scenario>& scenarios) {
  std::vector<Unit> units;
  for (int repetition = 1; repetition <= options.repeat; ++repetition) {
    for (const Scenario& scenario : scenarios) {
      if (!selected_variants(scenario, options.variants).empty()) {
        units.push_back(Unit{repetition, &scenario});
      }
    }
  }
  return units;
}

// Tallies: what the units add up to, by scenario x variant in plan order, and the sweep maps.
struct Tallies {
  std::map<std::pair<std::string, std::string>, Tally> by_pair;
  std::vector<std::pair<std::string, std::string>> order;
  std::vector<SweepMap> sweep_maps;
};

// fold_results: the units' results added up in plan order (so not in the order they finished);
// their rows are moved to `rows` if given.
Tallies fold_results(std::vector<UnitResult>& results, std::vector<RunRow>* rows) {
  Tallies tallies;
  for (UnitResult& result : results) {
    for (const RunDone& run : result.runs) {
      if (!tallies.by_pair.contains(run.pair)) tallies.order.push_back(run.pair);
      Tally& tally = tallies.by_pair[run.pair];
      tally.expected = run.expected;
      tally.last_observed = run.observed;
      if (!run.counted) continue;
      tally.runs += 1;
      tally.matched += run.matches ? 1 : 0;
      if (run.sweep != nullptr) {
        sweep_map_of(tallies.sweep_maps, *run.sweep)
            .add(run.pair.second, run.sweep->value, run.verdict);
      }
    }
    if (rows != nullptr) {
      for (RunRow& row : result.rows) rows->push_back(std::move(row));
    }
  }
  return tallies;
}

// print_outcome_table: the scenario x variant table; returns how many outcomes were not as
// expected in every run. Each column is as wide as its longest cell, so a long expectation does
// not push the next column out of line.
int print_outcome_table(const Tallies& tallies, const RunOptions& options) {
  std::size_t widths[4] = {8, 7, 8, 19};
  for (const auto& pair : tallies.order) {
    const Tally& t = tallies.by_pair.at(pair);
    widths[0] = std::max(widths[0], pair.first.size());
    widths[1] = std::max(widths[1], pair.second.size());
    widths[2] = std::max(widths[2], t.expected.size());
    widths[3] = std::max(widths[3], t.last_observed.size());
  }
  for (std::size_t& width : widths) width += 2;
  std::cout << "\n"
            << pad("scenario", widths[0]) << pad("variant", widths[1]) << pad("expected", widths[2])
            << pad("observed (last run)", widths[3]) << "as expected\n";
  int mismatched = 0;
  for (const auto& pair : tallies.order) {
    const Tally& t = tallies.by_pair.at(pair);
    const bool all = t.runs > 0 && t.matched == t.runs;
    if (!all) ++mismatched;
    std::cout << pad(pair.first, widths[0]) << pad(pair.second, widths[1])
              << pad(t.expected, widths[2]) << pad(t.last_observed, widths[3])
              << (options.repeat > 1
                      ? std::to_string(t.matched) + "/" + std::to_string(t.runs) + " "
                      : "")
              << (all ? "yes" : "NO") << "\n";
  }
  return mismatched;
}

// print_where_the_reports_are: the report to open: the run's own report.html when one run
// directory was written, else how many were (the index printed next links each).
void print_where_the_reports_are(const std::vector<UnitResult>& results) {
  std::set<std::string> written;
  for (const UnitResult& result : results) {
    if (!result.written_dir.empty()) written.insert(result.written_dir);
  }
  if (written.size() == 1) {
    std::cout << "\nReport: " << (fs::path(*written.begin()) / "report.html").string() << "\n";
  } else if (!written.empty()) {
    std::cout << "\nReports: " << written.size()
              << " run directories, each with its report.html, all linked from the index:\n";
  }
}

// junit_suites: one suite per scenario, in plan order; a case per variant run.
std::vector<JunitSuite> junit_suites(const std::vector<UnitResult>& results,
                                     const RunOptions& options) {
  std::vector<JunitSuite> suites;
  std::map<std::string, std::size_t> suite_of;
  for (const UnitResult& result : results) {
    for (const RunDone& run : result.runs) {
      const auto [at, added] = suite_of.emplace(run.pair.first, suites.size());
      if (added) suites.push_back(JunitSuite{.name = run.pair.first, .cases = {}});
      JunitCase c{
          .classname = "locksim." + run.pair.first,
          .name =
              run.pair.second + (options.repeat > 1 ? "#" + std::to_string(run.repetition) : ""),
          .seconds = run.seconds,
          .status = run.status,
          .message = "",
          .text = "",
          .output = "report: " + run.report,
      };
      if (run.status == JunitCase::Status::kFailed) {
        c.message = "expected " + run.expected + ", observed " + run.observed;
        c.text = run.words;
      } else if (run.status == JunitCase::Status::kError) {
        c.message = run.problem;
        c.text = "observed " + run.observed + "\n" + run.words;
      } else if (run.status == JunitCase::Status::kSkipped) {
        c.message = "interrupted before the run finished";
      }
      suites[at->second].cases.push_back(std::move(c));
    }
  }
  return suites;
}

// write_junit: --junit's file, also after a failure or an interruption: it says what did run. A
// file that cannot be written is an environment failure on the board.
void write_junit(const std::vector<UnitResult>& results, const RunOptions& options,
                 RunBoard& board) {
  const std::vector<JunitSuite> suites = junit_suites(results, options);
  try {
    write_file_atomically(options.junit_path, junit_xml(suites, "locksim run"));
    std::cout << "JUnit: " << options.junit_path << "\n";
  } catch (const std::exception& error) {
    board.fail_environment(error.what());
  }
}

// run_exit_code: 3 after an environment failure, 130 after an interruption, else 0 if every
// outcome was as expected (1 if not), each said in a last line.
int run_exit_code(const RunBoard& board, int mismatched, std::size_t outcomes,
                  const RunOptions& options) {
  if (!board.environment_failure().empty()) {
    std::cerr << "locksim: " << board.environment_failure()
              << "; the reports of what ran are written, the rest was not run\n";
    return kExitEnvironment;
  }
  if (board.interrupted()) {
    std::cout << "Interrupted: the reports above are complete up to the interrupted run.\n";
    return kExitInterrupted;
  }
  if (mismatched == 0) {
    std::cout << "All " << outcomes << " scenario x variant outcomes as expected";
    if (options.repeat > 1) std::cout << " in all " << options.repeat << " repetitions";
    std::cout << ".\n";
    return kExitOk;
  }
  std::cout << mismatched << " of " << outcomes
            << " scenario x variant outcomes differ from their expectation.\n";
  return kExitMismatch;
}

}  // namespace

int run_scenarios(const RunOptions& options, std::vector<Scenario> scenarios,
                  const std::vector<UserVariant>& users, StopSignal& stop,
                  std::vector<RunRow>* rows) {
  std::size_t pair_count = 0;
  for (const Scenario& s : scenarios) pair_count += selected_variants(s, options.variants).size();
  if (const int refused = refuse_what_cannot_run(options, scenarios, pair_count); refused != 0) {
    return refused;
  }
  if (options.dry_run) return dry_run(options, scenarios, users, pair_count);
  // 2. Redis: a private server unless --redis was given; none on the simulator.
  const bool simulated = options.backend == "sim";
  std::uint64_t seed = 0;
  std::optional<RedisTarget> target = reach_redis(options, seed);
  if (!target) return kExitEnvironment;
  if (!users.empty() && !compile_user_scripts(users, simulated, target->endpoint)) {
    return kExitUsage;
  }
  const std::string server_label = stop_unneeded_server(options, scenarios, *target);
  const int total_runs = static_cast<int>(pair_count) * options.repeat;
  std::cout << "locksim: redis " << target->version << " (" << server_label << "), "
            << scenarios.size() << " scenario(s), " << total_runs << " variant run(s)" << std::endl;

  // 3. Runs, unit by unit (run_unit.h); with --jobs N, N units at once.
  const std::vector<Unit> units = plan_units(options, scenarios);
  std::vector<UnitResult> results(units.size());
  const int jobs = std::max(1, std::min(options.jobs, static_cast<int>(units.size())));
  RunBoard board(options.progress, static_cast<std::size_t>(jobs), total_runs);
  const std::string started_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
  const RunSetup setup{.options = options,
                       .stop = stop,
                       .seed = seed,
                       .simulated = simulated,
                       .external = target->external(),
                       .endpoint = target->endpoint,
                       .endpoint_label = target->label,
                       .redis_version = target->version,
                       .total_runs = total_runs,
                       .keep_rows = rows != nullptr};
  UnitRunner runner(setup, board);
  run_units(runner, board, units, results, jobs);
  const Tallies tallies = fold_results(results, rows);

  // 4. The outcome table, also after a failure: it says what did run.
  const int mismatched = print_outcome_table(tallies, options);
  if (const std::string error = report_sweep_maps(tallies.sweep_maps, options, seed, started_at);
      !error.empty()) {
    board.fail_environment(error);
  }
  print_where_the_reports_are(results);
  refresh_index(options.out_dir);
  if (!options.junit_path.empty()) write_junit(results, options, board);
  return run_exit_code(board, mismatched, tallies.order.size(), options);
}

}  // namespace locksim
