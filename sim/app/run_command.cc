// `locksim run`: load every scenario (nothing runs unless all load), start or reach Redis, run each
// scenario once per variant (and per repetition), judge each history, write the reports, print the
// scenario x variant outcome table, and exit 0 only if every outcome is the expected one.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <exception>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "sim/app/commands.h"
#include "sim/app/console.h"
#include "sim/app/did_you_mean.h"
#include "sim/app/run_id.h"
#include "sim/app/signals.h"
#include "sim/checker/check.h"
#include "sim/core/error.h"
#include "sim/core/random.h"
#include "sim/driver/driver.h"
#include "sim/history/jsonl.h"
#include "sim/history/recorder.h"
#include "sim/lock/registry.h"
#include "sim/lock/script_variant.h"
#include "sim/model/model_connection.h"
#include "sim/redis/acl_user.h"
#include "sim/redis/connection.h"
#include "sim/redis/server.h"
#include "sim/report/files.h"
#include "sim/report/html_report.h"
#include "sim/report/junit.h"
#include "sim/report/results.h"
#include "sim/report/summary.h"
#include "sim/report/sweep_map.h"
#include "sim/report/trace.h"
#include "sim/scenario/loader.h"
#include "sim/explore/simulated_run.h"
#include "sim/topology/topology.h"

namespace locksim {
namespace {

namespace fs = std::filesystem;

// The pairs to run: each scenario's variants, narrowed by --variant.
std::vector<std::string> selected_variants(const Scenario& scenario,
                                           const std::vector<std::string>& filter) {
  std::vector<std::string> variants;
  for (const std::string& v : scenario.variants) {
    if (filter.empty() || std::find(filter.begin(), filter.end(), v) != filter.end()) {
      variants.push_back(v);
    }
  }
  return variants;
}

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
  if (left == 0) {
    throw InputError("--backend sim: the simulator can run none of the " + std::to_string(skipped) +
                     " selected outcome(s) (each is skipped above, with the reason); run them "
                     "without --backend sim");
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

}  // namespace

int run_scenarios(const RunOptions& options, std::vector<Scenario> scenarios,
                  const std::vector<UserVariant>& users, StopSignal& stop,
                  std::vector<RunRow>* rows) {
  std::size_t pair_count = 0;
  for (const Scenario& s : scenarios) pair_count += selected_variants(s, options.variants).size();
  // Memory: a run keeps its whole history until it is judged; refuse what would not fit.
  {
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
  }
  if (pair_count == 0) {
    std::cerr << "locksim: --variant: none of the given variants is listed by these scenarios\n";
    return kExitUsage;
  }
  if (const int refused = check_repeat_disk(options, scenarios); refused != 0) return refused;
  if (!options.redis_url.empty()) {
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
  }
  // 2. Redis: a private server unless --redis was given; none on the simulator.
  const bool simulated = options.backend == "sim";
  std::uint64_t seed = 0;
  std::optional<RedisTarget> target;
  if (simulated) {
    seed = options.seed.value_or(random_seed());
    std::cout << "locksim: seed " << seed << " (repeat this run with --seed " << seed << ")"
              << std::endl;
    target.emplace();
    target->label = "the simulator: an in-memory Redis on virtual time";
    target->version = "7.0 model (the simulator)";
  } else {
    target = start_session(options.redis_url, options.seed, seed);
  }
  if (!target) return kExitEnvironment;
  const bool external = target->external();
  const Endpoint endpoint = target->endpoint;
  const std::string& endpoint_label = target->label;
  const std::string& redis_version = target->version;
  std::optional<RedisServer>& server = target->server;
  // User scripts are compiled before anything runs, so a Lua syntax error is bad input.
  if (!users.empty()) {
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
        return kExitUsage;
      }
    }
  }
  // A run whose every scenario brings the servers of its topology has no use for the private
  // server beside them: it is stopped once the user scripts are compiled, rather than left to be
  // killed unnoticed (only a topology's processes are watched).
  std::string server_label = endpoint_label;
  const bool topologies_only =
      std::all_of(scenarios.begin(), scenarios.end(), [&options](const Scenario& s) {
        return s.topology.has_value() || selected_variants(s, options.variants).empty();
      });
  if (server && topologies_only) {
    set_server_pid_for_signals(-1);
    server->stop();
    server_label = "the servers of each scenario's topology; no other";
  }
  const int total_runs = static_cast<int>(pair_count) * options.repeat;
  std::cout << "locksim: redis " << redis_version << " (" << server_label << "), "
            << scenarios.size() << " scenario(s), " << total_runs << " variant run(s)" << std::endl;

