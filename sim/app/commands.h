// commands.h: the three subcommands of `locksim`. main.cc parses argv with CLI11 and calls these;
// they return the process exit code.
//
// Exit codes: 0 every outcome as expected; 1 some outcome differs; 2 bad input or usage;
// 3 harness or environment failure (redis-server missing, Redis unreachable, unwritable output);
// 130 interrupted (Ctrl-C, SIGTERM) after writing what had been run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/stop.h"
#include "sim/core/verdict.h"
#include "sim/lock/library_variant.h"
#include "sim/lock/script_variant.h"

namespace locksim {

constexpr int kExitOk = 0;
constexpr int kExitMismatch = 1;
constexpr int kExitUsage = 2;
constexpr int kExitEnvironment = 3;
constexpr int kExitInterrupted = 130;

// ProgressMode: where a command's progress line goes: nowhere (--no-progress), to stderr when it
// is a terminal (the default), or to stderr whatever it is (--progress, for CI logs and tests).
enum class ProgressMode { kOff, kTerminal, kAlways };

struct RunOptions {
  std::vector<std::string> paths;     // scenario files or directories
  std::vector<std::string> variants;  // empty: every variant each scenario lists
  std::string redis_url;              // empty: a private redis-server
  std::string out_dir = "reports";
  std::optional<std::uint64_t> seed;
  int repeat = 1;
  // jobs: how many scenario runs (each one scenario's variants, one after another) at once.
  int jobs = 1;
  ProgressMode progress = ProgressMode::kTerminal;
  // max_memory_mb: refuse a run whose history would need more; 0: 80% of the available memory.
  std::int64_t max_memory_mb = 0;
  std::vector<std::string> variant_files;  // user Lua locks (--variant-file)
  // clients: "threads", "processes" or "event_loop" overrides every scenario's clients_run_as;
  // "": as written.
  std::string clients;
  std::vector<std::string> libraries;  // --library: lock libraries to add ("all": every one)
  std::string junit_path;              // --junit: also write JUnit XML here ("": none)
  // backend: "redis" (a real redis-server) or "sim" (the simulator: an in-memory Redis model on
  // virtual time, sim/simulate; what it cannot run is skipped, with the reason).
  std::string backend = "redis";
  // dry_run: resolve everything (files, variants, libraries, user scripts, --redis reached) and
  // print what would run and what is skipped, running, starting and writing nothing.
  bool dry_run = false;
};

int run_command(const RunOptions& options, StopSignal& stop);

// RunRow: one scenario x variant run as `run_scenarios` saw it (for commands built on runs).
struct RunRow {
  std::string scenario;
  std::string variant;
  Verdict observed = Verdict::kOk;
  std::string observed_text;  // "mutex_violation (lease_expired)"
  std::string expected_text;
  bool matches = false;
  bool undecided = false;       // interrupted, or the server was lost
  bool stolen_renewal = false;  // a stolen_renewal finding
  bool stale_release = false;   // a stale_release finding
  bool idle_hold = false;       // an idle_hold finding: a release deleted nothing within its lease
  bool barging = false;         // a barging finding: a newcomer got it past an earlier waiter
  std::vector<std::string> causes;  // the mutual-exclusion violation's causes, sorted
  std::string summary;          // the run's summary.md
  double seconds = 0;           // the run's wall time
  std::vector<std::string> words;  // the findings that count, in words
};

// worker_command: how run starts a client process: this executable's `worker` subcommand, given
// the user lock files so the worker knows their variants too.
std::vector<std::string> worker_command(const std::vector<std::string>& variant_files);
// worker_subcommand: `locksim worker`: one client process behind the worker protocol.
int worker_subcommand(const std::vector<std::string>& variant_files);

struct Scenario;
struct UserVariant;
// run_scenarios: steps 2-4 of `run` on scenarios already loaded (with user variants added and
// compiled here): the server, the runs, the reports and the table. Fills `rows` if given.
int run_scenarios(const RunOptions& options, std::vector<Scenario> scenarios,
                  const std::vector<UserVariant>& users, StopSignal& stop,
                  std::vector<RunRow>* rows);

// ExploreOptions: `locksim explore`.
struct ExploreOptions {
  std::string variant;                     // a built-in, or the name of --variant-file's lock
  std::vector<std::string> variant_files;  // user Lua locks
  std::string scenario;                    // a scenario file to explore ("": drawn exercises)
  std::uint64_t schedules = 1000;
  double seconds = 0;  // --time; 0: no time budget
  int jobs = 1;
  std::uint64_t first_seed = 0;
  std::optional<std::uint64_t> replay_seed;  // --seed: one schedule, replayed and written
  int clients = 3;
  int cycles = 2;
  int max_faults = 2;
  std::int64_t ttl_ms = 100;
  std::vector<std::string> faults = {
      "crash",   "checkpoint", "pause",     "overrun",     "lost_reply", "delay",       "partition",
      "restart", "clock_jump", "node_down", "dead_waiter", "cut_waiter", "client_clock"};
  bool shrink = true;
  bool steer = false;  // --steer: steer drawn schedules toward what is not covered yet
  bool first_own = false;  // --first-own: stop the search at the first finding of the lock's own
  int confirm_runs = 0;  // --confirm N: run each minimal scenario N times on a real redis-server
  std::string out_dir = "reports/explore";
  ProgressMode progress = ProgressMode::kTerminal;
  std::string json_path;                 // --json: also write the summary here
  std::vector<std::string> merge_files;  // --merge: add up these summaries instead of exploring
};
// explore_command: explores a lock on the simulator, shrinks each finding and confirms it.
int explore_command(const ExploreOptions& options, StopSignal& stop);

// AuditOptions: `locksim audit`.
struct AuditOptions {
  std::vector<std::string> variant_files;
  std::string scenarios_dir = "scenarios";
  std::string redis_url;
  std::string out_dir = "reports";
  std::optional<std::uint64_t> seed;
  int jobs = 1;  // scenarios at once, as for run
  ProgressMode progress = ProgressMode::kTerminal;
  std::string junit_path;  // --junit: also write JUnit XML here ("": none)
  // explore: schedules explored on the simulator first, for the lock and for its reference
  // (0: none); what only the lock shows is shrunk and confirmed on a real redis-server.
  std::uint64_t explore = 1000;
};

// audit_command: runs each user lock and its reference through every scenario that shows a lock
// property and prints one line per property. Exit 0: every property holds; 1: some does not;
// 2: bad input; 3: a run could not decide or the harness failed.
int audit_command(const AuditOptions& options, StopSignal& stop);

struct ContendOptions {
  std::vector<std::string> paths;  // study files or directories
  std::string redis_url;
  std::string out_dir = "reports";
  std::optional<std::uint64_t> seed;
  ProgressMode progress = ProgressMode::kTerminal;
  bool plots = true;               // run scripts/plot_contention.py on the report
  int round_trip_samples = 3000;   // PINGs and SET NX PX for the limit
  std::string junit_path;          // --junit: also write JUnit XML here ("": none)
  bool dry_run = false;            // --dry-run: print the points that would run; run nothing
};

// contend_command: runs contention studies and writes <out>/contention/<run-id>/contention.json
// and contention.md (and the plots). Exit 0: every point ok; 1: a point showed a violation or
// could not decide; 2: bad input; 3: harness failure; 130: interrupted (the report of what ran is
// written).
int contend_command(const ContendOptions& options, StopSignal& stop);

// variant_dirs_of: the variant directories (each holding a history.jsonl) that `run_dir` names:
// itself, the variant directories of a run directory, or those of a scenario directory's latest
// run. InputError if there are none.
std::vector<std::filesystem::path> variant_dirs_of(const std::string& run_dir);

// ExportOptions: `locksim export`.
struct ExportOptions {
  std::string run_dir;
  std::string format;   // "knossos" or "porcupine"
  std::string variant;  // which variant's history, when the run has several
  std::string key;      // which lock key, when the history has several
  std::string out;      // "": standard output
};

// export_command: writes one variant's history in another checker's format. Exit 0, or 2 for
// bad input.
int export_command(const ExportOptions& options);

// ReportOptions: `locksim report`.
struct ReportOptions {
  std::string dir = "reports";  // an output directory of run / contend
};

// report_command: writes DIR/index.html over the latest runs, sweeps and contention studies in
// DIR. Exit 0, 2 if DIR is not a directory, 3 if the page cannot be written.
int report_command(const ReportOptions& options);
// refresh_index: the same at the end of `run` and `contend`, printing where it is; a failure is
// a warning on stderr (the runs' own reports are written), never an exit code.
void refresh_index(const std::filesystem::path& out_dir);

struct CheckCommandOptions {
  std::string run_dir;
  std::vector<std::string> variant_files;  // needed to re-read runs of user variants
};

int check_command(const CheckCommandOptions& options);

struct ListOptions {
  std::vector<std::string> paths;  // default: ./scenarios if it exists
  std::vector<std::string> variant_files;
  bool json = false;  // --json: one JSON document instead of the grouped text
};

// UserVariant: a variant loaded from a --variant-file.
struct UserVariant {
  std::string name;
  std::string like;  // the reference: the built-in whose expectations it must meet
  ScriptVariantSpec spec;
};

// register_libraries: registers every library of adapters/libraries.json as a variant (once;
// none without the file). InputError for a bad manifest.
const std::vector<LibrarySpec>& register_libraries();
// select_libraries: the libraries named by --library ("lib:redis-py", "redis-py" or "all").
std::vector<LibrarySpec> select_libraries(const std::vector<std::string>& names);
// library_names_text: "redis-py, redis-py-renew, ..." from adapters/libraries.json, for --help
// (so the list cannot go stale); a sentence naming the file if it is missing or bad.
std::string library_names_text();
// runtime_installed: whether `spec`'s runtime check passes (true without a check).
bool runtime_installed(const LibrarySpec& spec);
// missing_runtime: "" if every library's runtime check passes, else the message with the
// install command (exit 3).
std::string missing_runtime(const std::vector<LibrarySpec>& libraries);
// library_refusal: why `library`'s adapter cannot run `scenario` ("" if it can). A release
// by a client that may not hold the lock (a step's "finally") is asked only of a reentrant
// library, whose lock is the client's and whose unlock may be called by anyone.
std::string library_refusal(const Scenario& scenario, const LibrarySpec& library);
// cancel_refusal: why `variant` (`spec`: its library, or null for a built-in or user lock) cannot
// run `scenario`'s cancellations ("" if it can, or the scenario cancels nothing), naming the step.
std::string cancel_refusal(const Scenario& scenario, const std::string& variant,
                           const LibrarySpec* spec);
// add_library_variants: adds each library to every scenario that lists its "like" and that its
// adapter can run, with that variant's expectation (or "any"); returns the skips, in words.
std::vector<std::string> add_library_variants(std::vector<Scenario>& scenarios,
                                              const std::vector<LibrarySpec>& libraries);

// register_variant_files: loads, validates and registers each file's variant (InputError).
std::vector<UserVariant> register_variant_files(const std::vector<std::string>& files);

// add_user_variants: runs each user variant in every scenario that lists its reference variant,
// expecting what that variant is expected to get.
struct Scenario;
void add_user_variants(std::vector<Scenario>& scenarios, const std::vector<UserVariant>& users);

int list_command(const ListOptions& options);

// build_commit: the git commit locksim was configured from ("unknown" outside a git checkout).
std::string build_commit();
// build_version: the CMake project version, e.g. "0.1.0".
std::string build_version();
// machine_description: "host, 2 cores, Linux 6.1.0".
std::string machine_description();
// peak_rss_mb: this process's peak resident memory so far, in MB (1 MB = 1024 KB here).
double peak_rss_mb();
// available_memory_bytes: MemAvailable from /proc/meminfo; 0 if unknown.
std::uint64_t available_memory_bytes();

}  // namespace locksim
