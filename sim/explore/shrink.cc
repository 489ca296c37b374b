// shrink.cc: the shrinker: a failing schedule made minimal one change at a time, the schedule to
// shrink chosen so the result does not hang on one timing, and the minimal one measured on fresh
// and sampled seeds.
#include "sim/explore/shrink.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "sim/checker/check.h"
#include "sim/core/stop.h"
#include "sim/explore/simulated_run.h"
#include "sim/report/run_record.h"

namespace locksim {
namespace {

using Json = nlohmann::json;

// Shrinker: tries candidates; a candidate is kept if one of the seeds still shows the finding.
class Shrinker {
 public:
  Shrinker(const LockVariant& variant, std::string signature, std::uint64_t seed, int seeds,
           int max_candidates)
      : variant_(variant),
        signature_(std::move(signature)),
        seed_(seed),
        seeds_(seeds),
        max_candidates_(max_candidates) {}

  // shown: under how many of the seeds the finding shows.
  int shown(const Json& document) const {
    const PreparedSchedule prepared = prepare_schedule(document, variant_);
    int count = 0;
    for (int i = 0; i < seeds_; ++i) {
      const ScheduleRun run =
          run_schedule(prepared, variant_, seed_ + static_cast<std::uint64_t>(i), false);
      if (run.error.empty() && run.signatures.count(signature_) > 0) ++count;
    }
    return count;
  }
  // require: a candidate must show the finding under at least this many seeds (as many as the
  // original did: a shrunk scenario is no more a matter of luck than the one it came from).
  void require(int seeds) { required_ = std::max(1, seeds); }
  int required() const { return required_; }
  bool holds(const Json& document) {
    if (candidates_ >= max_candidates_) return false;
    ++candidates_;
    return shown(document) >= required_;
  }
  int candidates() const { return candidates_; }
  bool spent() const { return candidates_ >= max_candidates_; }

