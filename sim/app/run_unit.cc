#include "sim/app/run_unit.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <iostream>
#include <memory>
#include <thread>

#include "sim/app/run_id.h"
#include "sim/checker/check.h"
#include "sim/core/error.h"
#include "sim/explore/judge.h"
#include "sim/explore/simulated_run.h"
#include "sim/history/jsonl.h"
#include "sim/lock/registry.h"
#include "sim/report/files.h"
#include "sim/report/html_report.h"
#include "sim/report/results.h"
#include "sim/report/summary.h"
#include "sim/report/trace.h"
#include "sim/scenario/loader.h"
#include "sim/topology/topology.h"

namespace locksim::run_internal {

namespace fs = std::filesystem;

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

// RunBoard

void RunBoard::show(std::size_t job, const std::string& text, bool milestone, double fraction) {
  std::lock_guard<std::mutex> lock(mutex_);
  running_[job] = text;
  fractions_[job] = fraction;
  redraw(milestone);
}

void RunBoard::hide(std::size_t job) {
  std::lock_guard<std::mutex> lock(mutex_);
  running_[job].clear();
  fractions_[job] = 0;
  progress_.clear();
}

void RunBoard::finish_run() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++finished_;
  redraw(/*milestone=*/true);
}

// redraw: "3/12 outcomes, about 1m 20s left  |  [4/12] scenario / variant  |  ...": the time
// left from the outcomes finished and the share done of the runs that know it (a workload's).
void RunBoard::redraw(bool milestone) {
  double done = finished_;
  for (const double fraction : fractions_) done += fraction;
  std::string line = std::to_string(finished_) + "/" + std::to_string(total_runs_) + " outcomes";
  if (const std::string left = time_left_.text(done, total_runs_); !left.empty()) {
    line += ", " + left;
  }
  for (const std::string& part : running_) {
    if (!part.empty()) line += "  |  " + part;
  }
  progress_.show(line, milestone);
}

int RunBoard::count_run() {
  std::lock_guard<std::mutex> lock(mutex_);
  return ++done_;
}

bool RunBoard::stopping() {
  std::lock_guard<std::mutex> lock(mutex_);
  return interrupted_ || !environment_failure_.empty() || unexpected_;
}

void RunBoard::fail_environment(const std::string& what) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (environment_failure_.empty()) environment_failure_ = what;
}

void RunBoard::interrupt() {
  std::lock_guard<std::mutex> lock(mutex_);
  interrupted_ = true;
}

void RunBoard::keep_unexpected(std::exception_ptr error) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!unexpected_) unexpected_ = std::move(error);
}

// UnitRunner: a unit

bool UnitRunner::run(std::size_t job, const Unit& unit, UnitResult& result) {
  UnitState state = start_unit(unit);
  bool go_on = true;
  for (const std::string& variant_name : state.variants) {
    if (board_.stopping() || !run_variant(job, state, variant_name, result)) {
      go_on = false;
      break;
    }
  }
  if (!state.runs.empty()) write_unit_reports(state, result);
  return go_on;
}

// start_unit: the unit's RunInfo, its run directory with scenario.json, and its ACL user.
UnitRunner::UnitState UnitRunner::start_unit(const Unit& unit) const {
  const RunOptions& options = setup_.options;
  UnitState state{.scenario = *unit.scenario,
                  .repetition = unit.repetition,
                  .variants = selected_variants(*unit.scenario, options.variants),
                  .run_seed = setup_.seed + static_cast<std::uint64_t>(unit.repetition - 1),
                  .info = {},
                  .scenario_dir = {},
                  .run_dir = {},
                  .run_user = std::nullopt,
                  .client_endpoint = {},
                  .runs = {}};
  RunInfo& info = state.info;
  info.run_id = make_run_id(state.run_seed, options.repeat > 1 ? unit.repetition : 0);
  info.seed = state.run_seed;
  info.repetition = unit.repetition;
  info.redis_version = setup_.redis_version;
  info.redis_endpoint = setup_.external ? setup_.endpoint_label : "private redis-server";
  info.commit = build_commit();
  info.machine = machine_description();
  info.started_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
  state.scenario_dir = fs::path(options.out_dir) / state.scenario.name;
  state.run_dir = state.scenario_dir / info.run_id;
  std::error_code error;
  fs::create_directories(state.run_dir, error);
  if (error) {
    throw EnvironmentError("cannot create " + state.run_dir.string() + ": " + error.message());
  }
  write_file_atomically(state.run_dir / "scenario.json", state.scenario.resolved.dump(2) + "\n");
  state.run_user = run_user_for(state);
  state.client_endpoint = state.run_user ? state.run_user->endpoint() : setup_.endpoint;
  return state;
}

