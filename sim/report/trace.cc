#include "sim/report/trace.h"

#include <vector>

#include "sim/core/atomic_file.h"
#include "sim/core/json_text.h"
#include "sim/fault/fault.h"

namespace locksim {
namespace {

double micros(Nanos ns) { return static_cast<double>(ns) / 1000.0; }

// TraceWriter: the traceEvents array, one object per event.
class TraceWriter {
 public:
  // TraceWriter: with a `sink`, the text goes to the file in pieces of about 1 MB, so a huge
  // trace is never held in memory whole.
  explicit TraceWriter(std::string& out, AtomicFile* sink = nullptr) : out_(out), sink_(sink) {
    out_ += "{\"traceEvents\":[";
  }

  // begin: an event object with the fields every event has; the caller adds more and closes it.
  // The previous object is closed by now, so this is where a full buffer goes to the sink.
  JsonObjectWriter begin(const char* phase, std::string_view name, int tid, Nanos ts) {
    if (sink_ != nullptr && out_.size() >= (1u << 20)) {
      sink_->write(out_);
      out_.clear();
    }
    if (!first_) out_ += ",\n";
    first_ = false;
    JsonObjectWriter event(out_);
    event.text("ph", phase);
    event.text("name", name);
    event.number("pid", 1);
    event.number("tid", tid);
    if (ts >= 0) event.real("ts", micros(ts));
    return event;
  }

  void finish(std::string_view note) {
    out_ += "],\"displayTimeUnit\":\"ms\"";
    if (!note.empty()) {
      out_ += ",\"otherData\":{\"note\":";
      append_json_string(out_, note);
      out_ += '}';
    }
    out_ += "}";
    if (sink_ != nullptr) {
      sink_->write(out_);
      out_.clear();
    }
  }

