// Workloads: every client loops acquire -> work -> release -> rest with timings drawn from its
// own seeded random stream. A client that crashes (crash_probability per cycle) stays dead: its
// lock is left for the TTL (or forever) exactly as a dead process would leave it.
#include <algorithm>
#include <string>

#include "sim/driver/runners.h"

namespace locksim::driver_internal {
namespace {

std::int64_t draw_ms(Rng& rng, const RangeMs& range) {
  return range.min_ms == range.max_ms ? range.min_ms : rng.uniform(range.min_ms, range.max_ms);
}

}  // namespace

void run_workload_client(RunContext& run, DriverClient& client) {
  const Scenario& scenario = run.scenario();
  const Workload& workload = *scenario.workload;
  const std::string key =
      workload.keys == 1 ? scenario.lock.key
                         : scenario.lock.key + "-" + std::to_string(client.index() % workload.keys);
  // Time-bounded (contention studies): loop until the end of the measured window.
  const bool timed = workload.duration_ms > 0;
  const Nanos end_ns = ms_to_ns(workload.warmup_ms + workload.duration_ms);
  // Open loop: acquires fall due every interval from a random phase, so clients do not start in
  // lockstep; a client behind schedule acquires at once.
  const bool open_loop = workload.arrival_per_s > 0;
  const auto interval_ns = open_loop ? static_cast<Nanos>(1e9 / workload.arrival_per_s) : 0;
  Nanos due_ns = open_loop ? static_cast<Nanos>(client.rng().uniform(0, interval_ns)) : -1;
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
      if (client.rng().chance(workload.lose_probability)) {
        // Doc D's lost iteration: stop renewing and stay inside well past the TTL.
        client.lose_lock();
        run.pause(ms_to_ns(workload.lose_sleep_ms > 0 ? workload.lose_sleep_ms
                                                      : 3 * scenario.lock.ttl_ms));
      } else {
        const std::int64_t work_ms = draw_ms(client.rng(), workload.work_ms);
        client.record_work(work_ms);
        run.pause(ms_to_ns(work_ms));
      }
      if (resource) client.resource_write(record_id);
      if (client.rng().chance(workload.crash_probability)) {
        client.crash();
        run.note(client.name() + " crashed inside the critical section (cycle " +
                 std::to_string(cycle + 1) + ")");
        if (!timed) run.cycles_done += workload.cycles - cycle;
        return;
      }
      client.release();
    }
    run.cycles_done += 1;
    if (open_loop) continue;  // the schedule, not a rest, decides when the next acquire is due
    const std::int64_t rest_ms = draw_ms(client.rng(), workload.rest_ms);
    if (rest_ms > 0) run.pause(ms_to_ns(rest_ms));
  }
}

}  // namespace locksim::driver_internal
