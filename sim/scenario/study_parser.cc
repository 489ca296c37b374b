// Contention studies: validated field by field, then expanded into one workload scenario per
// point, which goes through the scenario parser (so a point is exactly what a user could write).
#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>

#include "sim/core/error.h"
#include "sim/json/file.h"
#include "sim/scenario/loader.h"
#include "sim/scenario/scenario_parts.h"
#include "sim/scenario/study.h"

namespace locksim {
namespace {

using scenario_internal::describe;
using scenario_internal::JsonReader;

constexpr std::int64_t kMaxStudyClients = 256;
constexpr std::int64_t kMaxPoints = 1000;
constexpr std::int64_t kMaxRepetitions = 100;
constexpr std::int64_t kMaxMeasuredMs = 600000;

nlohmann::json range_json(const JsonReader& node) {
  // The workload parser checks the form; here the value is carried over as given.
  return node.value();
}

// strategy_label: "poll-1ms", "backoff-1ms-x2[-full-jitter]", "retry_sleep-50ms", "notify",
// "pubsub", unless given.
std::string strategy_label(const WaitConfig& wait) {
  auto number = [](double v) { return scenario_internal::shortest_number(v); };
  if (wait.strategy == "poll" || wait.strategy == "retry_sleep") {
    return wait.strategy + "-" + std::to_string(wait.interval_ms) + "ms";
  }
  if (wait.strategy == "backoff") {
    return "backoff-" + std::to_string(wait.initial_ms) + "ms-x" + number(wait.factor) +
           (wait.jitter == "none" ? "" : "-" + wait.jitter + "-jitter");
  }
  return wait.strategy;
}

// parse_study_topology: "topology" as a scenario's parser reads it, of which a study takes "single"
// (the default) or a Redis Cluster, run by clients that have a slot-aware client.
void parse_study_topology(const JsonReader& node, const JsonReader& root, Study& study) {
  TopologySpec topology = scenario_internal::parse_topology(node);
  if (!topology.cluster) {
    if (node.value().is_string() && topology.name == "single") return;
    node.fail(
        "a contention study runs on the session's one server (\"single\", the default) or "
        "on a Redis Cluster (\"cluster\", or {\"cluster\": {...}}), got " +
        describe(node.value()) + ": the other topologies are for fault scenarios");
  }
  // The slot-aware client is the thread client's (sim/redis/cluster_connection.h); a library's
  // own cluster client is checked by the contend command, which knows the libraries.
  std::optional<JsonReader> run_as = root.optional_member("clients_run_as");
  if (!run_as) run_as = root.optional_member("client_mode");
  if (study.executor == Executor::kEventLoop) {
    run_as->fail(
        "a Redis Cluster study runs its clients as threads: the event loop has no "
        "slot-aware client yet");
  }
  if (study.executor == Executor::kProcesses) {
    for (const std::string& variant : study.variants) {
      if (variant.rfind("lib:", 0) == 0) continue;
      run_as->fail("a Redis Cluster study runs \"" + variant +
                   "\" as threads: locksim's worker processes have no slot-aware client yet "
                   "(only a library whose adapter has a cluster client runs as processes)");
    }
  }
  study.topology = std::move(topology);
}

}  // namespace

Study parse_study(const nlohmann::json& document, const std::string& file,
                  const std::vector<std::string>& known_variants) {
  static const std::regex kName("[a-z0-9][a-z0-9-]{0,47}");
  const JsonReader root(document, "$", file);
  root.expect_object({"name", "description", "variants", "strategies", "clients", "keys", "work_ms",
                      "rest_ms", "ttl_ms", "acquire_timeout_ms", "warmup_ms", "duration_ms",
                      "repetitions", "arrival_per_s", "clients_run_as", "client_mode", "permits",
                      "read_share", "topology"});
  Study study;
  study.file = file;
  study.name = root.member("name").matching(
      kName, "a study name: lowercase letters, digits and '-', at most 48 characters");
  if (const auto d = root.optional_member("description")) study.description = d->string(2000);

  std::set<std::string> seen;
  for (const JsonReader& v : root.member("variants").elements(true)) {
    const std::string name = v.one_of(known_variants, "variant", "known variants");
    if (!seen.insert(name).second) v.fail("\"" + name + "\" is listed twice");
    study.variants.push_back(name);
  }

  study.executor = scenario_internal::parse_executor(root, root.optional_member("client_mode"),
                                                     executor_words(), study.notes);
  const std::string run_as(to_string(study.executor));
  // A lock library ("lib:...") runs only as its adapter's processes, and waits its own way.
  for (const std::string& variant : study.variants) {
    if (variant.rfind("lib:", 0) == 0 && study.executor != Executor::kProcesses) {
      root.member("variants").fail("\"" + variant + "\" is a lock library, whose clients are its "
                                   "adapter's processes: set \"clients_run_as\": \"processes\"");
    }
  }

  const auto topology = root.optional_member("topology");
  if (topology) parse_study_topology(*topology, root, study);

  // Strategies: each is a "lock.wait" object, with an optional "label".
  std::vector<nlohmann::json> waits;
  {
    std::set<std::string> labels;
    const auto strategies = root.member("strategies").elements(true);
    for (std::size_t i = 0; i < strategies.size(); ++i) {
      const JsonReader& s = strategies[i];
      if (!s.value().is_object()) s.fail("expected a wait strategy object, got " + describe(s.value()));
      nlohmann::json wait = s.value();
      std::string label;
      if (const auto l = s.optional_member("label")) {
        label = l->matching(kName, "a label: lowercase letters, digits and '-'");
        wait.erase("label");
      }
      // The scenario parser validates the strategy; its messages are re-pathed to this entry.
      const nlohmann::json probe = {{"name", "probe"},
                                    {"source", {{"doc", "none"}, {"claim", "probe"}}},
                                    {"variants", {study.variants.front()}},
                                    {"lock", {{"wait", wait}}},
                                    {"workload", {{"clients", 1}}},
                                    {"clients_run_as", run_as},
                                    {"expect", {{study.variants.front(), "ok"}}}};
      WaitConfig parsed;
      try {
        parsed = parse_scenario(probe, file, known_variants).lock.wait;
      } catch (const InputError& e) {
        std::string message = e.what();
        const std::string from = file + ": $.lock.wait";
        if (message.rfind(from, 0) == 0) {
          message = file + ": " + s.path() + message.substr(from.size());
        }
        throw InputError(message);
      }
      if (label.empty()) label = strategy_label(parsed);
      if (!labels.insert(label).second) {
        s.fail("two strategies are labelled \"" + label + "\"; give one a \"label\"");
      }
      study.strategies.push_back(label);
      waits.push_back(wait);
    }
  }

  {
    const auto counts = root.member("clients").elements(true);
    for (const JsonReader& c : counts) {
      const auto n = static_cast<int>(c.count(1, kMaxStudyClients, "a number of clients"));
      if (!study.clients.empty() && n <= study.clients.back()) {
        c.fail("client counts must increase, got " + std::to_string(n) + " after " +
               std::to_string(study.clients.back()));
      }
      study.clients.push_back(n);
    }
  }
  const auto permits = root.optional_member("permits");
  if (permits) {
    study.permits.clear();
    for (const JsonReader& p : permits->elements(true)) {
      const auto n = static_cast<int>(p.count(1, kMaxLockPermits, "a number of permits"));
      if (!study.permits.empty() && n <= study.permits.back()) {
        p.fail("permit counts must increase, got " + std::to_string(n) + " after " +
               std::to_string(study.permits.back()));
      }
      study.permits.push_back(n);
    }
  }
  const auto read_shares = root.optional_member("read_share");
  if (read_shares) {
    study.read_shares.clear();
    for (const JsonReader& r : read_shares->elements(true)) {
      const double share = r.number("a share of read holds");
      if (!(share >= 0 && share <= 1)) {
        r.fail("expected a share of read holds between 0 and 1, got " + describe(r.value()));
      }
      if (!study.read_shares.empty() && share <= study.read_shares.back()) {
        r.fail("read shares must increase, got " + describe(r.value()) + " after " +
               describe(nlohmann::json(study.read_shares.back())));
      }
      study.read_shares.push_back(share);
    }
  }
  int fixed_keys = 1;
  study.keys = "1";
  if (const auto keys = root.optional_member("keys")) {
    if (keys->value().is_string()) {
      keys->one_of({"per_client"}, "keys mode", "expected a number of keys or");
      study.keys = "per_client";
      fixed_keys = 0;
    } else {
      fixed_keys = static_cast<int>(keys->count(1, kMaxStudyClients, "a number of keys"));
      study.keys = std::to_string(fixed_keys);
      if (fixed_keys > study.clients.front()) {
        keys->fail("more keys (" + std::to_string(fixed_keys) + ") than the smallest client count (" +
                   std::to_string(study.clients.front()) + ") would leave keys unused");
      }
    }
  }
  std::int64_t ttl_ms = 10000;
  std::int64_t acquire_timeout_ms = 10000;
  if (const auto t = root.optional_member("ttl_ms")) ttl_ms = t->duration_ms(1, 3600000);
  if (const auto t = root.optional_member("acquire_timeout_ms")) {
    acquire_timeout_ms = t->duration_ms(0, 3600000);
  }
  if (const auto w = root.optional_member("warmup_ms")) study.warmup_ms = w->duration_ms(0, kMaxMeasuredMs);
  if (const auto d = root.optional_member("duration_ms")) {
    study.duration_ms = d->duration_ms(100, kMaxMeasuredMs);
  }
  if (const auto r = root.optional_member("repetitions")) {
    study.repetitions = static_cast<int>(r->count(1, kMaxRepetitions, "a number of repetitions"));
  }
  if (const auto a = root.optional_member("arrival_per_s")) {
    study.arrival_per_s = a->number("acquires per second per client");
    if (!(study.arrival_per_s >= 0.001 && study.arrival_per_s <= 1e6)) {
      a->fail("expected acquires per second per client between 0.001 and 1000000, got " +
              describe(a->value()));
    }
  }
  const auto points =
      static_cast<std::int64_t>(study.variants.size() * waits.size() * study.permits.size() *
                                study.read_shares.size() * study.clients.size());
  if (points * study.repetitions > kMaxPoints) {
    root.fail(std::to_string(points) + " points x " + std::to_string(study.repetitions) +
              " repetitions is more than " + std::to_string(kMaxPoints) + " runs");
  }

  // Expand: each point is a workload scenario; its errors (work_ms, rest_ms) are the study's.
  nlohmann::json workload_extra = nlohmann::json::object();
  if (const auto w = root.optional_member("work_ms")) workload_extra["work_ms"] = range_json(*w);
  if (const auto r = root.optional_member("rest_ms")) workload_extra["rest_ms"] = range_json(*r);
  const std::int64_t time_limit_ms =
      std::min<std::int64_t>(3600000, study.warmup_ms + study.duration_ms + acquire_timeout_ms + 30000);
  for (const std::string& variant : study.variants) {
    // A library waits its own way: one series, labelled "library", not one per strategy.
    const bool library = variant.rfind("lib:", 0) == 0;
    for (std::size_t s = 0; s < (library ? 1 : waits.size()); ++s) {
      const std::string label = library ? "library" : study.strategies[s];
      for (const int permit_count : study.permits) {
        for (const double read_share : study.read_shares) {
          for (const int clients : study.clients) {
            const int keys = fixed_keys == 0 ? clients : fixed_keys;
            nlohmann::json workload = workload_extra;
            workload["clients"] = clients;
            workload["keys"] = keys;
            workload["cycles"] = 1000000;
            workload["warmup_ms"] = study.warmup_ms;
            workload["duration_ms"] = study.duration_ms;
            if (study.arrival_per_s > 0) workload["arrival_per_s"] = study.arrival_per_s;
            if (read_share > 0) workload["read_share"] = read_share;
            std::string name =
                study.name + "-" + variant + "-" + label +
                (permits ? "-p" + std::to_string(permit_count) : "") +
                (read_shares ? "-r" + std::to_string(std::lround(read_share * 100)) : "") + "-c" +
                std::to_string(clients);
            std::replace(name.begin(), name.end(), '_', '-');  // scenario names have no '_'
            std::replace(name.begin(), name.end(), ':', '-');
            name = name.substr(0, 64);
            if (name.back() == '-') name.back() = '0';
            nlohmann::json lock = {
                {"ttl_ms", ttl_ms}, {"acquire_timeout_ms", acquire_timeout_ms}, {"wait", waits[s]}};
            if (permit_count > 1) lock["permits"] = permit_count;
            // On a cluster each key is one hash tag ("{lock-0}"): a variant's own keys
            // ("{lock-0}:queue") share its slot, and the keys spread over the primaries.
            if (study.topology) lock["key"] = "{lock}";
            nlohmann::json doc = {
                {"name", name},
                {"description", study.description},
                {"source", {{"doc", "none"}, {"claim", "contention study " + study.name}}},
                {"variants", {variant}},
                {"lock", lock},
                {"workload", workload},
                {"time_limit_ms", time_limit_ms},
                {"clients_run_as", run_as},
                {"expect", {{variant, "ok"}}}};
            if (study.topology) doc["topology"] = topology->value();
            Scenario scenario;
            try {
              scenario = parse_scenario(doc, file, known_variants);
            } catch (const InputError& e) {
              std::string message = e.what();
              const std::string from = file + ": $.workload";
              if (message.rfind(from, 0) == 0) message = file + ": $" + message.substr(from.size());
              throw InputError(message);
            }
            study.points.push_back(
                {variant, label, clients, keys, permit_count, read_share, std::move(scenario)});
          }
        }
      }
    }
  }
  study.resolved = {{"name", study.name},
                    {"description", study.description},
                    {"variants", study.variants},
                    {"strategies", waits},
                    {"strategy_labels", study.strategies},
                    {"clients", study.clients},
                    {"keys", study.keys},
                    {"ttl_ms", ttl_ms},
                    {"acquire_timeout_ms", acquire_timeout_ms},
                    {"warmup_ms", study.warmup_ms},
                    {"duration_ms", study.duration_ms},
                    {"repetitions", study.repetitions},
                    {"arrival_per_s", study.arrival_per_s},
                    {"clients_run_as", run_as}};
  if (permits) study.resolved["permits"] = study.permits;
  if (read_shares) study.resolved["read_share"] = study.read_shares;
  if (study.topology) {
    study.resolved["topology"] = scenario_internal::resolved_topology(*study.topology);
  }
  if (!study.points.empty()) {
    const Workload& w = *study.points.front().scenario.workload;
    study.work_ms = w.work_ms;
    study.rest_ms = w.rest_ms;
    study.resolved["work_ms"] = {{"min", w.work_ms.min_ms}, {"max", w.work_ms.max_ms}};
    study.resolved["rest_ms"] = {{"min", w.rest_ms.min_ms}, {"max", w.rest_ms.max_ms}};
  }
  return study;
}

std::vector<Study> load_studies(const std::vector<std::filesystem::path>& paths,
                                const std::vector<std::string>& known_variants) {
  const std::vector<std::filesystem::path> files = json_files(paths, "study file");
  std::vector<Study> studies;
  std::map<std::string, std::string> file_of;
  for (const std::filesystem::path& file : files) {
    Study study = parse_study(json::read_json_file(file, json::kScenarioFileLimits, "study file"),
                              file.string(), known_variants);
    const auto [previous, inserted] = file_of.emplace(study.name, study.file);
    if (!inserted) {
      throw InputError(study.file + ": $.name: study name \"" + study.name +
                       "\" is already used by " + previous->second);
    }
    studies.push_back(std::move(study));
  }
  return studies;
}

}  // namespace locksim
