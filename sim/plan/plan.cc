#include "sim/plan/plan.h"

#include "sim/core/assert.h"
#include "sim/core/random.h"

namespace locksim {
namespace {

// Random streams of a plan, forked from the run's seed so that adding one never shifts another.
constexpr std::uint64_t kClientStreams = 0x636c6e74;  // "clnt": client i's own stream is i
constexpr std::uint64_t kCycleStreams = 0x6379636c;   // "cycl": per-cycle draws
constexpr std::uint64_t kPhaseStream = 0x70686173;    // "phas": open-loop first due times
// "drwn": a drawn fault kind's own stream (DrawSlot::kOwnStream) is own_stream(kind) of this.
constexpr std::uint64_t kDrawnFaultStreams = 0x6472776e;
constexpr std::uint64_t kReadStreams = 0x72656164;  // "read": a cycle's read or write hold

}  // namespace

std::string workload_key(const std::string& lock_key, int keys, std::size_t client) {
  if (keys <= 1) return lock_key;
  const std::string index = "-" + std::to_string(client % static_cast<std::size_t>(keys));
  // A hash-tagged key ("{lock}") keeps the index inside its tag ("{lock-1}"): on a Redis Cluster
  // the keys then spread over the slots, while each key's own keys ("{lock-1}:notify") share one.
  if (lock_key.size() > 2 && lock_key.front() == '{' && lock_key.find('}') == lock_key.size() - 1) {
    return lock_key.substr(0, lock_key.size() - 1) + index + "}";
  }
  return lock_key + index;
}

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
    client.key = workload_key(scenario.lock.key, workload != nullptr ? workload->keys : 1, i);
    // Open loop: acquires fall due every interval from a random phase, so clients do not start
    // in lockstep.
    if (open_loop) client.first_due_ns = phases.uniform(0, interval_ns);
    clients_.push_back(std::move(client));
  }
}

CyclePlan Plan::cycle(std::size_t client, std::int64_t n) const {
  const Workload& workload = *scenario_->workload;
  const std::vector<std::shared_ptr<const DrawnFault>>& faults = workload.drawn_faults;
  LOCKSIM_ASSERT(faults.size() <= kMaxDrawnFaultKinds);
  const auto cycle_stream = static_cast<std::uint64_t>(n);
  Rng rng = Rng(seed_).fork(kCycleStreams).fork(client).fork(cycle_stream);
  CyclePlan cycle;
  // Every draw is made whether or not it is used, so one probability never shifts another's. The
  // first drawn fault kinds draw from the cycle's stream around the work and the rest, where they
  // always have (the same seed gives the same cycles); a later kind from a stream of its own.
  const auto draw_slot = [&](DrawSlot slot) {
    for (std::size_t i = 0; i < faults.size(); ++i) {
      if (faults[i]->type().slot == slot) cycle.drawn[i] = faults[i]->draw(rng);
    }
  };
  draw_slot(DrawSlot::kBeforeWork);
  cycle.work_ms = draw_ms(rng, workload.work_ms);
  draw_slot(DrawSlot::kBeforeRest);
  cycle.rest_ms = draw_ms(rng, workload.rest_ms);
  draw_slot(DrawSlot::kAfterRest);
  for (std::size_t i = 0; i < faults.size(); ++i) {
    const DrawnFaultType& type = faults[i]->type();
    if (type.slot != DrawSlot::kOwnStream) continue;
    Rng own =
        Rng(seed_).fork(kDrawnFaultStreams).fork(own_stream(type)).fork(client).fork(cycle_stream);
    cycle.drawn[i] = faults[i]->draw(own);
  }
  if (workload.read_share > 0) {
    Rng reads = Rng(seed_).fork(kReadStreams).fork(client).fork(cycle_stream);
    cycle.read = reads.chance(workload.read_share);
  }
  // A kind drawn instead of the work (a lost iteration) leaves no room inside for another: the
  // cycle keeps no draw of a kind beside the work, nor of a second kind instead of it.
  std::size_t instead = 0;
  while (instead < faults.size() &&
         (cycle.drawn[instead] == 0 || faults[instead]->type().work_role != WorkRole::kInstead)) {
    ++instead;
  }
  for (std::size_t i = 0; instead < faults.size() && i < faults.size(); ++i) {
    if (i != instead && faults[i]->type().work_role != WorkRole::kNone) cycle.drawn[i] = 0;
  }
  return cycle;
}

Plan compile_plan(const Scenario& scenario, std::uint64_t seed) {
  return Plan(scenario, seed);
}

}  // namespace locksim