// run_user_for: on the private server the clients log in as an ACL user limited to the run's
// keys, so a user script that touches other keys or calls FLUSHALL fails visibly. With --redis,
// isolation is by key prefix only; a topology's servers are the scenario's own (started for
// the run and thrown away with it), so they get no such user. On a Redis Cluster one would have
// to be made on every node (ACL users are a node's own, not the cluster's), and it would refuse
// what the libraries' cluster clients send: redis-py's RedisCluster asks every seed for INFO
// (cluster_enabled) before CLUSTER SLOTS, and INFO is -@dangerous.
std::optional<PrefixUser> UnitRunner::run_user_for(const UnitState& unit) const {
  if (setup_.external || unit.scenario.topology) return std::nullopt;
  // A library that keeps its lock under a prefix of its own ("mutex:<key>"), or names other keys
  // and channels after it (Redisson's), gets them too.
  const std::string prefix = "locksim:" + unit.info.run_id + ":";
  std::vector<std::string> more_prefixes;
  for (const std::string& v : unit.variants) {
    for (std::string& more : library_prefixes(*find_variant(v), prefix)) {
      more_prefixes.push_back(std::move(more));
    }
  }
  return PrefixUser::create(setup_.endpoint, "locksim-" + unit.info.run_id, prefix, more_prefixes);
}

// write_unit_reports: the unit's results.json, summary.md and report.html over the variants that
// ran, and its scenario's `latest` link.
void UnitRunner::write_unit_reports(UnitState& unit, UnitResult& result) {
  judge_violations(unit.runs);
  write_file_atomically(unit.run_dir / "results.json",
                        scenario_results_json(unit.scenario, unit.runs, unit.info).dump(2) + "\n");
  write_file_atomically(unit.run_dir / "summary.md",
                        summary_markdown(unit.scenario, unit.runs, unit.info));
  write_file_atomically(unit.run_dir / "report.html",
                        run_report_html(unit.scenario, unit.runs, unit.info));
  point_latest(unit.scenario_dir, unit.info.run_id);
  result.written_dir = unit.run_dir.string();
}

// UnitRunner: a variant

// run_variant: one variant's run (its attempts), its files, its line and what it adds up to;
// false once the run must stop.
bool UnitRunner::run_variant(std::size_t job, UnitState& unit, const std::string& variant_name,
                             UnitResult& result) {
  const VariantJob variant = start_variant(job, unit, variant_name);
  Attempts attempts = run_until_quiet(unit, variant);
  if (attempts.stopped) return false;
  VariantRun& run = attempts.run;
  const RunOutcome& outcome = attempts.outcome;
  add_stall_notes(run, attempts.stalled);
  write_variant_files(unit, variant, run);
  const double seconds = static_cast<double>(real_clock().now_ns() - variant.started) / 1e9;
  print_run_line(variant.label, run, outcome, seconds);
  board_.finish_run();
  result.runs.push_back(run_done(unit, variant, run, outcome, seconds));
  if (setup_.keep_rows) {
    result.rows.push_back(run_row(unit, variant_name, run, outcome));
    result.rows.back().seconds = seconds;
  }
  const bool run_interrupted = run.interrupted;
  unit.runs.push_back(std::move(run));
  return !must_stop_after(unit, variant_name, run_interrupted, outcome);
}

// start_variant: the run's number and label (on the progress line), its start time, the
// scenario as its library runs it, and its report directory.
UnitRunner::VariantJob UnitRunner::start_variant(std::size_t job, const UnitState& unit,
                                                 const std::string& variant_name) {
  const int number = board_.count_run();
  const std::string label = "[" + std::to_string(number) + "/" + std::to_string(setup_.total_runs) +
                            "] " + unit.scenario.name + " / " + variant_name;
  const std::string progress_label =
      label + (setup_.options.repeat > 1 ? " (repetition " + std::to_string(unit.repetition) + "/" +
                                               std::to_string(setup_.options.repeat) + ")"
                                         : "");
  board_.show(job, progress_label + " ...", /*milestone=*/true);
  const Nanos started = real_clock().now_ns();
  // A library runs only as its adapter's processes; their stderr is kept in the run.
  const LockVariant& variant = *find_variant(variant_name);
  VariantJob run{.job = job,
                 .name = variant_name,
                 .variant = variant,
                 .library = library_spec(variant),
                 .as_library = {},
                 .label = label,
                 .progress_label = progress_label,
                 .started = started,
                 .dir = unit.run_dir / variant_name};
  if (run.library != nullptr) {
    run.as_library = unit.scenario;
    run_clients_as(run.as_library, Executor::kProcesses);
  }
  std::error_code error;
  fs::create_directories(run.dir, error);
  if (error) throw EnvironmentError("cannot create " + run.dir.string());
  return run;
}

