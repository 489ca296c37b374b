// error.h: the two exception types that cross module boundaries.
//
// InputError is bad user input (a scenario file, a flag, a URL): its message names the file, the
// JSON path and what was expected. `locksim` exits 2 on it.
// EnvironmentError is a harness or environment failure (redis-server missing, Redis unreachable,
// a report directory that cannot be written). `locksim` exits 3 on it.
//
//   throw InputError("scenarios/x.json: $.lock.ttl_ms: expected a duration in ms >= 1, got -5");
#pragma once

#include <stdexcept>
#include <string>

namespace locksim {

// InputError: the user gave something locksim cannot use. Exit code 2.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

// EnvironmentError: the machine or a server did not do what locksim needs. Exit code 3.
class EnvironmentError : public std::runtime_error {
 public:
  explicit EnvironmentError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace locksim
