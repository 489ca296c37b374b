// `locksim explore`: a lock across many schedules on the simulator (sim/explore), each finding
// shrunk to a minimal scripted scenario and, with --confirm, run on a real redis-server.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <set>

#include "sim/app/commands.h"
#include "sim/app/console.h"
#include "sim/app/did_you_mean.h"
#include "sim/core/atomic_file.h"
#include "sim/core/error.h"
#include "sim/explore/confirm.h"
#include "sim/explore/coverage.h"
#include "sim/explore/exercise.h"
#include "sim/explore/judge.h"
#include "sim/explore/schedule.h"
#include "sim/explore/search.h"
#include "sim/explore/shrink.h"
#include "sim/history/jsonl.h"
#include "sim/json/file.h"
#include "sim/json/json_reader.h"
#include "sim/json/parse.h"
#include "sim/lock/registry.h"
#include "sim/report/files.h"
#include "sim/simulate/sim_runtime.h"

namespace locksim {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::string replay_command(const ExploreOptions& options, std::uint64_t seed) {
  std::string command = "locksim explore --variant " + options.variant;
  for (const std::string& file : options.variant_files) command += " --variant-file " + file;
  if (!options.scenario.empty()) command += " " + options.scenario;
  if (options.scenario.empty() && options.clients != 3)
    command += " --clients " + std::to_string(options.clients);
  if (options.scenario.empty() && options.cycles != 2)
    command += " --cycles " + std::to_string(options.cycles);
  if (options.scenario.empty() && options.max_faults != ExploreOptions{}.max_faults)
    command += " --max-faults " + std::to_string(options.max_faults);
  if (options.scenario.empty() && options.ttl_ms != 100)
    command += " --ttl-ms " + std::to_string(options.ttl_ms);
  return command + " --seed " + std::to_string(seed);
}

// reproducer_command: the `locksim run` of a written scenario, as a user types it: a user lock
// needs its --variant-file too, or the scenario names a variant run does not know.
std::string reproducer_command(const ExploreOptions& options, const fs::path& file) {
  std::string command = "locksim run " + file.string();
  for (const std::string& variant_file : options.variant_files) {
    command += " --variant-file " + variant_file;
  }
  return command;
}

// without_the_clocks: for a finding blamed on a client's own clock (cause client_clock), the
// mutex_violation the minimal scenario still shows without its client_clocks (under the seeds
// that showed the finding), but for the limits of every lease, or "": a semaphore timed by the
// server, or by nothing, that lets too many in is not let down by a clock, whatever a clock
// offset left in its scenario suggests.
std::string without_the_clocks(const ShrinkResult& minimal, const LockVariant& variant,
                               const std::string& signature) {
  if (signature.find("(client_clock)") == std::string::npos ||
      !minimal.document.contains("client_clocks")) {
    return "";
  }
  Json plain = minimal.document;
  plain.erase("client_clocks");
  for (const std::uint64_t seed : minimal.seeds) {
    const ScheduleRun run = run_schedule(plain, variant, seed);
    for (const std::string& shown : run.signatures) {
      // A lease's limits (lease_expired, lock_lost) are every lock's: the clock made it worse.
      if (shown.starts_with("mutex_violation") && shown != "mutex_violation (lease_expired)" &&
          shown != "mutex_violation (lock_lost)") {
        return shown;
      }
    }
  }
  return "";
}

// expected_clients: the clients a minimal scenario's expectation names ("C and B").
std::string expected_clients(const Json& document, const LockVariant& variant) {
  std::string text;
  const Json* clients = nullptr;
  const auto expect = document.find("expect");
  if (expect != document.end()) {
    const auto entry = expect->find(std::string(variant.name()));
    if (entry != expect->end() && entry->is_object() && entry->contains("finding")) {
      const Json& finding = entry->at("finding");
      if (finding.contains("clients")) clients = &finding.at("clients");
    }
  }
  if (clients == nullptr) return "other clients";
  for (const Json& client : *clients) {
    text += (text.empty() ? "" : " and ") + client.get<std::string>();
  }
  return text.empty() ? "other clients" : text;
}

// settings_json: what decides the schedules of a seed (shards must agree on it to be merged),
// the build included: another build of locksim may draw a seed's schedule differently; and
// whether the search was steered (--steer), under which a seed may run a variation of a kept
// schedule instead of its own (a scenario file is never steered).
Json settings_json(const ExploreOptions& options) {
  Json settings = {
      {"variant", options.variant}, {"scenario", options.scenario}, {"build", build_commit()}};
  if (options.scenario.empty()) {
    settings["clients"] = options.clients;
    settings["cycles"] = options.cycles;
    settings["max_faults"] = options.max_faults;
    settings["ttl_ms"] = options.ttl_ms;
    std::set<std::string> faults(options.faults.begin(), options.faults.end());
    settings["faults"] = faults;
  }
  settings["steer"] = options.steer && options.scenario.empty();
  return settings;
}

// print_could_not_run: the schedules the simulator could not run (a command or Lua library the
// model lacks), and why: each reason once, with the first seed of the few kept.
void print_could_not_run(const ExploreSummary& summary) {
  std::cout << summary.could_not_run << " of " << summary.schedules
            << " schedule(s) could not run on the simulator" << (summary.errors.empty() ? "" : ":")
            << "\n";
  std::set<std::string> reasons;
  for (const ExploreSummary::Error& error : summary.errors) {
    if (reasons.insert(error.why).second)
      std::cout << "  seed " << error.seed << ": " << error.why << "\n";
  }
}

// print_harness_errors: the schedules that did not end by themselves (cut short by their bounds,
// or stalled): the harness's errors, never the lock's verdict; each kept seed with its replay.
void print_harness_errors(const ExploreOptions& options, const ExploreSummary& summary) {
  std::cout << summary.harness_errors << " of " << summary.schedules
            << " schedule(s) did not end (a harness error, not judged):\n";
  for (const ExploreSummary::Error& error : summary.harness_error_seeds) {
    std::cout << "  seed " << error.seed << ": " << error.why
              << "\n      replay: " << replay_command(options, error.seed) << "\n";
  }
}

// print_no_finding: the line when nothing was found: an ok only for schedules that ran.
void print_no_finding(const ExploreSummary& summary) {
  const std::uint64_t not_run = summary.could_not_run + summary.harness_errors;
  if (not_run == 0 && summary.unknown == 0) {
    std::cout << "No finding: every schedule's verdict was ok.\n";
  } else if (not_run == 0) {
    std::cout << "No finding; " << summary.schedules - summary.unknown
              << " schedule(s) ended ok and " << summary.unknown
              << " unknown (above): not an ok.\n";
  } else {
    std::cout << "No finding in the " << summary.schedules - not_run
              << " schedule(s) that ran; of the " << not_run
              << " that could not run or did not end (above), nothing is known.\n";
  }
}

// exit_without_own_finding: the exit code when the lock showed no finding of its own: a
// schedule that did not end is a harness error (3), one that could not run leaves the answer
// open (2).
int exit_without_own_finding(const ExploreSummary& summary) {
  if (summary.interrupted) return kExitInterrupted;
  if (summary.harness_errors > 0) return kExitEnvironment;
  return summary.could_not_run > 0 ? kExitUsage : kExitOk;
}

// JudgedFinding: a finding and its judgement against the reference of the lock's kind.
struct JudgedFinding {
  std::string signature;
  ExploreFinding found;
  Judgement judgement;
  // Listed as the lock's own, then shown by the reference too in its minimal scenario: a limit.
  bool became_limit = false;
};

// coverage_json: a summary's "coverage": the words of the menu, sorted, and the schedules that
// covered each item, by its words.
Json coverage_json(const CoverageCounts& coverage) {
  std::set<std::string> menu;
  coverage.menu.for_each(
      [&](CoverageItem item) { menu.insert(coverage_word(item, coverage.points)); });
  Json schedules = Json::object();
  coverage.covered().for_each([&](CoverageItem item) {
    schedules[coverage_word(item, coverage.points)] = coverage.schedules[item];
  });
  return {{"menu", menu}, {"schedules", schedules}};
}

// print_items: `label` and its items, wrapped at 100 columns; nothing for no items.
void print_items(const std::string& label, const std::vector<std::string>& items) {
  if (items.empty()) return;
  std::string line = "  " + label + ":";
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string item = " " + items[i] + (i + 1 < items.size() ? "," : "");
    if (line.size() + item.size() > 100) {
      std::cout << line << "\n";
      line = "   ";
    }
    line += item;
  }
  std::cout << line << "\n";
}