 private:
  const LockVariant& variant_;
  std::string signature_;
  std::uint64_t seed_;
  int seeds_;
  int max_candidates_;
  int candidates_ = 0;
  int required_ = 1;
};

bool mentions(const Json& value, const std::string& client) {
  if (value.is_string()) return value.get<std::string>() == client;
  if (value.is_object() || value.is_array()) {
    for (const auto& element : value) {
      if (mentions(element, client)) return true;
    }
  }
  return false;
}

// without_client: the document with `client` and every step that is its own or names it gone.
Json without_client(const Json& document, const std::string& client) {
  Json result = document;
  Json clients = Json::array();
  for (const Json& c : document.at("clients")) {
    if (c.get<std::string>() != client) clients.push_back(c);
  }
  result["clients"] = clients;
  Json steps = Json::array();
  for (const Json& step : document.at("steps")) {
    if (!mentions(step, client)) steps.push_back(step);
  }
  result["steps"] = steps;
  if (result.contains("client_clocks")) {
    result["client_clocks"].erase(client);
    if (result["client_clocks"].empty()) result.erase("client_clocks");
  }
  return result;
}

// durations: the durations of a step that may be halved, as JSON pointers. The cap of a wait for
// a condition (`max_ms` beside `until`), or for an election, is not one: the step's story is the
// condition, and a cap cut to what the simulator's quick timing needs ends the wait early on a
// loaded real machine (get_then_del's pause at after_get "until B is inside", halved to 160 ms,
// ended before B got in on a real server in one run of two).
std::vector<Json::json_pointer> durations(const Json& document) {
  std::vector<Json::json_pointer> found;
  const Json& steps = document.at("steps");
  const auto capped = [](const Json& wait) { return wait.is_object() && wait.contains("until"); };
  // A wait for a cluster's (or Sentinel's) election: its `max_ms` is a bound, not a duration.
  const auto awaits = [](const Json& step) {
    const std::string action = step.value("do", std::string());
    return action == "failover" || action == "cluster_failover";
  };
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const std::string at = "/steps/" + std::to_string(i);
    for (const char* key : {"work_ms", "pause_ms", "partition_ms", "max_ms", "jump_ms"}) {
      if (std::string_view(key) == "max_ms" && (capped(steps[i]) || awaits(steps[i]))) continue;
      if (steps[i].contains(key)) found.emplace_back(at + "/" + key);
    }
    if (steps[i].contains("pause_at") && !capped(steps[i].at("pause_at"))) {
      found.emplace_back(at + "/pause_at/max_ms");
    }
    if (steps[i].contains("delay") && !capped(steps[i].at("delay"))) {
      found.emplace_back(at + "/delay/max_ms");
    }
  }
  return found;
}

// keep_margins: a duration the finding needs within a fifth of its value (a pause halved to 106
// ms that outlives a 100 ms lease by 6 ms) shows it under the simulator's timing but only now and
// then on a real machine, whose timing varies by more than that: such a duration gets half as much
// again if the finding stays, so that the minimal scenario shows it on a real server too.
void keep_margins(Json& current, Shrinker& shrinker) {
  for (const Json::json_pointer& pointer : durations(current)) {
    if (shrinker.spent()) return;
    const std::int64_t value = current.at(pointer).get<std::int64_t>();
    if (value < 5) continue;
    Json closer = current;
    closer[pointer] = value - value / 5;
    if (shrinker.holds(closer)) continue;  // a fifth less still shows it: margin enough
    Json wider = current;
    wider[pointer] = value + value / 2;
    if (shrinker.holds(wider)) current = std::move(wider);
  }
}

// expectation_of: what the minimal scenario must show on a real server: the finding itself
// (its signature and the clients it involves) as its run under `seed` shows it.
Json expectation_of(const Json& document, const LockVariant& variant, std::uint64_t seed,
                    const std::string& signature) {
  const Scenario scenario = parse_schedule(document, variant);
  StopSignal stop;
  SimulatedRun run = run_simulated(scenario, variant, seed, stop, "locksim:explore:");
  const CheckResult result = check_history(run.outcome.history, check_options(scenario));
  // The finding itself, with its clients: a run that shows the verdict but not this finding
  // (another cause, other clients) does not confirm it. The verdict is left free: a real run
  // may add a finding of another kind beside it, which changes the verdict, not the finding.
  for (const Finding& f : result.findings) {
    if (finding_signature(f) != signature) continue;
    Json clients = Json::array();
    for (const int c : f.clients) {
      if (c >= 0 && static_cast<std::size_t>(c) < run.outcome.history.clients.size()) {
        clients.push_back(run.outcome.history.clients[static_cast<std::size_t>(c)]);
      }
    }
    return {{"verdict", "any"}, {"finding", {{"signature", signature}, {"clients", clients}}}};
  }
  // Not shown under this seed (the caller says the shrink lost it): the signature alone.
  return {{"verdict", "any"}, {"finding", {{"signature", signature}}}};
}

}  // namespace

