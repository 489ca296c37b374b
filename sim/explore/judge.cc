#include "sim/explore/judge.h"

#include <algorithm>
#include <optional>
#include <set>

#include "sim/explore/schedule.h"
#include "sim/lock/registry.h"

namespace locksim {
namespace {

using Json = nlohmann::json;

// kWiderSeeds: how many more timings the reference is given before a lease limit is the lock's own.
constexpr std::uint64_t kWiderSeeds = 120;

// kLeaseLimits: what every lease lock shows under explore's faults. A holder stalled or working
// past its TTL loses the lease while it still works (lease_expired); a server that restarts
// without persistence or whose clock jumps forgets the key (lock_lost), and a queue of waiters
// with it (barging (queue_lost)).
const std::set<std::string> kLeaseLimits = {"mutex_violation (lease_expired)",
                                            "mutex_violation (lock_lost)", "barging (queue_lost)"};
// kLeaseViolations: the two limits of kLeaseLimits that are two holders.
const std::set<std::string> kLeaseViolations = {"mutex_violation (lease_expired)",
                                                "mutex_violation (lock_lost)"};

// fails_over: a schedule on a Redis Cluster whose lock primary fails over (or is killed): what
// the primary acknowledged and had not sent its replica is lost, a release as much as a grant.
bool fails_over(const Json& document) {
  const auto topology = document.find("topology");
  if (topology == document.end() || !topology->is_object() || !topology->contains("cluster") ||
      !document.contains("steps")) {
    return false;
  }
  const Json& steps = document.at("steps");
  return std::any_of(steps.begin(), steps.end(), [](const Json& step) {
    const std::string action = step.value("do", std::string());
    return action == "cluster_failover" || action == "failover" || action == "kill_server";
  });
}

bool has_checkpoint(const LockVariant& variant, const std::string& point) {
  const auto sites = variant.checkpoints();
  return std::any_of(sites.begin(), sites.end(),
                     [&](const LockVariant::CheckpointSite& site) { return site.point == point; });
}

}  // namespace

Json for_reference(const Json& document, const LockVariant& variant,
                  const LockVariant& reference) {
  Json copy = document;
  const std::string name(reference.name());
  copy["variants"] = Json::array({name});
  copy["expect"] = Json::object({{name, "any"}});
  if (!copy.contains("steps")) return copy;
  // A fault at a checkpoint the reference lacks moves to the nearest point it has. A pause there
  // (the client stalls while the others go on, until a condition or at most max_ms) becomes, for
  // a point inside the acquire, the same stall just after it (work until the condition, or for
  // max_ms: it stalls holding the key), and for one inside the release the same stall of the
  // release on the link. A crash inside the acquire becomes a crash just after it, one inside
  // the release a crash instead of it.
  const auto in_acquire = [&](const std::string& point) {
    for (const LockVariant::CheckpointSite& site : variant.checkpoints()) {
      if (site.point == point) return site.in_acquire;
    }
    return true;
  };
  const auto as_delay = [](const Json& pause_at) {
    Json delay = {{"max_ms", pause_at.value("max_ms", std::int64_t{1})}};
    if (pause_at.contains("until")) {
      delay["until"] = pause_at.at("until");
    } else {
      delay = {{"ms", pause_at.value("max_ms", std::int64_t{1})}};
    }
    return delay;
  };
  Json steps = Json::array();
  std::set<std::string> crashed;
  for (Json step : document.at("steps")) {
    const std::string client = step.value("client", std::string());
    if (!client.empty() && crashed.count(client) > 0) continue;  // nothing after its crash
    std::optional<Json> stall;
    if (step.contains("pause_at") &&
        !has_checkpoint(reference, step.at("pause_at").value("point", std::string()))) {
      const Json pause_at = step.at("pause_at");
      const Json delay = as_delay(pause_at);
      const bool acquiring = in_acquire(pause_at.value("point", std::string()));
      step.erase("pause_at");
      if (acquiring) {
        const std::int64_t max_ms = pause_at.value("max_ms", std::int64_t{1});
        stall = pause_at.contains("until")
                    ? Json{{"client", client}, {"do", "work"}, {"until", pause_at.at("until")},
                           {"max_ms", max_ms}}
                    : Json{{"client", client}, {"do", "work"}, {"work_ms", max_ms}};
      } else if (!step.contains("delay") && !step.contains("lose_reply")) {
        step["delay"] = delay;
      }
    }
    bool crash_after = false;
    if (step.contains("crash_at") &&
        !has_checkpoint(reference, step.at("crash_at").get<std::string>())) {
      crash_after = in_acquire(step.at("crash_at").get<std::string>());
      step.erase("crash_at");
      crashed.insert(client);
      if (!crash_after) step = {{"client", client}, {"do", "crash"}};  // instead of its release
    }
    steps.push_back(step);
    if (stall) steps.push_back(*stall);
    if (crash_after) steps.push_back({{"client", client}, {"do", "crash"}});
  }
  copy["steps"] = steps;
  return copy;
}

Judgement judge_finding(const LockVariant& variant, const std::string& signature,
                        const std::vector<ScenarioSeeds>& where) {
  Judgement judgement;
  judgement.reference = reference_of(variant);
  if (judgement.reference == variant.name()) {
    // Redlock with a majority of its nodes down grants nobody: the limit of its quorum.
    // A failover that loses a release (its DEL never reached the replica elected in its place)
    // brings the key back until its TTL: every lease lock waits it out (deadlock, recovered late),
    // and a reentrant lock's owner takes back a hold it had released, so that its last release
    // of the next acquire frees nothing (idle_hold: hash_reentrant, 498 of 218,681 schedules with
    // every fault, each with a CLUSTER FAILOVER FORCE of a replica whose link was cut).
    judgement.limit = kLeaseLimits.count(signature) > 0 ||
                      (variant.multi_server() && signature == "never_granted") ||
                      ((signature == "deadlock (recovered_late)" || signature == "idle_hold") &&
                       std::any_of(where.begin(), where.end(), [](const ScenarioSeeds& place) {
                         return fails_over(place.document);
                       }));
    judgement.why = judgement.limit ? "every lease lock shows it under this fault; " +
                                          judgement.reference + " is the reference of its kind"
                                    : judgement.reference +
                                          " is the reference of its kind, and this is none of "
                                          "the limits every lease has";
    return judgement;
  }
  const LockVariant* reference = find_variant(judgement.reference);
  if (reference == nullptr) {
    judgement.why = "the reference " + judgement.reference + " is not a known variant";
    return judgement;
  }
  std::string refused;
  for (const ScenarioSeeds& place : where) {
    const PreparedSchedule prepared =
        prepare_schedule(for_reference(place.document, variant, *reference), *reference);
    if (!prepared.error.empty()) {
      refused = prepared.error;
      continue;
    }
    // A lease limit hangs on timing (how long the lock's own commands take moves everything
    // after them): the reference gets kWiderSeeds more timings of the same scenario before the
    // finding is called the lock's own (lua_owner_fenced, whose grant takes one more command: a
    // lease overrun after a lost key that lua_owner showed under none of the 8 seeds of its first
    // schedule, and under later ones).
    std::vector<std::uint64_t> seeds = place.seeds;
    if (kLeaseLimits.count(signature) > 0 && !seeds.empty()) {
      for (std::uint64_t i = 0; i < kWiderSeeds; ++i) seeds.push_back(seeds.front() + 3'000'000 + i);
    }
    for (const std::uint64_t seed : seeds) {
      const ScheduleRun run = run_schedule(prepared, *reference, seed, false);
      if (!run.error.empty()) continue;
      // A seed of the wider timings is far from the explored ones: said what it is.
      const std::string seed_words =
          "seed " + std::to_string(seed) +
          (seed >= place.seeds.front() + 3'000'000
               ? ", one of " + std::to_string(kWiderSeeds) +
                     " more timings the reference is given for a lease's limit"
               : "");
      if (run.signatures.count(signature) > 0) {
        judgement.limit = true;
        judgement.why =
            judgement.reference + " shows it too in the same scenario (" + seed_words + ")";
        return judgement;
      }
      // Two holders because a lease ran out or because a server forgot the key: which of the
      // two a run shows is timing too (a server's clock jumps while a holder works: whether the
      // next grant comes before or after the lease's end moves with one command's latency;
      // lua_owner_fenced seed 862 with clock jumps: lease_expired under 3 of 39 seeds, lua_owner
      // lock_lost under all). The reference showing the other counts.
      if (kLeaseViolations.count(signature) > 0) {
        for (const std::string& other : kLeaseViolations) {
          if (run.signatures.count(other) == 0) continue;
          judgement.limit = true;
          judgement.why = judgement.reference + " shows " + other + " in the same scenario (" +
                          seed_words +
                          "): a lease lost to its TTL or to a server that forgot it, by timing";
          return judgement;
        }
      }
    }
  }
  judgement.why = refused.empty()
                      ? judgement.reference + " does not show it in the same scenario"
                      : judgement.reference + " could not run the same scenario (" + refused + ")";
  return judgement;
}

std::string limit_help(const std::string& signature) {
  if (signature == "mutex_violation (lease_expired)") {
    return "no lease survives work or a stall longer than its TTL: renewal (a watchdog, as "
           "lua_owner_renew) keeps a live holder's lease, and only fencing (lua_owner_fenced, a "
           "store that refuses stale tokens) protects the data from a holder paused past it";
  }
  if (signature == "mutex_violation (lock_lost)") {
    return "a server that restarts without persistence, or whose clock jumps, forgets every key: "
           "persistence (appendonly, fsync always), waiting out the TTL before a restarted server "
           "grants again, or Redlock (which survives one such server of five, not a majority); "
           "only fencing protects the data";
  }
  if (signature == "barging (queue_lost)") {
    return "a server that restarts without persistence, or whose clock jumps, forgets the queue "
           "of waiters with the key, so the next to ask gets the lock: persistence (appendonly, "
           "fsync always) keeps the queue";
  }
  if (signature == "deadlock (recovered_late)" || signature == "idle_hold") {
    return "a failover loses what the old primary had not yet sent its replica, a release as much "
           "as a grant, and brings a released key back until its TTL: a WAIT for the replica's "
           "acknowledgement after each write of the lock (as lua_owner_wait's grant does) closes "
           "that window; without a failover this is the lock's own";
  }
  if (signature == "never_granted") {
    return "a multi-server lock needs a majority of its nodes: with most of them down nobody can "
           "take it (liveness, not safety); bring nodes back, or run more of them";
  }
  return "";
}

namespace {

std::string comma_joined(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& w : words) text += (text.empty() ? "" : ", ") + w;
  return text;
}

// judge_by_causes: the judgement without a reference run to compare with.
void judge_by_causes(VariantRun& run, const std::vector<std::string>& causes,
                     const std::string& basis) {
  std::vector<std::string> own;
  for (const std::string& c : causes) {
    if (!kLeaseLimits.contains("mutex_violation (" + c + ")")) own.push_back(c);
  }
  if (own.empty()) {
    run.judged = "limit";
    run.judged_why = comma_joined(causes) + " only; " + basis;
  } else {
    run.judged = "own";
    run.judged_why = comma_joined(own) + " is none of the limits every lease has; " + basis;
  }
}

}  // namespace