// run_until_quiet: a run whose outcome differs from its expectation while the machine stalled
// with no fault planned (an unplanned_stall finding: a renewal due in time answered after the
// lease) says nothing about the lock: it is run again, at most kStallAttempts times in all, and
// the last attempt's outcome is the one reported. An `ok` is never taken from a stalled attempt;
// a lock that fails on a quiet attempt fails.
UnitRunner::Attempts UnitRunner::run_until_quiet(const UnitState& unit, const VariantJob& variant) {
  constexpr int kStallAttempts = 3;
  Attempts attempts;
  for (int attempt = 1;; ++attempt) {
    std::optional<RunOutcome> outcome = run_attempt(unit, variant);
    if (!outcome) {
      attempts.stopped = true;
      break;
    }
    attempts.outcome = std::move(*outcome);
    if (!attempts.outcome.harness_error.empty()) {
      // Nothing ran, so there is nothing to judge: the reports of what did run are written, then
      // locksim stops.
      board_.fail_environment(attempts.outcome.harness_error + " (during " + unit.scenario.name +
                              " / " + variant.name + ")");
      attempts.stopped = true;
      break;
    }
    attempts.run = judge(unit, variant.name, attempts.outcome);
    const VariantRun& run = attempts.run;
    const std::vector<const Finding*> stalls = run.result.of(FindingKind::kUnplannedStall);
    if (run.matches || run.interrupted || stalls.empty() || attempts.outcome.server_lost ||
        attempts.outcome.server_died || attempt == kStallAttempts || board_.stopping()) {
      break;
    }
    attempts.stalled.push_back(stalls.front()->words);
    {
      std::lock_guard<std::mutex> lock(board_.mutex());
      std::cout << pad(variant.label, 44) << " observed " << describe_observation(run.result)
                << " while the machine stalled; running it again (attempt " << attempt + 1 << " of "
                << kStallAttempts << ")\n    " << stalls.front()->words << std::endl;
    }
    board_.show(variant.job, variant.progress_label + " again ...", /*milestone=*/true);
  }
  return attempts;
}

// run_attempt: one attempt at the variant's run, on the machine or the simulator, with the notes
// a reader of its summary needs; nullopt if it was interrupted while its servers started.
std::optional<RunOutcome> UnitRunner::run_attempt(const UnitState& unit,
                                                  const VariantJob& variant) {
  const Scenario& scenario = unit.scenario;
  const std::size_t job = variant.job;
  // A scenario with a topology gets servers of its own for each variant's run: its faults leave
  // them in no state for the next (the simulator models its own).
  std::unique_ptr<Topology> topology;
  const std::string key_prefix = "locksim:" + unit.info.run_id + ":" + variant.name + ":";
  if (scenario.topology && !setup_.simulated) {
    board_.show(job,
                variant.progress_label + " starting " + scenario.topology->name + " servers ...");
    try {
      // A cluster's first primary serves the lock key's slot (sim/topology/cluster.cc).
      topology = Topology::start(*scenario.topology, key_prefix + scenario.lock.key);
    } catch (const EnvironmentError&) {
      // Ctrl-C while the servers started (Sentinel takes seconds to see its replica): an
      // interruption, not an environment failure.
      if (!setup_.stop.requested()) throw;
      board_.hide(job);
      board_.interrupt();
      return std::nullopt;
    }
  }
  const Endpoint run_endpoint = topology ? topology->primary_endpoint() : unit.client_endpoint;
  RunRequest request{variant.scenario(unit),
                     variant.variant,
                     unit.run_seed,
                     run_endpoint,
                     key_prefix,
                     setup_.stop,
                     [&](double fraction) {
                       // A scripted run's share of steps started says little (a step waits for
                       // a lease to end): only a workload's share is shown and estimated from.
                       if (!variant.scenario(unit).workload) {
                         board_.show(job, variant.progress_label);
                         return;
                       }
                       board_.show(job,
                                   variant.progress_label + " " +
                                       std::to_string(static_cast<int>(fraction * 100)) + "%",
                                   /*milestone=*/false, fraction);
                     },
                     /*private_server=*/!setup_.external,
                     /*admin_endpoint=*/topology ? run_endpoint : setup_.endpoint,
                     variant.library != nullptr ? variant.library->command
                                                : worker_command(setup_.options.variant_files),
                     variant.dir.string(),
                     topology.get()};
  RunOutcome outcome =
      setup_.simulated ? run_on_simulator(request, unit.run_seed) : run_scenario(request);
  topology.reset();
  add_variant_notes(outcome, unit, variant);
  board_.hide(job);
  return outcome;
}

