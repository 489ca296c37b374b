// runtime.h: Runtime, the world a run executes in: its clock, its threads and its connections.
//
// real_runtime() is the machine: CLOCK_MONOTONIC, OS threads, hiredis sockets. The simulator
// (sim/simulate) is another: a virtual clock, fibers run one at a time by a seeded scheduler, and
// connections to an in-memory Redis (sim/model) over links with seeded latency. The driver, the
// client and the nemesis take all three from the run's Runtime (RunRequest::runtime), so the same
// code runs a scenario on either, and the checker cannot tell which.
//
//   Runtime& world = request.runtime != nullptr ? *request.runtime : real_runtime();
//   std::unique_ptr<Connection> c = world.connect(endpoint, ConnectionOptions{});
//   Thread t(world.threads(), [&] { ... });
#pragma once

#include <memory>
#include <string>

#include "sim/core/clock.h"
#include "sim/core/threads.h"
#include "sim/proxy/link.h"
#include "sim/redis/connection.h"

namespace locksim {

class Runtime {
 public:
  virtual ~Runtime() = default;
  virtual const Clock& clock() const = 0;
  virtual Threads& threads() = 0;
  // connect: a new connection to `endpoint` (check broken() for a failed connect).
  virtual std::unique_ptr<Connection> connect(const Endpoint& endpoint,
                                              const ConnectionOptions& options) = 0;
  // open_link: a link to `upstream` that the nemesis can fault (sim/proxy/link.h); clients
  // connect to its endpoint(). Throws EnvironmentError if it cannot be opened.
  virtual std::unique_ptr<Link> open_link(const Endpoint& upstream) = 0;
  // simulated: the run is on the simulator (no processes, no proxies, no real servers).
  virtual bool simulated() const { return false; }

  // dial: a Dial that opens connections to `endpoint` in this runtime.
  Dial dial(Endpoint endpoint);
};

// real_runtime: the machine's clock, threads and hiredis connections. Lives for the program.
Runtime& real_runtime();

}  // namespace locksim
