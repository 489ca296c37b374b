#include "sim/simulate/sim_link.h"

#include <utility>

namespace locksim {

void SimLinkState::release(std::vector<std::function<void()>>& held) {
  std::vector<std::function<void()>> going = std::exchange(held, {});
  for (auto& travel : going) pass(std::move(travel));
}

SimLink::SimLink(Simulation& simulation, std::size_t server, Endpoint endpoint)
    : server_(server),
      endpoint_(std::move(endpoint)),
      state_(std::make_shared<SimLinkState>(simulation)) {}

SimLink::~SimLink() {
  state_->held_commands.clear();
  state_->held_partition.clear();
}

void SimLink::release_held() { state_->release(state_->held_commands); }

void SimLink::partition(PartitionMode mode) {
  state_->faults.partition(mode);
  if (mode != PartitionMode::kReset) return;
  // Every connection through it is closed now: what it held is gone, and whoever waits for a
  // reply sees the connection closed at once.
  ++state_->resets;
  state_->held_commands.clear();
  state_->held_partition.clear();
  for (const Simulation::FiberId fiber : std::exchange(state_->waiting, {})) {
    state_->simulation.wake(fiber);
  }
}

void SimLink::heal() {
  state_->faults.heal();
  state_->release(state_->held_partition);
  state_->release(state_->held_commands);
}

}  // namespace locksim
