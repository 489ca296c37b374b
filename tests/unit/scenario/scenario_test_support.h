// scenario_test_support.h: what the scenario tests share: documents to edit, error-message helpers.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/scenario/loader.h"

namespace locksim::test {

using nlohmann::json;

inline const std::vector<std::string> kVariants = {"naive", "set_nx_ex", "lua_owner"};
inline constexpr const char* kFile = "scenarios/test.json";

// A scripted scenario using every step action and condition kind.
inline json scripted_document() {
  return json::parse(R"({
    "name": "lease-expires-during-work",
    "description": "A works past its TTL; B gets in.",
    "source": {"doc": "A", "claim": "A lock without fencing lets two clients in."},
    "variants": ["naive", "lua_owner"],
    "lock": {"key": "orders:lock", "ttl_ms": 200, "wait": {"interval_ms": 200}},
    "clients": ["A", "B"],
    "steps": [
      {"id": "a-in", "client": "A", "do": "acquire", "timeout_ms": 0},
      {"client": "A", "do": "work", "until": [{"key_absent": "orders:lock"}, {"inside": "B"}],
       "max_ms": 1000},
      {"client": "B", "do": "acquire", "wait_for": {"done": "a-in"}, "wait_max_ms": 50},
      {"client": "B", "do": "work", "work_ms": 30},
      {"client": "A", "do": "release"},
      {"client": "B", "do": "sleep", "sleep_ms": 5, "wait_for": [{"crashed": "A"}]},
      {"client": "A", "do": "crash"}
    ],
    "expect": {
      "naive": {"verdict": "mutex_violation", "causes": ["lease_expired", "stale_release"]},
      "lua_owner": "mutex_violation"
    }
  })");
}

inline json workload_document() {
  return json::parse(R"({
    "name": "contention-8",
    "source": {"doc": "none", "claim": "Eight clients share one key."},
    "variants": ["set_nx_ex"],
    "workload": {"clients": 8, "keys": 2, "work_ms": {"min": 1, "max": 5}, "rest_ms": 3,
                 "crash_probability": 0.25},
    "expect": {"set_nx_ex": "ok"}
  })");
}

// drawn_keys: the keys every drawn fault kind of `workload` writes, with their values: what the
// settings hold ({"lose_sleep_ms": 3000, "pause_ms": {"min": 10, "max": 10}, ...}).
inline json drawn_keys(const Workload& workload) {
  json keys = json::object();
  for (const auto& fault : workload.drawn_faults) fault->write(keys);
  return keys;
}

// Returns the InputError message for `document`, or "" (and a test failure) if it loaded.
inline std::string error_for(const json& document) {
  try {
    parse_scenario(document, kFile, kVariants);
  } catch (const InputError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no InputError for " << document.dump();
  return "";
}

// Expects `message` to contain each of `parts`.
inline void expect_contains(const std::string& message, std::initializer_list<std::string> parts) {
  for (const std::string& part : parts) {
    EXPECT_NE(message.find(part), std::string::npos)
        << "message: " << message << "\nmissing: " << part;
  }
}

// Applies `edit` to a copy of `document` and returns the resulting error message.
inline std::string error_after(json document, const std::function<void(json&)>& edit) {
  edit(document);
  return error_for(document);
}

// A scripted scenario over a protected resource, reading and writing it inside the lock.
inline json resource_document(const char* resource) {
  json document = scripted_document();
  document["resource"] = json::parse(resource);
  document["steps"] = json::parse(R"([
    {"client": "A", "do": "acquire"},
    {"client": "A", "do": "read"},
    {"client": "A", "do": "write"},
    {"client": "A", "do": "release"},
    {"client": "B", "do": "acquire"},
    {"client": "B", "do": "release"}
  ])");
  return document;
}

// A TTL/work sweep over a workload with a mean work time of 100 ms.
inline json sweep_document() {
  return json::parse(R"({
    "name": "doc-e-ttl-ratio",
    "source": {"doc": "E", "claim": "A lease shorter than the work lets two clients in."},
    "variants": ["naive", "lua_owner"],
    "lock": {"wait": {"strategy": "backoff", "initial_ms": 5, "max_ms": 50}},
    "workload": {"clients": 3, "cycles": 20, "work_ms": {"min": 80, "max": 120}},
    "sweep": {"ttl_over_work": [0.5, 2, 30]},
    "expect": {
      "naive": {"0.5": "mutex_violation", "2": "any", "30": "ok"},
      "lua_owner": {"0.5": {"verdict": "mutex_violation", "causes": ["lease_expired"]},
                    "2": "any", "30": {"verdict": "ok", "max_violations_outside_faults": 0}}
    }
  })");
}

inline std::vector<Scenario> expand(const json& document) {
  return parse_scenarios(document, kFile, kVariants);
}

// Returns the InputError message for expanding `document`, or "" (and a test failure).
inline std::string sweep_error_after(const std::function<void(json&)>& edit) {
  json document = sweep_document();
  edit(document);
  try {
    expand(document);
  } catch (const InputError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no InputError for " << document.dump();
  return "";
}

}  // namespace locksim::test
