#include "sim/simulate/sim_runtime.h"

#include <utility>

#include "sim/core/assert.h"
#include "sim/core/random.h"

namespace locksim {
namespace {

constexpr const char* kModelHost = "model";
// kScheduleStream: the schedule's random stream (latencies, ties), forked from the run's seed so
// that it shifts none of the plan's draws.
constexpr std::uint64_t kScheduleStream = 0x7363686564;  // "sched"

// RefusedConnection: a connection to an endpoint with no simulated server behind it.
class RefusedConnection final : public Connection {
 public:
  explicit RefusedConnection(Endpoint endpoint)
      : endpoint_(std::move(endpoint)),
        error_{RedisErrorKind::kRefused,
               "Connection refused (no simulated server at " + endpoint_.redacted() + ")",
               {}} {}
  RedisResult command(std::span<const std::string_view>) override { return error_; }
  std::optional<RedisResult> next_message(std::int64_t) override { return error_; }
  bool broken() const override { return true; }
  const RedisResult& last_error() const override { return error_; }
  RedisResult reconnect() override { return error_; }
  void close() override {}
  const Endpoint& endpoint() const override { return endpoint_; }
  std::uint64_t round_trips() const override { return 0; }

 private:
  Endpoint endpoint_;
  RedisResult error_;
};

}  // namespace

SimRuntime::SimRuntime(Simulation& simulation, SimLinkLatency latency)
    : simulation_(simulation), latency_(latency), clock_(simulation), threads_(simulation) {}

Endpoint SimRuntime::add_server(ModelServer& server) {
  servers_.push_back(&server);
  Endpoint endpoint;
  endpoint.host = kModelHost;
  endpoint.port = static_cast<int>(servers_.size());
  return endpoint;
}

std::unique_ptr<Connection> SimRuntime::connect(const Endpoint& endpoint,
                                                const ConnectionOptions& options) {
  if (endpoint.host != kModelHost || endpoint.port < 1 ||
      static_cast<std::size_t>(endpoint.port) > servers_.size()) {
    return std::make_unique<RefusedConnection>(endpoint);
  }
  return std::make_unique<SimConnection>(simulation_,
                                         *servers_[static_cast<std::size_t>(endpoint.port) - 1],
                                         endpoint, options, latency_);
}

std::string simulator_refusal(const Scenario& scenario, const LockVariant& variant) {
  if (variant.name().rfind("lib:", 0) == 0) {
    return std::string(variant.name()) +
           " is a library: it runs only as its adapter's processes, on a real server";
  }
  if (scenario.executor == Executor::kProcesses) {
    return "its clients run as processes (clients_run_as \"processes\"); the simulator runs "
           "clients as fibers of one thread";
  }
  if (scenario.executor == Executor::kEventLoop) {
    return "its clients run on an event loop (clients_run_as \"event_loop\"); the simulator "
           "runs clients as fibers of one thread";
  }
  if (scenario.topology) {
    return "it runs on servers of its own (" + scenario.topology->name +
           " topology), which the simulator does not model yet";
  }
  if (scenario.link_faults()) {
    return "it faults client links (lost replies, delays, partitions), which the simulator does "
           "not model yet";
  }
  if (scenario.lock.wait.strategy == "notify") {
    return "its wait strategy \"notify\" blocks in BLPOP, which the model does not have";
  }
  return "";
}

SimulatedRun run_simulated(const Scenario& scenario, const LockVariant& variant, std::uint64_t seed,
                           StopSignal& stop, const std::string& key_prefix) {
  LOCKSIM_ASSERT(simulator_refusal(scenario, variant).empty());
  ModelServer server;
  Simulation simulation(Rng(seed).fork(kScheduleStream).next());
  SimRuntime runtime(simulation);
  const Endpoint endpoint = runtime.add_server(server);
  const RunRequest request{scenario,
                           variant,
                           seed,
                           endpoint,
                           key_prefix,
                           stop,
                           {},
                           /*private_server=*/true,
                           {},
                           {},
                           {},
                           nullptr,
                           &runtime};
  SimulatedRun run;
  simulation.spawn([&] { run.outcome = run_scenario(request); });
  simulation.run();
  run.events = simulation.events_run();
  run.virtual_ns = simulation.now();
  return run;
}

}  // namespace locksim
