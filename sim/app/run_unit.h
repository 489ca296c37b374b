// run_unit.h: how `locksim run` runs its units (internal to sim/app; run_command.cc plans them
// and adds up what they return).
//
// A unit is one repetition of one scenario: its variants run one after another (they share the
// run directory, its summary and the run's ACL user). With --jobs N, N jobs take units in plan
// order, one at a time, until none is left or the run must stop; each run's line is printed as it
// ends, and what a unit adds up to is kept in its UnitResult, folded in plan order afterwards so
// that it does not depend on which unit finished first.
//
//   RunBoard board(options.progress, jobs, total_runs);
//   UnitRunner runner(setup, board);
//   run_units(runner, board, units, results, jobs);  // rethrows what a job threw unexpectedly
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/app/commands.h"
#include "sim/app/console.h"
#include "sim/core/clock.h"
#include "sim/core/stop.h"
#include "sim/core/verdict.h"
#include "sim/driver/driver.h"
#include "sim/redis/acl_user.h"
#include "sim/redis/endpoint.h"
#include "sim/report/junit.h"
#include "sim/report/run_record.h"
#include "sim/scenario/scenario.h"

namespace locksim::run_internal {

// selected_variants: the pairs to run: each scenario's variants, narrowed by --variant.
std::vector<std::string> selected_variants(const Scenario& scenario,
                                           const std::vector<std::string>& filter);

// Unit: one repetition (1-based) of one scenario.
struct Unit {
  int repetition = 1;
  const Scenario* scenario = nullptr;
};

// RunDone: one variant run as the table, the sweep maps and --junit count it.
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

// UnitResult: what one unit adds up to, folded in plan order after every unit ended.
struct UnitResult {
  std::vector<RunDone> runs;
  std::vector<RunRow> rows;
  std::string written_dir;
};

// RunSetup: what every unit of one `locksim run` shares, fixed before the first starts.
struct RunSetup {
  const RunOptions& options;
  StopSignal& stop;
  std::uint64_t seed = 0;      // repetition r runs with seed + r - 1
  bool simulated = false;      // --backend sim
  bool external = false;       // no private server (--redis, or the simulator)
  Endpoint endpoint;           // the server's (a scenario with a topology has servers of its own)
  std::string endpoint_label;  // the redacted URL, or what the simulator is
  std::string redis_version;
  int total_runs = 0;      // variant runs in all, for each run's "[n/total]"
  bool keep_rows = false;  // fill UnitResult::rows (run_scenarios was given `rows`)
};

// RunBoard: what the jobs of one run share, each behind one mutex: stdout and the progress line
// (the outcomes done of all, the time left, and each job's text), the count of runs started and
// finished, and why the run must stop (an interruption, an environment failure, an unexpected
// exception). Thread-safe.
class RunBoard {
 public:
  RunBoard(ProgressMode progress, std::size_t jobs, int total_runs)
      : progress_(progress), running_(jobs), fractions_(jobs), total_runs_(total_runs) {}

  // show: `text` as job `job`'s part of the progress line; `milestone`: the job started
  // something (a line in a log); `fraction`: the share of its run done, if it says anything of
  // the time left (0 otherwise).
  void show(std::size_t job, const std::string& text, bool milestone = false, double fraction = 0);
  // hide: job `job`'s part of the progress line gone, and the line cleared.
  void hide(std::size_t job);
  // finish_run: one more variant run ended (its line printed).
  void finish_run();
  // count_run: the number of the variant run that starts now (1-based, in the order they start).
  int count_run();
  // stopping: no further run may start.
  bool stopping();
  // fail_environment: the run stops with exit 3, saying `what` (the first failure only).
  void fail_environment(const std::string& what);
  // interrupt: the run stops as interrupted (Ctrl-C, SIGTERM).
  void interrupt();
  // keep_unexpected: `error` is rethrown once every job ended (the first only).
  void keep_unexpected(std::exception_ptr error);
  // mutex: held while a job prints its lines, so that lines of two jobs do not mix.
  std::mutex& mutex() { return mutex_; }

  // After every job ended:
  bool interrupted() const { return interrupted_; }
  const std::string& environment_failure() const { return environment_failure_; }
  std::exception_ptr unexpected() const { return unexpected_; }

 private:
  // redraw: the progress line from what follows (mutex_ held).
  void redraw(bool milestone);

