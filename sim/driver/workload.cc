// Workloads: every client loops acquire -> work -> release -> rest with the timings and faults
// its plan decided for each cycle. A client that crashes (crash_probability per cycle) stays
// dead: its lock is left for the TTL (or forever) exactly as a dead process would leave it. The
// nemesis pauses a holder (pause_probability) or drops an acquire's reply
// (lost_reply_probability) where the plan says so.
#include <algorithm>
#include <string>

#include "sim/driver/runners.h"

namespace locksim::driver_internal {

void run_workload_client(RunContext& run, DriverClient& client) {
  const Scenario& scenario = run.scenario();
  const Workload& workload = *scenario.workload;
  const auto index = static_cast<std::size_t>(client.index());
  const ClientPlan& plan = run.plan().clients()[index];
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
      return;
    }
    if (open_loop) {
      const Nanos now = run.clock().now_ns();
      if (due_ns > now && !run.pause(due_ns - now)) {
        run.stopped_early = true;
        return;
      }
      if (timed && due_ns >= end_ns) return;
    }
    const CyclePlan next = run.plan().cycle(index, cycle);
    if (next.lose_acquire_reply) run.nemesis().lose_next_reply(index, run.call_links());
    const AcquireStatus status =
        client.acquire(key, scenario.lock.acquire_timeout_ms, nullptr, due_ns);
    if (open_loop) due_ns += interval_ns;
    if (status == AcquireStatus::kStopped) {
      run.stopped_early = true;
      return;
    }
    if (status == AcquireStatus::kAcquired) {
      const bool resource = scenario.resource.kind != ResourceConfig::Kind::kNone;
      const std::string record_id = std::to_string(cycle % std::max(1, scenario.resource.ids));
      if (resource) client.resource_read(record_id);
      if (next.lose) {
        // Doc D's lost iteration: stop renewing and stay inside well past the TTL.
        client.lose_lock();
        run.pause(ms_to_ns(workload.lose_sleep_ms > 0 ? workload.lose_sleep_ms
                                                      : 3 * scenario.lock.ttl_ms));
      } else {
        client.record_work(next.work_ms + next.pause_ms);
        if (next.pause_ms > 0) {
          // A stall of the holder (GC, VM): its renewal stops too.
          run.nemesis().pause(index);
          run.pause(ms_to_ns(next.pause_ms));
          run.nemesis().resume(index);
        }
        run.pause(ms_to_ns(next.work_ms));
      }
      if (resource) client.resource_write(record_id);
      if (next.crash) {
        client.crash();
        run.note(client.name() + " crashed inside the critical section (cycle " +
                 std::to_string(cycle + 1) + ")");
        if (!timed) run.cycles_done += workload.cycles - cycle;
        return;
      }
      client.release();
    } else if (next.lose_acquire_reply && status == AcquireStatus::kIndeterminate) {
      // The client never heard whether it got the lock: like a process that gave up on the call,
      // it goes on without it (the lock, if it was taken, is left for its TTL).
      run.note(client.name() + ": the reply of its acquire was lost (cycle " +
               std::to_string(cycle + 1) + ")");
    }
    run.cycles_done += 1;
    if (open_loop) continue;  // the schedule, not a rest, decides when the next acquire is due
    if (next.rest_ms > 0) run.pause(ms_to_ns(next.rest_ms));
  }
}

}  // namespace locksim::driver_internal