// run_on_simulator: `request` on the simulator, with a note saying so (and how to replay it).
RunOutcome UnitRunner::run_on_simulator(const RunRequest& request, std::uint64_t run_seed) const {
  const SimulatedRun simulated_run =
      run_simulated(request.scenario, request.variant, run_seed, setup_.stop, request.key_prefix);
  RunOutcome outcome = simulated_run.outcome;
  char text[160];
  std::snprintf(text, sizeof text,
                "ran on the simulator (seed %llu): %.1f ms of virtual time, %llu events; "
                "a real server judges: run it without --backend sim",
                static_cast<unsigned long long>(run_seed), ns_to_ms(simulated_run.virtual_ns),
                static_cast<unsigned long long>(simulated_run.events));
  outcome.notes.insert(outcome.notes.begin(), text);
  return outcome;
}

// add_variant_notes: what the variant's summary says of the variant itself: what WAIT 1 does
// not give, and why a library's verdict is reported, not asserted.
void UnitRunner::add_variant_notes(RunOutcome& outcome, const UnitState& unit,
                                   const VariantJob& variant) {
  const std::string& variant_name = variant.name;
  if (variant_name == "lua_owner_wait") {
    outcome.notes.insert(
        outcome.notes.begin(),
        "lua_owner_wait: WAIT 1 made the primary wait for one replica's acknowledgement; "
        "it does not make Redis strongly consistent: a replica that acknowledged can "
        "still lose the key (it fails too, or restarts without persistence), and a "
        "failover can still promote a replica that did not acknowledge");
  }
  const LibrarySpec* library = variant.library;
  if (library != nullptr) {
    const auto reason = library->reported_in.find(unit.scenario.name);
    if (reason != library->reported_in.end()) {
      outcome.notes.insert(outcome.notes.begin(), variant_name + " is not held to " +
                                                      library->like +
                                                      "'s expectation here: " + reason->second);
    } else if (!library->assert_like) {
      outcome.notes.insert(
          outcome.notes.begin(),
          variant_name + "'s verdicts are reported, not asserted: " + library->summary);
    }
  }
}

// judge: the attempt's history checked and compared with the variant's expectation; the history
// and notes are moved out of `outcome`.
VariantRun UnitRunner::judge(const UnitState& unit, const std::string& variant_name,
                             RunOutcome& outcome) {
  VariantRun run;
  run.variant = variant_name;
  run.expected = unit.scenario.expect.at(variant_name);
  run.result = check_history(outcome.history, check_options(unit.scenario));
  run.history = std::move(outcome.history);
  run.notes = std::move(outcome.notes);
  run.interrupted = outcome.interrupted;
  run.timed_out = outcome.timed_out;
  run.matches =
      !run.interrupted && matches_expectation(run.expected, run.result, run.history.clients);
  return run;
}

// add_stall_notes: each attempt run again, first among the run's notes.
void UnitRunner::add_stall_notes(VariantRun& run, const std::vector<std::string>& stalled) {
  for (std::size_t a = 0; a < stalled.size(); ++a) {
    run.notes.insert(run.notes.begin() + static_cast<std::ptrdiff_t>(a),
                     "attempt " + std::to_string(a + 1) + " of this run differed from its " +
                         "expectation while the machine stalled, and was run again: " + stalled[a]);
  }
}