  // 3. Runs. A unit is one repetition of one scenario: its variants run one after another (they
  // share the run directory, its summary and the run's ACL user). With --jobs N, N units run at
  // once; what they add up to (the table, sweep maps, rows) is folded in plan order afterwards, so
  // it does not depend on which finished first. Each run's line is printed as it ends.
  struct Unit {
    int repetition = 1;
    const Scenario* scenario = nullptr;
  };
  std::vector<Unit> units;
  for (int repetition = 1; repetition <= options.repeat; ++repetition) {
    for (const Scenario& scenario : scenarios) {
      if (!selected_variants(scenario, options.variants).empty()) {
        units.push_back(Unit{repetition, &scenario});
      }
    }
  }
  // UnitResult: what one unit adds up to, folded in plan order after every unit ended.
  struct RunDone {
    std::pair<std::string, std::string> pair;
    std::string expected;
    std::string observed;
    bool counted = false;  // not interrupted
    bool matches = false;
    const SweepPoint* sweep = nullptr;
    Verdict verdict = Verdict::kOk;
    // For --junit:
    int repetition = 1;
    double seconds = 0;
    JunitCase::Status status = JunitCase::Status::kPassed;
    std::string problem;  // kError: what stopped the run
    std::string words;    // the findings behind a mismatch, a line each
    std::string report;   // the variant's report directory
  };
  struct UnitResult {
    std::vector<RunDone> runs;
    std::vector<RunRow> rows;
    std::string written_dir;
  };
  std::vector<UnitResult> results(units.size());

  const int jobs = std::max(1, std::min(options.jobs, static_cast<int>(units.size())));
  ProgressLine progress(options.progress);
  std::mutex board_mutex;  // guards what follows, stdout and the progress line
  std::vector<std::string> running(static_cast<std::size_t>(jobs));  // each job's progress text
  const auto show = [&](std::size_t job, const std::string& text) {
    std::lock_guard<std::mutex> lock(board_mutex);
    running[job] = text;
    std::string line;
    for (const std::string& part : running) {
      if (part.empty()) continue;
      line += (line.empty() ? "" : "  |  ") + part;
    }
    progress.show(line);
  };
  const auto hide = [&](std::size_t job) {
    std::lock_guard<std::mutex> lock(board_mutex);
    running[job].clear();
    progress.clear();
  };
  const std::string started_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
  int done = 0;
  bool interrupted = false;
  std::string environment_failure;  // set: stop, print what ran, exit 3
  std::exception_ptr unexpected;    // anything else a job threw: rethrown once every job ended
  const auto stopping = [&] {
    std::lock_guard<std::mutex> lock(board_mutex);
    return interrupted || !environment_failure.empty() || unexpected;
  };
  const auto fail_environment = [&](const std::string& what) {
    std::lock_guard<std::mutex> lock(board_mutex);
    if (environment_failure.empty()) environment_failure = what;
  };

