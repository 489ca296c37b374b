// scenario_parts.h: the parsers for the parts of a scenario, shared by loader.cc.
//
// Internal to the scenario module. Each parser reads its part of the document through a
// JsonReader (so every error names file and path) and has a matching `resolved_*` function that
// writes the part back with every default filled in, in a form the parser accepts again.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/json/json_reader.h"
#include "sim/json/messages.h"
#include "sim/scenario/scenario.h"

namespace locksim::scenario_internal {

// The strict reader and the words of its messages come from the json module.
using json::closest_match;
using json::describe;
using json::index_path;
using json::join;
using json::JsonReader;
using json::kMaxDurationMs;
using json::member_path;
using json::shortest_number;

// A reply waited for longer than ten minutes is not a reply a lock can use.
inline constexpr std::int64_t kMaxReplyTimeoutMs = 600000;

// SweepValue: one swept value and the key its expectations are written under.
struct SweepValue {
  double value = 0;
  std::string key;      // shortest_number(value): "0.5", "2"
  std::string path;     // "$.sweep.values[1]", for messages
  nlohmann::json node;  // the value as written, so an integer stays an integer where it is set
};

// SweepTarget: one JSON Pointer of "sweep.set", checked against the file: it names a number.
struct SweepTarget {
  std::string pointer;              // "/steps/1/pause_ms", as written
  std::vector<std::string> tokens;  // its reference tokens
  std::string path;                 // "$.sweep.set[0]", for messages
};

// Sweep: the "sweep" of a file. Two forms: {"ttl_over_work": [...]} (the lease as a multiple of
// a workload's mean work time; `targets` empty) and the general form {"parameter", "set",
// "values", "unit"}, which sets every pointer of `set` to each value in turn.
struct Sweep {
  std::string parameter;             // "ttl_over_work", or the general form's name
  std::string unit;                  // general form, optional: "ms", "%"
  std::vector<SweepValue> values;    // every point of the sweep, in the listed order
  std::string values_path;           // "$.sweep.ttl_over_work" or "$.sweep.values"
  std::vector<SweepTarget> targets;  // general form: the pointers each value is written to
  bool ttl_over_work() const { return targets.empty(); }
};

// SweepContext: which point of a sweep file is being parsed into a scenario.
struct SweepContext {
  Sweep sweep;
  std::size_t index = 0;  // the point being parsed
  const SweepValue& point() const { return sweep.values[index]; }
};

// SweepTtl: the lease a sweep point sets, for parse_lock.
struct SweepTtl {
  std::int64_t ttl_ms = 0;
  std::string key;  // the point's key, for messages
};

// kFairQueueVariant: the variant whose waiters must try again within lock.queue_timeout_ms.
inline constexpr std::string_view kFairQueueVariant = "lua_fair_queue";

// parse_lock: the "lock" object, or every default if it is absent. With `sweep_ttl`, lock.ttl_ms
// comes from the sweep and may not be given. Fills renew_period_ms (default max(1, ttl_ms / 3))
// and queue_timeout_ms (default max(ttl_ms, 3 x longest_pause_ms)); `variants` are the
// scenario's, so an explicit queue_timeout_ms too short for lua_fair_queue's waiters is refused.
LockConfig parse_lock(const std::optional<JsonReader>& node,
                      const std::optional<SweepTtl>& sweep_ttl,
                      const std::vector<std::string>& variants);
nlohmann::json resolved_lock(const LockConfig& lock);
// longest_pause_ms: the longest a waiter pauses between two attempts with this strategy: poll
// and retry_sleep interval_ms, backoff max_ms, notify fallback_ms.
std::int64_t longest_pause_ms(const WaitConfig& wait);
// default_stuck_ms: the deadlock threshold for a wait strategy, several waits long because a
// stuck lock is only noticed between attempts.
std::int64_t default_stuck_ms(const WaitConfig& wait);

// parse_resource: the top-level "resource" object.
ResourceConfig parse_resource(const JsonReader& node);
// resolved_resource: null for ResourceConfig::Kind::kNone.
nlohmann::json resolved_resource(const ResourceConfig& resource);
// resource_kind_name: the kind's word in JSON ("counter", "fenced_counter"); "" for kNone.
std::string resource_kind_name(ResourceConfig::Kind kind);

// parse_topology: the top-level "topology" (a name or an object).
TopologySpec parse_topology(const JsonReader& node);
nlohmann::json resolved_topology(const TopologySpec& topology);

// parse_script: the "clients" and "steps" of a scripted scenario, into scenario.clients and
// scenario.steps. `root` is the whole document; scenario.resource must already be parsed.
void parse_script(const JsonReader& root, Scenario& scenario);
nlohmann::json resolved_steps(const std::vector<Step>& steps, const ResourceConfig& resource);

// parse_workload: the "workload" object, with every drawn fault kind's keys (each kind parses
// its own). A kind's default that follows the lock's lease is left to the caller, which knows it
// (DrawnFault::with_lock_ttl).
Workload parse_workload(const JsonReader& node);
nlohmann::json resolved_workload(const Workload& workload);

// parse_executor: what runs the clients: `root`'s "clients_run_as" (default "threads"), or
// `alias`, a deprecated "client_mode" that takes one of `alias_words`, which adds a note to
// `notes` naming the file and field. Given both, they must agree.
Executor parse_executor(const JsonReader& root, const std::optional<JsonReader>& alias,
                        const std::vector<std::string>& alias_words,
                        std::vector<std::string>& notes);
// executor_refusal: "<path>: <why>" for the first part of `scenario` that `executor` cannot run
// (the event loop runs workloads only, and not all of them); "" if it can run it.
std::string executor_refusal(const Scenario& scenario, Executor executor);

// parse_expect: the "expect" object, one entry per variant. In a sweep file (`sweep` set) each
// entry is an object keyed by every sweep value, and the entries of the point being parsed are
// returned. `resource` says whether a top-level "resource" exists.
std::map<std::string, Expectation> parse_expect(const JsonReader& node,
                                                const std::vector<std::string>& variants,
                                                bool resource, const SweepContext* sweep);
nlohmann::json resolved_expect(const std::map<std::string, Expectation>& expect);

// parse_sweep: the "sweep" object of the file `root`, whose pointers (general form) it checks:
// each must name a number in the file, outside "sweep" itself.
Sweep parse_sweep(const JsonReader& root);
// sweep_point_document: `document` with every pointer of the general form's `sweep.set` set to
// the value of point `index`.
nlohmann::json sweep_point_document(const nlohmann::json& document, const Sweep& sweep,
                                    std::size_t index);
// parse_sweep_point: the "sweep_point" a resolved sweep point carries.
SweepPoint parse_sweep_point(const JsonReader& node);
nlohmann::json resolved_sweep_point(const SweepPoint& point);

}  // namespace locksim::scenario_internal