ShrinkResult shrink(const Json& document, const LockVariant& variant, const std::string& signature,
                    std::uint64_t seed, int seeds_per_candidate, int max_candidates) {
  Shrinker shrinker(variant, signature, seed, seeds_per_candidate, max_candidates);
  ShrinkResult result;
  result.seed = seed;
  result.steps_before = document.at("steps").size();
  Json current = document;
  shrinker.require(shrinker.shown(current));
  bool changed = true;
  while (changed && !shrinker.spent()) {
    changed = false;
    // Fewer clients.
    for (const Json& client : Json(current.at("clients"))) {
      if (current.at("clients").size() <= 1) break;
      Json candidate = without_client(current, client.get<std::string>());
      if (shrinker.holds(candidate)) {
        current = std::move(candidate);
        changed = true;
      }
    }
    // Fewer cycles: a client's acquire and its own steps up to its release (or crash), at once
    // (one at a time, neither may go: the other would be left without its partner).
    for (std::size_t i = current.at("steps").size(); i-- > 0;) {
      const Json& steps = current.at("steps");
      if (i >= steps.size() || steps[i].at("do") != "acquire") continue;
      const Json client = steps[i].at("client");
      std::vector<std::size_t> cycle = {i};
      for (std::size_t j = i + 1; j < steps.size(); ++j) {
        if (steps[j].value("client", Json()) != client) continue;
        cycle.push_back(j);
        if (steps[j].at("do") == "release" || steps[j].at("do") == "crash") break;
      }
      if (cycle.size() < 2 || cycle.size() >= steps.size()) continue;
      Json candidate = current;
      for (auto it = cycle.rbegin(); it != cycle.rend(); ++it) candidate["steps"].erase(*it);
      if (shrinker.holds(candidate)) {
        current = std::move(candidate);
        changed = true;
      }
    }
    // Fewer steps, one at a time, from the last.
    for (std::size_t i = current.at("steps").size(); i-- > 0;) {
      if (current.at("steps").size() <= 1) break;
      Json candidate = current;
      candidate["steps"].erase(i);
      if (shrinker.holds(candidate)) {
        current = std::move(candidate);
        changed = true;
      }
    }
    // A client's own clock set right (a client_clock fault gone).
    if (current.contains("client_clocks")) {
      std::vector<std::string> names;
      for (const auto& item : current.at("client_clocks").items()) names.push_back(item.key());
      for (const std::string& name : names) {
        Json candidate = current;
        candidate["client_clocks"].erase(name);
        if (candidate["client_clocks"].empty()) candidate.erase("client_clocks");
        if (shrinker.holds(candidate)) {
          current = std::move(candidate);
          changed = true;
        }
      }
    }
    // Fewer faults inside calls.
    for (std::size_t i = 0; i < current.at("steps").size(); ++i) {
      for (const char* key : {"crash_at", "pause_at", "lose_reply", "delay"}) {
        if (!current["steps"][i].contains(key)) continue;
        Json candidate = current;
        candidate["steps"][i].erase(key);
        if (shrinker.holds(candidate)) {
          current = std::move(candidate);
          changed = true;
        }
      }
    }
    // Shorter work and pauses: halved while the finding stays.
    for (const Json::json_pointer& pointer : durations(current)) {
      while (!shrinker.spent()) {
        const std::int64_t value = current.at(pointer).get<std::int64_t>();
        if (value <= 1) break;
        Json candidate = current;
        candidate[pointer] = value / 2;
        if (!shrinker.holds(candidate)) break;
        current = std::move(candidate);
        changed = true;
      }
    }
  }
  keep_margins(current, shrinker);
  // The seeds that show it on the result, and what it must show on a real server.
  const PreparedSchedule prepared = prepare_schedule(current, variant);
  for (int i = 0; i < seeds_per_candidate; ++i) {
    const std::uint64_t s = seed + static_cast<std::uint64_t>(i);
    const ScheduleRun run = run_schedule(prepared, variant, s, false);
    if (run.error.empty() && run.signatures.count(signature) > 0) result.seeds.push_back(s);
  }
  // Fresh seeds, far from those it was found and shrunk under.
  result.fresh_first_seed = seed + 1'000'000 - (seed + 1'000'000) % 4;
  for (int i = 0; i < kFreshSeeds; ++i) {
    const ScheduleRun run = run_schedule(
        prepared, variant, result.fresh_first_seed + static_cast<std::uint64_t>(i), false);
    ++result.fresh_runs;
    if (run.error.empty() && run.signatures.count(signature) > 0) ++result.fresh_shown;
    if (run.error.empty()) {
      for (const std::string& shown : run.signatures) ++result.fresh_signatures[shown];
    }
  }
  const std::string variant_name(variant.name());
  // A scenario name is lowercase letters, digits and '-'.
  std::string slug = variant_name + "-" + signature;
  std::string name = "explore-";
  for (const char c : slug) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (plain) {
      name += c;
    } else if (name.back() != '-') {
      name += '-';
    }
  }
  while (name.back() == '-') name.pop_back();
  current["name"] = name.substr(0, 64);
  current["description"] = "Found by locksim explore and shrunk: " + variant_name + " shows " +
                           signature + " (seed " + std::to_string(seed) +
                           "); removing any one step, client or fault loses it.";
  current["source"] = {{"doc", "none"}, {"claim", "explored: " + signature}};
  const std::uint64_t shown_by = result.seeds.empty() ? seed : result.seeds.front();
  current["expect"] = {{variant_name, expectation_of(current, variant, shown_by, signature)}};
  result.document = std::move(current);
  result.steps_after = result.document.at("steps").size();
  result.clients_after = static_cast<int>(result.document.at("clients").size());
  result.candidates_run = shrinker.candidates();
  result.required_seeds = shrinker.required();
  return result;
}