  // run_unit: one unit's variants, one after another; returns false once the run must stop.
  const auto run_unit = [&](std::size_t job, const Unit& unit, UnitResult& result) {
    const Scenario& scenario = *unit.scenario;
    const int repetition = unit.repetition;
    const std::vector<std::string> variants = selected_variants(scenario, options.variants);
    const std::uint64_t run_seed = seed + static_cast<std::uint64_t>(repetition - 1);
    RunInfo info;
    info.run_id = make_run_id(run_seed, options.repeat > 1 ? repetition : 0);
    info.seed = run_seed;
    info.repetition = repetition;
    info.redis_version = redis_version;
    info.redis_endpoint = external ? endpoint_label : "private redis-server";
    info.commit = build_commit();
    info.machine = machine_description();
    info.started_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
    const fs::path scenario_dir = fs::path(options.out_dir) / scenario.name;
    const fs::path run_dir = scenario_dir / info.run_id;
    std::error_code error;
    fs::create_directories(run_dir, error);
    if (error) throw EnvironmentError("cannot create " + run_dir.string() + ": " + error.message());
    write_file_atomically(run_dir / "scenario.json", scenario.resolved.dump(2) + "\n");

    // On the private server the clients log in as an ACL user limited to the run's keys, so a
    // user script that touches other keys or calls FLUSHALL fails visibly. With --redis,
    // isolation is by key prefix only.
    std::optional<PrefixUser> run_user;
    if (server && !scenario.topology) {
      // A library that keeps its lock under a prefix of its own ("mutex:<key>") gets it too.
      const std::string prefix = "locksim:" + info.run_id + ":";
      std::vector<std::string> library_prefixes;
      for (const std::string& v : variants) {
        const std::string stored = find_variant(v)->stored_prefix(prefix);
        if (stored != prefix) library_prefixes.push_back(stored);
      }
      run_user.emplace(
          PrefixUser::create(endpoint, "locksim-" + info.run_id, prefix, library_prefixes));
    }
    const Endpoint& client_endpoint = run_user ? run_user->endpoint() : endpoint;

    std::vector<VariantRun> runs;
    bool go_on = true;
    for (const std::string& variant_name : variants) {
      if (stopping()) {
        go_on = false;
        break;
      }
      std::string label;
      {
        std::lock_guard<std::mutex> lock(board_mutex);
        ++done;
        label = "[" + std::to_string(done) + "/" + std::to_string(total_runs) + "] " +
                scenario.name + " / " + variant_name;
      }
      show(job, label + " ...");
      const Nanos started = real_clock().now_ns();
      // A library runs only as its adapter's processes; their stderr is kept in the run.
      const LockVariant& variant = *find_variant(variant_name);
      const LibrarySpec* library = library_spec(variant);
      Scenario as_library;
      if (library != nullptr) {
        as_library = scenario;
        run_clients_as(as_library, Executor::kProcesses);
      }
      const fs::path variant_dir = run_dir / variant_name;
      fs::create_directories(variant_dir, error);
      if (error) throw EnvironmentError("cannot create " + variant_dir.string());
      // A run whose outcome differs from its expectation while the machine stalled with no fault
      // planned (an unplanned_stall finding: a renewal due in time answered after the lease)
      // says nothing about the lock: it is run again, at most kStallAttempts times in all, and
      // the last attempt's outcome is the one reported. An `ok` is never taken from a stalled
      // attempt; a lock that fails on a quiet attempt fails.
      constexpr int kStallAttempts = 3;
      std::vector<std::string> stalled_attempts;  // the stall of each attempt run again
      RunOutcome outcome;
      VariantRun run;
      bool stop_variants = false;
      for (int attempt = 1;; ++attempt) {
        // A scenario with a topology gets servers of its own for each variant's run: its
        // faults leave them in no state for the next (the simulator models its own).
        std::unique_ptr<Topology> topology;
        if (scenario.topology && !simulated) {
          show(job, label + " starting " + scenario.topology->name + " servers ...");
          try {
            topology = Topology::start(*scenario.topology);
          } catch (const EnvironmentError&) {
            // Ctrl-C while the servers started (Sentinel takes seconds to see its replica):
            // an interruption, not an environment failure.
            if (!stop.requested()) throw;
            hide(job);
            std::lock_guard<std::mutex> lock(board_mutex);
            interrupted = true;
            stop_variants = true;
            break;
          }
        }
        const Endpoint run_endpoint = topology ? topology->primary_endpoint() : client_endpoint;
        RunRequest request{
            library != nullptr ? as_library : scenario,
            variant,
            run_seed,
            run_endpoint,
            "locksim:" + info.run_id + ":" + variant_name + ":",
            stop,
            [&](double fraction) {
              show(job, label + " " + std::to_string(static_cast<int>(fraction * 100)) + "%");
            },
            /*private_server=*/!external,
            /*admin_endpoint=*/topology ? run_endpoint : endpoint,
            library != nullptr ? library->command : worker_command(options.variant_files),
            variant_dir.string(),
            topology.get()};
        if (simulated) {
          const SimulatedRun simulated_run =
              run_simulated(request.scenario, variant, run_seed, stop, request.key_prefix);
          outcome = simulated_run.outcome;
          char text[160];
          std::snprintf(text, sizeof text,
                        "ran on the simulator (seed %llu): %.1f ms of virtual time, %llu events; "
                        "a real server judges: run it without --backend sim",
                        static_cast<unsigned long long>(run_seed),
                        ns_to_ms(simulated_run.virtual_ns),
                        static_cast<unsigned long long>(simulated_run.events));
          outcome.notes.insert(outcome.notes.begin(), text);
        } else {
          outcome = run_scenario(request);
        }
        topology.reset();
        if (variant_name == "lua_owner_wait") {
          outcome.notes.insert(
              outcome.notes.begin(),
              "lua_owner_wait: WAIT 1 made the primary wait for one replica's acknowledgement; "
              "it does not make Redis strongly consistent: a replica that acknowledged can "
              "still lose the key (it fails too, or restarts without persistence), and a "
              "failover can still promote a replica that did not acknowledge");
        }
        // A library's verdict that is reported, not asserted, says why in the summary.
        if (library != nullptr) {
          const auto reason = library->reported_in.find(scenario.name);
          if (reason != library->reported_in.end()) {
            outcome.notes.insert(outcome.notes.begin(),
                                 variant_name + " is not held to " + library->like +
                                     "'s expectation here: " + reason->second);
          } else if (!library->assert_like) {
            outcome.notes.insert(
                outcome.notes.begin(),
                variant_name + "'s verdicts are reported, not asserted: " + library->summary);
          }
        }
        hide(job);
        if (!outcome.harness_error.empty()) {
          // Nothing ran, so there is nothing to judge: the reports of what did run are written
          // below, then locksim stops.
          fail_environment(outcome.harness_error + " (during " + scenario.name + " / " +
                           variant_name + ")");
          stop_variants = true;
          break;
        }

        run = VariantRun{};
        run.variant = variant_name;
        run.expected = scenario.expect.at(variant_name);
        run.result = check_history(outcome.history, check_options(scenario));
        run.history = std::move(outcome.history);
        run.notes = std::move(outcome.notes);
        run.interrupted = outcome.interrupted;
        run.timed_out = outcome.timed_out;
        run.matches =
            !run.interrupted && matches_expectation(run.expected, run.result, run.history.clients);
        const std::vector<const Finding*> stalls = run.result.of(FindingKind::kUnplannedStall);
        if (run.matches || run.interrupted || stalls.empty() || outcome.server_lost ||
            outcome.server_died || attempt == kStallAttempts || stopping()) {
          break;
        }
        stalled_attempts.push_back(stalls.front()->words);
        {
          std::lock_guard<std::mutex> lock(board_mutex);
          std::cout << pad(label, 44) << " observed " << describe_observation(run.result)
                    << " while the machine stalled; running it again (attempt " << attempt + 1
                    << " of " << kStallAttempts << ")\n    " << stalls.front()->words << std::endl;
        }
        show(job, label + " again ...");
      }  // attempts
      if (stop_variants) {
        go_on = false;
        break;
      }
      for (std::size_t a = 0; a < stalled_attempts.size(); ++a) {
        run.notes.insert(
            run.notes.begin() + static_cast<std::ptrdiff_t>(a),
            "attempt " + std::to_string(a + 1) + " of this run differed from its " +
                "expectation while the machine stalled, and was run again: " + stalled_attempts[a]);
      }

      write_history_jsonl(variant_dir / "history.jsonl", run.history);
      write_trace_json(variant_dir / "trace.json", run.history, run.result,
                       scenario.name + " / " + variant_name);
      // After the trace: the run's peak is behind it (with --jobs, the peak of runs at once).
      info.peak_rss_mb = peak_rss_mb();
      write_file_atomically(variant_dir / "results.json",
                            variant_results_json(scenario, run, info).dump(2) + "\n");

      const double seconds = static_cast<double>(real_clock().now_ns() - started) / 1e9;
      char elapsed[32];
      std::snprintf(elapsed, sizeof elapsed, "%.1f s", seconds);
      {
        std::lock_guard<std::mutex> lock(board_mutex);
        std::cout << pad(label, 44) << " expected " << pad(describe_expectation(run.expected), 34)
                  << " observed " << pad(describe_observation(run.result), 34)
                  << (run.interrupted       ? "INTERRUPTED"
                      : outcome.server_lost ? "SERVER LOST"
                      : outcome.server_died ? "SERVER DIED"
                      : run.matches         ? "ok"
                                            : "MISMATCH")
                  << "  " << elapsed << std::endl;
        // The lock's own errors are always named (a user script that answers wrongly); the
        // findings behind an unexpected verdict are named when the outcome differs.
        for (const Finding* f : run.result.of(FindingKind::kLockError)) {
          std::cout << "    " << f->words << "\n";
        }
        if (!run.matches && !run.interrupted) {
          for (const Finding& f : run.result.findings) {
            if (f.kind == FindingKind::kLockError) continue;
            if (verdict_of(f.kind) == Verdict::kOk && f.kind != FindingKind::kUnplannedStall) {
              continue;
            }
            std::cout << "    " << f.words << "\n";
          }
        }
      }
      std::string words;
      for (const Finding& f : run.result.findings) {
        if (verdict_of(f.kind) != Verdict::kOk || f.kind == FindingKind::kLockError ||
            f.kind == FindingKind::kUnplannedStall) {
          words += f.words + "\n";
        }
      }
      result.runs.push_back(RunDone{
          .pair = std::make_pair(scenario.name, variant_name),
          .expected = describe_expectation(run.expected),
          .observed = describe_observation(run.result),
          .counted = !run.interrupted,
          .matches = run.matches,
          .sweep = scenario.sweep ? &*scenario.sweep : nullptr,
          .verdict = run.result.verdict,
          .repetition = unit.repetition,
          .seconds = seconds,
          .status = run.interrupted       ? JunitCase::Status::kSkipped
                    : outcome.server_lost ? JunitCase::Status::kError
                    : outcome.server_died ? JunitCase::Status::kError
                    : run.matches         ? JunitCase::Status::kPassed
                                          : JunitCase::Status::kFailed,
          .problem = outcome.server_lost   ? "the Redis server stopped answering"
                     : outcome.server_died ? "a server of the run's topology died unscripted"
                                           : "",
          .words = std::move(words),
          .report = variant_dir.string(),
      });
      if (rows != nullptr) {
        RunRow row;
        row.scenario = scenario.name;
        row.variant = variant_name;
        row.observed = run.result.verdict;
        row.observed_text = describe_observation(run.result);
        row.expected_text = describe_expectation(run.expected);
        row.matches = run.matches;
        row.undecided = run.interrupted || outcome.server_lost || outcome.server_died;
        row.stolen_renewal = !run.result.of(FindingKind::kStolenRenewal).empty();
        row.stale_release = !run.result.of(FindingKind::kStaleRelease).empty();
        row.causes = run.result.causes();
        row.idle_hold = !run.result.of(FindingKind::kIdleHold).empty();
        row.barging = !run.result.of(FindingKind::kBarging).empty();
        row.summary = (run_dir / "summary.md").string();
        for (const Finding& f : run.result.findings) {
          if (verdict_of(f.kind) != Verdict::kOk || f.kind == FindingKind::kStolenRenewal ||
              f.kind == FindingKind::kStaleRelease || f.kind == FindingKind::kIdleHold ||
              f.kind == FindingKind::kBarging) {
            row.words.push_back(f.words);
          }
        }
        result.rows.push_back(std::move(row));
      }
      const bool run_interrupted = run.interrupted;
      const bool server_lost = outcome.server_lost;
      runs.push_back(std::move(run));
      if (server_lost) {
        fail_environment("the Redis server stopped answering during " + scenario.name + " / " +
                         variant_name);
      } else if (outcome.server_died) {
        fail_environment("a process of the topology died without the scenario killing it during " +
                         scenario.name + " / " + variant_name + " (named in its summary)");
      }
      if (run_interrupted) {
        std::lock_guard<std::mutex> lock(board_mutex);
        interrupted = true;
      }
      if (run_interrupted || server_lost || outcome.server_died) {
        go_on = false;
        break;
      }
    }
    if (!runs.empty()) {
      write_file_atomically(run_dir / "results.json",
                            scenario_results_json(scenario, runs, info).dump(2) + "\n");
      write_file_atomically(run_dir / "summary.md", summary_markdown(scenario, runs, info));
      write_file_atomically(run_dir / "report.html", run_report_html(scenario, runs, info));
      point_latest(scenario_dir, info.run_id);
      result.written_dir = run_dir.string();
    }
    return go_on;
  };

