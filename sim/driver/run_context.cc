#include "sim/driver/run_context.h"

#include <algorithm>
#include <cstdio>

namespace locksim::driver_internal {
namespace {

std::vector<std::string> with_harness(std::vector<std::string> names) {
  names.emplace_back(kHarnessClient);
  return names;
}

}  // namespace

RunContext::RunContext(const RunRequest& request, std::vector<std::string> client_names)
    : inside(client_names.size(), false),
      crashed(client_names.size(), false),
      renewals(client_names.size(), 0),
      waiting(client_names.size(), false),
      request_(request),
      deadline_ns_(ms_to_ns(request.scenario.time_limit_ms)),
      recorder_(clock_, with_harness(std::move(client_names))) {
  step_started.assign(request.scenario.steps.size(), false);
  step_finished.assign(request.scenario.steps.size(), false);
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
  return request_.stop.requested() || timed_out() || server_lost.load();
}

bool RunContext::pause(Nanos duration) {
  const Nanos now = clock_.now_ns();
  if (now >= deadline_ns_) return false;
  const Nanos end = now + std::min(duration, deadline_ns_ - now);
  // Woken by every change of the run (a lost server among them); Ctrl-C, which sets a StopSignal
  // of its own, is noticed within 50 ms.
  std::unique_lock<std::mutex> lock(mutex);
  while (!should_stop()) {
    const Nanos left = end - clock_.now_ns();
    if (left <= 0) return true;
    changed.wait_for(lock, std::chrono::nanoseconds(std::min<Nanos>(left, ms_to_ns(50))));
  }
  return false;
}

void RunContext::note(const std::string& text) {
  char stamp[32];
  std::snprintf(stamp, sizeof stamp, "%.1f ms: ", ns_to_ms(clock_.now_ns()));
  std::lock_guard<std::mutex> lock(notes_mutex_);
  notes_.push_back(stamp + text);
}

std::vector<std::string> RunContext::take_notes() {
  std::lock_guard<std::mutex> lock(notes_mutex_);
  return std::move(notes_);
}

}  // namespace locksim::driver_internal