// print_coverage: the "Covered:" section: each item some schedule covered, with how many did
// (faults, then races), and the items of the menu none covered: the holes.
void print_coverage(const CoverageCounts& coverage) {
  const Coverage covered = coverage.covered();
  std::vector<std::string> faults;
  std::vector<std::string> races;
  std::vector<std::string> holes;
  covered.for_each([&](CoverageItem item) {
    (item >= kAcquireAcquire ? races : faults)
        .push_back(coverage_word(item, coverage.points) + " (" +
                   std::to_string(coverage.schedules[item]) + ")");
  });
  coverage.menu.without(covered).for_each(
      [&](CoverageItem item) { holes.push_back(coverage_word(item, coverage.points)); });
  std::cout << "Covered (schedules that covered each item; " << coverage.menu.count() - holes.size()
            << " of the menu's " << coverage.menu.count()
            << "):" << (faults.empty() && races.empty() ? " nothing\n" : "\n");
  print_items("faults", faults);
  print_items("races", races);
  print_items("not covered", holes);
}

// summary_json: the --json file: the settings, the seeds run, and what was found; `limits`: the
// signatures judged limits of every lease (a finding absent from `judged` was not judged, and
// counts as the lock's own).
Json summary_json(const Json& settings, const ExploreSummary& summary,
                  const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges,
                  const std::set<std::string>& limits = {}) {
  Json findings = Json::object();
  for (const auto& [signature, found] : summary.findings) {
    findings[signature] = {{"schedules", found.schedules},
                           {"first_seed", found.first_seed},
                           {"limit", limits.count(signature) > 0}};
  }
  Json seeds = Json::array();
  for (const auto& [first, last] : ranges) seeds.push_back({first, last});
  Json written = {{"locksim_explore", 1},
                  {"settings", settings},
                  {"seeds", seeds},
                  {"schedules", summary.schedules},
                  {"findings", findings},
                  {"exercised", summary.exercised},
                  {"with_no_fault", summary.with_no_fault},
                  {"could_not_run", summary.could_not_run},
                  {"harness_errors", summary.harness_errors}};
  if (summary.coverage) written["coverage"] = coverage_json(*summary.coverage);
  return written;
}

void write_summary(const ExploreOptions& options, const ExploreSummary& summary,
                   const std::vector<JudgedFinding>& judged) {
  std::set<std::string> limits;
  for (const JudgedFinding& finding : judged) {
    if (finding.judgement.limit) limits.insert(finding.signature);
  }
  write_file_atomically(options.json_path,
                        summary_json(settings_json(options), summary,
                                     {{options.first_seed, summary.last_seed}}, limits)
                                .dump(2) +
                            "\n");
}

std::size_t own_count(const std::vector<JudgedFinding>& judged) {
  return static_cast<std::size_t>(std::count_if(
      judged.begin(), judged.end(), [](const JudgedFinding& f) { return !f.judgement.limit; }));
}

