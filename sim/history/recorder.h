// recorder.h: Recorder and ClientLog, the cheap, contention-free way events are recorded.
//
// Each client thread owns one ClientLog (a pre-reserved vector only that thread appends to), so
// recording never takes a lock and never makes clients wait on each other. After every client
// thread has been joined, Recorder::merge sorts all logs by time into one History.
//
//   Recorder recorder(clock, {"A", "B", "nemesis"});
//   ClientLog& log = recorder.log(0);               // only client A's thread uses this
//   Nanos t = log.record(EventType::kInvoke, Op::kAcquire, "lock");
//   History history = std::move(recorder).merge();  // after joining the threads
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/clock.h"
#include "sim/history/event.h"

namespace locksim {

// ClientLog: one client's append-only event buffer. Not thread-safe by design: one writer.
class ClientLog {
 public:
  ClientLog(const RunClock& clock, std::int32_t client, std::size_t reserve);

  // record: stamps the event with the current time and appends it; returns the timestamp.
  Nanos record(EventType type, Op f, std::string_view key);
  // record: appends a fully built event, stamping time_ns now; `event.client` is overwritten.
  Nanos record(Event event);
  // last: the most recently recorded event (to add fields); requires a non-empty log.
  Event& last();

  std::size_t size() const { return events_.size(); }
  std::vector<Event>& events() { return events_; }

 private:
  const RunClock& clock_;
  std::int32_t client_;
  std::vector<Event> events_;
};

// Recorder: the logs of one run. Construct before starting client threads; merge after joining.
class Recorder {
 public:
  Recorder(const RunClock& clock, std::vector<std::string> client_names,
           std::size_t reserve_per_client = 1024);

  ClientLog& log(std::size_t client) { return *logs_.at(client); }
  std::size_t client_count() const { return client_names_.size(); }
  // add_log: another log recording as `client`, for a second thread acting for that client (a
  // renewal thread). Call before the threads start; each log still has exactly one writer.
  ClientLog& add_log(std::size_t client, std::size_t reserve = 256);
  const RunClock& clock() const { return clock_; }

  // merge: all events sorted by time (ties keep per-client order), indexes assigned.
  History merge() &&;

 private:
  const RunClock& clock_;
  std::vector<std::string> client_names_;
  std::vector<std::unique_ptr<ClientLog>> logs_;
};

}  // namespace locksim
