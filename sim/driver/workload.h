// workload.h (internal to driver/): the workload client, written once for every host: it loops
// acquire -> work -> release -> rest with the timings and faults its plan decided for each cycle.
//
// The loop is a coroutine over a WorkloadHost. A blocking host (a DriverClient on its own
// thread, the client inside locksim or its worker process) answers every call on the spot and
// runs the loop with run_inline(); the event-loop host answers when a reply or a timer arrives,
// so one thread drives all its clients. Either way the same plan gives the same decisions.
//
//   ThreadWorkloadHost host(run, client);
//   run_inline(workload_client(run, host, client_index));
#pragma once

#include <cstddef>
#include <string>

#include "sim/client/task.h"
#include "sim/driver/client.h"
#include "sim/driver/run_context.h"

namespace locksim::driver_internal {

// WorkloadHost: what the workload loop asks of the host of one client.
class WorkloadHost {
 public:
  virtual ~WorkloadHost() = default;

  // acquire, release: as DriverClient's (they record the events). The key is taken by value:
  // an acquire may suspend, and its frame keeps what it was given.
  virtual Task<AcquireStatus> acquire(std::string logical_key, std::int64_t timeout_ms,
                                      Nanos intended_ns) = 0;
  virtual Task<bool> release() = 0;
  // sleep: waits `duration` (the work, the rest, the open-loop schedule); false if the run's
  // stop cut it short.
  virtual Ask<bool> sleep(Nanos duration) = 0;
  // crash: the client dies inside the critical section; its connections close.
  virtual void crash() = 0;
  virtual void record_work(std::int64_t planned_ms) = 0;

  // The faults and the resource of a workload; a host that cannot honour them is refused
  // before the run (event_loop_refusal).
  virtual void resource_read(const std::string& record_id) = 0;
  virtual void resource_write(const std::string& record_id) = 0;
  virtual void lose_lock() = 0;
  virtual void lose_next_reply() = 0;
  virtual void pause_holder() = 0;
  virtual void resume_holder() = 0;
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

 private:
  RunContext& run_;
  DriverClient& client_;
};

}  // namespace locksim::driver_internal