  std::mutex mutex_;  // guards what follows, stdout and the progress line
  ProgressLine progress_;
  TimeLeft time_left_;
  std::vector<std::string> running_;  // each job's progress text
  std::vector<double> fractions_;     // each job's share of its run done (0: unknown)
  int total_runs_ = 0;
  int finished_ = 0;
  int done_ = 0;
  bool interrupted_ = false;
  std::string environment_failure_;  // set: stop, print what ran, exit 3
  std::exception_ptr unexpected_;    // anything else a job threw: rethrown once every job ended
};

// UnitRunner: runs units, writes each variant's and each unit's reports, and prints each run's
// line. Shared by every job: it keeps no state of its own beyond the setup and the board.
class UnitRunner {
 public:
  UnitRunner(const RunSetup& setup, RunBoard& board) : setup_(setup), board_(board) {}

  // run: one unit's variants, one after another, then the unit's reports if any variant ran;
  // false once the run must stop. Throws EnvironmentError (or a filesystem_error) when it cannot
  // write its reports or set up the run's ACL user.
  bool run(std::size_t job, const Unit& unit, UnitResult& result);

 private:
  // UnitState: one unit while it runs.
  struct UnitState {
    const Scenario& scenario;
    int repetition = 1;
    std::vector<std::string> variants;
    std::uint64_t run_seed = 0;
    RunInfo info;  // peak_rss_mb is updated after each variant
    std::filesystem::path scenario_dir;
    std::filesystem::path run_dir;
    std::optional<PrefixUser> run_user;  // on the private server, without a topology
    Endpoint client_endpoint;            // the run user's, or the server's
    std::vector<VariantRun> runs;        // the variants that ran, in order
  };
  // VariantJob: one variant's run within a unit.
  struct VariantJob {
    std::size_t job = 0;
    const std::string& name;
    const LockVariant& variant;
    const LibrarySpec* library = nullptr;  // the variant's library, if it is one
    Scenario as_library;                   // with a library: the scenario on processes
    std::string label;                     // "[3/12] scenario / variant"
    std::string progress_label;            // the label, and "(repetition 2/5)" with --repeat
    Nanos started = 0;
    std::filesystem::path dir;
    const Scenario& scenario(const UnitState& unit) const {
      return library != nullptr ? as_library : unit.scenario;
    }
  };
  // Attempts: a variant's run after its attempts (see run_until_quiet).
  struct Attempts {
    RunOutcome outcome;  // the last attempt's, its history and notes moved into `run`
    VariantRun run;
    std::vector<std::string> stalled;  // the stall of each attempt run again
    bool stopped = false;              // the unit must stop, with nothing to report for it
  };

  UnitState start_unit(const Unit& unit) const;
  std::optional<PrefixUser> run_user_for(const UnitState& unit) const;
  bool run_variant(std::size_t job, UnitState& unit, const std::string& variant_name,
                   UnitResult& result);
  VariantJob start_variant(std::size_t job, const UnitState& unit, const std::string& variant_name);
  Attempts run_until_quiet(const UnitState& unit, const VariantJob& variant);
  std::optional<RunOutcome> run_attempt(const UnitState& unit, const VariantJob& variant);
  RunOutcome run_on_simulator(const RunRequest& request, std::uint64_t run_seed) const;
  static void add_variant_notes(RunOutcome& outcome, const UnitState& unit,
                                const VariantJob& variant);
  static VariantRun judge(const UnitState& unit, const std::string& variant_name,
                          RunOutcome& outcome);
  static void add_stall_notes(VariantRun& run, const std::vector<std::string>& stalled);
  static void write_variant_files(UnitState& unit, const VariantJob& variant,
                                  const VariantRun& run);
  void print_run_line(const std::string& label, const VariantRun& run, const RunOutcome& outcome,
                      double seconds);
  static RunDone run_done(const UnitState& unit, const VariantJob& variant, const VariantRun& run,
                          const RunOutcome& outcome, double seconds);
  static RunRow run_row(const UnitState& unit, const std::string& variant_name,
                        const VariantRun& run, const RunOutcome& outcome);
  bool must_stop_after(const UnitState& unit, const std::string& variant_name, bool interrupted,
                       const RunOutcome& outcome);
  static void write_unit_reports(UnitState& unit, UnitResult& result);

  const RunSetup& setup_;
  RunBoard& board_;
};

// run_units: runs `units` on `jobs` jobs (threads; one: on this thread), each result into the
// `results` slot of its unit. An environment failure a job throws stops the run through the
// board; anything else is rethrown here once every job ended.
void run_units(UnitRunner& runner, RunBoard& board, const std::vector<Unit>& units,
               std::vector<UnitResult>& results, int jobs);

}  // namespace locksim::run_internal
