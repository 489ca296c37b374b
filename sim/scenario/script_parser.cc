// The scripted form: "clients", "steps" and the conditions steps wait on.
#include <algorithm>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <utility>

#include "sim/scenario/scenario_parts.h"

namespace locksim::scenario_internal {
namespace {

// The fault injector and the harness record their events under these client names, so no scripted
// client may use them.
constexpr const char* kReservedClients[] = {"nemesis", "harness"};

// kMaxCancelAfterMs: the adapters' bound on "cancel_after_ms" (adapters/README.md).
constexpr std::int64_t kMaxCancelAfterMs = 3600000;

const std::vector<std::string> kCommonStepKeys = {"client", "do", "id", "wait_for", "wait_max_ms"};

struct ActionSpec {
  const char* name;
  Step::Action action;
  std::vector<std::string> keys;  // keys this action allows beyond kCommonStepKeys
};

const std::vector<ActionSpec>& action_specs() {
  static const std::vector<ActionSpec> specs = {
      {"acquire",
       Step::Action::kAcquire,
       {"timeout_ms", "crash_at", "pause_at", "lose_reply", "delay", "servers", "cancel_after_ms",
        "mode"}},
      {"release",
       Step::Action::kRelease,
       {"crash_at", "pause_at", "unsaved_token", "finally", "lose_reply", "delay", "servers",
        "cancel_after_ms"}},
      {"extend", Step::Action::kExtend, {"lose_reply", "delay", "servers", "cancel_after_ms"}},
      {"work", Step::Action::kWork, {"work_ms", "until", "max_ms"}},
      {"crash", Step::Action::kCrash, {}},
      {"sleep", Step::Action::kSleep, {"sleep_ms"}},
      {"read", Step::Action::kRead, {"record_id"}},
      {"write", Step::Action::kWrite, {"record_id"}},
      {"pause", Step::Action::kPause, {"pause_ms", "until", "max_ms"}},
      {"partition",
       Step::Action::kPartition,
       {"partition_ms", "until", "max_ms", "mode", "servers"}},
  };
  return specs;
}

// kLinkFaultWindowKeys: what every link fault window step allows beyond kCommonStepKeys, its
// duration key and its kind's own keys (LinkFaultType).
const std::vector<std::string> kLinkFaultWindowKeys = {"until", "max_ms", "servers"};

// link_fault_keys: every key a step of link fault `kind` allows beyond kCommonStepKeys.
std::vector<std::string> link_fault_keys(FaultKind kind) {
  const LinkFaultType& type = *traits(kind).link_fault;
  std::vector<std::string> keys = kLinkFaultWindowKeys;
  keys.emplace_back(type.duration_key);
  keys.insert(keys.end(), type.keys.begin(), type.keys.end());
  return keys;
}

// link_fault_named: the link fault kind whose word is `name`, if any.
std::optional<FaultKind> link_fault_named(std::string_view name) {
  for (const FaultKind kind : link_fault_kinds()) {
    if (traits(kind).word == name) return kind;
  }
  return std::nullopt;
}

// action_names: every word "do" accepts: the client actions above, the server fault kinds and
// the link fault kinds, in that order (fixed tables: listed once).
const std::vector<std::string>& action_names() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const ActionSpec& spec : action_specs()) names.emplace_back(spec.name);
    for (const ServerFaultType* type : server_fault_types()) names.emplace_back(type->word);
    for (const FaultKind kind : link_fault_kinds()) names.emplace_back(traits(kind).word);
    return names;
  }();
  return kNames;
}

// fixed_duration_key: the key of a work, pause, partition, link fault or server fault window
// step's exact duration.
std::string fixed_duration_key(const Step& step) {
  if (step.action == Step::Action::kPause) return "pause_ms";
  if (step.action == Step::Action::kPartition) return "partition_ms";
  if (step.action == Step::Action::kLinkFault) {
    return std::string(traits(step.link_fault_kind).link_fault->duration_key);
  }
  if (step.action == Step::Action::kServerFault) {
    return std::string(step.server_fault->type().duration_key);
  }
  return "work_ms";
}

const ActionSpec& spec_of(Step::Action action) {
  const auto& specs = action_specs();
  return *std::find_if(specs.begin(), specs.end(),
                       [&](const ActionSpec& spec) { return spec.action == action; });
}

