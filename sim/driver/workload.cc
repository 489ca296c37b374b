// Workloads: every client loops acquire -> work -> release -> rest with the timings and faults
// its plan decided for each cycle. A client that crashes (crash_probability per cycle) stays
// dead: its lock is left for the TTL (or forever) exactly as a dead process would leave it. The
// nemesis pauses a holder (pause_probability) or drops an acquire's reply
// (lost_reply_probability) where the plan says so.
#include "sim/driver/workload.h"

#include <algorithm>
#include <string>

#include "sim/driver/runners.h"

namespace locksim::driver_internal {

Task<void> workload_client(RunContext& run, WorkloadHost& host, std::size_t index) {
  const Scenario& scenario = run.scenario();
  const Workload& workload = *scenario.workload;
  const ClientPlan& plan = run.plan().clients()[index];
  const std::string& name = scenario.clients[index];
  const std::string& key = plan.key;
  // Time-bounded (contention studies): loop until the end of the measured window.
  const bool timed = workload.duration_ms > 0;
  const Nanos end_ns = ms_to_ns(workload.warmup_ms + workload.duration_ms);
  // Open loop: acquires fall due every interval from the plan's phase; a client behind schedule
  // acquires at once.
  const bool open_loop = workload.arrival_per_s > 0;
  const auto interval_ns = open_loop ? static_cast<Nanos>(1e9 / workload.arrival_per_s) : 0;
  Nanos due_ns = plan.first_due_ns;
  for (int cycle = 0; timed ? run.clock().now_ns() < end_ns : cycle < workload.cycles; ++cycle) {
    if (run.should_stop()) {
      run.stopped_early = true;
      co_return;
    }
    if (open_loop) {
      const Nanos now = run.clock().now_ns();
      if (due_ns > now) {
        const bool on_time = co_await host.sleep(due_ns - now);
        if (!on_time) {
          run.stopped_early = true;
          co_return;
        }
      }
      if (timed && due_ns >= end_ns) co_return;
    }
    const CyclePlan next = run.plan().cycle(index, cycle);
    if (next.lose_acquire_reply) host.lose_next_reply();
    const AcquireStatus status =
        co_await host.acquire(key, scenario.lock.acquire_timeout_ms, due_ns);
    if (open_loop) due_ns += interval_ns;
    if (status == AcquireStatus::kStopped) {
      run.stopped_early = true;
      co_return;
    }
    if (status == AcquireStatus::kAcquired) {
      const bool resource = scenario.resource.kind != ResourceConfig::Kind::kNone;
      const std::string record_id = std::to_string(cycle % std::max(1, scenario.resource.ids));
      if (resource) host.resource_read(record_id);
      if (next.lose) {
        // Doc D's lost iteration: stop renewing and stay inside well past the TTL.
        host.lose_lock();
        co_await host.sleep(ms_to_ns(workload.lose_sleep_ms > 0 ? workload.lose_sleep_ms
                                                                : 3 * scenario.lock.ttl_ms));
      } else {
        host.record_work(next.work_ms + next.pause_ms);
        if (next.pause_ms > 0) {
          // A stall of the holder (GC, VM): its renewal stops too.
          host.pause_holder();
          co_await host.sleep(ms_to_ns(next.pause_ms));
          host.resume_holder();
        }
        if (next.work_ms > 0) co_await host.sleep(ms_to_ns(next.work_ms));
      }
      if (resource) host.resource_write(record_id);
      if (next.crash) {
        host.crash();
        run.note(name + " crashed inside the critical section (cycle " +
                 std::to_string(cycle + 1) + ")");
        if (!timed) run.cycles_done += workload.cycles - cycle;
        co_return;
      }
      co_await host.release();
    } else if (next.lose_acquire_reply && status == AcquireStatus::kIndeterminate) {
      // The client never heard whether it got the lock: like a process that gave up on the call,
      // it goes on without it (the lock, if it was taken, is left for its TTL).
      run.note(name + ": the reply of its acquire was lost (cycle " + std::to_string(cycle + 1) +
               ")");
    }
    run.cycles_done += 1;
    if (open_loop) continue;  // the schedule, not a rest, decides when the next acquire is due
    if (next.rest_ms > 0) co_await host.sleep(ms_to_ns(next.rest_ms));
  }
}

Task<AcquireStatus> BlockingWorkloadHost::acquire(std::string logical_key, std::int64_t timeout_ms,
                                                  Nanos intended_ns) {
  co_return client_.acquire(logical_key, timeout_ms, nullptr, intended_ns);
}

Task<bool> BlockingWorkloadHost::release() { co_return client_.release(); }

void BlockingWorkloadHost::lose_next_reply() {
  run_.nemesis().lose_next_reply(static_cast<std::size_t>(client_.index()), run_.call_links());
}

void BlockingWorkloadHost::pause_holder() {
  run_.nemesis().pause(static_cast<std::size_t>(client_.index()));
}

void BlockingWorkloadHost::resume_holder() {
  run_.nemesis().resume(static_cast<std::size_t>(client_.index()));
}

void run_workload_client(RunContext& run, DriverClient& client) {
  if (client.runs_own_workload()) {
    client.run_own_workload();
    return;
  }
  BlockingWorkloadHost host(run, client);
  run_inline(workload_client(run, host, static_cast<std::size_t>(client.index())));
}

}  // namespace locksim::driver_internal
