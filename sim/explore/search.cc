// search.cc: explore, the search over seeds on worker threads, each schedule's result folded into
// one summary as it comes.
#include "sim/explore/search.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "sim/core/clock.h"
#include "sim/core/error.h"
#include "sim/core/random.h"
#include "sim/explore/exercise.h"

namespace locksim {
namespace {

using Json = nlohmann::json;

}  // namespace

ExploreSummary explore(const ExploreTarget& target, const ExploreBudget& budget, StopSignal& stop,
                       const std::function<void(std::uint64_t)>& progress) {
  const Clock& clock = real_clock();
  const Nanos started = clock.now_ns();
  const Nanos deadline =
      budget.seconds > 0 ? started + static_cast<Nanos>(budget.seconds * 1e9) : INT64_MAX;
  std::atomic<std::uint64_t> next{0};
  std::atomic<std::uint64_t> done{0};
  std::atomic<bool> found_own{false};  // budget.own said yes: draw no more
  std::set<std::string> asked;         // the signatures budget.own was asked about (under mutex)
  std::mutex mutex;  // guards summary
  ExploreSummary summary;
  summary.last_seed = budget.first_seed;
  summary.coverage = coverage_counts_for(target);
  // Steering: the choices of the schedules kept, and for each item the kept schedule that stands
  // for it: the smallest (fewest choices) that covered it so far, as AFL keeps the smallest input
  // for each edge (its "favored" entries). A small schedule is the one whose variations keep the
  // item: fewer clients and steps around it for a change to disturb.
  std::vector<std::vector<std::uint64_t>> corpus;
  std::vector<int> favored(kCoverageItems, -1);  // item -> index in corpus, -1: not covered yet
  const auto favors = [&](CoverageItem item, std::size_t choices) {
    const int kept = favored[item];
    return kept < 0 || corpus[static_cast<std::size_t>(kept)].size() > choices;
  };
  const bool steer = budget.steer && !target.scenario;
  // Each seed's result is folded in at once (memory does not grow with the schedules); the first
  // seed of a finding is the least seed that showed it, whichever worker ran it.
  const auto worker = [&] {
    // A given scenario is parsed once per worker; a drawn exercise is a new document each seed.
    std::optional<PreparedSchedule> given;
    std::optional<ExerciseDrawer> drawer;
    if (target.scenario) {
      given = prepare_schedule(*target.scenario, *target.variant);
    } else {
      try {
        drawer.emplace(*target.variant, target.exercise);
      } catch (const InputError& e) {
        // The lock cannot be drawn a schedule (the loader refuses it): every seed says why.
        given = PreparedSchedule{Scenario{}, e.what()};
      }
    }
    while (!stop.requested() && !found_own.load() && clock.now_ns() < deadline) {
      const std::uint64_t n = next.fetch_add(1);
      if (n >= budget.schedules) break;
      const std::uint64_t seed = budget.first_seed + n;
      const Exercise* exercise = nullptr;
      ScheduleRun run;
      bool variation = false;  // a steered variation of a kept schedule
      std::vector<std::uint64_t> drawn_choices;
      if (given) {
        run = run_schedule(*given, *target.variant, seed, false, &stop);
      } else {
        // Drawn in memory and run: no document is written or parsed for it. Steered, one
        // schedule in two (by a draw from its seed, so the same seeds are varied however the
        // budget ends) varies a kept one (a few of its choices drawn anew, from this seed); the
        // other is drawn from its seed, so the search still finds what no kept one is near.
        // Coverage cannot tell a kept schedule near a bug from one that is not (a lock and its
        // buggy twin cover the same), so where it is not the variations only cost: one in two
        // keeps that cost to about 2 explorations in 30 and finds a rare pair nearly as often as
        // three in four did (docs/simulator.md, "Steering").
        std::optional<Choices> choices;
        if (steer && Rng(seed ^ 0x1234567u).chance(0.5)) {
          std::vector<std::uint64_t> parent;
          {
            std::lock_guard<std::mutex> lock(mutex);
            // An item is varied as often as it is rare (AFL's rare-branch energy): the variations
            // go where the search has been least, from the smallest schedule that got there.
            std::vector<double> weights;
            std::vector<int> parents;
            double total = 0;
            for (std::size_t item = 0; item < favored.size(); ++item) {
              if (favored[item] < 0) continue;
              const std::uint64_t times =
                  std::max<std::uint64_t>(summary.coverage->schedules[item], 1);
              weights.push_back(1.0 / static_cast<double>(times));
              parents.push_back(favored[item]);
              total += weights.back();
            }
            if (!parents.empty()) {
              Rng pick(seed ^ 0x5bd1e995u);
              double at = static_cast<double>(pick.next() >> 11) * 0x1.0p-53 * total;
              std::size_t chosen = 0;
              while (chosen + 1 < weights.size() && at >= weights[chosen]) at -= weights[chosen++];
              parent = corpus[static_cast<std::size_t>(parents[chosen])];
            }
          }
          if (!parent.empty()) {
            // One to three changes, most of them late in the draws (durations, the order of the
            // steps) where they keep what came before: a nudge moves one choice to the next value
            // (uniform takes its raw draw modulo the span), a redraw replaces it, a cut draws
            // everything after it anew from this seed.
            Rng mutate(seed ^ 0x9e3779b97f4a7c15ULL);
            const std::int64_t changes = mutate.uniform(1, 3);
            for (std::int64_t c = 0; c < changes && !parent.empty(); ++c) {
              const auto last = static_cast<std::int64_t>(parent.size()) - 1;
              const auto at = static_cast<std::size_t>(
                  mutate.chance(0.75) ? mutate.uniform(last / 2, last) : mutate.uniform(0, last));
              const std::int64_t how = mutate.uniform(0, 9);
              if (how < 5) {
                parent[at] += mutate.chance(0.5) ? 1 : static_cast<std::uint64_t>(-1);
              } else if (how < 9) {
                parent[at] = mutate.next();
              } else {
                parent.resize(at);
              }
            }
            choices.emplace(seed, std::move(parent));
          }
        }
        if (!choices) choices.emplace(seed);
        exercise = &drawer->draw(*choices, seed);
        run = run_schedule(exercise->scenario, *target.variant, seed, false, &stop);
        variation = choices->replayed() > 0;  // a kept schedule's choices, changed
        if (steer) drawn_choices = choices->drawn();
      }
      std::unique_lock<std::mutex> lock(mutex);
      if (steer && exercise != nullptr && run.error.empty()) {
        if (variation) ++summary.variations;
        // Kept if it covered an item no schedule before it had, or with fewer choices than the
        // one kept for it: it stands for each such item from now on.
        bool keep = false;
        run.coverage.for_each(
            [&](CoverageItem item) { keep = keep || favors(item, drawn_choices.size()); });
        if (keep) {
          const int index = static_cast<int>(corpus.size());
          run.coverage.for_each([&](CoverageItem item) {
            if (favors(item, drawn_choices.size())) favored[item] = index;
          });
          corpus.push_back(std::move(drawn_choices));
          ++summary.kept;
        }
      }
      ++summary.schedules;
      if (run.cut_short) {
        // A schedule that did not end is the harness's error: counted apart, never judged.
        ++summary.harness_errors;
        // The least five seeds, whichever worker ran them.
        std::vector<ExploreSummary::Error>& kept = summary.harness_error_seeds;
        kept.push_back({seed, run.error});
        std::sort(kept.begin(), kept.end(),
                  [](const auto& a, const auto& b) { return a.seed < b.seed; });
        if (kept.size() > 5) kept.pop_back();
        continue;
      }
      if (!run.error.empty()) {
        ++summary.could_not_run;
        if (summary.errors.size() < 5) {
          summary.errors.push_back({seed, run.error});
        }
        continue;
      }
      for (const std::string& signature : run.signatures) {
        ExploreFinding& found = summary.findings[signature];
        found.first_seed = found.schedules == 0 ? seed : std::min(found.first_seed, seed);
        ++found.schedules;
        // The least kJudgedSeeds seeds, whichever worker ran them.
        found.seeds.insert(std::lower_bound(found.seeds.begin(), found.seeds.end(), seed), seed);
        if (variation) found.steered[seed] = drawer->document(*exercise);
        if (found.seeds.size() > kJudgedSeeds) {
          found.steered.erase(found.seeds.back());
          found.seeds.pop_back();
        }
      }
      if (budget.own) {
        // Each signature asked about once, outside the lock (the reference runs meanwhile).
        std::vector<std::string> fresh;
        for (const std::string& signature : run.signatures) {
          if (asked.insert(signature).second) fresh.push_back(signature);
        }
        if (!fresh.empty()) {
          std::optional<Json> steered;
          if (variation) steered = drawer->document(*exercise);
          lock.unlock();
          bool own = false;
          for (const std::string& signature : fresh) {
            if (!own) own = budget.own(signature, seed, steered ? &*steered : nullptr);
          }
          lock.lock();
          if (own) {
            summary.stopped_at_own = true;
            found_own.store(true);
          }
        }
      }
      if (run.verdict == "unknown") {
        // An indeterminate call could hide a violation: not an ok, whatever else it showed.
        summary.unknown_first_seed =
            summary.unknown == 0 ? seed : std::min(summary.unknown_first_seed, seed);
        ++summary.unknown;
      }
      summary.coverage->add(run.coverage);
      if (exercise != nullptr) {
        for (const std::string& fault : exercise->faults) ++summary.exercised[fault];
        if (!exercise->any_fault) ++summary.with_no_fault;
      }
      done.fetch_add(1);
    }
  };
  std::vector<std::thread> threads;
  for (int j = 1; j < std::max(1, budget.jobs); ++j) threads.emplace_back(worker);
  // The reporter reports every 200 ms and is told at once when the work is done: the end of an
  // exploration (and its rate) does not wait out the reporter's interval.
  std::thread reporter;
  std::mutex report_mutex;  // guards reporting
  std::condition_variable report_changed;
  bool reporting = static_cast<bool>(progress);
  if (progress) {
    reporter = std::thread([&] {
      std::unique_lock<std::mutex> lock(report_mutex);
      while (!clock.wait_for(report_changed, lock, ms_to_ns(200), [&] { return !reporting; })) {
        lock.unlock();
        progress(done.load());
        lock.lock();
      }
    });
  }
  worker();
  for (std::thread& thread : threads) thread.join();
  summary.seconds = static_cast<double>(clock.now_ns() - started) / 1e9;
  {
    std::lock_guard<std::mutex> lock(report_mutex);
    reporting = false;
  }
  clock.notify_all(report_changed);
  if (reporter.joinable()) reporter.join();
  summary.interrupted = stop.requested();
  summary.last_seed = budget.first_seed + std::min<std::uint64_t>(next.load(), budget.schedules) -
                      (summary.schedules > 0 ? 1 : 0);
  return summary;
}

}  // namespace locksim
