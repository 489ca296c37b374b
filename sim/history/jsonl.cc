#include "sim/history/jsonl.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "sim/core/atomic_file.h"
#include "sim/core/error.h"
#include "sim/json/parse.h"

namespace locksim {

std::string event_to_json_line(const History& history, const Event& event) {
  nlohmann::ordered_json j;
  j["index"] = event.index;
  j["time_ns"] = event.time_ns;
  const auto client = static_cast<std::size_t>(event.client);
  j["client"] =
      client < history.clients.size() ? history.clients[client] : std::to_string(event.client);
  j["type"] = to_string(event.type);
  j["f"] = to_string(event.f);
  if (!event.key.empty()) j["key"] = event.key;
  nlohmann::ordered_json value = nlohmann::ordered_json::object();
  if (!event.token.empty()) value["token"] = event.token;
  if (event.ttl_ms >= 0) value["ttl_ms"] = event.ttl_ms;
  if (event.count >= 0 || event.f == Op::kWrite || event.f == Op::kRead) {
    value["count"] = event.count;  // a counter may legitimately go negative (oversell)
  }
  if (event.base) value["base"] = *event.base;
  if (!value.empty()) j["value"] = std::move(value);
  if (!event.error.empty()) j["error"] = event.error;
  return j.dump();
}

void write_history_jsonl(const std::filesystem::path& path, const History& history) {
  AtomicFile file(path);
  for (const Event& event : history.events) {
    file.write(event_to_json_line(history, event));
    file.write("\n");
  }
  file.commit();
}

namespace {

[[noreturn]] void bad_line(const std::filesystem::path& path, std::size_t line_number,
                           const std::string& what) {
  throw InputError(path.string() + ":" + std::to_string(line_number) + ": " + what);
}

}  // namespace

History read_history_jsonl(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string() + ": cannot open (expected a history.jsonl file)");
  History history;
  std::string line;
  std::size_t line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.empty()) continue;
    nlohmann::json j;
    try {
      j = json::parse_json_line(line, path.string(), line_number, json::kHistoryLineLimits);
    } catch (const nlohmann::json::parse_error& e) {
      bad_line(path, line_number, std::string("not valid JSON: ") + e.what());
    }
    if (!j.is_object()) bad_line(path, line_number, "expected a JSON object");
    try {
      Event event;
      event.index = static_cast<std::int64_t>(history.events.size());
      event.time_ns = j.at("time_ns").get<std::int64_t>();
      const auto client = j.at("client").get<std::string>();
      int index = history.client_index(client);
      if (index < 0) {
        history.clients.push_back(client);
        index = static_cast<int>(history.clients.size()) - 1;
      }
      event.client = index;
      const auto type = event_type_from_string(j.at("type").get<std::string>());
      if (!type) bad_line(path, line_number, "$.type: expected invoke, ok, fail or info");
      event.type = *type;
      const auto op = op_from_string(j.at("f").get<std::string>());
      if (!op) bad_line(path, line_number, "$.f: unknown operation " + j.at("f").dump());
      event.f = *op;
      event.key = j.value("key", "");
      if (j.contains("value")) {
        const auto& value = j.at("value");
        event.token = value.value("token", "");
        event.ttl_ms = value.value("ttl_ms", std::int64_t{-1});
        event.count = value.value("count", std::int64_t{-1});
        if (value.contains("base")) event.base = value.at("base").get<std::int64_t>();
      }
      event.error = j.value("error", "");
      if (!history.events.empty() && event.time_ns < history.events.back().time_ns) {
        bad_line(path, line_number, "$.time_ns: expected events in time order");
      }
      history.events.push_back(std::move(event));
    } catch (const nlohmann::json::exception& e) {
      bad_line(path, line_number, std::string("malformed event: ") + e.what());
    }
  }
  return history;
}

}  // namespace locksim
