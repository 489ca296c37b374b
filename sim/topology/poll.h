// poll.h: poll_until, how the topology waits for its servers to reach a state (a replica in sync,
// a cluster ok, an election done): asking again every 20 ms, bounded.
#pragma once

#include <chrono>
#include <functional>

#include "sim/core/clock.h"

namespace locksim {

// poll_until: polls `ready` every 20 ms for at most `limit` of the real clock; false if it never
// answered true.
inline bool poll_until(std::chrono::milliseconds limit, const std::function<bool()>& ready) {
  const Clock& clock = real_clock();
  const Nanos deadline = clock.now_ns() + ms_to_ns(limit.count());
  while (clock.now_ns() < deadline) {
    if (ready()) return true;
    clock.sleep_for(ms_to_ns(20));
  }
  return ready();
}

}  // namespace locksim