// print_judged: the findings under two headings: the lock's own (what its reference does not
// show in the same scenario) and the limits every lock of its kind has, with what would help.
// finding_replay: how to run a finding's first schedule again: its --seed, or, for a steered
// variation (which its seed does not draw), its document, written under OUT.
std::string finding_replay(const ExploreOptions& options, const ExploreFinding& found) {
  const auto steered = found.steered.find(found.first_seed);
  if (steered == found.steered.end()) return replay_command(options, found.first_seed);
  const fs::path file =
      fs::path(options.out_dir) / ("steered-" + std::to_string(found.first_seed) + ".json");
  std::error_code error;
  fs::create_directories(file.parent_path(), error);
  write_file_atomically(file, steered->second.dump(2) + "\n");
  return reproducer_command(options, file) + " --backend sim --seed " +
         std::to_string(found.first_seed) + " (a steered variation)";
}

// found_document: the document of schedule `seed` of a finding: drawn from its seed, or the
// steered variation that ran.
nlohmann::json found_document(const ExploreTarget& target, const ExploreFinding& found,
                              std::uint64_t seed) {
  const auto steered = found.steered.find(seed);
  return steered != found.steered.end() ? steered->second : exercise_document(target, seed);
}

// lock_error_words: what a lock_error finding's first schedule says of the error (a script's
// reply, a WRONGTYPE), which its signature does not ("" for any other finding).
std::string lock_error_words(const ExploreTarget& target, const JudgedFinding& finding) {
  if (!finding.signature.starts_with("lock_error")) return "";
  const std::uint64_t seed = finding.found.first_seed;
  const ScheduleRun run =
      run_schedule(found_document(target, finding.found, seed), *target.variant, seed);
  const auto words = run.words_of.find(finding.signature);
  return words == run.words_of.end() ? "" : words->second;
}

void print_judged(const ExploreOptions& options, const ExploreTarget& target,
                  const std::vector<JudgedFinding>& judged) {
  const std::string reference = judged.empty() ? "" : judged.front().judgement.reference;
  const std::size_t own = own_count(judged);
  std::cout << "Findings of " << options.variant << "'s own";
  if (reference != options.variant) {
    std::cout << " (" << reference << ", the reference of its kind, does not show them in the "
              << "same scenario)";
  }
  std::cout << ":" << (own == 0 ? " none\n" : "\n");
  for (const JudgedFinding& f : judged) {
    if (f.judgement.limit) continue;
    std::cout << "  " << f.signature << ": " << f.found.schedules << " schedule(s), first seed "
              << f.found.first_seed << "\n      replay: " << finding_replay(options, f.found)
              << "\n      " << f.judgement.why << "\n";
    if (const std::string error = lock_error_words(target, f); !error.empty()) {
      std::cout << "      there: " << error << "\n";
    }
  }
  if (own == judged.size()) return;
  std::cout << "Limits every lock of its kind has (" << reference
            << (reference == options.variant ? ", the reference itself" : " shows them too")
            << "; not findings of its own):\n";
  for (const JudgedFinding& f : judged) {
    if (!f.judgement.limit) continue;
    std::cout << "  " << f.signature << ": " << f.found.schedules << " schedule(s), first seed "
              << f.found.first_seed << "\n      replay: " << finding_replay(options, f.found)
              << "\n";
    if (const std::string help = limit_help(f.signature); !help.empty()) {
      std::cout << "      what helps: " << help << "\n";
    }
  }
}

// print_conclusion: the answer in one line: findings of its own (exit 1) or none.
void print_conclusion(const ExploreOptions& options, const ExploreSummary& summary,
                      const std::vector<JudgedFinding>& judged) {
  const std::size_t own = own_count(judged);
  std::cout << "\n" << options.variant << ": ";
  if (own == 0) {
    std::cout << "no finding of its own in " << summary.schedules << " schedule(s)";
  } else {
    std::cout << own << " finding(s) of its own:";
    for (const JudgedFinding& f : judged) {
      if (!f.judgement.limit) std::cout << " " << f.signature << ";";
    }
    std::cout << " in " << summary.schedules << " schedule(s)";
  }
  const std::size_t limits = judged.size() - own;
  if (limits > 0) std::cout << "; " << limits << " limit(s) every lock of its kind has (above)";
  // What the listing called its own and the shrinking found a limit: the count above moved.
  std::string moved;
  for (const JudgedFinding& f : judged) {
    if (f.became_limit) moved += (moved.empty() ? "" : ", ") + f.signature;
  }
  if (!moved.empty()) {
    std::cout << ", " << moved << " among them: listed as its own above, its reference showed "
              << "it too in the minimal scenario";
  }
  std::cout << ".\n";
}

int replay(const ExploreOptions& options, const ExploreTarget& target, std::uint64_t seed) {
  const Json document = exercise_document(target, seed);
  const ScheduleRun run = run_schedule(document, *target.variant, seed);
  if (!run.error.empty()) {
    std::cerr << "locksim: seed " << seed << ": " << run.error << "\n";
    return run.cut_short ? kExitEnvironment : kExitUsage;
  }
  const fs::path dir = fs::path(options.out_dir) / ("seed-" + std::to_string(seed));
  fs::create_directories(dir);
  Json written = document;
  written["name"] = "explore-seed-" + std::to_string(seed);
  write_file_atomically(dir / "scenario.json", written.dump(2) + "\n");
  write_history_jsonl(dir / "history.jsonl", run.history);
  std::cout << "locksim: schedule " << seed << " of " << options.variant << ": verdict "
            << run.verdict << "\n"
            << describe_steps(document);
  for (const std::string& words : run.words) std::cout << "  " << words << "\n";
  std::cout << "Written: " << (dir / "scenario.json").string() << " (run it on a real server: "
            << reproducer_command(options, dir / "scenario.json") << "), "
            << (dir / "history.jsonl").string() << "\n";
  return run.signatures.empty() ? kExitOk : kExitMismatch;
}

