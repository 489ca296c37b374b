// workload.h (internal to driver/): the workload client, written once for every host: it loops
// acquire -> work -> release -> rest with the timings and drawn faults its plan decided for each
// cycle.
//
// The loop is a coroutine over a WorkloadHost. A blocking host (BlockingWorkloadHost below: a
// DriverClient on its own thread, the client inside locksim or in its worker process) answers
// every call on the spot and runs the loop with run_inline(); the event loop's host (LoopClient,
// event_loop.cc) answers when a reply or a timer arrives, so one thread drives all its clients.
// Either way the same plan gives the same decisions.
//
//   BlockingWorkloadHost host(run, client);
//   run_inline(workload_client(run, host, client_index));
#pragma once

#include <cstddef>
#include <string>

#include "sim/core/task.h"
#include "sim/driver/client.h"
#include "sim/driver/run_context.h"
#include "sim/fault/drawn_fault.h"

namespace locksim::driver_internal {

// WorkloadHost: what the workload loop asks of the host of one client: the lock's calls and the
// resource here, and what a drawn fault's injection asks (sleep, crash, lose_lock,
// lose_next_reply, pause_holder, resume_holder, note) in DrawnFaultHost
// (sim/fault/drawn_fault.h).
class WorkloadHost : public DrawnFaultHost {
 public:
  // acquire, release: as DriverClient's (they record the events). The key is taken by value:
  // an acquire may suspend, and its frame keeps what it was given.
  virtual Task<AcquireStatus> acquire(std::string logical_key, std::int64_t timeout_ms,
                                      Nanos intended_ns) = 0;
  virtual Task<bool> release() = 0;
  virtual void record_work(std::int64_t planned_ms) = 0;

  // The resource of a workload; a host that cannot honour it, or a drawn fault, is refused
  // before the run (event_loop_refusal, executor_refusal).
  virtual void resource_read(const std::string& record_id) = 0;
  virtual void resource_write(const std::string& record_id) = 0;
};

// workload_client: client `index`'s whole workload on `host`.
Task<void> workload_client(RunContext& run, WorkloadHost& host, std::size_t index);

// BlockingWorkloadHost: a DriverClient as a WorkloadHost: every call returns when it is done.
class BlockingWorkloadHost final : public WorkloadHost {
 public:
  BlockingWorkloadHost(RunContext& run, DriverClient& client) : run_(run), client_(client) {}

  Task<AcquireStatus> acquire(std::string logical_key, std::int64_t timeout_ms,
                              Nanos intended_ns) override;
  Task<bool> release() override;
  Ask<bool> sleep(Nanos duration) override { return Ask<bool>(run_.pause(duration)); }
  void crash() override { client_.crash(); }
  void record_work(std::int64_t planned_ms) override { client_.record_work(planned_ms); }
  void resource_read(const std::string& record_id) override { client_.resource_read(record_id); }
  void resource_write(const std::string& record_id) override {
    client_.resource_write(record_id);
  }
  void lose_lock() override { client_.lose_lock(); }
  void lose_next_reply() override;
  void pause_holder() override;
  void resume_holder() override;
  void note(const std::string& line) override { run_.note(line); }

 private:
  RunContext& run_;
  DriverClient& client_;
};

}  // namespace locksim::driver_internal
