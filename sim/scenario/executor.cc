#include "sim/scenario/executor.h"

namespace locksim {

std::string_view to_string(Executor executor) {
  switch (executor) {
    case Executor::kThreads:
      return "threads";
    case Executor::kProcesses:
      return "processes";
    case Executor::kEventLoop:
      return "event_loop";
  }
  return "threads";
}

const std::vector<std::string>& executor_words() {
  static const std::vector<std::string> words = {"threads", "processes", "event_loop"};
  return words;
}

std::optional<Executor> executor_from(std::string_view word) {
  for (const Executor executor : {Executor::kThreads, Executor::kProcesses, Executor::kEventLoop}) {
    if (word == to_string(executor)) return executor;
  }
  return std::nullopt;
}

}  // namespace locksim
