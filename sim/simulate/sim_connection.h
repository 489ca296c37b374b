// sim_connection.h: SimConnection, a Connection (sim/redis/connection.h) to a ModelServer
// (sim/model) across a simulated link: a command reaches the server after a one-way latency
// drawn from the simulation's seed, runs there at that virtual instant, and its reply travels
// back the same way, while the calling fiber waits.
//
// A link keeps order in each direction (as TCP does). A reply that does not come within the
// connection's command timeout is a timeout, as with hiredis: the connection is broken from
// then on (reconnect() opens a new one), and the command may still run on the server later. A
// server restart closes the connection (kClosed at the next command). A reply nesting arrays
// deeper than hiredis reads (8 levels) is hiredis's protocol error, and breaks the connection
// (the command ran). Through a SimLink, the
// link's faults apply (a held, delayed or lost command, a lost reply, a partition). Call it from
// a fiber of the Simulation only.
//
//   SimConnection c(sim, server, endpoint, ConnectionOptions{}, SimLinkLatency{});
//   RedisResult r = c.command({"SET", "k", "v", "NX", "PX", "100"});  // the fiber waits ~2 hops
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "sim/core/clock.h"
#include "sim/model/model_server.h"
#include "sim/redis/connection.h"
#include "sim/simulate/sim_link.h"
#include "sim/simulate/simulation.h"

namespace locksim {

// SimLinkLatency: the one-way latency of every message on a simulated link: a uniform draw in
// [min_ns, max_ns] from the simulation's seed (loopback-like by default).
struct SimLinkLatency {
  Nanos min_ns = 20'000;
  Nanos max_ns = 200'000;
};

// SimServerHost: what the simulator's topology (sim_topology.h) does to a model server besides its
// data: down (killed: its connections are closed, new ones refused, until it restarts) and paused
// (a SIGSTOP: commands that arrive wait, in order, until it resumes, then run).
struct SimServerHost {
  bool down = false;
  bool paused = false;
  std::uint64_t epoch = 0;                  // kills so far: a connection made before is closed
  std::vector<std::function<void()>> held;  // what arrived while paused, in order
};

class SimConnection final : public Connection {
 public:
  // Connects at once (no latency: set-up is not part of a run's schedule).
  // `link`: the SimLink it goes through (its faults apply), or null for a direct one; `host`:
  // the server's host state (down, paused), or null for a server that is always up.
  SimConnection(Simulation& simulation, ModelServer& server, Endpoint endpoint,
                ConnectionOptions options, SimLinkLatency latency,
                std::shared_ptr<SimLinkState> link = nullptr,
                std::shared_ptr<SimServerHost> host = nullptr);
  ~SimConnection() override;
  SimConnection(const SimConnection&) = delete;
  SimConnection& operator=(const SimConnection&) = delete;

  using Connection::command;
  RedisResult command(std::span<const std::string_view> args) override;
  // next_message: a pushed message (pushes take no latency), looked for every millisecond of
  // virtual time until `timeout_ns` has passed.
  std::optional<RedisResult> next_message(std::int64_t timeout_ns) override;
  bool broken() const override { return broken_; }
  const RedisResult& last_error() const override { return last_error_; }
  RedisResult reconnect() override;
  void close() override;
  const Endpoint& endpoint() const override { return endpoint_; }
  std::uint64_t round_trips() const override { return round_trips_; }

  struct Route;   // what the connection's commands in flight share with it (sim_connection.cc)
  struct Flight;  // a command in flight (sim_connection.cc)

 private:
  bool check_open();
  void fail(RedisErrorKind kind, std::string message);

  Simulation& simulation_;
  ModelServer& server_;
  Endpoint endpoint_;
  ConnectionOptions options_;
  ModelClientId client_ = 0;
  std::uint64_t generation_ = 0;
  bool broken_ = true;
  RedisResult last_error_;
  std::uint64_t round_trips_ = 0;
  std::shared_ptr<SimLinkState> link_;
  std::uint64_t resets_ = 0;  // the link's resets when this connection was made
  std::shared_ptr<SimServerHost> host_;
  std::uint64_t host_epoch_ = 0;  // the host's kills when this connection was made
  // The link, the host, the latency and each direction's order, shared with the flights.
  std::shared_ptr<Route> route_;
};

}  // namespace locksim
