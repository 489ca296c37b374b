#include "sim/scenario/loader.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>

#include "sim/core/assert.h"
#include "sim/core/error.h"
#include "sim/json/file.h"
#include "sim/scenario/scenario_parts.h"

namespace locksim {

const DrawnFault& Workload::drawn_fault(std::string_view word) const {
  const std::size_t index = drawn_fault_index(word);
  LOCKSIM_ASSERT(index < drawn_faults.size());
  return *drawn_faults[index];
}

bool Workload::draws(bool DrawnFaultType::*trait) const {
  return std::any_of(drawn_faults.begin(), drawn_faults.end(),
                     [trait](const auto& fault) { return fault->on() && fault->type().*trait; });
}

bool Scenario::link_faults() const {
  if (workload) return workload->draws(&DrawnFaultType::needs_link_proxy);
  for (const Step& step : steps) {
    if (step.link_fault != LinkFault::kNone || step.action == Step::Action::kPartition ||
        step.action == Step::Action::kLinkFault) {
      return true;
    }
  }
  return false;
}

bool Scenario::server_faults() const {
  return std::any_of(steps.begin(), steps.end(),
                     [](const Step& step) { return Step::server_action(step.action); });
}

bool Scenario::changes_primary() const {
  return std::any_of(steps.begin(), steps.end(), [](const Step& step) {
    return step.server_fault != nullptr && step.server_fault->type().moves_primary;
  });
}

const std::vector<std::string>& lock_properties() {
  static const std::vector<std::string> properties = {
      "exclusive_without_faults",  "survives_crash",           "refuses_stale_release",
      "renewal_keeps_live_holder", "renewal_never_steals",     "recovers_after_ttl",
      "survives_dead_waiter",      "release_frees_lock",       "fair_no_barging",
      "holders_within_permits",    "reentrant_nested_acquire", "writer_not_starved"};
  return properties;
}

namespace {

using scenario_internal::closest_match;
using scenario_internal::describe;
using scenario_internal::join;
using scenario_internal::JsonReader;
using scenario_internal::kMaxDurationMs;
using scenario_internal::SweepContext;
using scenario_internal::SweepTtl;
using scenario_internal::SweepValue;

// Every top-level key; "sweep" and "sweep_point" are checked against the form in parse_one.
const std::vector<std::string> kTopLevelKeys = {
    "name",        "description",   "source",   "variants",       "lock",     "resource",
    "clients",     "steps",         "workload", "expect",         "check",    "sweep",
    "sweep_point", "time_limit_ms", "shows",    "clients_run_as", "topology", "client_clocks"};

// An expanded sweep point is named "<name>-ttl-x<value>" or "<name>-<parameter>-<value>", so its
// name may be longer than the 64 characters of a name written by hand, and may contain the
// value's '.' and the parameter's '_'.
constexpr std::size_t kMaxPointNameLength = 80;

// Free text is copied into scenario.json, summary.md and results.json of every run: a few
// paragraphs are plenty, megabytes are a mistake (or an attack on the report directory).
constexpr std::size_t kMaxDescriptionCharacters = 10000;
constexpr std::size_t kMaxClaimCharacters = 2000;

Source parse_source(const JsonReader& node) {
  node.expect_object({"doc", "claim"});
  Source source;
  source.doc = node.member("doc").one_of({"A", "B", "C", "D", "E", "none"}, "doc", "allowed");
  source.claim = node.member("claim").non_empty_string(kMaxClaimCharacters);
  return source;
}

std::vector<std::string> parse_variants(const JsonReader& node,
                                        const std::vector<std::string>& known_variants) {
  std::vector<std::string> variants;
  std::map<std::string, std::string> path_of;
  for (const JsonReader& element : node.elements(/*non_empty=*/true)) {
    std::string variant = element.one_of(known_variants, "variant", "known");
    const auto [previous, inserted] = path_of.emplace(variant, element.path());
    if (!inserted) {
      element.fail("duplicate variant \"" + variant + "\" (also at " + previous->second + ")");
    }
    variants.push_back(std::move(variant));
  }
  return variants;
}

// parse_client_clocks: {"<client>": {"offset_ms": ms, "drift_ms_per_s": ms}} for clients of the
// scenario, at least one of the two each: an offset within a duration either way (a client's
// clock ahead of the others, or behind) and a drift within kMaxClockDriftMsPerS either way (a
// clock that gains, or loses, that much each second of the run).
void parse_client_clocks(const JsonReader& node, Scenario& scenario) {
  const std::vector<std::string>& clients = scenario.clients;
  for (const std::string& name : node.keys()) {
    const JsonReader client = node.member(name);
    if (std::find(clients.begin(), clients.end(), name) == clients.end()) {
      const auto close = closest_match(name, clients);
      client.fail("unknown client \"" + name + "\"" +
                  (close ? " (did you mean \"" + *close + "\"?)" : std::string()) +
                  "; clients: " + join(clients));
    }
    client.expect_object({"offset_ms", "drift_ms_per_s"});
    const auto offset = client.optional_member("offset_ms");
    const auto drift = client.optional_member("drift_ms_per_s");
    if (!offset && !drift) {
      client.fail(
          "expected \"offset_ms\" (ms the client's clock runs ahead, negative: behind) or "
          "\"drift_ms_per_s\" (ms it gains each second of the run, negative: loses), or both");
    }
    if (offset) {
      scenario.client_clock_offset_ms[name] = offset->duration_ms(-kMaxDurationMs, kMaxDurationMs);
    }
    if (drift) {
      scenario.client_clock_drift_ms_per_s[name] = drift->count(
          -kMaxClockDriftMsPerS, kMaxClockDriftMsPerS, "a drift in ms per second of the run");
    }
  }
}

nlohmann::json resolved_check(const CheckConfig& check) {
  nlohmann::json resolved = {{"stuck_ms", check.stuck_ms}};
  if (check.barging) resolved["barging"] = true;
  if (check.writer_wait_ms != check.stuck_ms) resolved["writer_wait_ms"] = check.writer_wait_ms;
  return resolved;
}

nlohmann::json resolved_document(const Scenario& scenario) {
  nlohmann::json document = {
      {"name", scenario.name},
      {"description", scenario.description},
      {"source", {{"doc", scenario.source.doc}, {"claim", scenario.source.claim}}},
      {"variants", scenario.variants},
      {"lock", scenario_internal::resolved_lock(scenario.lock)},
      {"check", resolved_check(scenario.check)},
      {"time_limit_ms", scenario.time_limit_ms},
      {"clients_run_as", std::string(to_string(scenario.executor))},
      {"expect", scenario_internal::resolved_expect(scenario.expect)},
  };
  if (scenario.resource.kind != ResourceConfig::Kind::kNone) {
    document["resource"] = scenario_internal::resolved_resource(scenario.resource);
  }
  if (!scenario.shows.empty()) document["shows"] = scenario.shows;
  for (const auto& [name, offset_ms] : scenario.client_clock_offset_ms) {
    document["client_clocks"][name] = {{"offset_ms", offset_ms}};
  }
  for (const auto& [name, drift_ms_per_s] : scenario.client_clock_drift_ms_per_s) {
    document["client_clocks"][name]["drift_ms_per_s"] = drift_ms_per_s;
  }
  if (scenario.scripted()) {
    document["clients"] = scenario.clients;
    document["steps"] = scenario_internal::resolved_steps(scenario.steps, scenario.resource);
  } else {
    document["workload"] = scenario_internal::resolved_workload(*scenario.workload);
  }
  if (scenario.topology) {
    document["topology"] = scenario_internal::resolved_topology(*scenario.topology);
  }
  if (scenario.sweep) {
    document["sweep_point"] = scenario_internal::resolved_sweep_point(*scenario.sweep);
  }
  return document;
}

// sweep_ttl: the lease a sweep point sets, value x the workload's mean work time.
SweepTtl sweep_ttl(const JsonReader& root, const Workload& workload, const SweepContext& sweep) {
  const double mean_work_ms = (static_cast<double>(workload.work_ms.min_ms) +
                               static_cast<double>(workload.work_ms.max_ms)) /
                              2.0;
  if (mean_work_ms <= 0.0) {
    root.member("workload")
        .member("work_ms")
        .fail("a \"ttl_over_work\" sweep needs a mean work time above 0 ms");
  }
  const SweepValue& point = sweep.point();
  const std::int64_t ttl_ms = std::max<std::int64_t>(1, std::llround(point.value * mean_work_ms));
  if (ttl_ms > kMaxDurationMs) {
    JsonReader(root.value(), point.path, root.file())
        .fail("gives lock.ttl_ms " + std::to_string(ttl_ms) + " (" + point.key +
              " x mean work_ms " + scenario_internal::shortest_number(mean_work_ms) +
              "), above the maximum " + std::to_string(kMaxDurationMs));
  }
  return SweepTtl{ttl_ms, point.key};
}

// parse_one: one scenario; with `sweep`, the point sweep->index of a sweep file, whose values
// the general form has already written into `root`.
Scenario parse_one(const JsonReader& root, const std::vector<std::string>& known_variants,
                   const SweepContext* sweep, Resolved resolved = Resolved::kFill) {
  static const std::regex kNamePattern("[a-z0-9][a-z0-9-]{0,63}");
  static const std::regex kPointNamePattern("[a-z0-9][a-z0-9._-]{0,79}");
  root.expect_object(kTopLevelKeys);
  Scenario scenario;
  scenario.file = root.file();
  const std::optional<JsonReader> sweep_point = root.optional_member("sweep_point");
  scenario.name =
      sweep_point
          ? root.member("name").matching(kPointNamePattern,
                                         "a name of 1 to 80 lowercase letters, digits, '-', "
                                         "'_' or '.', starting with a letter or digit")
          : root.member("name").matching(kNamePattern,
                                         "a name of 1 to 64 lowercase letters, digits or '-', "
                                         "not starting with '-'");
  if (sweep) {
    const SweepValue& point = sweep->point();
    scenario.sweep =
        SweepPoint{scenario.name, sweep->sweep.parameter, point.value, sweep->sweep.unit};
    scenario.name += sweep->sweep.ttl_over_work() ? "-ttl-x" + point.key
                                                  : "-" + sweep->sweep.parameter + "-" + point.key;
    if (scenario.name.size() > kMaxPointNameLength) {
      JsonReader(root.value(), point.path, root.file())
          .fail("the point's scenario name \"" + scenario.name + "\" is longer than " +
                std::to_string(kMaxPointNameLength) + " characters; shorten $.name or the value");
    }
  }
  if (const auto description = root.optional_member("description")) {
    scenario.description = description->string(kMaxDescriptionCharacters);
  }
  scenario.source = parse_source(root.member("source"));
  scenario.variants = parse_variants(root.member("variants"), known_variants);
  if (const auto shows = root.optional_member("shows")) {
    std::map<std::string, std::string> path_of;
    for (const JsonReader& element : shows->elements(/*non_empty=*/true)) {
      std::string property = element.one_of(lock_properties(), "property", "properties");
      const auto [previous, inserted] = path_of.emplace(property, element.path());
      if (!inserted) {
        element.fail("duplicate property \"" + property + "\" (also at " + previous->second + ")");
      }
      scenario.shows.push_back(std::move(property));
    }
  }
  if (const auto resource = root.optional_member("resource")) {
    scenario.resource = scenario_internal::parse_resource(*resource);
  }

  const bool has_steps = root.has("steps");
  const bool has_workload = root.has("workload");
  if (has_steps && has_workload) {
    root.fail("give either \"steps\" (a scripted scenario) or \"workload\", not both");
  }
  if (!has_steps && !has_workload) {
    root.fail("missing \"steps\" (a scripted scenario) or \"workload\"; give exactly one");
  }
  if (sweep_point) {
    if (sweep) {
      sweep_point->fail("not allowed together with \"sweep\"; each expanded point gets its own");
    }
    scenario.sweep = scenario_internal::parse_sweep_point(*sweep_point);
  }
  std::optional<SweepTtl> point_ttl;
  if (has_workload) {
    if (root.has("clients")) {
      root.member("clients").fail(
          "not allowed in a workload scenario; \"workload.clients\" sets the number of clients");
    }
    scenario.workload = scenario_internal::parse_workload(root.member("workload"));
    for (int i = 0; i < scenario.workload->clients; ++i) {
      scenario.clients.push_back("c" + std::to_string(i));
    }
    if (sweep && sweep->sweep.ttl_over_work()) {
      point_ttl = sweep_ttl(root, *scenario.workload, *sweep);
    }
  }
  scenario.lock =
      scenario_internal::parse_lock(root.optional_member("lock"), point_ttl, scenario.variants);
  if (scenario.workload) {
    // A drawn fault's default may follow the lease (Doc D's lost iteration sleeps past it).
    for (std::shared_ptr<const DrawnFault>& fault : scenario.workload->drawn_faults) {
      if (auto completed = fault->with_lock_ttl(scenario.lock.ttl_ms)) fault = std::move(completed);
    }
  }
  if (const auto topology = root.optional_member("topology")) {
    scenario.topology = scenario_internal::parse_topology(*topology);
  }
  if (has_steps) scenario_internal::parse_script(root, scenario);
  for (const Step& step : scenario.steps) {
    // A server fault has a topology (the script parser refuses one without).
    if (step.server_fault != nullptr && step.server_fault->type().shifts_clock) {
      scenario.topology->clock_shift = true;
    }
  }
  if (const auto clocks = root.optional_member("client_clocks")) {
    parse_client_clocks(*clocks, scenario);
  }
  const std::optional<JsonReader> client_mode =
      has_workload ? root.member("workload").optional_member("client_mode") : std::nullopt;
  scenario.executor = scenario_internal::parse_executor(
      root, client_mode, {"threads", "event_loop"}, scenario.notes);
  if (const std::string why = scenario_internal::executor_refusal(scenario, scenario.executor);
      !why.empty()) {
    throw InputError(scenario.file + ": " + why);
  }

  scenario.expect =
      scenario_internal::parse_expect(root.member("expect"), scenario.variants,
                                      scenario.resource.kind != ResourceConfig::Kind::kNone, sweep);
  scenario.check.stuck_ms = scenario_internal::default_stuck_ms(scenario.lock.wait);
  if (const auto check = root.optional_member("check")) {
    check->expect_object({"stuck_ms", "barging", "writer_wait_ms"});
    if (const auto stuck = check->optional_member("stuck_ms")) {
      scenario.check.stuck_ms = stuck->duration_ms(1, kMaxDurationMs);
    }
    if (const auto writer = check->optional_member("writer_wait_ms")) {
      scenario.check.writer_wait_ms = writer->duration_ms(1, kMaxDurationMs);
    }
    if (const auto barging = check->optional_member("barging")) {
      scenario.check.barging = barging->boolean();
    }
  }
  if (scenario.check.writer_wait_ms == 0) scenario.check.writer_wait_ms = scenario.check.stuck_ms;
  if (const auto limit = root.optional_member("time_limit_ms")) {
    scenario.time_limit_ms = limit->duration_ms(1000, kMaxDurationMs);
  }
  if (resolved == Resolved::kFill) scenario.resolved = resolved_document(scenario);
  return scenario;
}

// read_document: the parsed JSON of one scenario file.
nlohmann::json read_document(const std::filesystem::path& path) {
  return json::read_json_file(path, json::kScenarioFileLimits, "scenario file");
}

}  // namespace

nlohmann::json workload_shape(const Scenario& scenario) {
  using namespace scenario_internal;
  return {{"clients", scenario.clients},
          {"lock", resolved_lock(scenario.lock)},
          {"resource", resolved_resource(scenario.resource)},
          {"workload", scenario.workload ? resolved_workload(*scenario.workload) : nullptr},
          {"time_limit_ms", scenario.time_limit_ms}};
}

Scenario parse_scenario(const nlohmann::json& document, const std::string& file,
                        const std::vector<std::string>& known_variants, Resolved resolved) {
  if (document.is_object() && document.contains("sweep")) {
    throw InputError(file +
                     ": $.sweep: a sweep expands into several scenarios; load it with "
                     "load_scenarios");
  }
  return parse_one(JsonReader(document, "$", file), known_variants, nullptr, resolved);
}

std::vector<Scenario> parse_scenarios(const nlohmann::json& document, const std::string& file,
                                      const std::vector<std::string>& known_variants) {
  const JsonReader root(document, "$", file);
  if (!root.has("sweep")) return {parse_one(root, known_variants, nullptr)};
  root.expect_object(kTopLevelKeys);
  SweepContext context;
  context.sweep = scenario_internal::parse_sweep(root);
  const scenario_internal::Sweep& sweep = context.sweep;
  if (sweep.ttl_over_work() && root.has("steps")) {
    root.member("sweep").fail(
        "only allowed in a workload scenario (\"workload\") with \"ttl_over_work\", which "
        "follows the mean work time; to sweep a scripted scenario's timings, give "
        "\"parameter\", \"set\" and \"values\"");
  }
  std::vector<Scenario> scenarios;
  for (context.index = 0; context.index < sweep.values.size(); ++context.index) {
    if (sweep.ttl_over_work()) {
      scenarios.push_back(parse_one(root, known_variants, &context));
      continue;
    }
    // The general form: the file with the point's value written at every pointer, parsed like
    // any file, so each field keeps its own checks; a message says which point it is about.
    const nlohmann::json point =
        scenario_internal::sweep_point_document(document, sweep, context.index);
    try {
      scenarios.push_back(parse_one(JsonReader(point, "$", file), known_variants, &context));
    } catch (const InputError& error) {
      throw InputError(std::string(error.what()) + " (in sweep point " + sweep.parameter + " = " +
                       context.point().key + ": " + context.point().path +
                       " written at each pointer of $.sweep.set)");
    }
  }
  return scenarios;
}

Scenario load_scenario(const std::filesystem::path& path,
                       const std::vector<std::string>& known_variants) {
  const std::string file = path.string();
  return parse_scenario(read_document(path), file, known_variants);
}

std::vector<std::filesystem::path> json_files(const std::vector<std::filesystem::path>& paths,
                                              std::string_view what) {
  std::vector<std::filesystem::path> files;
  for (const std::filesystem::path& path : paths) {
    // Anything but a directory is read as a file, and read_json_file says what is wrong with it
    // (missing, a symlink loop, a FIFO...). No filesystem call here may throw.
    std::error_code error;
    if (!std::filesystem::is_directory(path, error)) {
      files.push_back(path);
      continue;
    }
    std::vector<std::filesystem::path> in_directory;
    std::filesystem::directory_iterator entry(path, error);
    for (; !error && entry != std::filesystem::directory_iterator(); entry.increment(error)) {
      std::error_code type_error;
      if (entry->path().extension() == ".json" && !entry->is_directory(type_error)) {
        in_directory.push_back(entry->path());
      }
    }
    if (error) throw InputError(path.string() + ": cannot list (" + error.message() + ")");
    if (in_directory.empty()) {
      throw InputError(path.string() + ": no *.json " + std::string(what) + "s");
    }
    std::sort(in_directory.begin(), in_directory.end(),
              [](const auto& a, const auto& b) { return a.filename() < b.filename(); });
    files.insert(files.end(), in_directory.begin(), in_directory.end());
  }

  return files;
}

std::vector<Scenario> load_scenarios(const std::vector<std::filesystem::path>& paths,
                                     const std::vector<std::string>& known_variants) {
  const std::vector<std::filesystem::path> files = json_files(paths, "scenario file");

  std::vector<Scenario> scenarios;
  std::map<std::string, std::string> file_of;  // scenario name -> file that defined it
  for (const std::filesystem::path& file : files) {
    for (Scenario& scenario : parse_scenarios(read_document(file), file.string(), known_variants)) {
      const auto [previous, inserted] = file_of.emplace(scenario.name, scenario.file);
      if (!inserted) {
        throw InputError(scenario.file + ": $.name: scenario name \"" + scenario.name +
                         "\" is already used by " + previous->second +
                         "; names must be unique (they name the report directories)");
      }
      scenarios.push_back(std::move(scenario));
    }
  }
  return scenarios;
}

}  // namespace locksim