// write_variant_files: the variant's history.jsonl, trace.json and results.json.
void UnitRunner::write_variant_files(UnitState& unit, const VariantJob& variant,
                                     const VariantRun& run) {
  write_history_jsonl(variant.dir / "history.jsonl", run.history);
  write_trace_json(variant.dir / "trace.json", run.history, run.result,
                   unit.scenario.name + " / " + variant.name);
  // After the trace: the run's peak is behind it (with --jobs, the peak of runs at once).
  unit.info.peak_rss_mb = peak_rss_mb();
  write_file_atomically(variant.dir / "results.json",
                        variant_results_json(unit.scenario, run, unit.info).dump(2) + "\n");
}

// print_run_line: the run's line (expected, observed, status, time) and the findings a reader
// needs under it.
void UnitRunner::print_run_line(const std::string& label, const VariantRun& run,
                                const RunOutcome& outcome, double seconds) {
  char elapsed[32];
  std::snprintf(elapsed, sizeof elapsed, "%.1f s", seconds);
  std::lock_guard<std::mutex> lock(board_.mutex());
  std::cout << pad(label, 44) << " expected " << pad(describe_expectation(run.expected), 34)
            << " observed " << pad(describe_observation(run.result), 34)
            << (run.interrupted       ? "INTERRUPTED"
                : outcome.server_lost ? "SERVER LOST"
                : outcome.server_died ? "SERVER DIED"
                : run.matches         ? "ok"
                                      : "MISMATCH")
            << "  " << elapsed << std::endl;
  // The lock's own errors are always named (a user script that answers wrongly); the findings
  // behind an unexpected verdict are named when the outcome differs.
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

// run_done: the run as the table, the sweep maps and --junit count it.
RunDone UnitRunner::run_done(const UnitState& unit, const VariantJob& variant,
                             const VariantRun& run, const RunOutcome& outcome, double seconds) {
  std::string words;
  for (const Finding& f : run.result.findings) {
    if (verdict_of(f.kind) != Verdict::kOk || f.kind == FindingKind::kLockError ||
        f.kind == FindingKind::kUnplannedStall) {
      words += f.words + "\n";
    }
  }
  const Scenario& scenario = unit.scenario;
  return RunDone{
      .pair = std::make_pair(scenario.name, variant.name),
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
      .report = variant.dir.string(),
  };
}

// run_row: the run as a command built on runs sees it (audit).
RunRow UnitRunner::run_row(const UnitState& unit, const std::string& variant_name,
                           const VariantRun& run, const RunOutcome& outcome) {
  RunRow row;
  row.scenario = unit.scenario.name;
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
  row.summary = (unit.run_dir / "summary.md").string();
  for (const Finding& f : run.result.findings) {
    if (verdict_of(f.kind) != Verdict::kOk || f.kind == FindingKind::kStolenRenewal ||
        f.kind == FindingKind::kStaleRelease || f.kind == FindingKind::kIdleHold ||
        f.kind == FindingKind::kBarging) {
      row.words.push_back(f.words);
    }
  }
  return row;
}

// must_stop_after: a lost or dead server stops the whole run (exit 3), and an interrupted run
// stops it as interrupted; either way no further variant runs.
bool UnitRunner::must_stop_after(const UnitState& unit, const std::string& variant_name,
                                 bool interrupted, const RunOutcome& outcome) {
  const std::string& scenario_name = unit.scenario.name;
  if (outcome.server_lost) {
    board_.fail_environment("the Redis server stopped answering during " + scenario_name + " / " +
                            variant_name);
  } else if (outcome.server_died) {
    board_.fail_environment(
        "a process of the topology died without the scenario killing it during " + scenario_name +
        " / " + variant_name + " (named in its summary)");
  }
  if (interrupted) board_.interrupt();
  return interrupted || outcome.server_lost || outcome.server_died;
}

// run_units

void run_units(UnitRunner& runner, RunBoard& board, const std::vector<Unit>& units,
               std::vector<UnitResult>& results, int jobs) {
  // Each job takes the next unit until none is left or the run must stop.
  std::atomic<std::size_t> next_unit{0};
  const auto job_loop = [&](std::size_t job) {
    try {
      for (std::size_t i = next_unit++; i < units.size(); i = next_unit++) {
        if (board.stopping() || !runner.run(job, units[i], results[i])) break;
      }
    } catch (const EnvironmentError& e) {
      board.hide(job);
      board.fail_environment(e.what());
    } catch (const fs::filesystem_error& e) {
      board.hide(job);
      board.fail_environment(e.what());
    } catch (...) {
      board.hide(job);
      board.keep_unexpected(std::current_exception());
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
  if (board.unexpected()) std::rethrow_exception(board.unexpected());
}

}  // namespace locksim::run_internal