// all_step_keys: every key some step may carry (the same for every step: computed once).
const std::vector<std::string>& all_step_keys() {
  static const std::vector<std::string> kAll = [] {
    std::vector<std::string> keys = kCommonStepKeys;
    const auto add = [&keys](const std::vector<std::string>& more) {
      for (const std::string& key : more) {
        if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
      }
    };
    for (const ActionSpec& spec : action_specs()) add(spec.keys);
    for (const ServerFaultType* type : server_fault_types()) add(server_fault_keys(*type));
    for (const FaultKind kind : link_fault_kinds()) add(link_fault_keys(kind));
    return keys;
  }();
  return kAll;
}

// The actions whose steps may carry `key`, for "not allowed" messages.
std::vector<std::string> actions_allowing(const std::string& key) {
  std::vector<std::string> names;
  const auto allows = [&key](const std::vector<std::string>& keys) {
    return std::find(keys.begin(), keys.end(), key) != keys.end();
  };
  for (const ActionSpec& spec : action_specs()) {
    if (allows(spec.keys)) names.push_back("\"" + std::string(spec.name) + "\"");
  }
  for (const ServerFaultType* type : server_fault_types()) {
    if (allows(server_fault_keys(*type))) names.push_back("\"" + std::string(type->word) + "\"");
  }
  for (const FaultKind kind : link_fault_kinds()) {
    if (allows(link_fault_keys(kind)))
      names.push_back("\"" + std::string(traits(kind).word) + "\"");
  }
  return names;
}

struct ConditionSpec {
  const char* name;
  Condition::Kind kind;
};

const std::vector<ConditionSpec>& condition_specs() {
  static const std::vector<ConditionSpec> specs = {
      {"inside", Condition::Kind::kInside},          {"outside", Condition::Kind::kOutside},
      {"crashed", Condition::Kind::kCrashed},        {"key_absent", Condition::Kind::kKeyAbsent},
      {"key_present", Condition::Kind::kKeyPresent}, {"done", Condition::Kind::kDone},
      {"renewed", Condition::Kind::kRenewed},        {"open", Condition::Kind::kOpen},
      {"primary", Condition::Kind::kPrimary},
  };
  return specs;
}

std::vector<std::string> condition_names() {
  std::vector<std::string> names;
  for (const ConditionSpec& spec : condition_specs()) names.emplace_back(spec.name);
  return names;
}

// What conditions may refer to: the scenario's clients and every step id.
struct ScriptNames {
  std::vector<std::string> clients;
  std::vector<std::string> step_ids;
  const TopologySpec* topology = nullptr;  // the scenario's, if any
};

Condition parse_condition(const JsonReader& node, const ScriptNames& names,
                          const std::string& own_id) {
  const std::vector<std::string> kinds = condition_names();
  if (!node.value().is_object() || node.value().size() != 1) {
    node.fail("expected a condition: an object with exactly one of " + join(kinds) +
              " (use an array for several conditions), got " + describe(node.value()));
  }
  node.expect_object(kinds);
  const std::string kind_name = node.value().begin().key();
  const JsonReader argument = node.member(kind_name);
  Condition condition;
  for (const ConditionSpec& spec : condition_specs()) {
    if (kind_name == spec.name) condition.kind = spec.kind;
  }
  switch (condition.kind) {
    case Condition::Kind::kInside:
    case Condition::Kind::kOutside:
    case Condition::Kind::kCrashed:
      condition.argument = argument.one_of(names.clients, "client", "clients");
      break;
    case Condition::Kind::kKeyAbsent:
    case Condition::Kind::kKeyPresent:
      condition.argument = argument.non_empty_string();
      break;
    case Condition::Kind::kDone:
      condition.argument = argument.one_of(names.step_ids, "step id", "step ids");
      if (condition.argument == own_id) {
        argument.fail("a step cannot wait for itself to be done (\"" + own_id + "\")");
      }
      break;
    case Condition::Kind::kPrimary: {
      if (names.topology == nullptr) {
        argument.fail(
            "\"primary\" names a server of the scenario's \"topology\", which it has "
            "none of");
      }
      std::vector<std::string> servers;
      for (const ServerSpec& server : names.topology->servers) servers.push_back(server.name);
      condition.argument = argument.one_of(servers, "server", "servers of the topology");
      break;
    }
    case Condition::Kind::kOpen:
      condition.argument = argument.one_of(names.step_ids, "step id", "step ids");
      if (condition.argument == own_id) {
        argument.fail("a step cannot wait for its own window to be open (\"" + own_id + "\")");
      }
      break;
    case Condition::Kind::kRenewed:
      argument.expect_object({"client", "times"});
      condition.argument = argument.member("client").one_of(names.clients, "client", "clients");
      condition.times =
          static_cast<int>(argument.member("times").count(1, 1000000, "a number of renewals"));
      break;
  }
  return condition;
}

