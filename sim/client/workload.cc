// Workloads: every client loops acquire -> work -> release -> rest with the timings and drawn
// faults its plan decided for each cycle. Each kind a cycle drew is asked at each point of the
// cycle (before the acquire, after an unanswered one, inside, before the release) and does its
// own injection through the host (sim/fault/drawn/<word>.cc): a crash ends the client, a lost
// iteration or a pause holds it inside, a lost reply is armed before the acquire.
#include "sim/client/workload.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>


namespace locksim {
namespace {

// drawn_cycle: kind i's view of the client's cycle, if the cycle drew it. (A function, not a
// lambda in workload_client: a lambda kept across a co_await is a field of the coroutine frame,
// and GCC warns about a field whose type has no linkage when this file is part of a unity build.)
std::optional<DrawnCycle> drawn_cycle(const CyclePlan& next, const std::string& client, int cycle,
                                      std::size_t i) {
  if (next.drawn[i] == 0) return std::nullopt;
  return DrawnCycle{.client = client, .cycle = cycle, .drawn = next.drawn[i]};
}

}  // namespace

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
  const std::vector<std::shared_ptr<const DrawnFault>>& faults = workload.drawn_faults;
  const bool read_write = run.request().variant.read_write();
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
    if (read_write) host.set_acquire_mode(next.read ? LockMode::kRead : LockMode::kExclusive);
    for (std::size_t i = 0; i < faults.size(); ++i) {
      if (const auto at = drawn_cycle(next, name, cycle, i)) faults[i]->before_acquire(host, *at);
    }
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
      if (resource) co_await host.resource_read(record_id);
      // The time inside: the work, unless a kind drawn instead of it takes its place (a lost
      // iteration); a kind beside it (a pause) runs first, and the work recorded includes it.
      bool works = true;
      std::int64_t planned_ms = next.work_ms;
      for (std::size_t i = 0; i < faults.size(); ++i) {
        if (next.drawn[i] == 0) continue;
        const WorkRole role = faults[i]->type().work_role;
        if (role == WorkRole::kInstead) works = false;
        if (role == WorkRole::kBeside) planned_ms += next.drawn[i];
      }
      if (works) host.record_work(planned_ms);
      for (std::size_t i = 0; i < faults.size(); ++i) {
        const auto at = drawn_cycle(next, name, cycle, i);
        if (at && faults[i]->type().work_role != WorkRole::kNone) {
          co_await faults[i]->inside(host, *at);
        }
      }
      if (works && next.work_ms > 0) co_await host.sleep(ms_to_ns(next.work_ms));
      if (resource) co_await host.resource_write(record_id);
      bool gone = false;
      for (std::size_t i = 0; i < faults.size() && !gone; ++i) {
        if (const auto at = drawn_cycle(next, name, cycle, i))
          gone = faults[i]->before_release(host, *at);
      }
      if (gone) {
        if (!timed) run.cycles_done += workload.cycles - cycle;
        co_return;
      }
      co_await host.release();
    } else if (status == AcquireStatus::kIndeterminate) {
      for (std::size_t i = 0; i < faults.size(); ++i) {
        if (const auto at = drawn_cycle(next, name, cycle, i))
          faults[i]->unanswered_acquire(host, *at);
      }
    }
    run.cycles_done += 1;
    if (open_loop) continue;  // the schedule, not a rest, decides when the next acquire is due
    if (next.rest_ms > 0) co_await host.sleep(ms_to_ns(next.rest_ms));
  }
}

}  // namespace locksim
