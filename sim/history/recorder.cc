#include "sim/history/recorder.h"

#include <algorithm>

#include "sim/core/assert.h"

namespace locksim {

ClientLog::ClientLog(const RunClock& clock, std::int32_t client, std::size_t reserve)
    : clock_(clock), client_(client) {
  events_.reserve(reserve);
}

Nanos ClientLog::record(EventType type, Op f, std::string_view key) {
  Event& event = events_.emplace_back();
  event.time_ns = clock_.now_ns();
  event.client = client_;
  event.type = type;
  event.f = f;
  event.key = key;
  return event.time_ns;
}

Nanos ClientLog::record(Event event) {
  event.time_ns = clock_.now_ns();
  event.client = client_;
  events_.push_back(std::move(event));
  return events_.back().time_ns;
}

Event& ClientLog::last() {
  LOCKSIM_ASSERT(!events_.empty());
  return events_.back();
}

Recorder::Recorder(const RunClock& clock, std::vector<std::string> client_names,
                   std::size_t reserve_per_client)
    : clock_(clock), client_names_(std::move(client_names)) {
  for (std::size_t i = 0; i < client_names_.size(); ++i) {
    logs_.push_back(
        std::make_unique<ClientLog>(clock_, static_cast<std::int32_t>(i), reserve_per_client));
  }
}

ClientLog& Recorder::add_log(std::size_t client, std::size_t reserve) {
  LOCKSIM_ASSERT(client < client_names_.size());
  logs_.push_back(std::make_unique<ClientLog>(clock_, static_cast<std::int32_t>(client), reserve));
  return *logs_.back();
}

History Recorder::merge() && {
  History history;
  history.clients = std::move(client_names_);
  std::size_t total = 0;
  for (const auto& log : logs_) total += log->size();
  history.events.reserve(total);
  for (auto& log : logs_) {
    for (auto& event : log->events()) history.events.push_back(std::move(event));
  }
  // Each log is already in time order; a stable sort keeps a client's own order on equal stamps.
  std::stable_sort(history.events.begin(), history.events.end(),
                   [](const Event& a, const Event& b) { return a.time_ns < b.time_ns; });
  for (std::size_t i = 0; i < history.events.size(); ++i) {
    history.events[i].index = static_cast<std::int64_t>(i);
  }
  return history;
}

}  // namespace locksim