// parse_conditions: one condition object or a non-empty array of them.
std::vector<Condition> parse_conditions(const JsonReader& node, const ScriptNames& names,
                                        const std::string& own_id) {
  if (!node.value().is_array()) return {parse_condition(node, names, own_id)};
  std::vector<Condition> conditions;
  for (const JsonReader& element : node.elements(/*non_empty=*/true)) {
    conditions.push_back(parse_condition(element, names, own_id));
  }
  return conditions;
}

std::vector<std::string> parse_clients(const JsonReader& node) {
  static const std::regex kClientPattern("[A-Za-z][A-Za-z0-9_-]{0,31}");
  std::vector<std::string> clients;
  std::map<std::string, std::string> path_of;
  for (const JsonReader& element : node.elements(/*non_empty=*/true)) {
    std::string client = element.matching(
        kClientPattern, "a client name (a letter, then up to 31 letters, digits, '_' or '-')");
    for (const char* reserved : kReservedClients) {
      if (client == reserved) {
        element.fail("\"" + client +
                     "\" is reserved for locksim's own events (the fault injector and the "
                     "harness); choose another client name");
      }
    }
    const auto [previous, inserted] = path_of.emplace(client, element.path());
    if (!inserted)
      element.fail("duplicate client \"" + client + "\" (also at " + previous->second + ")");
    clients.push_back(std::move(client));
  }
  return clients;
}

// collect_step_ids: every step's id, explicit or default, checked for uniqueness. A first pass,
// because {"done": id} may name any step, including a later one.
std::vector<std::string> collect_step_ids(const std::vector<JsonReader>& steps) {
  std::vector<std::string> ids;
  std::map<std::string, std::string> path_of;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    steps[i].expect_object(all_step_keys());
    const std::optional<JsonReader> id_node = steps[i].optional_member("id");
    std::string id = id_node ? id_node->non_empty_string() : "step-" + std::to_string(i + 1);
    const JsonReader& where = id_node ? *id_node : steps[i];
    const auto [previous, inserted] = path_of.emplace(id, where.path());
    if (!inserted) {
      where.fail((id_node ? "duplicate step id \"" : "default step id \"") + id +
                 "\" is also used at " + previous->second + "; give one of them another id");
    }
    ids.push_back(std::move(id));
  }
  return ids;
}

// parse_fault_point: "crash_at" and "pause_at" of an acquire or release step.
void parse_fault_point(const JsonReader& node, const ScriptNames& names, Step& step) {
  static const std::regex kCheckpointPattern("[a-z_]{1,32}");
  constexpr std::string_view kCheckpoint = "a checkpoint name of 1 to 32 lowercase letters or '_'";
  const std::optional<JsonReader> crash_at = node.optional_member("crash_at");
  const std::optional<JsonReader> pause_at = node.optional_member("pause_at");
  if (crash_at && pause_at) node.fail("\"crash_at\" and \"pause_at\" exclude each other; give one");
  if (crash_at) step.crash_at = crash_at->matching(kCheckpointPattern, kCheckpoint);
  if (!pause_at) return;
  pause_at->expect_object({"point", "until", "max_ms"});
  step.pause_at = pause_at->member("point").matching(kCheckpointPattern, kCheckpoint);
  step.pause_until = parse_conditions(pause_at->member("until"), names, step.id);
  // A pause inside a call holds up the client, so it needs a bound like "until" on a work step.
  if (!pause_at->has("max_ms")) {
    pause_at->fail("missing required key \"max_ms\", the upper bound of the pause in ms (1.." +
                   std::to_string(kMaxDurationMs) + ")");
  }
  step.pause_max_ms = pause_at->member("max_ms").duration_ms(1, kMaxDurationMs);
}