// unsigned_count: a count or seed of a summary: an integer from 0 to 2^64 - 1 (not -5, not 1e30,
// not "5"), else an InputError naming the file and the field.
std::uint64_t unsigned_count(const json::JsonReader& field) {
  if (!field.value().is_number_unsigned()) {
    field.fail("expected an integer from 0 to " +
               std::to_string(std::numeric_limits<std::uint64_t>::max()) + ", got " +
               field.value().dump().substr(0, 40));
  }
  return field.value().get<std::uint64_t>();
}

// add_within: sum += count unless that wraps around; false (sum unchanged) if it would.
bool add_within(std::uint64_t& sum, std::uint64_t count) {
  if (count > std::numeric_limits<std::uint64_t>::max() - sum) return false;
  sum += count;
  return true;
}

// add_coverage: a summary's "coverage" added to `total`: its menu joined, its counts summed (each
// at most the file's `schedules`); a word that names no item is an InputError naming its path.
void add_coverage(CoverageCounts& total, const json::JsonReader& coverage,
                  std::uint64_t schedules) {
  const auto item_of = [&](const json::JsonReader& at, const std::string& word) {
    const std::optional<CoverageItem> item = coverage_item(word, total.points);
    if (!item) {
      at.fail("\"" + word.substr(0, 60) +
              "\" is not a coverage item (\"<fault> @ <place>\", acquire/acquire, " +
              "release/acquire, extend/acquire or release/expiry)");
    }
    return *item;
  };
  for (const json::JsonReader& word : coverage.member("menu").elements(false)) {
    total.menu.add(item_of(word, word.string()));
  }
  const json::JsonReader counts = coverage.member("schedules");
  for (const std::string& word : counts.keys()) {
    const json::JsonReader count = counts.member(word);
    const CoverageItem item = item_of(count, word);
    const std::uint64_t n = unsigned_count(count);
    if (n > schedules) {
      count.fail(std::to_string(n) + " is more than the file's " + std::to_string(schedules) +
                 " schedules");
    }
    if (!add_within(total.schedules[item], n)) {
      count.fail("the sum over the summaries does not fit a count");
    }
  }
}

