// workload.h: the workload client, written once for every host: it loops
// acquire -> work -> release -> rest with the timings and drawn faults its plan decided for each
// cycle.
//
// The loop is a coroutine over a WorkloadHost. A blocking host (BlockingWorkloadHost,
// sim/host/client.h: a DriverClient on its own thread, the client inside locksim or in its worker process) answers
// every call on the spot and runs the loop with run_inline(); the event loop's host (LoopClient,
// sim/host/event_loop.cc) answers when a reply or a timer arrives, so one thread drives all its clients.
// Either way the same plan gives the same decisions.
//
//   BlockingWorkloadHost host(run, client);
//   run_inline(workload_client(run, host, client_index));
#pragma once

#include <cstddef>
#include <string>

#include "sim/core/task.h"
#include "sim/client/record.h"
#include "sim/run/run_context.h"
#include "sim/fault/drawn_fault.h"

namespace locksim {

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
  // set_acquire_mode: what the next acquires ask for (a read-write lock's read or write hold).
  virtual void set_acquire_mode(LockMode mode) = 0;

  // The resource of a workload; a host that cannot honour it, or a drawn fault, is refused
  // before the run (event_loop_refusal, executor_refusal).
  virtual Task<void> resource_read(std::string record_id) = 0;
  virtual Task<void> resource_write(std::string record_id) = 0;
};

// workload_client: client `index`'s whole workload on `host`.
Task<void> workload_client(RunContext& run, WorkloadHost& host, std::size_t index);

}  // namespace locksim
