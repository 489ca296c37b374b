#include "sim/run/run_context.h"

#include <algorithm>
#include <cstdio>

#include "sim/core/assert.h"
#include "sim/lock/variant.h"
#include "sim/redis/cluster_connection.h"
#include "sim/topology/topology.h"

namespace locksim {
namespace {

// with_harness: the plan's clients, then the harness's and the nemesis's reserved names.
std::vector<std::string> with_harness(const Plan& plan) {
  std::vector<std::string> names;
  names.reserve(plan.clients().size() + 2);
  for (const ClientPlan& client : plan.clients()) names.push_back(client.name);
  names.emplace_back(kHarnessClient);
  names.emplace_back(kNemesisClient);
  return names;
}

}  // namespace

RunContext::RunContext(const RunRequest& request, const Plan& plan)
    : inside(plan.clients().size(), false),
      crashed(plan.clients().size(), false),
      renewals(plan.clients().size(), 0),
      waiting(plan.clients().size(), false),
      request_(request),
      runtime_(request.runtime != nullptr ? *request.runtime : real_runtime()),
      plan_(plan),
      clock_(runtime_.clock()),
      deadline_ns_(ms_to_ns(request.scenario.time_limit_ms)),
      recorder_(clock_, with_harness(plan)),
      nemesis_(recorder_.log(plan.clients().size() + 1)),
      link_endpoints_(plan.clients().size()) {
  step_started.assign(request.scenario.steps.size(), false);
  step_finished.assign(request.scenario.steps.size(), false);
  step_window_open.assign(request.scenario.steps.size(), false);
  step_client.reserve(request.scenario.steps.size());
  for (const Step& step : request.scenario.steps) {
    step_client.push_back(Step::server_action(step.action) ? request.scenario.clients.size()
                                                           : client_index(step.client));
  }
}

std::unique_ptr<Connection> RunContext::connect(const Endpoint& endpoint,
                                                const ConnectionOptions& options,
                                                ClientLog* redirects) const {
  const Topology* topology = request_.topology;
  if (topology == nullptr || !topology->cluster()) return runtime_.connect(endpoint, options);
  std::vector<Endpoint> seeds = {endpoint};
  for (const Endpoint& server : topology->endpoints()) {
    if (server.port != endpoint.port) seeds.push_back(server);
  }
  auto connection = std::make_unique<ClusterConnection>(
      std::move(seeds),
      [this, options](const Endpoint& node) { return runtime_.connect(node, options); });
  if (redirects != nullptr) {
    connection->on_redirect([redirects](const Redirection& redirection) {
      const StringId words = redirects->intern(describe(redirection));
      redirects->record(EventType::kInfo, Op::kRedirect, "").message = words;
    });
  }
  return connection;
}

std::size_t RunContext::server_count() const {
  return request_.topology != nullptr ? request_.topology->size() : 1;
}

Endpoint RunContext::link_endpoint(std::size_t client) const {
  return link_endpoint(client, request_.topology != nullptr ? request_.topology->primary() : 0);
}

Endpoint RunContext::link_endpoint(std::size_t client, std::size_t server) const {
  const std::vector<Endpoint>& links = link_endpoints_.at(client);
  if (!links.empty()) return links.at(server);
  if (request_.topology != nullptr) return request_.topology->endpoints().at(server);
  return request_.endpoint;
}

void RunContext::set_link_endpoints(std::size_t client, std::vector<Endpoint> endpoints) {
  LOCKSIM_ASSERT(endpoints.size() == server_count());
  link_endpoints_.at(client) = std::move(endpoints);
}

std::vector<std::size_t> RunContext::call_links() const {
  if (request_.topology == nullptr || request_.variant.multi_server()) return {};
  return {request_.topology->primary()};
}

std::string RunContext::full_key(const std::string& logical_key) const {
  return request_.key_prefix + logical_key;
}

std::size_t RunContext::client_index(const std::string& name) const {
  const auto& clients = request_.scenario.clients;
  return static_cast<std::size_t>(std::find(clients.begin(), clients.end(), name) -
                                  clients.begin());
}

bool RunContext::should_stop() const {
  return request_.stop.requested() || timed_out() || server_lost.load() || worker_failed.load() ||
         stopped_for_death.load();
}

void RunContext::fail_worker(const std::string& text) {
  {
    std::lock_guard<std::mutex> lock(failure_mutex_);
    if (!worker_failure_.empty()) return;
    worker_failure_ = text;
  }
  worker_failed = true;
  notify_stop();
}

std::string RunContext::worker_failure() const {
  std::lock_guard<std::mutex> lock(failure_mutex_);
  return worker_failure_;
}

bool RunContext::pause(Nanos duration) {
  const Nanos now = clock_.now_ns();
  if (now >= deadline_ns_) return false;
  const Nanos end = now + std::min(duration, deadline_ns_ - now);
  // Woken when the run must stop (notify_stop: a lost server, a failed worker); Ctrl-C, which sets
  // a StopSignal of its own, is noticed within 50 ms.
  std::unique_lock<std::mutex> lock(mutex);
  while (!should_stop()) {
    const Nanos left = end - clock_.now_ns();
    if (left <= 0) return true;
    clock_.base().pause(stop_changed, lock, std::min<Nanos>(left, ms_to_ns(50)));
  }
  return false;
}

void RunContext::note(const std::string& text) {
  char stamp[32];
  std::snprintf(stamp, sizeof stamp, "%.1f ms: ", ns_to_ms(clock_.now_ns()));
  std::lock_guard<std::mutex> lock(notes_mutex_);
  notes_.push_back(stamp + text);
}

void RunContext::add_note(std::string line) {
  std::lock_guard<std::mutex> lock(notes_mutex_);
  notes_.push_back(std::move(line));
}

std::vector<std::string> RunContext::take_notes() {
  std::lock_guard<std::mutex> lock(notes_mutex_);
  return std::move(notes_);
}

}  // namespace locksim
