#include "sim/report/export.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "sim/core/json_text.h"

namespace locksim {
namespace {

// kChunkBytes: how much text is handed to the sink at once.
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

// Operation: one acquire or release with its completion, in the order of its invoke.
struct Operation {
  int client = 0;
  int process = 0;  // Jepsen's process: the client's, renumbered after each unknown outcome
  Op f = Op::kAcquire;
  Nanos call_ns = 0;
  std::size_t invoke_index = 0;
  std::int32_t ttl_ms = -1;
  // The texts are views of the history's strings (it outlives the export): copies cost a
  // million-event export 100 MB.
  std::string_view token;  // release: the token it presented
  // Completion.
  EventType outcome = EventType::kInfo;
  Nanos return_ns = -1;  // -1: never completed (ended :info at the end of the history)
  std::size_t return_index = 0;
  std::string_view granted_token;  // acquire ok
  std::int64_t fencing = -1;       // acquire ok
  std::string_view error;          // fail/info: why
};

const char* word(EventType type) {
  switch (type) {
    case EventType::kInvoke:
      return "invoke";
    case EventType::kOk:
      return "ok";
    case EventType::kFail:
      return "fail";
    case EventType::kInfo:
      return "info";
  }
  return "info";
}

// edn_string: `text` as an EDN string: the escapes of a JSON string, which EDN shares. Every
// control character is escaped (a raw CR split the map for a line reader, and a raw NUL ended it
// for a C one): \n, \r, \t as such, the rest and DEL as \uXXXX, which Clojure's EDN reader reads
// back.
std::string edn_string(std::string_view text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

std::vector<Operation> operations(const History& history, std::string_view key) {
  std::vector<Operation> ops;
  const int clients = static_cast<int>(history.clients.size());
  std::vector<int> generation(history.clients.size(), 0);
  std::vector<std::optional<std::size_t>> open(history.clients.size());
  const auto close = [&](std::size_t op, EventType outcome, Nanos at, std::size_t index) {
    Operation& o = ops[op];
    o.outcome = outcome;
    o.return_ns = at;
    o.return_index = index;
    if (outcome == EventType::kInfo) ++generation[static_cast<std::size_t>(o.client)];
    open[static_cast<std::size_t>(o.client)].reset();
  };
  for (std::size_t i = 0; i < history.events.size(); ++i) {
    const Event& e = history.events[i];
    if (e.client < 0 || e.client >= clients) continue;
    const auto c = static_cast<std::size_t>(e.client);
    if (e.f == Op::kCrash) {
      if (open[c]) close(*open[c], EventType::kInfo, e.time_ns, i);
      continue;
    }
    if ((e.f != Op::kAcquire && e.f != Op::kRelease) || history.key_name(e) != key) continue;
    if (e.type == EventType::kInvoke) {
      if (open[c]) close(*open[c], EventType::kInfo, e.time_ns, i);  // never happens in a run
      Operation o;
      o.client = e.client;
      o.process = e.client + generation[c] * clients;
      o.f = e.f;
      o.call_ns = e.time_ns;
      o.invoke_index = i;
      o.ttl_ms = e.ttl_ms;
      if (e.f == Op::kRelease) o.token = history.token(e);
      ops.push_back(std::move(o));
      open[c] = ops.size() - 1;
      continue;
    }
    if (!open[c] || ops[*open[c]].f != e.f) continue;  // a completion without its invoke
    Operation& o = ops[*open[c]];
    EventType outcome = e.type;
    if (e.f == Op::kAcquire && e.type == EventType::kOk) {
      o.granted_token = history.token(e);
      o.fencing = e.acquire().fencing;
    }
    if (e.f == Op::kRelease && e.type == EventType::kOk && e.release().deleted < 1) {
      outcome = EventType::kFail;  // deleted nothing: it released nothing
      o.error = "deleted nothing";
    }
    if (e.type == EventType::kFail || e.type == EventType::kInfo) {
      o.error = history.message(e);
    }
    close(*open[c], outcome, e.time_ns, i);
  }
  return ops;
}

void knossos_line(std::string& out, const History& history, const Operation& o, bool invoke,
                  std::size_t index) {
  const EventType type = invoke ? EventType::kInvoke : o.outcome;
  const Nanos time = invoke ? o.call_ns : o.return_ns;
  out += "{:index " + std::to_string(index) + ", :time " + std::to_string(time) +
         ", :type :" + word(type) + ", :process " + std::to_string(o.process) +
         ", :f :" + (o.f == Op::kAcquire ? "acquire" : "release") + ", :value nil, :client " +
         edn_string(history.clients[static_cast<std::size_t>(o.client)]);
  if (invoke && o.ttl_ms >= 0) out += ", :ttl-ms " + std::to_string(o.ttl_ms);
  if (invoke && !o.token.empty()) out += ", :token " + edn_string(o.token);
  if (!invoke && !o.granted_token.empty()) out += ", :token " + edn_string(o.granted_token);
  if (!invoke && o.fencing >= 0) out += ", :fencing " + std::to_string(o.fencing);
  if (!invoke && !o.error.empty()) out += ", :error " + edn_string(o.error);
  out += "}\n";
}

}  // namespace

std::vector<std::string> lock_keys(const History& history) {
  std::vector<std::string> keys;
  for (const Event& e : history.events) {
    if (e.f != Op::kAcquire && e.f != Op::kRelease) continue;
    const std::string& key = history.key_name(e);
    if (!key.empty() && std::find(keys.begin(), keys.end(), key) == keys.end()) {
      keys.push_back(key);
    }
  }
  return keys;
}

void export_history(const History& history, std::string_view key, ExportFormat format,
                    const std::function<void(std::string_view)>& sink) {
  std::vector<Operation> ops = operations(history, key);
  const Nanos end = history.events.empty() ? 0 : history.events.back().time_ns;
  if (format == ExportFormat::kKnossos) {
    // Completions and invokes in the order they happened, renumbered from 0.
    struct Line {
      std::size_t order;
      std::size_t op;
      bool invoke;
    };
    std::vector<Line> lines;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      lines.push_back({ops[i].invoke_index * 2, i, true});
      const std::size_t done = ops[i].return_ns < 0 ? history.events.size() : ops[i].return_index;
      lines.push_back({done * 2 + 1, i, false});
      if (ops[i].return_ns < 0) ops[i].return_ns = end;
    }
    std::stable_sort(lines.begin(), lines.end(),
                     [](const Line& a, const Line& b) { return a.order < b.order; });
    std::string out;
    for (std::size_t n = 0; n < lines.size(); ++n) {
      knossos_line(out, history, ops[lines[n].op], lines[n].invoke, n);
      if (out.size() >= kChunkBytes) {
        sink(out);
        out.clear();
      }
    }
    sink(out);
    return;
  }
  // Written by hand, an operation at a time, in the layout of a JSON dump with an indent of one:
  // a tree of a million operations cost 800 MB, six times the run that wrote the history.
  std::string out = "[";
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Operation& o = ops[i];
    out += i == 0 ? "\n {\n  \"client_id\": " : ",\n {\n  \"client_id\": ";
    // The process, not the client: after an unknown outcome the client goes on as a new one, as
    // in the Knossos export, since Porcupine too takes a client's operations to be sequential and
    // an unknown one never returns.
    out += std::to_string(o.process);
    out += ",\n  \"input\": {\n   \"op\": ";
    out += o.f == Op::kAcquire ? "\"acquire\"" : "\"release\"";
    out += ",\n   \"key\": ";
    append_json_string(out, key);
    out += ",\n   \"client\": ";
    append_json_string(out, history.clients[static_cast<std::size_t>(o.client)]);
    if (o.ttl_ms >= 0) out += ",\n   \"ttl_ms\": " + std::to_string(o.ttl_ms);
    if (!o.token.empty()) {
      out += ",\n   \"token\": ";
      append_json_string(out, o.token);
    }
    out += "\n  },\n  \"call\": " + std::to_string(o.call_ns) + ",\n  \"output\": {\n   ";
    const bool unknown = o.return_ns < 0 || o.outcome == EventType::kInfo;
    if (unknown) {
      out += "\"unknown\": true";
    } else {
      out += o.outcome == EventType::kOk ? "\"ok\": true" : "\"ok\": false";
      if (!o.granted_token.empty()) {
        out += ",\n   \"token\": ";
        append_json_string(out, o.granted_token);
      }
      if (o.fencing >= 0) out += ",\n   \"fencing\": " + std::to_string(o.fencing);
    }
    if (!o.error.empty()) {
      out += ",\n   \"error\": ";
      append_json_string(out, o.error);
    }
    out += "\n  },\n  \"return\": " +
           std::to_string(unknown ? std::numeric_limits<std::int64_t>::max() : o.return_ns) +
           "\n }";
    if (out.size() >= kChunkBytes) {
      sink(out);
      out.clear();
    }
  }
  out += ops.empty() ? "]\n" : "\n]\n";
  sink(out);
}

std::string export_history(const History& history, std::string_view key, ExportFormat format) {
  std::string all;
  export_history(history, key, format, [&](std::string_view chunk) { all += chunk; });
  return all;
}

}  // namespace locksim