// merge: --merge: the summaries of shards added up (counts summed, the least first seed).
int merge(const ExploreOptions& options) {
  Json settings;
  std::string settings_file;
  ExploreSummary total;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  std::vector<std::string> range_files;
  std::map<std::string, bool> limits;  // by signature
  total.coverage = CoverageCounts{};
  std::string without_coverage;  // the first summary written without coverage: none is known
  try {
    for (const std::string& file : options.merge_files) {
      const Json doc = json::read_json_file(file, json::kScenarioFileLimits, "explore summary");
      try {
        if (!doc.is_object() || doc.value("locksim_explore", 0) != 1) {
          throw InputError(file +
                           ": not a summary of locksim explore --json (no \"locksim_explore\": 1)");
        }
        if (settings_file.empty()) {
          settings = doc.at("settings");
          settings_file = file;
        } else if (doc.at("settings") != settings) {
          throw InputError(file + ": $.settings: " + doc.at("settings").dump() + " differs from " +
                           settings_file + "'s " + settings.dump() +
                           "; shards of one campaign are run with the same settings");
        }
        // Every number is checked before it is added: a negative, fractional or wrapping count,
        // a range backwards, or more findings than schedules would make a whole that lies.
        const json::JsonReader root(doc, "$", file);
        const std::uint64_t schedules = unsigned_count(root.member("schedules"));
        std::uint64_t seeds_in_file = 0;
        for (const json::JsonReader& range : root.member("seeds").elements(false)) {
          const std::vector<json::JsonReader> bounds = range.elements(true);
          if (bounds.size() != 2) range.fail("expected a range [first, last] of two seeds");
          const std::uint64_t first = unsigned_count(bounds[0]);
          const std::uint64_t last = unsigned_count(bounds[1]);
          if (last < first) {
            range.fail("expected [first, last] with last not below first, got [" +
                       std::to_string(first) + ", " + std::to_string(last) + "]");
          }
          for (std::size_t r = 0; r < ranges.size(); ++r) {
            if (first <= ranges[r].second && ranges[r].first <= last) {
              throw InputError(file + ": $.seeds: " + std::to_string(first) + ".." +
                               std::to_string(last) + " overlaps " +
                               std::to_string(ranges[r].first) + ".." +
                               std::to_string(ranges[r].second) + " of " + range_files[r] +
                               " (a seed would be counted twice)");
            }
          }
          // A range of 2^64 seeds has no count that fits: such a file cannot come from explore.
          if (last - first == std::numeric_limits<std::uint64_t>::max() ||
              !add_within(seeds_in_file, last - first + 1)) {
            range.fail("more seeds than a count can hold");
          }
          ranges.emplace_back(first, last);
          range_files.push_back(file);
        }
        if (schedules > seeds_in_file) {
          root.member("schedules")
              .fail(std::to_string(schedules) + " schedules, but $.seeds holds only " +
                    std::to_string(seeds_in_file) + " seed(s)");
        }
        const auto at_most_schedules = [&](const json::JsonReader& field) {
          const std::uint64_t count = unsigned_count(field);
          if (count > schedules) {
            field.fail(std::to_string(count) + " is more than the file's " +
                       std::to_string(schedules) + " schedules");
          }
          return count;
        };
        const auto add = [&](std::uint64_t& sum, std::uint64_t count, const json::JsonReader& at) {
          if (!add_within(sum, count)) at.fail("the sum over the summaries does not fit a count");
        };
        add(total.schedules, schedules, root.member("schedules"));
        add(total.with_no_fault, at_most_schedules(root.member("with_no_fault")),
            root.member("with_no_fault"));
        if (const auto could_not_run = root.optional_member("could_not_run")) {  // older summaries
          add(total.could_not_run, at_most_schedules(*could_not_run), *could_not_run);
        }
        if (const auto harness_errors = root.optional_member("harness_errors")) {  // likewise
          add(total.harness_errors, at_most_schedules(*harness_errors), *harness_errors);
        }
        if (const auto coverage = root.optional_member("coverage")) {
          if (total.coverage) add_coverage(*total.coverage, *coverage, schedules);
        } else if (without_coverage.empty()) {
          without_coverage = file;  // a summary of a locksim that did not count coverage
          total.coverage.reset();
        }
        const json::JsonReader exercised = root.member("exercised");
        for (const std::string& fault : exercised.keys()) {
          add(total.exercised[fault], at_most_schedules(exercised.member(fault)),
              exercised.member(fault));
        }
        const json::JsonReader findings = root.member("findings");
        for (const std::string& signature : findings.keys()) {
          const json::JsonReader found = findings.member(signature);
          const std::uint64_t count = at_most_schedules(found.member("schedules"));
          const std::uint64_t first_seed = unsigned_count(found.member("first_seed"));
          ExploreFinding& sum = total.findings[signature];
          // The judgement of the shard with the least first seed: the schedule an unsharded run
          // judges (an older summary, without the word, judged nothing: its own).
          if (sum.schedules == 0 || first_seed < sum.first_seed) {
            const Json& limit = doc.at("findings").at(signature).value("limit", Json(false));
            limits[signature] = limit.is_boolean() && limit.get<bool>();
          }
          sum.first_seed = sum.schedules == 0 ? first_seed : std::min(sum.first_seed, first_seed);
          add(sum.schedules, count, found.member("schedules"));
        }
      } catch (const Json::exception& e) {
        throw InputError(file + ": not a summary of locksim explore --json: " + e.what());
      }
    }
  } catch (const InputError& e) {
    std::cerr << "locksim: " << e.what() << "\n";
    return kExitUsage;
  }
  // Adjacent ranges are one (0..199 and 200..399 are 0..399), as an unsharded run writes them.
  std::sort(ranges.begin(), ranges.end());
  std::vector<std::pair<std::uint64_t, std::uint64_t>> joined;
  for (const auto& range : ranges) {
    if (!joined.empty() && range.first == joined.back().second + 1) {
      joined.back().second = range.second;
    } else {
      joined.push_back(range);
    }
  }
  ranges = std::move(joined);
  std::cout << "locksim: " << options.merge_files.size() << " summaries of "
            << settings.value("variant", std::string("?")) << ": " << total.schedules
            << " schedules, seeds";
  for (const auto& [first, last] : ranges) std::cout << " " << first << ".." << last;
  std::cout << "\n";
  if (!total.exercised.empty() || total.with_no_fault > 0) {
    std::cout << "Exercised:";
    for (const auto& [fault, count] : total.exercised)
      std::cout << " " << fault << " (" << count << ")";
    std::cout << "; no fault (" << total.with_no_fault << ")\n";
  }
  if (total.coverage) {
    print_coverage(*total.coverage);
  } else {
    std::cout << "Covered: not known (" << without_coverage
              << " has no \"coverage\": a locksim that did not count it wrote it)\n";
  }
  if (total.could_not_run > 0) print_could_not_run(total);
  if (total.harness_errors > 0) {
    std::cout << total.harness_errors << " of " << total.schedules
              << " schedule(s) did not end (a harness error, not judged; each shard named its "
                 "seeds)\n";
  }
  if (total.findings.empty()) {
    print_no_finding(total);
  } else {
    for (const bool limit : {false, true}) {
      bool heading = false;
      for (const auto& [signature, found] : total.findings) {
        if (limits[signature] != limit) continue;
        if (!heading) {
          std::cout << (limit ? "Limits every lock of its kind has (its reference shows them "
                                "too):\n"
                              : "Findings of its own:\n");
          heading = true;
        }
        std::cout << "  " << signature << ": " << found.schedules << " schedule(s), first seed "
                  << found.first_seed << "\n";
      }
    }
  }
  std::set<std::string> limit_set;
  bool own = false;
  for (const auto& [signature, limit] : limits) {
    if (limit) limit_set.insert(signature);
    own = own || !limit;
  }
  if (!options.json_path.empty()) {
    write_file_atomically(options.json_path,
                          summary_json(settings, total, ranges, limit_set).dump(2) + "\n");
  }
  if (own) return kExitMismatch;
  return exit_without_own_finding(total);
}

// exploration_progress: the progress line of an exploration `seconds` in, `done` schedules run:
// "1234/10000 schedules, about 12s left" under --schedules (or --seeds), "1234 schedules, 3s of
// 10s, 7s left" under --time alone, and with both whichever ends first.
std::string exploration_progress(const ExploreOptions& options, std::uint64_t done,
                                 double seconds) {
  // --time without --schedules or --seeds sets the count to its bound (main.cc): no total then.
  const bool counted = options.seconds <= 0 || options.schedules < (std::uint64_t{1} << 40);
  std::string line = std::to_string(done) +
                     (counted ? "/" + std::to_string(options.schedules) : "") + " schedules";
  double left = -1;  // unknown
  if (counted && done > 0) {
    left = seconds * static_cast<double>(options.schedules - std::min(done, options.schedules)) /
           static_cast<double>(done);
  }
  if (options.seconds > 0) {
    line += ", " + duration_text(seconds) + " of " + duration_text(options.seconds);
    const double by_time = std::max(0.0, options.seconds - seconds);
    left = left < 0 ? by_time : std::min(left, by_time);
  }
  if (left >= 0) line += ", about " + duration_text(left) + " left";
  return line;
}

}  // namespace

