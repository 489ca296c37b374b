// link_state.h: FaultState, the faults a link applies as it sees them: the
// partition, the one-shot faults armed for the next command, and the reply delay. A LinkProxy's
// is touched only by its loop thread (its controls post their change to that thread), a SimLink's
// (sim/simulate/sim_link.h) by the simulation's fibers, which run one at a time; so it needs no
// lock.
//
//   CommandFate fate = faults.next_command(now);  // consumes what was armed for this command
//   if (fate.held) { ... wait for release_held() or heal() ... }
//   Nanos due = faults.reply_due(now);            // when a reply completed now may be forwarded
//
// Instants are nanoseconds of the link's clock: real_clock() in a LinkProxy, the simulation's
// virtual clock in a SimLink.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "sim/core/clock.h"
#include "sim/core/random.h"
#include "sim/fault/link_fault.h"

namespace locksim {

class FaultState {
 public:
  // next_command: the fate of a command just received in full; the hold, delay or drop aimed
  // at it is used up, and the installed policy (if any) has its say too (merge).
  CommandFate next_command(Nanos now);
  // reply_due: when a reply completed at `now` may be forwarded (`now` without a reply delay).
  Nanos reply_due(Nanos now);

  // delay_replies: fixed plus uniform [0, jitter] for every reply from now on, drawn from a
  // stream seeded with `seed`; both 0 end it. Returns whether replies are delayed now.
  bool delay_replies(Nanos fixed_ns, Nanos jitter_ns, std::uint64_t seed);
  void delay_next_command(Nanos delay_ns);
  void hold_next_command();
  void drop_reply_of_next(int skip);
  void partition(PartitionMode mode) { partition_ = mode; }
  // set_policy: installs `policy` (null: none), whose command indices start again at 1.
  void set_policy(std::shared_ptr<CommandPolicy> policy);
  // heal: ends the partition and disarms a hold or delay not yet used; a drop stays armed.
  void heal();

  bool holding() const { return partition_ == PartitionMode::kHold; }
  bool resetting() const { return partition_ == PartitionMode::kReset; }

 private:
  enum class NextCommand { kNormal, kDelayed, kHeld };

  std::optional<PartitionMode> partition_;
  NextCommand next_command_ = NextCommand::kNormal;
  Nanos next_command_delay_ns_ = 0;
  int drop_countdown_ = -1;  // commands to let through before the one whose reply is dropped
  Nanos reply_delay_ns_ = 0;
  Nanos reply_jitter_ns_ = 0;
  Rng reply_rng_{0};
  std::shared_ptr<CommandPolicy> policy_;
  std::uint64_t policy_commands_ = 0;  // commands the policy has decided on
};

}  // namespace locksim
