#include "sim/plan/plan.h"

#include "sim/core/random.h"

namespace locksim {
namespace {

// Random streams of a plan, forked from the run's seed so that adding one never shifts another.
constexpr std::uint64_t kClientStreams = 0x636c6e74;  // "clnt": client i's own stream is i
constexpr std::uint64_t kCycleStreams = 0x6379636c;   // "cycl": per-cycle draws
constexpr std::uint64_t kPhaseStream = 0x70686173;    // "phas": open-loop first due times

std::int64_t draw_ms(Rng& rng, const RangeMs& range) {
  return range.min_ms == range.max_ms ? range.min_ms : rng.uniform(range.min_ms, range.max_ms);
}

}  // namespace

Plan::Plan(const Scenario& scenario, std::uint64_t seed)
    : scenario_(&scenario), seed_(seed), proxied_links_(scenario.link_faults()) {
  const Rng root(seed);
  Rng phases = root.fork(kPhaseStream);
  const Workload* workload = scenario.workload ? &*scenario.workload : nullptr;
  const bool open_loop = workload != nullptr && workload->arrival_per_s > 0;
  const auto interval_ns = open_loop ? static_cast<Nanos>(1e9 / workload->arrival_per_s) : 0;
  for (std::size_t i = 0; i < scenario.clients.size(); ++i) {
    ClientPlan client;
    client.name = scenario.clients[i];
    client.seed = root.fork(kClientStreams).fork(i).next();
    client.key = scenario.lock.key;
    if (workload != nullptr && workload->keys > 1) {
      client.key += "-" + std::to_string(i % static_cast<std::size_t>(workload->keys));
    }
    // Open loop: acquires fall due every interval from a random phase, so clients do not start
    // in lockstep.
    if (open_loop) client.first_due_ns = phases.uniform(0, interval_ns);
    clients_.push_back(std::move(client));
  }
}

CyclePlan Plan::cycle(std::size_t client, std::int64_t n) const {
  const Workload& workload = *scenario_->workload;
  Rng rng = Rng(seed_).fork(kCycleStreams).fork(client).fork(static_cast<std::uint64_t>(n));
  CyclePlan cycle;
  // Every draw is made whether or not it is used, so one probability never shifts another's.
  cycle.lose = rng.chance(workload.lose_probability);
  cycle.work_ms = draw_ms(rng, workload.work_ms);
  cycle.crash = rng.chance(workload.crash_probability);
  cycle.rest_ms = draw_ms(rng, workload.rest_ms);
  const bool pause = rng.chance(workload.pause_probability);
  const std::int64_t pause_ms = draw_ms(rng, workload.pause_ms);
  if (pause && !cycle.lose) cycle.pause_ms = pause_ms;
  cycle.lose_acquire_reply = rng.chance(workload.lost_reply_probability);
  return cycle;
}

Plan compile_plan(const Scenario& scenario, std::uint64_t seed) {
  return Plan(scenario, seed);
}

}  // namespace locksim