// parse_cancel: "cancel_after_ms" of an acquire, release or extend step: the client's caller
// cancels the call if it has not ended after that long (a library adapter that offers it).
void parse_cancel(const JsonReader& node, Step& step) {
  if (const auto cancel = node.optional_member("cancel_after_ms")) {
    step.cancel_after_ms = cancel->duration_ms(0, kMaxCancelAfterMs);
  }
}

// parse_link_fault: "lose_reply" or "delay" of an acquire or release step: what the proxy does to
// the call's first command on the client's link.
void parse_link_fault(const JsonReader& node, const ScriptNames& names, Step& step) {
  const std::optional<JsonReader> lose = node.optional_member("lose_reply");
  const std::optional<JsonReader> delay = node.optional_member("delay");
  if (lose && delay) node.fail("\"lose_reply\" and \"delay\" exclude each other; give one");
  if (lose && lose->boolean()) step.link_fault = LinkFault::kLoseReply;
  if (!delay) return;
  step.link_fault = LinkFault::kDelay;
  delay->expect_object({"ms", "until", "max_ms"});
  if (delay->has("ms") == delay->has("until")) {
    delay->fail("a delay needs \"ms\" or \"until\" (with \"max_ms\"), not both");
  }
  if (delay->has("ms")) {
    if (delay->has("max_ms")) delay->member("max_ms").fail("only allowed together with \"until\"");
    step.delay_ms = delay->member("ms").duration_ms(1, kMaxDurationMs);
    return;
  }
  step.delay_until = parse_conditions(delay->member("until"), names, step.id);
  if (!delay->has("max_ms")) {
    delay->fail("\"until\" needs \"max_ms\", the upper bound of the delay in ms (1.." +
                std::to_string(kMaxDurationMs) + ")");
  }
  step.delay_max_ms = delay->member("max_ms").duration_ms(1, kMaxDurationMs);
}

// parse_link_servers: "servers" of a partition or a link fault: which of the client's links (one
// per server of the topology) the fault is on. Absent: every link of a partition; the link to
// the primary, or every node's with a multi-server variant, for a lost reply or a delay.
void parse_link_servers(const JsonReader& node, const ScriptNames& names, Step& step) {
  const std::optional<JsonReader> servers = node.optional_member("servers");
  if (!servers) return;
  if (step.action != Step::Action::kPartition && step.action != Step::Action::kLinkFault &&
      step.link_fault == LinkFault::kNone) {
    servers->fail("only allowed together with \"lose_reply\" or \"delay\" (the links the fault "
                  "is on)");
  }
  if (names.topology == nullptr) {
    servers->fail("needs a top-level \"topology\" (a client has one link per server of it)");
  }
  std::vector<std::string> known;
  for (const ServerSpec& server : names.topology->servers) known.push_back(server.name);
  for (const JsonReader& element : servers->elements(/*non_empty=*/true)) {
    std::string name = element.one_of(known, "server", "servers of the topology");
    if (std::find(step.link_servers.begin(), step.link_servers.end(), name) !=
        step.link_servers.end()) {
      element.fail("\"" + name + "\" is listed twice");
    }
    step.link_servers.push_back(std::move(name));
  }
}

// parse_resource_access: "record_id" of a read or write step; needs a top-level "resource".
void parse_resource_access(const JsonReader& node, const ResourceConfig& resource, Step& step) {
  const std::string action_name = spec_of(step.action).name;
  if (resource.kind == ResourceConfig::Kind::kNone) {
    node.member("do").fail("\"" + action_name + "\" needs a top-level \"resource\"");
  }
  const std::optional<JsonReader> record_id = node.optional_member("record_id");
  if (!record_id) return;
  if (resource.kind != ResourceConfig::Kind::kFindOrCreate) {
    record_id->fail(
        "only for a \"find_or_create\" resource (a counter has no records); $.resource.kind is \"" +
        resource_kind_name(resource.kind) + "\"");
  }
  step.record_id = record_id->non_empty_string();
  if (step.record_id.size() > 32) {
    record_id->fail("expected a record id of 1 to 32 characters, got " +
                    std::to_string(step.record_id.size()) + " characters");
  }
}