void judge_violations(std::vector<VariantRun>& runs) {
  for (VariantRun& run : runs) {
    run.judged.clear();
    run.judged_why.clear();
    if (run.interrupted || run.result.verdict != Verdict::kMutexViolation) continue;
    const std::vector<std::string> causes = run.result.causes();
    // The bugs by name: "stale_release" says what "mutex_violation (stale_release)" does too.
    const std::vector<std::string> found = own_findings(run.result);
    std::vector<std::string> own;
    for (const std::string& finding : found) {
      const std::string prefix = "mutex_violation (";
      const bool restated =
          finding.starts_with(prefix) &&
          std::find(found.begin(), found.end(),
                    finding.substr(prefix.size(), finding.size() - prefix.size() - 1)) !=
              found.end();
      if (!restated) own.push_back(finding);
    }
    if (!own.empty()) {
      run.judged = "own";
      run.judged_why = comma_joined(own) + " is a bug whatever the fault";
      continue;
    }
    const LockVariant* variant = find_variant(run.variant);
    const std::string reference = variant != nullptr ? reference_of(*variant) : "";
    const auto reference_run = std::find_if(runs.begin(), runs.end(), [&](const VariantRun& r) {
      return r.variant == reference && !r.interrupted;
    });
    if (reference.empty() || reference == run.variant || reference_run == runs.end()) {
      judge_by_causes(run, causes,
                      reference.empty()          ? std::string("no reference of its kind is known")
                      : reference == run.variant ? run.variant + " is the reference of its kind"
                                                 : reference + ", the reference of its kind, " +
                                                       "did not run in this scenario");
      continue;
    }
    const std::vector<std::string> shown = reference_run->result.verdict == Verdict::kMutexViolation
                                               ? reference_run->result.causes()
                                               : std::vector<std::string>{};
    std::vector<std::string> beyond;
    for (const std::string& c : causes) {
      if (std::find(shown.begin(), shown.end(), c) == shown.end()) beyond.push_back(c);
    }
    if (beyond.empty()) {
      run.judged = "limit";
      run.judged_why = reference + ", the reference of its kind, shows it too in this scenario (" +
                       comma_joined(causes) + ")";
    } else {
      run.judged = "own";
      run.judged_why =
          reference + ", the reference of its kind, shows " +
          (shown.empty() ? std::string("no violation") : "only " + comma_joined(shown)) +
          " in this scenario, not " + comma_joined(beyond);
    }
  }
}

}  // namespace locksim