  // Each job takes the next unit until none is left or the run must stop.
  std::atomic<std::size_t> next_unit{0};
  const auto job_loop = [&](std::size_t job) {
    try {
      for (std::size_t i = next_unit++; i < units.size(); i = next_unit++) {
        if (stopping() || !run_unit(job, units[i], results[i])) break;
      }
    } catch (const EnvironmentError& e) {
      hide(job);
      fail_environment(e.what());
    } catch (const fs::filesystem_error& e) {
      hide(job);
      fail_environment(e.what());
    } catch (...) {
      hide(job);
      std::lock_guard<std::mutex> lock(board_mutex);
      if (!unexpected) unexpected = std::current_exception();
    }
  };
  if (jobs == 1) {
    job_loop(0);
  } else {
    std::vector<std::thread> threads;
    for (std::size_t job = 0; job < static_cast<std::size_t>(jobs); ++job) {
      threads.emplace_back(job_loop, job);
    }
    for (std::thread& thread : threads) thread.join();
  }
  if (unexpected) std::rethrow_exception(unexpected);

  // What the units add up to, in plan order.
  std::map<std::pair<std::string, std::string>, Tally> tallies;
  std::vector<std::pair<std::string, std::string>> order;
  std::vector<SweepMap> sweep_maps;
  for (UnitResult& result : results) {
    for (const RunDone& run : result.runs) {
      if (tallies.find(run.pair) == tallies.end()) order.push_back(run.pair);
      Tally& tally = tallies[run.pair];
      tally.expected = run.expected;
      tally.last_observed = run.observed;
      if (!run.counted) continue;
      tally.runs += 1;
      tally.matched += run.matches ? 1 : 0;
      if (run.sweep != nullptr) {
        sweep_map_of(sweep_maps, *run.sweep).add(run.pair.second, run.sweep->value, run.verdict);
      }
    }
    if (rows != nullptr) {
      for (RunRow& row : result.rows) rows->push_back(std::move(row));
    }
  }