 private:
  std::string& out_;
  AtomicFile* sink_;
  bool first_ = true;
};

std::string args_json(std::initializer_list<std::pair<std::string_view, std::string>> fields) {
  std::string out;
  JsonObjectWriter args(out);
  for (const auto& [name, value] : fields) args.text(name, value);
  args.close();
  return out;
}


void emit_trace(TraceWriter& trace, const History& history, const CheckResult& result,
                const std::string& title) {
  // Tracks: tid 0 is the violations track, client i is tid i + 1.
  {
    JsonObjectWriter meta = trace.begin("M", "process_name", 0, -1);
    meta.raw("args", args_json({{"name", title}}));
    meta.close();
  }
  {
    JsonObjectWriter meta = trace.begin("M", "thread_name", 0, -1);
    meta.raw("args", args_json({{"name", "violations"}}));
    meta.close();
  }
  for (std::size_t i = 0; i < history.clients.size(); ++i) {
    JsonObjectWriter meta = trace.begin("M", "thread_name", static_cast<int>(i) + 1, -1);
    meta.raw("args", args_json({{"name", history.clients[i]}}));
    meta.close();
  }

  // Calls: pair each invoke with its completion on the same client (one call of a kind at a time).
  std::vector<std::vector<const Event*>> open(history.clients.size(),
                                              std::vector<const Event*>(3, nullptr));
  std::size_t calls = 0;
  std::size_t calls_skipped = 0;
  for (const Event& e : history.events) {
    const auto client = static_cast<std::size_t>(e.client);
    if (client >= history.clients.size()) continue;
    const int tid = e.client + 1;
    const bool harness_wide = e.f == Op::kServerLost || e.f == Op::kServerDied;
    if (e.f == Op::kCrash || e.f == Op::kFault || e.f == Op::kStop || harness_wide) {
      std::string name(to_string(e.f));
      if (e.f == Op::kFault) name = "fault: " + std::string(traits(e.fault().kind).word);
      if (e.f == Op::kStop) name = "stop: " + std::string(to_string(e.stop().reason));
      if (e.f == Op::kServerDied) name += ": " + std::string(history.str(e.server().server));
      JsonObjectWriter instant = trace.begin("i", name, tid, e.time_ns);
      instant.text("s", harness_wide ? "g" : "t");
      if (e.message != 0)
        instant.raw("args", args_json({{"message", std::string(history.message(e))}}));
      instant.close();
      continue;
    }
    if (e.f != Op::kAcquire && e.f != Op::kRelease && e.f != Op::kExtend) continue;
    const auto slot = static_cast<std::size_t>(e.f);  // kAcquire, kRelease, kExtend are 0..2
    if (e.type == EventType::kInvoke) {
      open[client][slot] = &e;
      continue;
    }
    const Event* invoke = open[client][slot];
    if (invoke == nullptr) continue;
    open[client][slot] = nullptr;
    if (calls >= kMaxTraceCalls) {
      ++calls_skipped;
      continue;
    }
    ++calls;
    const std::string name = std::string(to_string(e.f)) + " " + std::string(to_string(e.type));
    JsonObjectWriter call = trace.begin("X", name, tid, invoke->time_ns);
    call.real("dur", micros(e.time_ns - invoke->time_ns));
    call.text("cat", "call");
    std::string args;
    JsonObjectWriter a(args);
    a.text("key", history.key_name(e));
    if (e.f == Op::kAcquire && e.acquire().attempts >= 0)
      a.number("attempts", e.acquire().attempts);
    if (e.f == Op::kRelease && e.release().deleted >= 0) a.number("deleted", e.release().deleted);
    if (e.f == Op::kExtend && e.extend().extended >= 0) a.number("extended", e.extend().extended);
    if (e.error != ErrorKind::kNone) {
      std::string error(to_string(e.error));
      if (e.message != 0) error += ": " + std::string(history.message(e));
      a.text("error", error);
    }
    a.close();
    call.raw("args", args);
    call.close();
  }

  int id = 0;
  std::size_t holds = 0;
  std::size_t holds_skipped = 0;
  for (const HoldWindow& w : result.holds) {
    if (holds >= kMaxTraceHolds) {
      ++holds_skipped;
      continue;
    }
    ++holds;
    const std::string name =
        history.clients.at(static_cast<std::size_t>(w.client)) + " holds " + history.keys.at(w.key);
    ++id;
    {
      JsonObjectWriter begin = trace.begin("b", name, w.client + 1, w.start_ns);
      begin.text("cat", "hold");
      begin.number("id", id);
      std::string args;
      JsonObjectWriter a(args);
      a.number("ttl_ms", w.ttl_ms);
      if (w.lease_end_ns >= 0) a.real("lease_end_ms", ns_to_ms(w.lease_end_ns));
      a.close();
      begin.raw("args", args);
      begin.close();
    }
    JsonObjectWriter end = trace.begin("e", name, w.client + 1, w.end_ns);
    end.text("cat", "hold");
    end.number("id", id);
    end.close();
  }
  for (const Finding& f : result.findings) {
    if (f.kind != FindingKind::kMutexViolation) continue;
    const std::string name = "VIOLATION " + f.cause;
    const int later_tid = f.clients.size() > 1 ? f.clients[1] + 1 : 0;
    for (const int tid : {0, later_tid}) {
      JsonObjectWriter slice = trace.begin("X", name, tid, f.from_ns);
      slice.real("dur", micros(f.to_ns - f.from_ns));
      slice.text("cat", "violation");
      slice.text("cname", "terrible");
      slice.raw("args", args_json({{"explanation", f.words}}));
      slice.close();
    }
  }
  std::string note;
  if (calls_skipped > 0 || holds_skipped > 0) {
    note = "cut to bound its size: " + std::to_string(calls_skipped) + " call slices and " +
           std::to_string(holds_skipped) + " hold slices were left out (history.jsonl has all)";
  }
  trace.finish(note);
}

}  // namespace

std::string trace_json(const History& history, const CheckResult& result,
                       const std::string& title) {
  std::string out;
  TraceWriter trace(out);
  emit_trace(trace, history, result, title);
  return out;
}

void write_trace_json(const std::filesystem::path& path, const History& history,
                      const CheckResult& result, const std::string& title) {
  AtomicFile file(path);
  std::string buffer;
  TraceWriter trace(buffer, &file);
  emit_trace(trace, history, result, title);
  file.commit();
}

}  // namespace locksim
