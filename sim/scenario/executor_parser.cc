// What runs the clients: "clients_run_as", its deprecated alias "client_mode", and what each
// executor cannot run.
#include "sim/core/error.h"
#include "sim/scenario/loader.h"
#include "sim/scenario/scenario_parts.h"

namespace locksim {
namespace scenario_internal {
namespace {

// event_loop_refusal: "<path>: <why>" for the first part of `scenario` that one event loop cannot
// run; "" if it can run it all.
std::string event_loop_refusal(const Scenario& scenario) {
  const std::string why = " (\"clients_run_as\": \"event_loop\" runs every client on one loop)";
  if (scenario.scripted()) {
    return "$.steps: \"clients_run_as\": \"event_loop\" runs the clients of a workload only; run a "
           "scripted scenario on \"threads\" or \"processes\"";
  }
  for (const std::shared_ptr<const DrawnFault>& fault : scenario.workload->drawn_faults) {
    if (std::string refusal = fault->event_loop_refusal(why); !refusal.empty()) return refusal;
  }
  return "";
}

}  // namespace

Executor parse_executor(const JsonReader& root, const std::optional<JsonReader>& alias,
                        const std::vector<std::string>& alias_words,
                        std::vector<std::string>& notes) {
  const std::optional<JsonReader> run_as = root.optional_member("clients_run_as");
  const Executor given =
      run_as ? *executor_from(run_as->one_of(executor_words(), "way to run clients", "allowed"))
             : Executor::kThreads;
  if (!alias) return given;
  const std::string word = alias->one_of(alias_words, "client mode", "allowed");
  if (run_as && *executor_from(word) != given) {
    alias->fail("\"" + word + "\" conflicts with $.clients_run_as: \"" +
                std::string(to_string(given)) +
                "\"; \"client_mode\" is a deprecated spelling "
                "of \"clients_run_as\": give only \"clients_run_as\"");
  }
  notes.push_back(root.file() + ": " + alias->path() +
                  " is deprecated: write \"clients_run_as\": \"" + word +
                  "\" at the top level instead");
  return *executor_from(word);
}

std::string executor_refusal(const Scenario& scenario, Executor executor) {
  if (executor == Executor::kEventLoop) return event_loop_refusal(scenario);
  if (executor == Executor::kProcesses) return "";
  // A cancellation is the worker protocol's ("cancel_after_ms"), asked of a library's adapter.
  for (const Step& step : scenario.steps) {
    if (step.cancel_after_ms >= 0) {
      return step.json_path + ".cancel_after_ms: a cancellation is asked of a library's adapter, " +
             "in client processes only; write \"clients_run_as\": \"processes\"";
    }
  }
  return "";
}

}  // namespace scenario_internal

void run_clients_as(Scenario& scenario, Executor executor) {
  if (const std::string why = scenario_internal::executor_refusal(scenario, executor);
      !why.empty()) {
    throw InputError(scenario.file + ": " + why);
  }
  scenario.executor = executor;
  scenario.resolved["clients_run_as"] = std::string(to_string(executor));
}

}  // namespace locksim
