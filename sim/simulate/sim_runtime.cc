#include "sim/simulate/sim_runtime.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>

#include "sim/core/assert.h"
#include "sim/core/error.h"
#include "sim/core/random.h"

namespace locksim {
namespace {

constexpr const char* kModelHost = "model";
constexpr const char* kLinkHost = "model-link";  // a client's SimLink to a model server

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

namespace {

SimTiming base_profile(std::uint64_t seed) {
  switch (seed % kTimingProfiles) {
    case 1:
      return {"fast machine", {5'000, 40'000}, 2'000, 20'000};
    case 2:
      return {"slow network", {200'000, 2'000'000}, 5'000, 50'000};
    case 3:
      return {"loaded machine", {20'000, 500'000}, 50'000, 1'000'000, 50, 15'000'000};
    default:
      return {};
  }
}

// speed_permille: how much slower (> 1000) or faster than its profile a seed's machine is, from
// 500 to 2000 per mille, drawn from the seed alone (splitmix64): two real machines of one kind
// never poll at quite the same period, and whichever of two waiters polls first after a key
// expires turns on that period (get_then_del's shrunk stale release: 1 of 2 real runs let the
// other waiter in, which 80 seeds of four fixed profiles never did).
std::int64_t speed_permille(std::uint64_t seed) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  // log-uniform: 1000 * 2^u, u in [-1, 1)
  const double u = static_cast<double>(z >> 11) / static_cast<double>(1ULL << 53) * 2.0 - 1.0;
  return static_cast<std::int64_t>(1000.0 * std::exp2(u));
}

}  // namespace

SimTiming timing_of(std::uint64_t seed) {
  SimTiming timing = base_profile(seed);
  const std::int64_t speed = speed_permille(seed);
  const auto scaled = [speed](Nanos ns) { return ns * speed / 1000; };
  timing.link.min_ns = scaled(timing.link.min_ns);
  timing.link.max_ns = scaled(timing.link.max_ns);
  timing.wake_min_ns = scaled(timing.wake_min_ns);
  timing.wake_max_ns = scaled(timing.wake_max_ns);
  return timing;
}

std::string describe(const SimTiming& timing) {
  // Appended in place (each simulated run notes it: concatenated temporaries cost a few thousand
  // instructions a schedule).
  std::string text;
  text.reserve(96);
  const auto us = [&text](Nanos ns) {
    char digits[24];
    const std::to_chars_result end = std::to_chars(digits, digits + sizeof digits, ns / 1000);
    text.append(digits, end.ptr);
  };
  text += timing.name;
  text += " (hops ";
  us(timing.link.min_ns);
  text += '-';
  us(timing.link.max_ns);
  text += " µs, wake-ups ";
  us(timing.wake_min_ns);
  text += '-';
  us(timing.wake_max_ns);
  text += " µs";
  if (timing.stall_one_in > 0) {
    text += ", 1 in ";
    text += std::to_string(timing.stall_one_in);
    text += " up to ";
    us(timing.stall_max_ns);
    text += " µs";
  }
  text += ')';
  return text;
}

SimRuntime::SimRuntime(Simulation& simulation, SimLinkLatency latency)
    : simulation_(simulation), latency_(latency), clock_(simulation), threads_(simulation) {}

SimRuntime::~SimRuntime() {
  for (const std::shared_ptr<SimServerHost>& host : hosts_) host->held.clear();
}

Endpoint SimRuntime::add_server(ModelServer& server) {
  servers_.push_back(&server);
  hosts_.push_back(std::make_shared<SimServerHost>());
  Endpoint endpoint;
  endpoint.host = kModelHost;
  endpoint.port = static_cast<int>(servers_.size());
  return endpoint;
}

std::shared_ptr<SimServerHost> SimRuntime::host(const Endpoint& endpoint) const {
  LOCKSIM_ASSERT(endpoint.host == kModelHost && endpoint.port >= 1 &&
                 static_cast<std::size_t>(endpoint.port) <= hosts_.size());
  return hosts_[static_cast<std::size_t>(endpoint.port) - 1];
}

std::unique_ptr<Link> SimRuntime::open_link(const Endpoint& upstream) {
  if (upstream.host != kModelHost || upstream.port < 1 ||
      static_cast<std::size_t>(upstream.port) > servers_.size()) {
    throw EnvironmentError("no simulated server at " + upstream.redacted());
  }
  Endpoint endpoint = upstream;
  endpoint.host = kLinkHost;
  endpoint.port = static_cast<int>(links_.size()) + 1;
  auto link =
      std::make_unique<SimLink>(simulation_, static_cast<std::size_t>(upstream.port) - 1, endpoint);
  links_.push_back(LinkEntry{link->server(), link->state()});
  return link;
}

std::unique_ptr<Connection> SimRuntime::connect(const Endpoint& endpoint,
                                                const ConnectionOptions& options) {
  if (endpoint.host == kLinkHost && endpoint.port >= 1 &&
      static_cast<std::size_t>(endpoint.port) <= links_.size()) {
    const LinkEntry& link = links_[static_cast<std::size_t>(endpoint.port) - 1];
    return std::make_unique<SimConnection>(simulation_, *servers_[link.server], endpoint, options,
                                           latency_, link.state, hosts_[link.server]);
  }
  if (endpoint.host != kModelHost || endpoint.port < 1 ||
      static_cast<std::size_t>(endpoint.port) > servers_.size()) {
    return std::make_unique<RefusedConnection>(endpoint);
  }
  const auto index = static_cast<std::size_t>(endpoint.port) - 1;
  return std::make_unique<SimConnection>(simulation_, *servers_[index], endpoint, options, latency_,
                                         nullptr, hosts_[index]);
}

}  // namespace locksim
