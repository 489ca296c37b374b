// client.h (internal to driver/): DriverClient, the Jepsen "client": one lock variant on one
// connection, with every call recorded in this client's log at the conservative points.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "sim/core/random.h"
#include "sim/driver/run_context.h"
#include "sim/driver/wait.h"
#include "sim/lock/variant.h"
#include "sim/redis/connection.h"

namespace locksim::driver_internal {

enum class AcquireStatus { kAcquired, kFailed, kIndeterminate, kStopped };

class DriverClient {
 public:
  DriverClient(RunContext& run, int index, std::uint64_t seed);

  // connect: opens the client's connection; returns an error description or "" on success.
  std::string connect();

  // acquire: attempts until acquired, the timeout passes (fail), an indeterminate error (info),
  // or the run stops. Records invoke and its completion; on success records enter right after.
  AcquireStatus acquire(const std::string& logical_key, std::int64_t timeout_ms);
  // release: records exit, then the release invoke and completion. Requires holding().
  void release();
  // crash: records the crash and closes the connection without releasing. The client is dead.
  void crash();
  // work: records a work event; the caller then waits (plain sleep or a condition).
  void record_work(std::int64_t planned_ms);

  bool holding() const { return holding_; }
  bool crashed() const { return crashed_; }
  const std::string& name() const { return name_; }
  int index() const { return index_; }
  Rng& rng() { return rng_; }
  // observer: a second connection for condition checks, never recorded (opened lazily).
  Connection& observer();

 private:
  void set_inside(bool inside);

  RunContext& run_;
  int index_;
  std::string name_;
  ClientLog& log_;
  Rng rng_;
  std::unique_ptr<WaitStrategy> wait_;
  std::optional<Connection> connection_;
  std::optional<Connection> observer_;
  bool holding_ = false;
  bool crashed_ = false;
  std::string held_key_;    // logical
  std::string held_token_;
};

}  // namespace locksim::driver_internal