std::uint64_t robust_seed(const ExploreTarget& target, const std::string& signature,
                          std::uint64_t first_seed, int seeds_per_candidate, int tries) {
  std::uint64_t best = first_seed;
  int best_shown = -1;
  for (int t = 0; t < tries; ++t) {
    const std::uint64_t seed = first_seed + static_cast<std::uint64_t>(t);
    const Json document = exercise_document(target, seed);
    int shown = 0;
    for (int i = 0; i < seeds_per_candidate; ++i) {
      const ScheduleRun run =
          run_schedule(document, *target.variant, seed + static_cast<std::uint64_t>(i), false);
      if (run.error.empty() && run.signatures.count(signature) > 0) ++shown;
    }
    if (shown > best_shown) {
      best = seed;
      best_shown = shown;
    }
    if (shown == seeds_per_candidate) break;
  }
  return best;
}

bool better_minimal(const ShrinkResult& candidate, const ShrinkResult& best) {
  if (candidate.seeds.empty() != best.seeds.empty()) return best.seeds.empty();
  return candidate.fresh_shown > best.fresh_shown ||
         (candidate.fresh_shown == best.fresh_shown && candidate.steps_after < best.steps_after);
}

ShrinkResult shrink_robustly(const ExploreTarget& target, const std::string& signature,
                             std::uint64_t first_seed, int schedules) {
  std::optional<ShrinkResult> best;
  std::uint64_t from = first_seed;
  for (int i = 0; i < std::max(schedules, 1); ++i) {
    const std::uint64_t seed = robust_seed(target, signature, from);
    ShrinkResult result = shrink(exercise_document(target, seed), *target.variant, signature, seed);
    if (!best || better_minimal(result, *best)) best = std::move(result);
    best->schedules_shrunk = i + 1;
    if (best->fresh_shown == best->fresh_runs) break;
    from = seed + 1;
  }
  return std::move(*best);
}

void sample_signatures(ShrinkResult& result, const LockVariant& variant) {
  result.sampled_signatures = result.fresh_signatures;
  const PreparedSchedule prepared = prepare_schedule(result.document, variant);
  const std::uint64_t first = result.fresh_first_seed + static_cast<std::uint64_t>(kFreshSeeds);
  for (int i = 0; i < kSampledSeeds; ++i) {
    const ScheduleRun run =
        run_schedule(prepared, variant, first + static_cast<std::uint64_t>(i), false);
    if (!run.error.empty()) continue;
    for (const std::string& shown : run.signatures) ++result.sampled_signatures[shown];
  }
}

