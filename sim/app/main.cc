// locksim: run, check and list Redis lock scenarios. See README.md and `locksim --help`.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>
#include <string_view>

#include "sim/app/commands.h"
#include "sim/app/console.h"
#include "sim/app/did_you_mean.h"
#include "sim/app/flags.h"
#include "sim/app/signals.h"
#include "sim/app/usage.h"
#include "sim/core/error.h"
#include "sim/scenario/executor.h"

namespace {

// ProgressFlags: a command's --no-progress and --progress, read into its ProgressMode after
// parsing.
struct ProgressFlags {
  bool shown = true;
  bool forced = false;
};

void add_progress_flags(CLI::App* command, ProgressFlags& flags) {
  CLI::Option* off = command->add_flag("!--no-progress", flags.shown,
                                       "Do not show the progress line (shown on a terminal)");
  command
      ->add_flag("--progress", flags.forced,
                 "Show the progress line on stderr even when it is not a terminal: a line\n"
                 "\"progress: ...\" at each change (at most one a second in between), for CI logs")
      ->excludes(off);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace locksim;
  // A worker is a client process of a run: it leaves signals to its default actions (SIGSTOP
  // pauses it, SIGKILL ends it) and never starts the signal thread.
  const bool worker_process = argc >= 2 && std::string_view(argv[1]) == "worker";
  // Never destroyed: the detached signal thread may still use it while the process exits. Held
  // by a static pointer, so it stays reachable (not a leak) in a process without that thread.
  static StopSignal* const kStop = new StopSignal;
  StopSignal& stop = *kStop;
  if (!worker_process) install_signal_handling(stop);  // before any other thread exists

  CLI::App app{
      "locksim: runs JSON scenarios against Redis lock variants on a real redis-server, records\n"
      "every acquire/release, checks the histories for mutual-exclusion and liveness violations,\n"
      "and writes reports.\n\n"
      "Exit codes: 0 all outcomes as expected, 1 some outcome differs, 2 bad input or usage,\n"
      "3 harness or environment failure (Redis missing or unreachable), 130 interrupted."};
  app.set_version_flag("--version",
                       "locksim " + build_version() + " (commit " + build_commit() + ")",
                       "Print the version and the git commit locksim was built from, and exit");
  app.require_subcommand(1);

  RunOptions run;
  CLI::App* run_cmd = app.add_subcommand(
      "run",
      "Run scenarios (files or directories of *.json) once per variant and compare each outcome\n"
      "with the scenario's `expect` block. Without --redis a private redis-server is started on\n"
      "127.0.0.1 and stopped on every exit path. Reports go to OUT/<scenario>/<run-id>/.");
  run_cmd->add_option("SCENARIOS", run.paths, "The scenario files or directories of *.json to run")
      ->required();
  run_cmd->add_option(
      "--variant", run.variants,
      "Only run these variants (repeatable); default: every variant a scenario lists");
  run_cmd->add_option(
      "--redis", run.redis_url,
      "Use this server instead of a private one: redis://[[user]:password@]host:port[/db]\n"
      "(user: an ACL user). Only keys under locksim:<run-id>: are touched (isolation by prefix\n"
      "only; on its private server locksim also runs the clients as an ACL user limited to\n"
      "them); the password is never printed");
  run_cmd->add_option("--out", run.out_dir, "Report directory")->capture_default_str();
  std::string seed_text;  // parsed by parse_seed_flag: CLI11 would wrap "-1" around
  run_cmd->add_option("--seed", seed_text,
                      "Seed for every random choice, an integer from 0 to 18446744073709551615\n"
                      "(printed first on each run)");
  run_cmd->add_option("--repeat", run.repeat, "Run everything N times; every run must match")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  run_cmd
      ->add_option("--jobs,-j", run.jobs,
                   "Run N scenarios at once (each one's variants one after another; every run\n"
                   "keeps its own keys, ACL user and servers). The outcome table and reports are\n"
                   "the same whatever finishes first; each run's line is printed as it ends.\n"
                   "Timing-sensitive verdicts are built to hold under load; latencies in the\n"
                   "reports are measured beside the other runs")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  ProgressFlags run_progress;
  add_progress_flags(run_cmd, run_progress);
  run_cmd
      ->add_option("--max-memory", run.max_memory_mb,
                   "Refuse, before anything runs, a scenario whose history would need more than\n"
                   "this many MB (estimated from its clients, cycles and renewals); default: 80%\n"
                   "of the memory this machine has available")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 30));
  run_cmd
      ->add_option(
          "--variant-file", run.variant_files,
          "A JSON file defining your own lock by its acquire/release(/extend) Lua scripts "
          "(repeatable).\n"
          "It runs wherever its reference runs and must get the same verdicts: \"like\" names\n"
          "the reference, else it is the built-in matching what the lock declares (renewal ->\n"
          "lua_owner_renew, a queue ({waiter}) -> lua_fair_queue, owner check -> lua_owner,\n"
          "TTL -> set_nx_ex, else naive). See\n"
          "docs/variants.md \"Your own lock\" and `locksim audit`");
  run_cmd
      ->add_option("--clients", run.clients,
                   "Run every scenario's clients as \"threads\" of locksim, as \"processes\"\n"
                   "(`locksim worker`, so a pause is SIGSTOP and a crash SIGKILL), or on one\n"
                   "\"event_loop\" (workloads whose variants and faults it can run);\n"
                   "default: each scenario's \"clients_run_as\"")
      ->check(CLI::IsMember(executor_words()));
  run_cmd->add_option(
      "--library", run.libraries,
      "Also run a third-party lock library (repeatable; \"all\": every one): " +
          (worker_process ? std::string() : library_names_text()) +
          "\n(adapters/libraries.json; `locksim list` says which are installed). It joins every\n"
          "scenario that lists the built-in it is judged like and that its adapter can run, with\n"
          "that built-in's expectations, its clients always processes of its adapter. See\n"
          "docs/libraries.md \"Lock libraries\"");
  run_cmd
      ->add_option(
          "--backend", run.backend,
          "\"redis\": real redis-server(s) in real time. \"sim\": the simulator: every client a\n"
          "fiber of one thread under a seeded scheduler, on virtual time, against an in-memory\n"
          "Redis with Lua (the same driver, faults and checker; a run takes milliseconds, and one\n"
          "--seed gives the same history byte for byte; client processes run as its threads).\n"
          "What it cannot run yet (libraries, Sentinel, servers that persist, extend steps\n"
          "and cancellations) is skipped, with the reason.\n"
          "A finding on the simulator is confirmed on a real server by running without it.\n"
          "See docs/simulator.md")
      ->check(CLI::IsMember({"redis", "sim"}))
      ->capture_default_str();
  run_cmd->add_flag("--dry-run", run.dry_run,
                    "Resolve everything (scenario files, variants, libraries, your scripts,\n"
                    "--redis reached with its credentials), print what would run and what is\n"
                    "skipped, and exit 0: nothing is run, started or written");
  run_cmd->add_option(
      "--junit", run.junit_path,
      "Also write the outcomes as JUnit XML to FILE, for CI test reports: a test case per\n"
      "scenario x variant run, a failure (expected and observed, the findings in words) where\n"
      "the outcome differs from the scenario's expectation. See docs/outputs.md");

  CheckCommandOptions check;
  CLI::App* check_cmd = app.add_subcommand(
      "check",
      "Re-judge a saved run without Redis: RUN_DIR is reports/<scenario>/<run-id> (all variants)\n"
      "or one variant's directory inside it. Exits 0 if every verdict matches the expectation.");
  check_cmd->add_option("RUN_DIR", check.run_dir, "The run directory to re-judge")->required();
  check_cmd->add_option("--variant-file", check.variant_files,
                        "The --variant-file(s) the run used, if it ran a user lock");

  ListOptions list;
  CLI::App* list_cmd = app.add_subcommand(
      "list",
      "List what locksim can run, grouped: the built-in lock variants, your locks "
      "(--variant-file),\n"
      "the third-party lock libraries (with whether their runtime is installed) and the\n"
      "scenarios (default: ./scenarios)");
  list_cmd->add_option("SCENARIOS", list.paths, "Scenario files or directories");
  list_cmd->add_option("--variant-file", list.variant_files, "Also list these user locks");
  list_cmd->add_flag("--json", list.json,
                     "Print one JSON document: {\"variants\", \"user_variants\", \"libraries\",\n"
                     "\"scenarios\"}, each a list of objects (docs/outputs.md)");

  ExploreOptions explore;
  std::string explore_seed_text;
  std::string explore_seeds_text;
  std::string explore_time_text;
  CLI::App* explore_cmd = app.add_subcommand(
      "explore",
      "Explore a lock on the simulator (docs/simulator.md): run many schedules (each seed draws a\n"
      "small scripted scenario: 2-3 clients, 1-2 cycles, their steps interleaved; a swarm of\n"
      "the fault menu on, each kind one fault or several aimed at one window (a majority of\n"
      "Redlock's nodes), at most --max-faults of them: crash, crash or pause at a checkpoint,\n"
      "pause, work past the lease, a lost reply, a delayed release, a partition, a server\n"
      "restart without persistence, a server clock jump, a Redlock node down, a queued waiter\n"
      "that dies or is cut off; a lock with a queue gets waiters that queue while it is held\n"
      "and is checked for barging; a semaphore draws its permits and its clients' clocks, a\n"
      "reentrant lock nested acquires, a read-write lock read holds and a stream of readers\n"
      "while a writer waits), judge each with the checker, list each finding\n"
      "with the first seed that shows it, shrink it to a minimal scripted scenario (written to\n"
      "OUT), say on how many of 16 fresh seeds it shows (fewer than 16: it hangs on a race) and,\n"
      "with --confirm N, run it N times on real redis-servers. A lock that uses what the\n"
      "model lacks (a command such as LPOS) cannot run there: such schedules are counted, with\n"
      "the reason, never judged.\n"
      "Exit 0: no finding; 1: findings; 2: bad input, or no finding while some schedules could\n"
      "not run; 3: no server.");
  explore_cmd->add_option("SCENARIO", explore.scenario,
                          "A scenario file to explore instead of drawn schedules (its steps or\n"
                          "workload as written; each seed draws the interleaving)");
  explore_cmd->add_option("--variant", explore.variant,
                          "The lock: a built-in or a --variant-file's (required but with --merge)");
  explore_cmd->add_option("--variant-file", explore.variant_files,
                          "Your own Lua lock (as for run)");
  explore_cmd
      ->add_option("--schedules", explore.schedules,
                   "Run at most N schedules (with --time and no --schedules: as many as "
                   "the time allows)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40))
      ->capture_default_str();
  explore_cmd->add_option("--time", explore_time_text,
                          "Stop after this long: 10s, 2m, 500ms (with --schedules or --seeds, "
                          "whichever comes first)");
  explore_cmd->add_option("--jobs,-j", explore.jobs, "Workers (each a thread of its own)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  explore_cmd->add_option("--seeds", explore_seeds_text,
                          "Run seeds A..B (inclusive), e.g. one shard of a campaign: 0..9999");
  explore_cmd->add_option("--seed", explore_seed_text,
                          "Replay one schedule exactly: print it, its verdict and findings, and\n"
                          "write its scenario.json and history.jsonl under OUT/seed-S/");
  explore_cmd->add_option("--clients", explore.clients, "At most N clients per drawn schedule")
      ->check(CLI::Range(2, 8))
      ->capture_default_str();
  explore_cmd->add_option("--cycles", explore.cycles, "At most N cycles per client")
      ->check(CLI::Range(1, 10))
      ->capture_default_str();
  explore_cmd->add_option("--max-faults", explore.max_faults, "At most N faults per schedule")
      ->check(CLI::Range(0, 10))
      ->capture_default_str();
  explore_cmd->add_option("--ttl-ms", explore.ttl_ms, "The lock's TTL in drawn schedules")
      ->check(CLI::Range(std::int64_t{10}, std::int64_t{60000}))
      ->capture_default_str();
  explore_cmd
      ->add_option("--faults", explore.faults,
                   "The fault menu (comma-separated): crash, checkpoint, pause, overrun,\n"
                   "lost_reply, delay, partition, restart (a server restarts without\n"
                   "persistence), clock_jump (a server's clock jumps ahead), node_down\n"
                   "(Redlock: a node killed), dead_waiter, cut_waiter (a lock with a queue:\n"
                   "a waiter queued while the lock is held dies, or is cut off), client_clock\n"
                   "(a semaphore: a client's own clock runs ahead or behind); not in the\n"
                   "default menu: failover, slot_move (on a Redis Cluster: the lock's primary\n"
                   "fails over to its replica, or its slot migrates, while the holder works)")
      ->delimiter(',')
      ->capture_default_str();
  explore_cmd->add_flag("!--no-shrink", explore.shrink, "List findings without shrinking them");
  explore_cmd->add_flag("--steer", explore.steer,
                        "Steer toward what is not covered yet: keep each schedule that covered\n"
                        "something new (or covered it with fewer choices) and draw one\n"
                        "schedule in two as a variation of the kept one of a rare item (a\n"
                        "variation's finding is written under OUT: its seed alone does not draw\n"
                        "it; with -j above 1 not repeated exactly)");
  explore_cmd->add_flag("--first-own", explore.first_own,
                        "Stop drawing at the first finding of the lock's own (its reference\n"
                        "does not show it in that schedule), then shrink and confirm what was\n"
                        "found as usual: a quick answer to \"is my lock safe?\" (no finding of\n"
                        "its own still searches the whole budget)");
  explore_cmd
      ->add_option("--confirm", explore.confirm_runs,
                   "Run each minimal scenario N times on a private redis-server and say\n"
                   "whether it is confirmed (n of N runs) or not reproduced")
      ->check(CLI::Range(1, 100));
  explore_cmd->add_option("--out", explore.out_dir, "Where the minimal scenarios go")
      ->capture_default_str();
  ProgressFlags explore_progress;
  add_progress_flags(explore_cmd, explore_progress);
  explore_cmd->add_option("--json", explore.json_path,
                          "Also write the summary (settings, seeds, findings with their first\n"
                          "seeds, exercised faults) as JSON to FILE, for --merge");
  explore_cmd
      ->add_option("--merge", explore.merge_files,
                   "Add up the --json summaries of shards (--seeds ranges of one campaign, run\n"
                   "with the same settings anywhere) and print the whole: counts summed, each\n"
                   "finding's least first seed")
      ->expected(1, -1);

  AuditOptions audit;
  std::string audit_seed_text;
  CLI::App* audit_cmd = app.add_subcommand(
      "audit",
      "Is my lock broken, and where is it worse than the reference? Runs each --variant-file lock\n"
      "and its reference (\"like\", or the built-in matching what it declares) through every\n"
      "scenario whose \"shows\" names a property that applies, and prints one line per property:\n"
      "YES, NO (and which way it differs from the reference) or UNDECIDED, with the run that shows\n"
      "it; writes <out>/audit-<name>/audit.md. Exit 0: every property holds; 1: some does not;\n"
      "2: bad input; 3: a run could not decide or the harness failed");
  audit_cmd->add_option("FILE", audit.variant_files, "The variant file(s) of the lock(s) to audit")
      ->required();
  audit_cmd->add_option("--scenarios", audit.scenarios_dir,
                        "The directory of property scenarios")
      ->capture_default_str();
  audit_cmd->add_option("--redis", audit.redis_url, "As for run (default: a private server)");
  audit_cmd->add_option("--out", audit.out_dir, "Report directory")->capture_default_str();
  audit_cmd->add_option("--seed", audit_seed_text, "As for run");
  audit_cmd->add_option("--jobs,-j", audit.jobs, "As for run: N scenarios at once")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  ProgressFlags audit_progress;
  add_progress_flags(audit_cmd, audit_progress);
  audit_cmd
      ->add_option("--explore", audit.explore,
                   "First explore the lock and its reference on the simulator for N schedules\n"
                   "each (docs/simulator.md); what only the lock shows is shrunk, run with the\n"
                   "reference, and confirmed on a real redis-server (0: do not explore)")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{1000000}))
      ->capture_default_str();
  audit_cmd->add_option("--junit", audit.junit_path,
                        "Also write JUnit XML to FILE: a test case per property (NO: a failure,\n"
                        "UNDECIDED: an error, n/a: skipped)");

  ContendOptions contend;
  std::string contend_seed_text;
  CLI::App* contend_cmd = app.add_subcommand(
      "contend",
      "What does a lock cost under contention? Runs contention studies (files or directories of\n"
      "*.json, e.g. scenarios/contention/): every variant x wait strategy x client count, each a\n"
      "time-bounded workload (warm-up, then a measured window), judged by the checker like any\n"
      "run. First measures the limit (round trip of PING and SET NX PX, commands per cycle of\n"
      "each variant). A study with \"topology\": \"cluster\" runs on a private Redis Cluster of\n"
      "its own, its keys spread over the primaries (not with --redis). Writes\n"
      "OUT/contention/<run-id>/contention.json and contention.md, and the plots\n"
      "(scripts/plot_contention.py). Exit 0: every point ok; 1: a point showed a violation\n"
      "or could not decide; 2: bad input; 3: harness failure; 130: interrupted (report written)");
  contend_cmd
      ->add_option("STUDIES", contend.paths, "The study files or directories of *.json to run")
      ->required();
  contend_cmd->add_option("--redis", contend.redis_url, "As for run (default: a private server)");
  contend_cmd->add_option("--out", contend.out_dir, "Report directory")->capture_default_str();
  contend_cmd->add_option("--seed", contend_seed_text, "As for run");
  contend_cmd->add_option("--rtt-samples", contend.round_trip_samples,
                          "PINGs and SET NX PX round trips measured for the limit")
      ->check(CLI::Range(10, 1000000))
      ->capture_default_str();
  contend_cmd->add_flag("!--no-plots", contend.plots, "Do not run scripts/plot_contention.py");
  ProgressFlags contend_progress;
  add_progress_flags(contend_cmd, contend_progress);
  contend_cmd->add_flag("--dry-run", contend.dry_run,
                        "Load the studies, print the points that would run, and exit 0: "
                        "nothing\nis run, started or written");
  contend_cmd->add_option(
      "--junit", contend.junit_path,
      "Also write JUnit XML to FILE: a test case per study point (a violation:\n"
      "a failure; a point that could not decide: an error)");

  ExportOptions export_options;
  CLI::App* export_cmd = app.add_subcommand(
      "export",
      "Write one variant's history in the form another checker reads: \"knossos\" (Jepsen's\n"
      "history, one EDN map per line, for Knossos and elle-cli) or \"porcupine\" (a JSON array of\n"
      "operations). RUN_DIR as for check. Only the acquires and releases of one lock key;\n"
      "what a mutex model without time can say about a lease: docs/outputs.md");
  export_cmd->add_option("RUN_DIR", export_options.run_dir, "The run directory (as for check)")
      ->required();
  export_cmd->add_option("--format", export_options.format, "knossos or porcupine")
      ->required()
      ->check(CLI::IsMember({"knossos", "porcupine"}));
  export_cmd->add_option("--variant", export_options.variant,
                         "The variant whose history to write (needed when the run has several)");
  export_cmd->add_option("--key", export_options.key,
                         "The lock key (needed when the history locks several)");
  export_cmd->add_option("--out", export_options.out,
                         "Write to FILE (atomically) instead of standard output");

  ReportOptions report;
  CLI::App* report_cmd = app.add_subcommand(
      "report",
      "Write DIR/index.html (default: reports), the page to open after runs: the scenario x\n"
      "variant matrix of the latest run of every scenario in DIR and in its result sets one level\n"
      "down (reports/threads, reports/libraries), each cell linked to that run's report.html; the\n"
      "sweep maps and the latest contention studies with their plots. `run` and `contend` write\n"
      "it at their end; this writes it again (after plots were drawn, or runs were removed)");
  report_cmd->add_option("DIR", report.dir, "The reports directory")->capture_default_str();

  std::vector<std::string> worker_variant_files;
  CLI::App* worker_cmd = app.add_subcommand(
      "worker",
      "One client of a run as its own process, started by `run` for clients_run_as\n"
      "\"processes\": reads requests on stdin and answers on stdout, one JSON object per line\n"
      "(the worker protocol, docs/faults.md \"Faults and client processes\").\n"
      "Not for interactive use");
  worker_cmd->add_option("--variant-file", worker_variant_files, "User locks the run uses");

  // A first word that names no command (and is no option) is a mistyped command: say so, with
  // the nearest one, rather than CLI11's "A subcommand is required".
  if (argc >= 2 && argv[1][0] != '-') {
    std::vector<std::string> commands;
    for (const CLI::App* command : app.get_subcommands({})) commands.push_back(command->get_name());
    const std::string word = argv[1];
    if (std::find(commands.begin(), commands.end(), word) == commands.end()) {
      std::erase(commands, "worker");  // internal: never suggested
      std::string names;
      for (const std::string& command : commands) names += (names.empty() ? "" : ", ") + command;
      std::cerr << "locksim: unknown command \"" << word << "\"" << did_you_mean(word, commands)
                << "; the commands are " << names << " (locksim --help says what each does)\n";
      return kExitUsage;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return usage_error(app, e);
  }
  run.progress = progress_mode(run_progress.shown, run_progress.forced);
  explore.progress = progress_mode(explore_progress.shown, explore_progress.forced);
  audit.progress = progress_mode(audit_progress.shown, audit_progress.forced);
  contend.progress = progress_mode(contend_progress.shown, contend_progress.forced);
  if (*run_cmd) {
    try {
      if (run_cmd->count("--seed") > 0) run.seed = parse_seed_flag(seed_text);
      check_out_flag(run.out_dir);
      if (run_cmd->count("--junit") > 0) check_output_file_flag("--junit", run.junit_path);
      if (run_cmd->count("--redis") > 0) check_redis_flag(run.redis_url);
    } catch (const InputError& e) {
      std::cerr << "locksim: " << e.what() << "\n";
      return kExitUsage;
    }
    return run_command(run, stop);
  }
  if (*explore_cmd) {
    try {
      if (explore_cmd->count("--seed") > 0)
        explore.replay_seed = parse_seed_flag(explore_seed_text);
      if (explore_cmd->count("--seeds") > 0) {
        const std::size_t dots = explore_seeds_text.find("..");
        if (dots == std::string::npos) {
          throw InputError("--seeds " + explore_seeds_text + ": expected A..B, e.g. 0..9999");
        }
        const std::uint64_t first = parse_seed_flag(explore_seeds_text.substr(0, dots));
        const std::uint64_t last = parse_seed_flag(explore_seeds_text.substr(dots + 2));
        if (last < first) throw InputError("--seeds " + explore_seeds_text + ": B is below A");
        // B - A + 1 wraps to 0 for 0..18446744073709551615 (which ran nothing and said "No
        // finding"): the range is bounded as --schedules is, before the count is formed.
        constexpr std::uint64_t kMaxSchedules = std::uint64_t{1} << 40;
        if (last - first >= kMaxSchedules) {
          throw InputError("--seeds " + explore_seeds_text + ": more than " +
                           std::to_string(kMaxSchedules) +
                           " seeds (2^40, the most --schedules takes); split the range into "
                           "shards and --merge their --json summaries");
        }
        explore.first_seed = first;
        explore.schedules = last - first + 1;
        if (explore_cmd->count("--schedules") > 0) {
          throw InputError("--seeds and --schedules: give one (--seeds A..B runs B - A + 1)");
        }
      }
      if (explore_cmd->count("--time") > 0) {
        explore.seconds =
            static_cast<double>(parse_duration_flag("--time", explore_time_text)) / 1e3;
        if (explore_cmd->count("--schedules") == 0 && explore_cmd->count("--seeds") == 0) {
          explore.schedules = std::uint64_t{1} << 40;
        }
      }
      // Every output is checked before the first schedule: a summary or a minimal scenario that
      // cannot be written used to end the exploration with an abort, after the work.
      if (explore.merge_files.empty()) check_out_flag(explore.out_dir);
      if (explore_cmd->count("--json") > 0) check_output_file_flag("--json", explore.json_path);
    } catch (const InputError& e) {
      std::cerr << "locksim: " << e.what() << "\n";
      return kExitUsage;
    }
    try {
      return explore_command(explore, stop);
    } catch (const EnvironmentError& e) {
      // A file that could not be written after all (a full disk, a FIFO without a reader).
      std::cerr << "locksim: " << e.what() << "\n";
      return kExitEnvironment;
    } catch (const std::filesystem::filesystem_error& e) {
      std::cerr << "locksim: " << e.what() << "\n";
      return kExitEnvironment;
    }
  }
  if (*audit_cmd) {
    try {
      if (audit_cmd->count("--seed") > 0) audit.seed = parse_seed_flag(audit_seed_text);
      check_out_flag(audit.out_dir);
      if (audit_cmd->count("--junit") > 0) check_output_file_flag("--junit", audit.junit_path);
      if (audit_cmd->count("--redis") > 0) check_redis_flag(audit.redis_url);
    } catch (const InputError& e) {
      std::cerr << "locksim: " << e.what() << "\n";
      return kExitUsage;
    }
    return audit_command(audit, stop);
  }
  if (*contend_cmd) {
    try {
      if (contend_cmd->count("--seed") > 0) contend.seed = parse_seed_flag(contend_seed_text);
      check_out_flag(contend.out_dir);
      if (contend_cmd->count("--junit") > 0) check_output_file_flag("--junit", contend.junit_path);
      if (contend_cmd->count("--redis") > 0) check_redis_flag(contend.redis_url);
    } catch (const InputError& e) {
      std::cerr << "locksim: " << e.what() << "\n";
      return kExitUsage;
    }
    return contend_command(contend, stop);
  }
  if (*worker_cmd) return worker_subcommand(worker_variant_files);
  if (*check_cmd) return check_command(check);
  if (*list_cmd) return list_command(list);
  if (*export_cmd) {
    try {
      if (export_cmd->count("--out") > 0) check_output_file_flag("--out", export_options.out);
    } catch (const InputError& e) {
      std::cerr << "locksim: " << e.what() << "\n";
      return kExitUsage;
    }
    return export_command(export_options);
  }
  if (*report_cmd) return report_command(report);
  return kExitUsage;
}
