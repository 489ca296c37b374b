// sim_link.h: SimLink, the simulator's Link (sim/proxy/link.h): one client's link to one model
// server that the nemesis faults, on virtual time. The same faults as the real LinkProxy, decided
// by the same FaultState (sim/fault/link_state.h) and policies: a held or delayed command, a lost
// reply, a lost command, a partition that holds every message until it heals or resets every
// connection.
//
// Its state is shared with the messages in flight (SimLinkState), which may outlive the link.
//
//   std::unique_ptr<Link> link = runtime.open_link(server_endpoint);  // a SimLink
//   link->drop_reply_of_next();
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "sim/fault/link_state.h"
#include "sim/proxy/link.h"
#include "sim/simulate/simulation.h"

namespace locksim {

// SimLinkState: what a link's connections and their messages in flight read and change.
struct SimLinkState {
  explicit SimLinkState(Simulation& sim) : simulation(sim) {}
  Simulation& simulation;
  FaultState faults;
  std::uint64_t resets = 0;  // reset partitions so far: a connection made before one is closed
  std::vector<std::function<void()>> held_commands;   // by hold_next_command or a policy
  std::vector<std::function<void()>> held_partition;  // messages a holding partition keeps
  // waiting: the fibers waiting for a reply on it, in ascending order (a reset wakes them so).
  // A sorted vector, not a set: every command through the link is in it while it waits, and a
  // set allocated a node for each.
  std::vector<Simulation::FiberId> waiting;

  // pass: `travel` goes now, or waits for heal() if the link is partitioned (holding). A callable
  // of any type: it becomes a std::function only if it is held (most messages go at once, and a
  // std::function of a lambda that holds a flight was an allocation per message).
  template <class Travel>
  void pass(Travel&& travel) {
    if (faults.holding()) {
      held_partition.emplace_back(std::forward<Travel>(travel));
    } else {
      travel();
    }
  }
  void release(std::vector<std::function<void()>>& held);
  // wait_for_reply, no_longer_waiting: `fiber` waits for a reply on the link, or does no more.
  void wait_for_reply(Simulation::FiberId fiber) {
    const auto it = std::lower_bound(waiting.begin(), waiting.end(), fiber);
    if (it == waiting.end() || *it != fiber) waiting.insert(it, fiber);
  }
  void no_longer_waiting(Simulation::FiberId fiber) {
    const auto it = std::lower_bound(waiting.begin(), waiting.end(), fiber);
    if (it != waiting.end() && *it == fiber) waiting.erase(it);
  }
};

class SimLink final : public Link {
 public:
  SimLink(Simulation& simulation, std::size_t server, Endpoint endpoint);
  // The messages it holds go with it: nothing can let them through any more, and each keeps the
  // link's state (which holds it) alive, a cycle that would outlive the run.
  ~SimLink() override;
  SimLink(const SimLink&) = delete;
  SimLink& operator=(const SimLink&) = delete;

  const Endpoint& endpoint() const override { return endpoint_; }
  void hold_next_command() override { state_->faults.hold_next_command(); }
  void release_held() override;
  void drop_reply_of_next(int skip = 0) override { state_->faults.drop_reply_of_next(skip); }
  void partition(PartitionMode mode) override;
  void heal() override;
  void set_command_policy(std::shared_ptr<CommandPolicy> policy) override {
    state_->faults.set_policy(std::move(policy));
  }

  std::size_t server() const { return server_; }
  const std::shared_ptr<SimLinkState>& state() const { return state_; }

 private:
  std::size_t server_;
  Endpoint endpoint_;
  std::shared_ptr<SimLinkState> state_;
};

}  // namespace locksim
