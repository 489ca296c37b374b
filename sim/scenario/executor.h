// executor.h: Executor, what runs a scenario's clients ("clients_run_as" in JSON).
//
// The executor only carries out the run's plan (sim/plan): the same seed means the same clients,
// cycles and draws on each of them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace locksim {

enum class Executor {
  kThreads,    // "threads": a thread and a blocking connection per client, inside locksim
  kProcesses,  // "processes": a `locksim worker` process per client behind the worker protocol
  kEventLoop,  // "event_loop": every client on one libevent loop (workloads only)
};

// to_string: the JSON word of `executor`.
std::string_view to_string(Executor executor);
// executor_words: the JSON word of every executor, in the order messages list them.
const std::vector<std::string>& executor_words();
// executor_from: the executor a JSON word names; nullopt for any other word.
std::optional<Executor> executor_from(std::string_view word);

}  // namespace locksim