// server_fault_topology: `topology` as a server fault kind's own check sees it.
ServerFaultTopology server_fault_topology(const TopologySpec& topology) {
  ServerFaultTopology view;
  for (const ServerSpec& server : topology.servers) {
    view.servers.push_back({.name = server.name, .replica_of = server.replica_of});
  }
  view.sentinel = topology.sentinel;
  view.cluster = topology.cluster.has_value();
  return view;
}

// parse_server_fault: the `server` of a server fault step of kind `type` (none for a kind aimed
// at none), checked against the topology: the kind's own needs of it first (failover: Sentinel),
// then what it aims at (a replica for cut_replication, heal_replication and promote).
void parse_server_fault(const JsonReader& node, const ScriptNames& names,
                        const ServerFaultType& type, Step& step) {
  const std::string action_name(type.word);
  if (node.has("client")) {
    node.member("client").fail("a server fault (\"" + action_name +
                               "\") has no client; name its server with \"server\"");
  }
  if (names.topology == nullptr) {
    node.member("do").fail("\"" + action_name +
                           "\" needs a top-level \"topology\" (the servers locksim starts for "
                           "the run), e.g. \"topology\": \"single\"");
  }
  const TopologySpec& topology = *names.topology;
  if (type.check_topology != nullptr) type.check_topology(node, server_fault_topology(topology));
  if (type.aim == ServerFaultAim::kNone) return;
  std::vector<std::string> servers;
  for (const ServerSpec& server : topology.servers) servers.push_back(server.name);
  step.server = node.member("server").one_of(servers, "server", "servers of the topology");
  if (type.aim == ServerFaultAim::kReplica &&
      topology.servers[topology.server_index(step.server)].replica_of.empty()) {
    node.member("server").fail("\"" + action_name + "\" needs a replica; \"" + step.server +
                               "\" is a primary");
  }
}

// parse_window: how long a work, pause, partition, link fault or server fault window step lasts:
// its exact duration key `fixed_key` ("work_ms", "pause_ms", "partition_ms", a link fault's or a
// server fault's own) or "until" with "max_ms".
void parse_window(const JsonReader& node, const ScriptNames& names, const std::string& action_name,
                  const std::string& fixed_key, Step& step) {
  const std::string fixed = "\"" + fixed_key + "\"";
  const bool has_fixed = node.has(fixed_key);
  const bool has_until = node.has("until");
  if (has_fixed == has_until) {
    node.fail(has_fixed ? fixed + " and \"until\" exclude each other; give one"
                        : "a \"" + action_name + "\" step needs " + fixed +
                              " or \"until\" (with \"max_ms\")");
  }
  if (has_fixed) {
    if (node.has("max_ms")) {
      node.member("max_ms").fail("only allowed together with \"until\" (" + fixed + " is exact)");
    }
    step.work_ms = node.member(fixed_key).duration_ms(0, kMaxDurationMs);
    return;
  }
  step.until = parse_conditions(node.member("until"), names, step.id);
  if (!node.has("max_ms")) {
    node.fail("\"until\" needs \"max_ms\", the upper bound of the " + action_name + " in ms (1.." +
              std::to_string(kMaxDurationMs) + ")");
  }
  step.max_ms = node.member("max_ms").duration_ms(1, kMaxDurationMs);
}

