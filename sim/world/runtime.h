// runtime.h: Runtime, the world a run executes in: its clock, its threads, its connections and
// links, and what it supports (RuntimeTraits). The lowest room above the I/O types: the driver
// (sim/driver) and the simulator (sim/simulate) both include it, and neither includes the other.
//
// real_runtime() is the machine: CLOCK_MONOTONIC, OS threads, hiredis sockets. The simulator
// (sim/simulate) is another: a virtual clock, fibers run one at a time by a seeded scheduler, and
// connections to an in-memory Redis (sim/model) over links with seeded latency. The driver, the
// client and the nemesis take all of it from the run's Runtime (RunRequest::runtime), so the same
// code runs a scenario on either, and the checker cannot tell which. Where a runtime cannot do
// something, its traits() say so; nothing asks which runtime it is.
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

// RuntimeTraits: what a runtime supports beyond its clock, threads and connections.
struct RuntimeTraits {
  // client_processes: clients can run as processes of their own (`locksim worker`, adapters).
  bool client_processes = true;
  // event_loop: clients can run on one libevent loop over real sockets.
  bool event_loop = true;
  // servers_fail_alone: a server can be lost, hang or die without the run causing it (a
  // process outside the run's control): the driver watches it (PING) while the run goes on.
  bool servers_fail_alone = true;
  // servers_outlive_run: the servers are shared beyond the run: the keys it wrote are deleted
  // when it ends. False where every server is thrown away with the run.
  bool servers_outlive_run = true;
};

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
  // traits: what this runtime supports (RuntimeTraits).
  virtual RuntimeTraits traits() const { return {}; }

  // dial: a Dial that opens connections to `endpoint` in this runtime.
  Dial dial(Endpoint endpoint);
};

// real_runtime: the machine's clock, threads and hiredis connections. Lives for the program.
Runtime& real_runtime();

}  // namespace locksim