  // 4. The outcome table, also after a failure: it says what did run. Each column is as wide as
  // its longest cell, so a long expectation does not push the next column out of line.
  std::size_t widths[4] = {8, 7, 8, 19};
  for (const auto& pair : order) {
    const Tally& t = tallies[pair];
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
  for (const auto& pair : order) {
    const Tally& t = tallies[pair];
    const bool all = t.runs > 0 && t.matched == t.runs;
    if (!all) ++mismatched;
    std::cout << pad(pair.first, widths[0]) << pad(pair.second, widths[1])
              << pad(t.expected, widths[2]) << pad(t.last_observed, widths[3])
              << (options.repeat > 1
                      ? std::to_string(t.matched) + "/" + std::to_string(t.runs) + " "
                      : "")
              << (all ? "yes" : "NO") << "\n";
  }
  if (const std::string error = report_sweep_maps(sweep_maps, options, seed, started_at);
      !error.empty() && environment_failure.empty()) {
    environment_failure = error;
  }
  std::cout << "\nReports: " << options.out_dir << "/<scenario>/latest/report.html\n";
  refresh_index(options.out_dir);
  if (!options.junit_path.empty()) {
    // Also after a failure or an interruption: it says what did run.
    // One suite per scenario, in plan order; a case per variant run.
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
    try {
      write_file_atomically(options.junit_path, junit_xml(suites, "locksim run"));
      std::cout << "JUnit: " << options.junit_path << "\n";
    } catch (const std::exception& error) {
      if (environment_failure.empty()) environment_failure = error.what();
    }
  }
  if (!environment_failure.empty()) {
    std::cerr << "locksim: " << environment_failure
              << "; the reports of what ran are written, the rest was not run\n";
    return kExitEnvironment;
  }
  if (interrupted) {
    std::cout << "Interrupted: the reports above are complete up to the interrupted run.\n";
    return kExitInterrupted;
  }
  if (mismatched == 0) {
    std::cout << "All " << order.size() << " scenario x variant outcomes as expected";
    if (options.repeat > 1) std::cout << " in all " << options.repeat << " repetitions";
    std::cout << ".\n";
    return kExitOk;
  }
  std::cout << mismatched << " of " << order.size()
            << " scenario x variant outcomes differ from their expectation.\n";
  return kExitMismatch;
}

}  // namespace locksim