namespace {

// describe_condition: a step's condition in words ("the lock is held", "A is inside").
std::string describe_condition(const Json& condition, const std::string& lock_key) {
  if (!condition.is_object() || condition.size() != 1) return condition.dump();
  const auto first = condition.begin();
  const std::string kind = first.key();
  const Json& value = first.value();
  const std::string name = value.is_string() ? value.get<std::string>() : value.dump();
  if (kind == "inside") return name + " is inside";
  if (kind == "outside") return name + " is outside";
  if (kind == "crashed") return name + " crashed";
  if (kind == "key_present") return name == lock_key ? "the lock is held" : name + " exists";
  if (kind == "key_absent") return name == lock_key ? "the lock is free" : name + " is gone";
  if (kind == "done") return "step " + name + " is done";
  if (kind == "open") return "step " + name + "'s fault is on";
  if (kind == "primary") return name + " is the primary";
  if (kind == "renewed" && value.is_object()) {
    return value.value("client", std::string("?")) + " renewed " +
           std::to_string(value.value("times", 0)) + " time(s)";
  }
  return kind + " " + name;
}

// describe_conditions: one condition or an array of them, joined by "and".
std::string describe_conditions(const Json& conditions, const std::string& lock_key) {
  if (!conditions.is_array()) return describe_condition(conditions, lock_key);
  std::string text;
  for (const Json& condition : conditions) {
    text += (text.empty() ? "" : " and ") + describe_condition(condition, lock_key);
  }
  return text;
}

}  // namespace

// describe_steps: a scenario's steps, one short line each, with what each waits for and a hold
// never given back.
std::string describe_steps(const Json& document) {
  std::string text;
  const Json& steps = document.at("steps");
  // The scenario's lock key ("{lock}" with a hash tag on a cluster), which conditions name.
  std::string lock_key = "lock";
  if (const auto lock = document.find("lock"); lock != document.end() && lock->is_object()) {
    lock_key = lock->value("key", lock_key);
  }
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Json& step = steps[i];
    std::string line = "    " + step.value("client", std::string("nemesis")) + " " +
                       step.at("do").get<std::string>();
    if (step.contains("server")) line += " " + step.at("server").get<std::string>();
    if (step.contains("jump_ms")) {
      line += " ahead " + std::to_string(step.at("jump_ms").get<std::int64_t>()) + " ms";
    }
    for (const char* key : {"work_ms", "pause_ms", "partition_ms"}) {
      if (step.contains(key))
        line += " " + std::to_string(step.at(key).get<std::int64_t>()) + " ms";
    }
    if (step.contains("until")) {
      line += " until " + describe_conditions(step.at("until"), lock_key);
      if (step.contains("max_ms")) {
        line += " (at most " + std::to_string(step.at("max_ms").get<std::int64_t>()) + " ms)";
      }
    }
    if (step.contains("mode")) line += " (" + step.at("mode").get<std::string>() + ")";
    if (step.contains("timeout_ms") && step.at("timeout_ms") == 0) line += ", trying once";
    // What the step is for may be a word of it (a blind test's minimal scenario printed "A
    // release" for a release made in a `finally` with nothing held, the whole point of it).
    if (step.value("finally", false)) line += " in a finally (whether it holds the lock or not)";
    if (step.value("unsaved_token", false)) line += " with a token it never saved";
    if (step.contains("lose_reply")) line += ", its reply lost";
    if (step.contains("delay")) {
      line += ", delayed on the link (at most " +
              std::to_string(step.at("delay").at("max_ms").get<std::int64_t>()) + " ms)";
    }
    if (step.contains("crash_at"))
      line += ", crashing at " + step.at("crash_at").get<std::string>();
    if (step.contains("pause_at")) {
      line += ", pausing at " + step.at("pause_at").at("point").get<std::string>() + " (at most " +
              std::to_string(step.at("pause_at").at("max_ms").get<std::int64_t>()) + " ms)";
    }
    if (step.contains("wait_for")) {
      line += ", once " + describe_conditions(step.at("wait_for"), lock_key) + " (or after " +
              std::to_string(step.value("wait_max_ms", std::int64_t{10000})) + " ms)";
    }
    // A hold the scenario never gives back is the point of some findings: said so.
    if (step.at("do") == "acquire" && step.contains("client")) {
      bool released = false;
      for (std::size_t j = i + 1; j < steps.size() && !released; ++j) {
        const std::string later = steps[j].at("do").get<std::string>();
        released = steps[j].value("client", std::string()) == step.at("client") &&
                   (later == "release" || later == "crash");
      }
      if (!released) line += ", no release after it";
    }
    text += line + "\n";
  }
  return text;
}

}  // namespace locksim