Step parse_step(const JsonReader& node, const ScriptNames& names, const ResourceConfig& resource,
                std::string id) {
  Step step;
  step.id = std::move(id);
  step.json_path = node.path();
  const std::string action_name = node.member("do").one_of(action_names(), "action", "allowed");
  std::vector<std::string> allowed_keys;
  const ServerFaultType* server_fault = server_fault_type(action_name);
  if (const std::optional<FaultKind> kind = link_fault_named(action_name)) {
    step.action = Step::Action::kLinkFault;
    step.link_fault_kind = *kind;
    allowed_keys = link_fault_keys(*kind);
  } else if (server_fault != nullptr) {
    step.action = Step::Action::kServerFault;
    allowed_keys = server_fault_keys(*server_fault);
  } else {
    const ActionSpec& spec =
        *std::find_if(action_specs().begin(), action_specs().end(),
                      [&](const ActionSpec& candidate) { return action_name == candidate.name; });
    step.action = spec.action;
    allowed_keys = spec.keys;
  }
  if (server_fault != nullptr) {
    parse_server_fault(node, names, *server_fault, step);
  } else {
    step.client = node.member("client").one_of(names.clients, "client", "clients");
  }
  for (const auto& [key, unused] : node.value().items()) {
    const bool common =
        std::find(kCommonStepKeys.begin(), kCommonStepKeys.end(), key) != kCommonStepKeys.end();
    const bool allowed =
        std::find(allowed_keys.begin(), allowed_keys.end(), key) != allowed_keys.end();
    if (!common && !allowed) {
      node.member(key).fail("not allowed when \"do\" is \"" + action_name +
                            "\" (only with \"do\": " + join(actions_allowing(key)) + ")");
    }
  }

  if (const auto wait_for = node.optional_member("wait_for")) {
    step.wait_for = parse_conditions(*wait_for, names, step.id);
  }
  if (const auto wait_max = node.optional_member("wait_max_ms")) {
    if (step.wait_for.empty()) wait_max->fail("only allowed together with \"wait_for\"");
    step.wait_max_ms = wait_max->duration_ms(0, kMaxDurationMs);
  }

  switch (step.action) {
    case Step::Action::kAcquire:
      if (const auto timeout = node.optional_member("timeout_ms")) {
        step.acquire_timeout_ms = timeout->duration_ms(0, kMaxDurationMs);
      }
      if (const auto mode = node.optional_member("mode")) {
        step.mode = mode->one_of({"read", "write"}, "mode", "allowed") == "read" ? LockMode::kRead
                                                                                 : LockMode::kWrite;
      }
      parse_fault_point(node, names, step);
      parse_link_fault(node, names, step);
      parse_link_servers(node, names, step);
      parse_cancel(node, step);
      break;
    case Step::Action::kRelease:
      parse_fault_point(node, names, step);
      parse_link_fault(node, names, step);
      parse_link_servers(node, names, step);
      parse_cancel(node, step);
      if (const auto unsaved = node.optional_member("unsaved_token")) {
        step.unsaved_token = unsaved->boolean();
      }
      if (const auto finally = node.optional_member("finally")) {
        step.finally_release = finally->boolean();
      }
      break;
    case Step::Action::kExtend:
      parse_link_fault(node, names, step);
      parse_link_servers(node, names, step);
      parse_cancel(node, step);
      break;
    case Step::Action::kRead:
    case Step::Action::kWrite:
      parse_resource_access(node, resource, step);
      break;
    case Step::Action::kServerFault:
      // The window is the step's, as for every window step; the kind reads only its own keys.
      if (!server_fault->duration_key.empty()) {
        parse_window(node, names, action_name, std::string(server_fault->duration_key), step);
      }
      step.server_fault = server_fault->parse(node);
      break;
    case Step::Action::kWork:
    case Step::Action::kPause:
    case Step::Action::kPartition:
      if (step.action == Step::Action::kPartition) parse_link_servers(node, names, step);
      if (const auto mode = node.optional_member("mode")) {
        step.partition_reset =
            mode->one_of({"hold", "reset"}, "partition mode", "allowed") == "reset";
      }
      parse_window(node, names, action_name, fixed_duration_key(step), step);
      break;
    case Step::Action::kLinkFault:
      parse_link_servers(node, names, step);
      parse_window(node, names, action_name, fixed_duration_key(step), step);
      step.link_fault_settings = traits(step.link_fault_kind).link_fault->parse(node);
      break;
    case Step::Action::kSleep:
      step.work_ms = node.member("sleep_ms").duration_ms(0, kMaxDurationMs);
      break;
    case Step::Action::kCrash:
      break;
  }
  return step;
}

nlohmann::json resolved_conditions(const std::vector<Condition>& conditions) {
  nlohmann::json result = nlohmann::json::array();
  for (const Condition& condition : conditions) {
    for (const ConditionSpec& spec : condition_specs()) {
      if (spec.kind != condition.kind) continue;
      if (condition.kind == Condition::Kind::kRenewed) {
        result.push_back(
            {{spec.name, {{"client", condition.argument}, {"times", condition.times}}}});
      } else {
        result.push_back({{spec.name, condition.argument}});
      }
    }
  }
  return result;
}