int explore_command(const ExploreOptions& options, StopSignal& stop) {
  if (!options.merge_files.empty()) return merge(options);
  if (options.variant.empty()) {
    std::cerr << "locksim: explore: missing --variant (the lock to explore: a built-in, or the "
                 "name of a --variant-file's lock); see locksim explore --help\n";
    return kExitUsage;
  }
  ExploreTarget target;
  try {
    register_variant_files(options.variant_files);
    target.variant = find_variant(options.variant);
    if (target.variant == nullptr) {
      std::string known;
      for (const std::string& name : variant_names()) known += (known.empty() ? "" : ", ") + name;
      throw InputError("--variant " + options.variant + ": unknown variant" +
                       did_you_mean(options.variant, variant_names()) + "; known: " + known);
    }
    target.exercise.faults.clear();
    for (const std::string& word : options.faults) {
      const std::optional<ExerciseFault> fault = exercise_fault_from(word);
      if (!fault) {
        std::string menu;
        for (const ExerciseFault f : all_exercise_faults()) {
          menu += (menu.empty() ? "" : ", ") + std::string(to_string(f));
        }
        throw InputError("--faults " + word + ": unknown fault; the menu is " + menu +
                         ", and on a Redis Cluster failover, slot_move");
      }
      target.exercise.faults.insert(*fault);
    }
    // A menu none of whose faults applies to the lock would run every schedule without a fault
    // and call that "no finding".
    const auto applies = [&](ExerciseFault fault) {
      if (fault == ExerciseFault::kNodeDown) return target.variant->multi_server();
      if (fault == ExerciseFault::kCheckpoint) return !target.variant->checkpoints().empty();
      if (fault == ExerciseFault::kDeadWaiter || fault == ExerciseFault::kCutWaiter) {
        return target.variant->queues();
      }
      if (fault == ExerciseFault::kClientClock) return target.variant->semaphore();
      if (fault == ExerciseFault::kFailover || fault == ExerciseFault::kSlotMove) {
        return !target.variant->multi_server();
      }
      return true;
    };
    if (options.scenario.empty() && !target.exercise.faults.empty() &&
        std::none_of(target.exercise.faults.begin(), target.exercise.faults.end(), applies)) {
      throw InputError(
          "--faults: none of " + std::string(options.faults.size() == 1 ? "it" : "them") +
          " applies to " + options.variant + " (node_down kills a node of a " +
          "multi-server lock, checkpoint needs a lock whose calls have checkpoints, " +
          "dead_waiter and cut_waiter a lock with a queue of waiters, client_clock a " +
          "semaphore, failover and slot_move a lock on one server; " + options.variant +
          (target.variant->multi_server() ? " is" : " is not") + " multi-server, has " +
          std::to_string(target.variant->checkpoints().size()) + " checkpoint(s)" +
          (target.variant->queues() ? " and a queue)" : " and no queue)"));
    }
    target.exercise.max_clients = options.clients;
    target.exercise.max_cycles = options.cycles;
    target.exercise.max_faults = options.max_faults;
    target.exercise.ttl_ms = options.ttl_ms;
    if (!options.scenario.empty()) {
      Json document =
          json::read_json_file(options.scenario, json::kScenarioFileLimits, "scenario file");
      // The lock under test takes the place of the variants the scenario lists.
      const std::string name = options.variant;
      document["variants"] = Json::array({name});
      document["expect"] = Json::object({{name, "any"}});
      target.scenario = document;
      const ScheduleRun probe = run_schedule(document, *target.variant, options.first_seed);
      if (!probe.error.empty()) throw InputError(options.scenario + ": " + probe.error);
    }
  } catch (const InputError& e) {
    std::cerr << "locksim: " << e.what() << "\n";
    return kExitUsage;
  }
  if (options.replay_seed) return replay(options, target, *options.replay_seed);

  std::cout << "locksim: exploring " << options.variant << " on the simulator: "
            << (options.scenario.empty()
                    ? "drawn schedules (2 to " + std::to_string(options.clients) +
                          " clients, 1 to " + std::to_string(options.cycles) +
                          " cycles each, at most " + std::to_string(options.max_faults) +
                          " fault(s) per schedule, TTL " + std::to_string(options.ttl_ms) + " ms)"
                    : options.scenario)
            << ", seeds from " << options.first_seed << ", " << options.jobs << " worker(s)"
            << std::endl;
  ProgressLine progress(options.progress);
  const TimeLeft time_left;
  progress.show(exploration_progress(options, 0, 0), /*milestone=*/true);
  ExploreBudget budget{options.first_seed, options.schedules, options.seconds, options.jobs};
  budget.steer = options.steer;
  if (options.first_own) {
    // The rule of the judgement below, on the one schedule that showed the signature first.
    budget.own = [&](const std::string& signature, std::uint64_t seed, const Json* steered) {
      ExploreFinding found;
      found.first_seed = seed;
      if (steered != nullptr) found.steered[seed] = *steered;
      std::vector<std::uint64_t> seeds;
      for (int i = 0; i < kSeedsPerCandidate; ++i) {
        seeds.push_back(seed + static_cast<std::uint64_t>(i));
      }
      return !judge_finding(*target.variant, signature,
                            {ScenarioSeeds{found_document(target, found, seed), seeds}})
                  .limit;
    };
  }
  const ExploreSummary summary = explore(
      target, budget, stop, [&](std::uint64_t done) {
        progress.show(exploration_progress(options, done, time_left.seconds()));
      });
  progress.clear();
  char rate[160];
  std::snprintf(rate, sizeof rate, "%llu schedules (seeds %llu..%llu) in %.2f s: %.0f schedules/s",
                static_cast<unsigned long long>(summary.schedules),
                static_cast<unsigned long long>(options.first_seed),
                static_cast<unsigned long long>(summary.last_seed), summary.seconds,
                summary.seconds > 0 ? static_cast<double>(summary.schedules) / summary.seconds : 0);
  std::cout << rate << (summary.interrupted ? " (interrupted)" : "")
            << (summary.stopped_at_own ? " (stopped at the first finding of its own: --first-own)"
                                       : "")
            << "\n";
  // Written at once (an interrupted judgement loses nothing), and again with the judgements; a
  // FIFO or a device only once, with them (its reader takes the first file and goes).
  if (!options.json_path.empty() && summary.schedules > 0 &&
      (summary.findings.empty() || !written_in_place(options.json_path))) {
    write_summary(options, summary, {});
  }
  if (summary.could_not_run > 0) print_could_not_run(summary);
  if (summary.harness_errors > 0) print_harness_errors(options, summary);
  if (summary.unknown > 0) {
    std::cout << summary.unknown << " of " << summary.schedules
              << " schedule(s) ended with the verdict unknown (an indeterminate call, such as a "
                 "lost reply, could hide a violation there): not an ok; first seed "
              << summary.unknown_first_seed
              << "\n      replay: " << replay_command(options, summary.unknown_first_seed) << "\n";
  }
  if (options.scenario.empty()) {
    std::cout << "Exercised:";
    if (summary.exercised.empty()) std::cout << " no fault";
    for (const auto& [fault, count] : summary.exercised)
      std::cout << " " << fault << " (" << count << ")";
    std::cout << "; no fault (" << summary.with_no_fault << ")\n";
    if (options.steer) {
      std::cout << "Steered: " << summary.kept
                << " schedule(s) kept for covering something new; " << summary.variations
                << " variation(s) of them (their findings are written, not replayed by --seed)\n";
    }
    if (target.exercise.faults.count(ExerciseFault::kCheckpoint) &&
        target.variant->checkpoints().empty()) {
      std::cout << "  (" << options.variant << " has no checkpoint: every call is one command)\n";
    }
  }
  if (summary.coverage) print_coverage(*summary.coverage);
  if (summary.findings.empty()) {
    print_no_finding(summary);
    return exit_without_own_finding(summary);
  }
  // Each finding judged against the reference of the lock's kind, first in the schedules it was
  // found in (the least few seeds that showed it, each with the seeds after it): the lock's own,
  // or a limit of every lease.
  std::vector<JudgedFinding> judged;
  for (const auto& [signature, found] : summary.findings) {
    if (stop.requested()) break;
    std::vector<ScenarioSeeds> where;
    const std::vector<std::uint64_t> found_in =
        found.seeds.empty() ? std::vector<std::uint64_t>{found.first_seed} : found.seeds;
    for (const std::uint64_t schedule : found_in) {
      std::vector<std::uint64_t> seeds;
      for (int i = 0; i < kSeedsPerCandidate; ++i) {
        seeds.push_back(schedule + static_cast<std::uint64_t>(i));
      }
      where.push_back(ScenarioSeeds{found_document(target, found, schedule), seeds});
    }
    judged.push_back({signature, found, judge_finding(*target.variant, signature, where)});
  }
  if (!options.json_path.empty() && summary.schedules > 0 &&
      (!stop.requested() || written_in_place(options.json_path))) {
    write_summary(options, summary, judged);  // interrupted: a finding not judged counts as own
  }
  if (stop.requested()) return kExitInterrupted;
  print_judged(options, target, judged);
  if (!options.shrink || summary.interrupted) {
    print_conclusion(options, summary, judged);
    if (summary.interrupted) return kExitInterrupted;
    return own_count(judged) > 0 ? kExitMismatch : exit_without_own_finding(summary);
  }
  fs::create_directories(options.out_dir);
  // The lock's own findings first: they decide the exit code.
  std::stable_sort(judged.begin(), judged.end(),
                   [](const JudgedFinding& a, const JudgedFinding& b) {
                     return !a.judgement.limit && b.judgement.limit;
                   });
  for (JudgedFinding& finding : judged) {
    if (stop.requested()) break;
    const std::string& signature = finding.signature;
    // The first schedule that shows it under every seed of its own (the first one may hang on
    // one lucky timing), shrunk, and the next such ones while the minimal scenario hangs on a
    // race. With a scenario file, its first seed.
    progress.show("shrinking " + signature + " (finding " +
                      std::to_string(&finding - judged.data() + 1) + " of " +
                      std::to_string(judged.size()) + ")",
                  /*milestone=*/true);
    const bool steered = finding.found.steered.count(finding.found.first_seed) > 0;
    ShrinkResult minimal =
        target.scenario || steered
            ? shrink(found_document(target, finding.found, finding.found.first_seed),
                     *target.variant, signature, finding.found.first_seed)
            : shrink_robustly(target, signature, finding.found.first_seed);
    progress.clear();
    const std::uint64_t seed = minimal.seed;
    if (minimal.seeds.empty()) {
      // The finding did not show again on the schedule it was to be shrunk from: there is no
      // minimal scenario that shows it, so nothing is written and nothing can be confirmed.
      std::cout << "\nCould not shrink " << signature << ": schedule " << seed
                << " did not show it again under its seeds " << seed << ".."
                << seed + kSeedsPerCandidate - 1
                << " (it needs the exact interleaving of the seed it was found under); replay it "
                   "with --seed "
                << finding.found.first_seed << ". Not shrunk, not confirmed.\n";
      continue;
    }
    if (!finding.judgement.limit) {
      // The minimal scenario is the "same scenario" of the rule: the reference under the seeds
      // that showed it and the fresh ones.
      std::vector<std::uint64_t> seeds = minimal.seeds;
      for (int i = 0; i < minimal.fresh_runs; ++i) {
        seeds.push_back(minimal.fresh_first_seed + static_cast<std::uint64_t>(i));
      }
      const Judgement again =
          judge_finding(*target.variant, signature, {ScenarioSeeds{minimal.document, seeds}});
      if (again.limit) {
        finding.judgement = again;
        finding.became_limit = true;
      }
    }
    std::string file_name = minimal.document.at("name").get<std::string>() + ".json";
    const fs::path file = fs::path(options.out_dir) / file_name;
    write_file_atomically(file, minimal.document.dump(2) + "\n");
    std::cout << "\nShrunk " << signature << " (seed " << seed << "): " << minimal.steps_before
              << " steps -> " << minimal.steps_after << " steps, " << minimal.clients_after
              << " client(s), " << minimal.candidates_run << " candidate runs"
              << (minimal.schedules_shrunk > 1
                      ? " (the least racy of " + std::to_string(minimal.schedules_shrunk) +
                            " schedules shrunk)"
                      : std::string())
              << "; on the simulator it shows under seed(s)";
    for (const std::uint64_t s : minimal.seeds) std::cout << " " << s;
    std::cout << " of " << seed << ".." << seed + kSeedsPerCandidate - 1 << " ("
              << reproducer_command(options, file) << " --backend sim --seed "
              << minimal.seeds.front() << ")\n";
    // A lease's limits are overlaps (lease_expired, lock_lost); what else the reference shows too
    // (a read-write lock's barging, an upgrade's deadlock) is its kind's.
    const bool lease_limit = signature.starts_with("mutex_violation");
    std::cout << "  "
              << (!finding.judgement.limit ? "Its own: "
                  : lease_limit            ? "A limit of every lease: "
                                           : "A limit of every lock of its kind: ")
              << finding.judgement.why << "\n";
    if (const std::string other = without_the_clocks(minimal, *target.variant, signature);
        !other.empty()) {
      std::cout << "  Not only the clocks: without the clients' clock offsets the same steps "
                   "still show "
                << other << " (the lock lets too many in with its clients' clocks agreeing)\n";
    }
    // Fresh seeds measure how much it hangs on a race (sim_runtime.h: timing profiles).
    const bool racy = minimal.fresh_shown < minimal.fresh_runs;
    std::cout << "  On " << minimal.fresh_runs << " fresh seeds (" << minimal.fresh_first_seed
              << "..): shown by " << minimal.fresh_shown
              << (racy ? ": it hangs on a race, a timing or a random draw (a token's digits), "
                         "which a real server reproduces as often or less\n"
                       : ": it does not hang on a race\n");
    std::cout << describe_steps(minimal.document) << "  Written: " << file.string()
              << " (" << reproducer_command(options, file) << ")"
              << std::endl;  // before confirming
    if (options.confirm_runs > 0) {
      progress.show("confirming " + signature + " on a real redis-server (" +
                        std::to_string(options.confirm_runs) + " runs)",
                    /*milestone=*/true);
      const Confirmation confirmation =
          confirm(minimal.document, *target.variant, options.confirm_runs, stop);
      progress.clear();
      if (stop.requested()) return kExitInterrupted;
      if (!confirmation.error.empty()) {
        std::cerr << "locksim: cannot confirm on a real server: " << confirmation.error << "\n";
        return kExitEnvironment;
      }
      if (confirmation.reproduced > 0) {
        std::cout << "  confirmed on a real redis-server: " << confirmation.reproduced << " of "
                  << confirmation.runs << " runs show " << signature << "\n";
        if (confirmation.other_clients > 0) {
          std::cout << "  (and " << confirmation.other_clients << " more show it between "
                    << confirmation.other_clients_seen << ": who won a race went the other way)\n";
        }
      } else if (confirmation.other_clients > 0) {
        std::cout
            << "  confirmed on a real redis-server between other clients: "
            << confirmation.other_clients << " of " << confirmation.runs << " runs show "
            << signature << ", between " << confirmation.other_clients_seen << " ("
            << expected_clients(minimal.document, *target.variant)
            << " on the simulator): who won a race went the other way, the finding is the same\n";
      } else {
        std::cout << "  not reproduced on a real redis-server in " << confirmation.runs
                  << " runs: it observed "
                  << (confirmation.observed.empty() ? std::string("nothing")
                                                    : confirmation.observed.front())
                  << (racy ? "; it hangs on a race or a random draw this machine did not run "
                             "(docs/simulator.md)\n"
                           : "; the model differs from Redis here, or the timing does "
                             "(docs/simulator.md)\n");
      }
      // The two backends compared: a finding the real server shows that the simulator never
      // did (under the fresh seeds and kSampledSeeds more), or one the simulator shows under every seed that a real run missed, is a place where
      // the simulator is wrong (the model or its timing), named here (docs/simulator.md).
      sample_signatures(minimal, *target.variant);
      const BackendDifference difference = compare_backends(minimal, confirmation);
      std::cout << describe_difference(difference, signature, confirmation.reproduced);
    }
  }
  if (stop.requested()) return kExitInterrupted;
  print_conclusion(options, summary, judged);
  return own_count(judged) > 0 ? kExitMismatch : exit_without_own_finding(summary);
}

}  // namespace locksim
