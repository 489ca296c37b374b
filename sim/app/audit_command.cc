// `locksim audit`: is my lock broken, and where is it worse than the reference?
//
// Each user lock runs, side by side with its reference variant (`like`, or the built-in that
// matches what it declares), through every catalogue scenario whose "shows" names a property that
// applies to it. Each property gets one line: YES or NO (or UNDECIDED when a run could not
// decide), how the lock compares with the reference in that scenario, and the run that shows it.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "sim/app/commands.h"
#include "sim/app/console.h"
#include "sim/core/error.h"
#include "sim/explore/confirm.h"
#include "sim/explore/judge.h"
#include "sim/explore/schedule.h"
#include "sim/explore/search.h"
#include "sim/explore/shrink.h"
#include "sim/lock/registry.h"
#include "sim/report/files.h"
#include "sim/report/junit.h"
#include "sim/scenario/loader.h"
#include "sim/scenario/scenario.h"

namespace locksim {
namespace fs = std::filesystem;
namespace {

// PropertyKind: the kind of lock a property is about (a semaphore's count, a reentrant lock's
// depth); kAny: every lock's. A property of another kind than the lock's gets no line.
enum class PropertyKind { kAny, kSemaphore, kReentrant, kReadWrite };

struct Property {
  const char* name;
  const char* words;
  bool needs_renewal;
  bool needs_queue;     // only for a lock that keeps a queue of waiters
  const char* failure;  // what a failing run shows, in words; nullptr: its verdict says it
  PropertyKind kind = PropertyKind::kAny;
};

// The order of the table; the names are lock_properties().
const Property kProperties[] = {
    {"exclusive_without_faults", "exclusive without faults", false, false, nullptr},
    {"survives_crash", "survives a crash of the holder", false, false, nullptr},
    {"refuses_stale_release", "refuses a stale release", false, false,
     "a release deleted another client's key"},
    {"renewal_keeps_live_holder", "renewal keeps a live holder", true, false, nullptr},
    {"renewal_never_steals", "renewal never extends someone else's lock", true, false,
     "an extend succeeded on another client's key"},
    {"recovers_after_ttl", "recovers after the TTL", false, false, nullptr},
    {"survives_dead_waiter", "survives a waiter dying in the queue", false, true, nullptr},
    {"release_frees_lock", "the holder's release frees the lock", false, false,
     "the holder's release deleted nothing while its lease ran: the lock sat idle"},
    {"fair_no_barging", "fair: no barging past a waiter", false, true,
     "a newcomer got the lock while a client that asked earlier still waited"},
    {"holders_within_permits", "never more holders than permits", false, false, nullptr,
     PropertyKind::kSemaphore},
    {"writer_not_starved", "a waiting writer is not starved by readers", false, false, nullptr,
     PropertyKind::kReadWrite},
    {"reentrant_nested_acquire", "reentrant: owner in again, others kept out", false, false,
     nullptr, PropertyKind::kReentrant},
};

// kind_of: the kind of the user's lock, as its variant file declares it.
PropertyKind kind_of(const ScriptVariantSpec& spec) {
  if (spec.semaphore) return PropertyKind::kSemaphore;
  if (spec.reentrant) return PropertyKind::kReentrant;
  if (spec.read_write) return PropertyKind::kReadWrite;
  return PropertyKind::kAny;
}

// about: whether property `p` is about a lock of `kind`.
bool about(const Property& p, PropertyKind kind) {
  return p.kind == PropertyKind::kAny || p.kind == kind;
}

bool decided(const RunRow& row) { return !row.undecided && row.observed != Verdict::kUnknown; }

// worse_than: whether the user's run is worse than the reference's in the same scenario: a
// stronger verdict, or a mutual-exclusion violation with a cause the reference's lacks (a racy
// acquire where the reference only outlived its lease). Such a run fails every property its
// scenario shows, whatever that property reads: a bug the scenario was not written for is still
// a bug.
bool worse_than(const RunRow& user, const RunRow& ref) {
  if (user.observed == Verdict::kError || ref.observed == Verdict::kError) return false;
  if (strongest(user.observed, ref.observed) != ref.observed) return true;
  if (user.observed != Verdict::kMutexViolation || ref.observed != Verdict::kMutexViolation) {
    return false;
  }
  return std::any_of(user.causes.begin(), user.causes.end(), [&](const std::string& cause) {
    return std::find(ref.causes.begin(), ref.causes.end(), cause) == ref.causes.end();
  });
}

// has: whether the run shows the property (only meaningful when decided).
bool has(const Property& p, const RunRow& row) {
  const std::string name = p.name;
  if (row.observed == Verdict::kError) return false;
  if (name == "refuses_stale_release") return !row.stale_release;
  if (name == "renewal_never_steals") return !row.stolen_renewal;
  if (name == "renewal_keeps_live_holder") return row.matches;
  if (name == "release_frees_lock") return !row.idle_hold && row.observed == Verdict::kOk;
  if (name == "fair_no_barging") return !row.barging;
  return row.observed == Verdict::kOk;  // exclusive, survives a crash, recovers after the TTL
}

std::string what(const Property& p, const RunRow& row) {
  // A holder whose release did not free the lock shows it as an idle hold; without one the
  // verdict says what went wrong.
  if (std::string(p.name) == "release_frees_lock" && !row.idle_hold) return row.observed_text;
  if (row.observed != Verdict::kError && p.failure != nullptr && !has(p, row)) return p.failure;
  return row.observed_text;
}

std::string relative(const std::string& path, const fs::path& base) {
  std::error_code error;
  const fs::path rel = fs::relative(path, base, error);
  return error ? path : rel.string();
}

// The line of the exploration on the simulator, first in the table.
const Property kExplored = {"explored_no_worse", "explored: no worse than the reference", false,
                            false, nullptr};

struct Line {
  const Property* property;
  std::string answer;  // YES, NO, UNDECIDED, n/a
  std::string detail;
  std::string link;  // a summary.md
  double seconds = 0;  // the wall time of the runs (or the exploration) that decided it
};

// judge: one property's line from the user's and the reference's rows of each scenario showing it.
// NO as soon as one decided run lacks the property; UNDECIDED if a run could not decide; else
// YES, with the strongest evidence: a scenario where the reference fails and the lock does not,
// else one whose run is ok, else the first.
Line judge(const Property& p, const std::string& reference,
           const std::vector<std::pair<const RunRow*, const RunRow*>>& pairs) {
  std::optional<Line> undecided;
  std::optional<Line> better;
  std::optional<Line> ok;
  std::optional<Line> first;
  for (const auto& [user, ref] : pairs) {
    if (!decided(*user)) {
      if (!undecided) {
        undecided = Line{&p, "UNDECIDED",
                         user->scenario + ": " + user->observed_text + " (the run could not decide)",
                         user->summary};
      }
      continue;
    }
    const bool ref_decided = ref != nullptr && decided(*ref);
    const bool ref_has = ref_decided && has(p, *ref);
    if (!has(p, *user)) {
      std::string detail = user->scenario + ": " + what(p, *user);
      if (!ref_decided) {
        detail += " (" + reference + " could not be compared)";
      } else if (ref_has) {
        detail += "; worse than " + reference + ", which is " + ref->observed_text + " here";
      } else {
        detail += "; as " + reference + " (" + what(p, *ref) + ")";
      }
      return {&p, "NO", detail, user->summary};
    }
    // The property holds, but the run is worse than the reference's in another way.
    if (ref_decided && worse_than(*user, *ref)) {
      return {&p, "NO",
              user->scenario + ": " + user->observed_text + "; worse than " + reference +
                  ", which is " + ref->observed_text + " here",
              user->summary};
    }
    if (ref_decided && !ref_has) {
      if (!better) {
        better = Line{&p, "YES",
                      user->scenario + ": " + user->observed_text + "; better than " + reference +
                          ", which shows " + what(p, *ref),
                      user->summary};
      }
      continue;
    }
    std::string detail = user->scenario + ": " + user->observed_text;
    if (ref == nullptr || ref->observed_text == user->observed_text) {
      detail += ", as " + reference;
    } else {
      detail += "; " + reference + ": " + ref->observed_text;
    }
    Line line{&p, "YES", detail, user->summary};
    if (!ok && user->observed == Verdict::kOk) ok = line;
    if (!first) first = line;
  }
  if (undecided) return *undecided;
  Line line = better ? *better : ok ? *ok : *first;
  if (pairs.size() > 1) {
    line.detail += " (" + std::to_string(pairs.size()) + " scenarios agree)";
  }
  return line;
}

// explore_first: the lock and its reference across `schedules` drawn schedules each on the
// simulator; what only the lock shows is shrunk, run with the reference on the same seeds (a
// finding the reference shares on the minimal scenario is a limit of both, not the lock's bug),
// and confirmed on a real redis-server. The line: YES (nothing worse), NO (confirmed), UNDECIDED
// (shown on the simulator only).
// `limits` gets what the lock showed that the reference shows too: limits of every lease.
Line explore_first(const UserVariant& user, const std::string& reference, std::uint64_t schedules,
                   int jobs, const fs::path& out, ProgressMode progress_mode, StopSignal& stop,
                   std::vector<std::string>& limits) {
  ProgressLine progress(progress_mode);
  const auto run = [&](const std::string& name) {
    ExploreTarget target;
    target.variant = find_variant(name);
    const TimeLeft time_left;
    const std::string what = "exploring " + name + " on the simulator: ";
    progress.show(what + "0/" + std::to_string(schedules) + " schedules", /*milestone=*/true);
    ExploreSummary summary =
        explore(target, ExploreBudget{0, schedules, 0, jobs}, stop, [&](std::uint64_t done) {
          const std::string left =
              time_left.text(static_cast<double>(done), static_cast<double>(schedules));
          progress.show(what + std::to_string(done) + "/" + std::to_string(schedules) +
                        " schedules" + (left.empty() ? "" : ", " + left));
        });
    progress.clear();
    return std::pair{target, std::move(summary)};
  };
  const auto [mine_target, mine] = run(user.name);
  if (mine.could_not_run > 0) {
    // What the model lacks is no finding: the lock is judged on the real server only (below).
    const std::string why = mine.errors.empty() ? std::string("it could not run on the simulator")
                                                : mine.errors.front().why;
    std::cout << "explored on the simulator: " << user.name << " could not run there ("
              << mine.could_not_run << " of " << mine.schedules << " schedules)" << std::endl;
    return {&kExplored, "n/a", "not explored: " + why, ""};
  }
  const auto [theirs_target, theirs] = run(reference);
  char took[64];
  std::snprintf(took, sizeof took, "%.1f s", mine.seconds + theirs.seconds);
  std::cout << "explored on the simulator: " << mine.schedules << " schedules each of " << user.name
            << " and " << reference << " (" << took << ")" << std::endl;
  std::vector<std::string> confirmed;
  std::vector<std::string> unconfirmed;
  std::string link;
  for (const auto& [signature, found] : mine.findings) {
    if (stop.requested()) break;
    if (theirs.findings.count(signature) > 0) {
      limits.push_back(signature);
      continue;
    }
    progress.show("shrinking " + signature + " of " + user.name, /*milestone=*/true);
    const ShrinkResult minimal = shrink_robustly(mine_target, signature, found.first_seed);
    progress.clear();
    if (minimal.seeds.empty()) continue;  // the shrink lost it: nothing to judge or confirm
    // The reference in the minimal scenario, under the seeds that show it and fresh ones (the
    // reference of the lock's kind, as explore judges): does it show it too?
    std::vector<std::uint64_t> seeds = minimal.seeds;
    for (int i = 0; i < minimal.fresh_runs; ++i) {
      seeds.push_back(minimal.fresh_first_seed + static_cast<std::uint64_t>(i));
    }
    if (judge_finding(*mine_target.variant, signature, {ScenarioSeeds{minimal.document, seeds}})
            .limit) {
      limits.push_back(signature);
      continue;
    }
    fs::create_directories(out);
    const fs::path file = out / (minimal.document.at("name").get<std::string>() + ".json");
    write_file_atomically(file, minimal.document.dump(2) + "\n");
    progress.show("confirming " + signature + " of " + user.name + " on a real redis-server",
                  /*milestone=*/true);
    const Confirmation confirmation = confirm(minimal.document, *mine_target.variant, 3, stop);
    progress.clear();
    const std::string what = signature + " (" + std::to_string(found.schedules) + " of " +
                             std::to_string(mine.schedules) + " schedules, " + reference +
                             ": none; minimal scenario " + std::to_string(minimal.steps_after) +
                             " steps, shown by " + std::to_string(minimal.fresh_shown) + " of " +
                             std::to_string(minimal.fresh_runs) + " fresh simulated schedules";
    if (confirmation.reproduced > 0) {
      confirmed.push_back(what + ", confirmed on a real redis-server " +
                          std::to_string(confirmation.reproduced) + " of " +
                          std::to_string(confirmation.runs) + ")");
    } else if (confirmation.other_clients > 0) {
      // Who won a race went the other way: the same finding between other clients.
      confirmed.push_back(what + ", confirmed on a real redis-server " +
                          std::to_string(confirmation.other_clients) + " of " +
                          std::to_string(confirmation.runs) + " between " +
                          confirmation.other_clients_seen + ")");
    } else {
      unconfirmed.push_back(what + ", not reproduced on a real redis-server" +
                            (confirmation.error.empty() ? "" : ": " + confirmation.error) + ")");
    }
    if (link.empty()) link = file.string();
  }
  if (!confirmed.empty()) {
    std::string detail = "worse than " + reference + ": ";
    for (std::size_t i = 0; i < confirmed.size(); ++i) detail += (i ? "; " : "") + confirmed[i];
    return {&kExplored, "NO", detail, link};
  }
  if (!unconfirmed.empty()) {
    std::string detail = "on the simulator only: ";
    for (std::size_t i = 0; i < unconfirmed.size(); ++i) detail += (i ? "; " : "") + unconfirmed[i];
    return {&kExplored, "UNDECIDED", detail, link};
  }
  return {&kExplored, "YES",
          "nothing " + reference + " does not show too, in " + std::to_string(mine.schedules) +
              " schedules each",
          ""};
}

}  // namespace

int audit_command(const AuditOptions& options, StopSignal& stop) {
  std::vector<UserVariant> users;
  std::vector<Scenario> catalogue;
  try {
    users = register_variant_files(options.variant_files);
    catalogue = load_scenarios({fs::path(options.scenarios_dir)}, variant_names());
    if (!options.junit_path.empty()) {
      if (const std::string problem = junit_path_problem(options.junit_path); !problem.empty()) {
        throw InputError(problem);
      }
    }
  } catch (const InputError& e) {
    std::cerr << "locksim: " << e.what() << "\n";
    return kExitUsage;
  }
  const bool any_shows = std::any_of(catalogue.begin(), catalogue.end(),
                                     [](const Scenario& s) { return !s.shows.empty(); });
  if (!any_shows) {
    std::cerr << "locksim: " << options.scenarios_dir
              << ": no scenario has \"shows\"; audit needs the catalogue's property scenarios\n";
    return kExitUsage;
  }

  // --junit: a suite per lock, a case per property (NO: a failure; UNDECIDED: an error; n/a:
  // skipped), written when the audit ends, also when it ends early.
  std::vector<JunitSuite> suites;
  const auto finish = [&](int code) {
    if (options.junit_path.empty()) return code;
    try {
      write_file_atomically(options.junit_path, junit_xml(suites, "locksim audit"));
      std::cout << "JUnit: " << options.junit_path << "\n";
    } catch (const std::exception& e) {
      std::cerr << "locksim: cannot write " << options.junit_path << ": " << e.what() << "\n";
      return code == kExitMismatch || code == kExitOk ? kExitEnvironment : code;
    }
    return code;
  };
  int exit_code = kExitOk;
  for (const UserVariant& user : users) {
    const std::string& reference = user.like;
    const bool renews = user.spec.extend.has_value();
    const bool queues = user.spec.queues;
    // The scenarios to run: each shows an applicable property and lists the reference.
    std::vector<Scenario> scenarios;
    for (const Scenario& s : catalogue) {
      const bool applies = std::any_of(s.shows.begin(), s.shows.end(), [&](const std::string& n) {
        const auto* p = std::find_if(std::begin(kProperties), std::end(kProperties),
                                     [&](const Property& q) { return n == q.name; });
        return p != std::end(kProperties) && (renews || !p->needs_renewal) &&
               (queues || !p->needs_queue) && about(*p, kind_of(user.spec));
      });
      if (!applies) continue;
      if (std::find(s.variants.begin(), s.variants.end(), reference) == s.variants.end()) continue;
      Scenario copy = s;
      copy.variants = {reference, user.name};
      const Expectation expected = s.expect.at(reference);
      copy.expect = {{reference, expected}, {user.name, expected}};
      const nlohmann::json resolved_expectation = s.resolved["expect"][reference];
      copy.resolved["variants"] = {reference, user.name};
      copy.resolved["expect"] = {{reference, resolved_expectation},
                                 {user.name, resolved_expectation}};
      scenarios.push_back(std::move(copy));
    }
    const fs::path out = fs::path(options.out_dir) / ("audit-" + user.name);
    std::cout << "locksim audit: " << user.name << " (" << user.spec.file << ") against "
              << reference << "; declares: " << (user.spec.uses_ttl ? "TTL" : "no TTL") << ", "
              << (user.spec.owner_check ? "owner-checked release" : "release without owner check")
              << ", " << (renews ? "renewal" : "no renewal") << (queues ? ", a queue" : "")
              << (user.spec.semaphore ? ", a semaphore" : "")
              << (user.spec.reentrant ? ", reentrant" : "") << "; " << scenarios.size()
              << " scenario(s)" << std::endl;
    // First the simulator (seconds), then the real server.
    std::optional<Line> explored;
    std::vector<std::string> limits;
    if (options.explore > 0) {
      // Explored against the correct lock of its kind (explore's rule), which may be stricter
      // than the catalogue's reference above (set_nx_ex for a lock without an owner check).
      const TimeLeft exploring;  // its line's time: shrinking and confirming included
      explored = explore_first(user, reference_of(*find_variant(user.name)), options.explore,
                               options.jobs, out, options.progress, stop, limits);
      explored->seconds = exploring.seconds();
      if (stop.requested()) return finish(kExitInterrupted);
    }
    std::vector<RunRow> rows;
    int code = kExitOk;
    if (!scenarios.empty()) {
      RunOptions run;
      run.redis_url = options.redis_url;
      run.out_dir = out.string();
      run.seed = options.seed;
      run.progress = options.progress;
      run.jobs = options.jobs;
      code = run_scenarios(run, scenarios, {user}, stop, &rows);
      if (code == kExitUsage || code == kExitInterrupted) return finish(code);
    }

    std::vector<Line> lines;
    if (explored) lines.push_back(*explored);
    for (const Property& p : kProperties) {
      if (!about(p, kind_of(user.spec))) continue;
      if (p.needs_renewal && !renews) {
        lines.push_back({&p, "n/a", "the lock has no extend script", ""});
        continue;
      }
      if (p.needs_queue && !queues) {
        lines.push_back(
            {&p, "n/a", "the lock keeps no queue (its acquire does not pass {waiter})", ""});
        continue;
      }
      std::vector<std::pair<const RunRow*, const RunRow*>> pairs;
      for (const Scenario& s : scenarios) {
        if (std::find(s.shows.begin(), s.shows.end(), p.name) == s.shows.end()) continue;
        const RunRow* user_row = nullptr;
        const RunRow* ref_row = nullptr;
        for (const RunRow& row : rows) {
          if (row.scenario != s.name) continue;
          if (row.variant == user.name) user_row = &row;
          if (row.variant == reference) ref_row = &row;
        }
        if (user_row != nullptr) pairs.emplace_back(user_row, ref_row);
      }
      if (pairs.empty()) {
        lines.push_back({&p, code == kExitEnvironment ? "UNDECIDED" : "n/a",
                         code == kExitEnvironment
                             ? "not run: the harness failed"
                             : "no scenario in " + options.scenarios_dir + " shows it for " +
                                   reference,
                         ""});
        continue;
      }
      Line line = judge(p, reference, pairs);
      for (const auto& [user_row, ref_row] : pairs) {
        line.seconds += user_row->seconds + (ref_row != nullptr ? ref_row->seconds : 0);
      }
      lines.push_back(std::move(line));
    }

    std::ostringstream table;
    std::ostringstream md;
    md << "# Audit of " << user.name << "\n\n"
       << "File: `" << user.spec.file << "`; reference: `" << reference << "`; declares "
       << (user.spec.uses_ttl ? "a TTL" : "no TTL") << ", "
       << (user.spec.owner_check ? "an owner-checked release" : "a release without owner check")
       << ", " << (renews ? "renewal" : "no renewal") << (queues ? ", a queue of waiters" : "")
       << ".\n\n"
       << "| property | answer | how it compares | run |\n|---|---|---|---|\n";
    bool no = false;
    bool undecided = false;
    for (const Line& line : lines) {
      no = no || line.answer == "NO";
      undecided = undecided || line.answer == "UNDECIDED";
      // Columns of 44 and 11 characters, a space at least between them.
      const std::size_t words = std::string_view(line.property->words).size();
      table << "  " << line.property->words << std::string(words < 44 ? 44 - words : 1, ' ')
            << line.answer
            << std::string(line.answer.size() < 11 ? 11 - line.answer.size() : 1, ' ')
            << line.detail << "\n";
      if (!line.link.empty()) table << std::string(57, ' ') << line.link << "\n";
      md << "| " << line.property->words << " | " << line.answer << " | " << line.detail << " | "
         << (line.link.empty() ? std::string()
                               : "[summary](" + relative(line.link, out) + ")")
         << " |\n";
    }
    // What no answer above removes: the limits every lease has (shown by the exploration where it
    // found them, and in any case), with what would help.
    std::ostringstream remain;
    remain << "Limits that remain (every lease lock has them; no YES above removes them):\n";
    for (const std::string& signature : limits) {
      const std::string help = limit_help(signature);
      remain << "  - " << signature << " (explored: " << reference << " shows it too)"
             << (help.empty() ? "" : ": " + help) << "\n";
    }
    // The two limits of every lease, in words, unless the exploration listed them above.
    const auto listed = [&](const char* signature) {
      return std::find(limits.begin(), limits.end(), signature) != limits.end();
    };
    if (!listed("mutex_violation (lease_expired)")) {
      remain << "  - no lease survives a pause or work longer than its TTL; only fencing (a store "
                "that refuses stale tokens) protects the data then\n";
    }
    if (!listed("mutex_violation (lock_lost)")) {
      remain << "  - a server that forgets the key (restart without persistence, failover to a "
                "replica that had not received it) hands the lock to another client\n";
    }
    md << "\n## Limits that remain\n\n" << remain.str().substr(remain.str().find('\n') + 1);
    std::cout << "\nAudit of " << user.name << " (reference " << reference << "):\n"
              << table.str() << "\n"
              << remain.str();
    JunitSuite suite{.name = "audit " + user.name, .cases = {}};
    for (const Line& line : lines) {
      JunitCase c;
      c.classname = "locksim.audit." + user.name;
      c.name = line.property->words;
      c.message = line.detail;
      c.output = line.link.empty() ? "" : "summary: " + line.link;
      c.seconds = line.seconds;
      if (line.answer == "NO") {
        c.status = JunitCase::Status::kFailed;
        c.text = line.detail;
      } else if (line.answer == "UNDECIDED") {
        c.status = JunitCase::Status::kError;
        c.text = line.detail;
      } else if (line.answer == "n/a") {
        c.status = JunitCase::Status::kSkipped;
      } else {
        c.message.clear();
      }
      suite.cases.push_back(std::move(c));
    }
    suites.push_back(std::move(suite));
    try {
      fs::create_directories(out);
      write_file_atomically(out / "audit.md", md.str());
      std::cout << "Audit: " << (out / "audit.md").string() << "\n";
    } catch (const std::exception& e) {
      std::cerr << "locksim: cannot write " << (out / "audit.md").string() << ": " << e.what()
                << "\n";
      return finish(kExitEnvironment);
    }
    const int user_code = no ? kExitMismatch : (undecided || code == kExitEnvironment)
                                                   ? kExitEnvironment
                                                   : kExitOk;
    if (user_code == kExitMismatch || exit_code == kExitOk) exit_code = user_code;
  }
  return finish(exit_code);
}

}  // namespace locksim