// resolved_window: a window step's exact duration, or its conditions and bound.
void resolved_window(const Step& step, nlohmann::json& entry) {
  if (step.until.empty()) {
    entry[fixed_duration_key(step)] = step.work_ms;
  } else {
    entry["until"] = resolved_conditions(step.until);
    entry["max_ms"] = step.max_ms;
  }
}

}  // namespace

void parse_script(const JsonReader& root, Scenario& scenario) {
  ScriptNames names;
  names.clients = parse_clients(root.member("clients"));
  if (scenario.topology) names.topology = &*scenario.topology;
  const std::vector<JsonReader> steps = root.member("steps").elements(/*non_empty=*/true);
  names.step_ids = collect_step_ids(steps);
  scenario.steps.reserve(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    scenario.steps.push_back(parse_step(steps[i], names, scenario.resource, names.step_ids[i]));
  }
  scenario.clients = std::move(names.clients);
}

nlohmann::json resolved_steps(const std::vector<Step>& steps, const ResourceConfig& resource) {
  nlohmann::json result = nlohmann::json::array();
  for (const Step& step : steps) {
    const std::string action_name =
        step.action == Step::Action::kLinkFault     ? std::string(traits(step.link_fault_kind).word)
        : step.action == Step::Action::kServerFault ? std::string(step.server_fault->type().word)
                                                    : spec_of(step.action).name;
    nlohmann::json entry = {{"id", step.id}, {"do", action_name}};
    if (Step::server_action(step.action)) {
      if (!step.server.empty()) entry["server"] = step.server;
    } else {
      entry["client"] = step.client;
    }
    if (!step.wait_for.empty()) {
      entry["wait_for"] = resolved_conditions(step.wait_for);
      entry["wait_max_ms"] = step.wait_max_ms;
    }
    if (!step.crash_at.empty()) entry["crash_at"] = step.crash_at;
    if (step.cancel_after_ms >= 0) entry["cancel_after_ms"] = step.cancel_after_ms;
    if (!step.link_servers.empty()) entry["servers"] = step.link_servers;
    if (step.link_fault == LinkFault::kLoseReply) entry["lose_reply"] = true;
    if (step.link_fault == LinkFault::kDelay) {
      entry["delay"] = step.delay_until.empty()
                           ? nlohmann::json{{"ms", step.delay_ms}}
                           : nlohmann::json{{"until", resolved_conditions(step.delay_until)},
                                            {"max_ms", step.delay_max_ms}};
    }
    if (!step.pause_at.empty()) {
      entry["pause_at"] = {{"point", step.pause_at},
                           {"until", resolved_conditions(step.pause_until)},
                           {"max_ms", step.pause_max_ms}};
    }
    switch (step.action) {
      case Step::Action::kAcquire:
        if (step.acquire_timeout_ms) entry["timeout_ms"] = *step.acquire_timeout_ms;
        if (step.mode == LockMode::kRead) entry["mode"] = "read";
        break;
      case Step::Action::kRelease:
        entry["unsaved_token"] = step.unsaved_token;
        if (step.finally_release) entry["finally"] = true;
        break;
      case Step::Action::kExtend:
        break;
      case Step::Action::kRead:
      case Step::Action::kWrite:
        if (resource.kind == ResourceConfig::Kind::kFindOrCreate) {
          entry["record_id"] = step.record_id;
        }
        break;
      case Step::Action::kServerFault:
        step.server_fault->write(entry);
        if (!step.server_fault->type().duration_key.empty()) resolved_window(step, entry);
        break;
      case Step::Action::kWork:
      case Step::Action::kPause:
      case Step::Action::kPartition:
      case Step::Action::kLinkFault:
        if (step.action == Step::Action::kPartition) {
          entry["mode"] = step.partition_reset ? "reset" : "hold";
        }
        if (step.action == Step::Action::kLinkFault) step.link_fault_settings->write(entry);
        resolved_window(step, entry);
        break;
      case Step::Action::kSleep:
        entry["sleep_ms"] = step.work_ms;
        break;
      case Step::Action::kCrash:
        break;
    }
    result.push_back(std::move(entry));
  }
  return result;
}

}  // namespace locksim::scenario_internal
