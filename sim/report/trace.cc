#include "sim/report/trace.h"

#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

namespace locksim {
namespace {

using Json = nlohmann::ordered_json;

double micros(Nanos ns) { return static_cast<double>(ns) / 1000.0; }

Json base(const char* phase, const std::string& name, int tid, Nanos ts) {
  Json j;
  j["ph"] = phase;
  j["name"] = name;
  j["pid"] = 1;
  j["tid"] = tid + 1;
  j["ts"] = micros(ts);
  return j;
}

}  // namespace

std::string trace_json(const History& history, const CheckResult& result,
                       const std::string& title) {
  Json events = Json::array();
  events.push_back(
      {{"ph", "M"}, {"name", "process_name"}, {"pid", 1}, {"args", {{"name", title}}}});
  for (std::size_t i = 0; i < history.clients.size(); ++i) {
    events.push_back({{"ph", "M"},
                      {"name", "thread_name"},
                      {"pid", 1},
                      {"tid", i + 1},
                      {"args", {{"name", history.clients[i]}}}});
  }

  // Calls: pair each invoke with its completion on the same client (one call at a time each).
  std::map<std::tuple<int, Op>, const Event*> open;
  for (const Event& e : history.events) {
    if (e.f != Op::kAcquire && e.f != Op::kRelease && e.f != Op::kExtend) {
      if (e.f == Op::kCrash || e.f == Op::kFault) {
        Json instant =
            base("i", e.f == Op::kCrash ? "crash" : "fault: " + e.token, e.client, e.time_ns);
        instant["s"] = "t";
        events.push_back(std::move(instant));
      }
      continue;
    }
    const auto slot = std::make_tuple(e.client, e.f);
    if (e.type == EventType::kInvoke) {
      open[slot] = &e;
      continue;
    }
    const auto it = open.find(slot);
    if (it == open.end()) continue;
    Json call = base("X", std::string(to_string(e.f)) + " " + std::string(to_string(e.type)),
                     e.client, it->second->time_ns);
    call["dur"] = micros(e.time_ns - it->second->time_ns);
    call["cat"] = "call";
    Json args{{"key", e.key}};
    if (e.count >= 0) args["count"] = e.count;
    if (!e.error.empty()) args["error"] = e.error;
    call["args"] = std::move(args);
    events.push_back(std::move(call));
    open.erase(it);
  }

  int id = 0;
  for (const HoldWindow& w : hold_windows(history)) {
    const std::string name =
        history.clients.at(static_cast<std::size_t>(w.client)) + " holds " + w.key;
    Json begin = base("b", name, w.client, w.start_ns);
    begin["cat"] = "hold";
    begin["id"] = ++id;
    begin["args"] = {{"ttl_ms", w.ttl_ms}};
    Json end = base("e", name, w.client, w.end_ns);
    end["cat"] = "hold";
    end["id"] = id;
    events.push_back(std::move(begin));
    events.push_back(std::move(end));
  }
  for (const MutexViolation& v : result.violations) {
    const Nanos start = v.later.start_ns;
    const std::string name = "VIOLATION " + v.cause;
    Json begin = base("b", name, v.later.client, start);
    begin["cat"] = "violation";
    begin["id"] = ++id;
    begin["args"] = {{"explanation", v.explanation}};
    Json end = base("e", name, v.later.client, start + v.overlap_ns);
    end["cat"] = "violation";
    end["id"] = id;
    events.push_back(std::move(begin));
    events.push_back(std::move(end));
  }
  Json document;
  document["traceEvents"] = std::move(events);
  document["displayTimeUnit"] = "ms";
  return document.dump();
}

}  // namespace locksim
