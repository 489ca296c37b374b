#include "sim/fault/link_state.h"

#include <utility>

#include "sim/core/assert.h"

namespace locksim {

CommandFate FaultState::next_command(Nanos now) {
  CommandFate fate;
  fate.due = now;
  if (next_command_ == NextCommand::kHeld) fate.held = true;
  if (next_command_ == NextCommand::kDelayed) {
    fate.due = now + next_command_delay_ns_;
  }
  next_command_ = NextCommand::kNormal;
  if (drop_countdown_ >= 0) fate.drop_reply = drop_countdown_-- == 0;
  if (policy_ == nullptr) return fate;
  return merge(fate, policy_->next(++policy_commands_, now));
}

Nanos FaultState::reply_due(Nanos now) {
  if (reply_delay_ns_ == 0 && reply_jitter_ns_ == 0) return now;
  const Nanos jitter_ns = reply_jitter_ns_ > 0 ? reply_rng_.uniform(0, reply_jitter_ns_) : 0;
  return now + reply_delay_ns_ + jitter_ns;
}

bool FaultState::delay_replies(Nanos fixed_ns, Nanos jitter_ns, std::uint64_t seed) {
  LOCKSIM_ASSERT(fixed_ns >= 0 && jitter_ns >= 0);
  reply_delay_ns_ = fixed_ns;
  reply_jitter_ns_ = jitter_ns;
  reply_rng_ = Rng(seed);
  return fixed_ns > 0 || jitter_ns > 0;
}

void FaultState::delay_next_command(Nanos delay_ns) {
  LOCKSIM_ASSERT(delay_ns >= 0);
  next_command_ = NextCommand::kDelayed;
  next_command_delay_ns_ = delay_ns;
}

void FaultState::hold_next_command() { next_command_ = NextCommand::kHeld; }

void FaultState::drop_reply_of_next(int skip) {
  LOCKSIM_ASSERT(skip >= 0);
  drop_countdown_ = skip;
}

void FaultState::set_policy(std::shared_ptr<CommandPolicy> policy) {
  policy_ = std::move(policy);
  policy_commands_ = 0;
}

void FaultState::heal() {
  partition_.reset();
  next_command_ = NextCommand::kNormal;
}

}  // namespace locksim
