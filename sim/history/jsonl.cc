#include "sim/history/jsonl.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>
#include <utility>

#include "sim/core/atomic_file.h"
#include "sim/core/error.h"
#include "sim/core/json_text.h"
#include "sim/json/parse.h"

namespace locksim {
namespace {

// json_strings: `items` as a JSON array of strings.
std::string json_strings(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    append_json_string(out, items[i]);
  }
  return out + ']';
}

void append_event(std::string& out, const History& history, const Event& event, std::size_t index) {
  JsonObjectWriter line(out);
  line.number("index", static_cast<std::int64_t>(index));
  line.number("time_ns", event.time_ns);
  const auto client = static_cast<std::size_t>(event.client);
  line.text("client", client < history.clients.size() ? std::string_view(history.clients[client])
                                                      : std::string_view("?"));
  line.text("type", to_string(event.type));
  line.text("f", to_string(event.f));
  if (event.key != 0) line.text("key", history.key_name(event));
  if (event.token != 0) line.text("token", history.token(event));
  if (event.ttl_ms >= 0) line.number("ttl_ms", event.ttl_ms);
  if (event.mode != LockMode::kExclusive) line.text("mode", to_string(event.mode));
  if (const auto* acquire = std::get_if<AcquireFacts>(&event.facts)) {
    if (acquire->attempts >= 0) line.number("attempts", acquire->attempts);
    if (acquire->sent_ns >= 0) line.number("sent_ns", acquire->sent_ns);
    if (const Nanos queued = queued_ns(event); queued >= 0) line.number("queued_ns", queued);
    if (acquire->fencing >= 0) line.number("fencing", acquire->fencing);
    if (acquire->validity_ms >= 0) line.number("validity_ms", acquire->validity_ms);
    if (acquire->granted.of > 0) {
      line.raw("granted_on", json_strings(history.granted_servers(acquire->granted)));
      line.number("granted_of", acquire->granted.of);
    }
  } else if (const auto* schedule = std::get_if<ScheduleFacts>(&event.facts)) {
    if (schedule->intended_ns >= 0) line.number("intended_ns", schedule->intended_ns);
  } else if (const auto* release = std::get_if<ReleaseFacts>(&event.facts)) {
    if (release->deleted >= 0) line.number("deleted", release->deleted);
  } else if (const auto* extend = std::get_if<ExtendFacts>(&event.facts)) {
    if (extend->extended >= 0) line.number("extended", extend->extended);
  } else if (const auto* work = std::get_if<WorkFacts>(&event.facts)) {
    if (work->planned_ms >= 0) line.number("planned_ms", work->planned_ms);
  } else if (const auto* resource = std::get_if<ResourceFacts>(&event.facts)) {
    // A failed write keeps the value it tried to write (a refused stale write says what it was).
    if (event.type == EventType::kOk || event.f == Op::kWrite) {
      line.number("value", resource->value);
    }
    if (resource->has_base) line.number("base", resource->base);
    if (resource->fencing >= 0) line.number("fencing", resource->fencing);
    if (resource->record != 0) line.text("record", history.str(resource->record));
  } else if (const auto* fault = std::get_if<FaultFacts>(&event.facts)) {
    line.text("fault", traits(fault->kind).word);
    const auto target = static_cast<std::size_t>(fault->target);
    if (fault->target >= 0 && target < history.clients.size()) {
      line.text("target", history.clients[target]);
    }
    if (fault->phase != FaultPhase::kInstant) line.text("phase", to_string(fault->phase));
    if (fault->server != 0) line.text("server", history.str(fault->server));
  } else if (const auto* stop = std::get_if<StopFacts>(&event.facts)) {
    line.text("reason", to_string(stop->reason));
  } else if (const auto* server = std::get_if<ServerFacts>(&event.facts)) {
    if (server->server != 0) line.text("server", history.str(server->server));
  }
  if (event.error != ErrorKind::kNone) line.text("error", to_string(event.error));
  if (event.message != 0) line.text("message", history.message(event));
  line.close();
}

// read_bounded_line: like std::getline, but stops storing after limit + 1 bytes (the caller
// refuses such a line), so a file without newlines costs bounded memory.
bool read_bounded_line(std::istream& in, std::string& line, std::size_t limit) {
  line.clear();
  std::streambuf* buffer = in.rdbuf();
  bool any = false;
  for (;;) {
    const int c = buffer->sbumpc();
    if (c == std::char_traits<char>::eof()) return any;
    any = true;
    if (c == '\n') return true;
    line.push_back(static_cast<char>(c));
    if (line.size() > limit) return true;
  }
}

[[noreturn]] void bad_line(const std::filesystem::path& path, std::size_t line_number,
                           const std::string& what) {
  throw InputError(path.string() + ":" + std::to_string(line_number) + ": " + what);
}

// Reader: turns lines into events, interning keys and strings as it goes.
class Reader {
 public:
  Reader(const std::filesystem::path& path, History& history) : path_(path), history_(history) {}

  void header(const nlohmann::json& j, std::size_t line_number) {
    const auto& schema = j.at("history_schema");
    // Schemas 3 to 5 only added fields and an event kind, so 2 reads with the same code (but for
    // the grants older schemas wrote as words: see legacy_grant).
    if (!schema.is_number_integer() || schema.get<std::int64_t>() < 2 ||
        schema.get<std::int64_t>() > kHistorySchemaVersion) {
      bad_line(path_, line_number,
               "$.history_schema: expected 2 to " + std::to_string(kHistorySchemaVersion) +
                   " (this locksim reads schemas 1 to " + std::to_string(kHistorySchemaVersion) +
                   "), got " + schema.dump());
    }
    for (const auto& client : j.at("clients")) client_id(client.get<std::string>());
    if (j.contains("servers")) {
      for (const auto& server : j.at("servers")) server_index(server.get<std::string>(), "servers");
    }
    if (j.contains("permits")) {
      const auto& permits = j.at("permits");
      if (!permits.is_number_integer() || permits.get<std::int64_t>() < 1 ||
          permits.get<std::int64_t>() > kMaxPermits) {
        bad_line(path_, line_number,
                 "$.permits: expected the lock's permits, 1 to " + std::to_string(kMaxPermits) +
                     ", got " + permits.dump());
      }
      history_.permits = static_cast<int>(permits.get<std::int64_t>());
    }
    // The lock's kind: flags, each true or false (absent: false).
    for (auto [name, flag] : {std::pair<const char*, bool*>{"read_write", &history_.read_write},
                              {"client_clocks", &history_.client_clocks},
                              {"reentrant", &history_.reentrant}}) {
      const auto it = j.find(name);
      if (it == j.end()) continue;
      if (!it->is_boolean()) {
        bad_line(path_, line_number,
                 std::string("$.") + name + ": expected true or false, got " + it->dump());
      }
      *flag = it->get<bool>();
    }
    schema_ = static_cast<int>(schema.get<std::int64_t>());
  }

  void event(const nlohmann::json& j, std::size_t line_number) {
    if (schema_ == 0) schema_ = 1;  // no header: an older history
    const auto type = event_type_from_string(j.at("type").get<std::string>());
    if (!type) bad_line(path_, line_number, "$.type: expected invoke, ok, fail or info");
    const auto op = op_from_string(j.at("f").get<std::string>());
    if (!op) bad_line(path_, line_number, "$.f: unknown operation " + j.at("f").dump());
    Event event = Event::make(*type, *op);
    event.time_ns = big(j, "time_ns");
    event.client = client_id(j.at("client").get<std::string>());
    event.key = key_id(j.value("key", ""));
    if (schema_ == 1) {
      legacy_fields(j, event, line_number);
    } else {
      fields(j, event, line_number);
    }
    if (!history_.events.empty() && event.time_ns < history_.events.back().time_ns) {
      bad_line(path_, line_number, "$.time_ns: expected events in time order");
    }
    history_.events.push_back(event);
  }

 private:
  std::int32_t client_id(const std::string& name) {
    const auto [it, inserted] =
        clients_.try_emplace(name, static_cast<std::int32_t>(history_.clients.size()));
    if (inserted) history_.clients.push_back(name);
    return it->second;
  }
  KeyId key_id(const std::string& key) {
    if (key.empty()) return 0;
    const auto [it, inserted] = keys_.try_emplace(key, static_cast<KeyId>(history_.keys.size()));
    if (inserted) history_.keys.push_back(key);
    return it->second;
  }
  StringId string_id(const std::string& text) { return history_.strings.add(text); }
  // fault_kind_of: the kind named by `word`, the fault event's field `field`; any other word, or
  // none (nullopt), is a bad line that lists the words this locksim knows.
  FaultKind fault_kind_of(const std::optional<std::string>& word, const char* field,
                          std::size_t line_number) {
    if (word) {
      if (const auto kind = fault_kind(*word)) return *kind;
    }
    std::string known;
    for (const FaultKind kind : all_fault_kinds()) {
      known += (known.empty() ? "" : ", ") + std::string(traits(kind).word);
    }
    bad_line(path_, line_number,
             std::string(field) + ": " +
                 (word ? "unknown fault " + nlohmann::json(*word).dump() : std::string("missing")) +
                 "; expected one of " + known);
  }
  // server_index: the index of server `name` in History::servers, adding it if new (a history
  // before schema 5 lists no servers); more than kMaxGrantServers is an out_of_range on `field`.
  std::size_t server_index(std::string_view name, const char* field) {
    std::vector<std::string>& servers = history_.servers;
    const std::size_t index =
        static_cast<std::size_t>(std::find(servers.begin(), servers.end(), name) - servers.begin());
    if (index == kMaxGrantServers) {
      throw std::out_of_range("$." + std::string(field) + ": expected at most " +
                              std::to_string(kMaxGrantServers) + " servers");
    }
    if (index == servers.size()) servers.emplace_back(name);
    return index;
  }

  // integer: the field `name` of `j`, an integer within [lo, hi]; anything else (a fraction,
  // 1e300, 2^64) is an out_of_range naming the field and the range.
  static std::int64_t integer(const nlohmann::json& j, const char* name, std::int64_t lo,
                              std::int64_t hi) {
    const nlohmann::json& field = j.at(name);
    const bool too_big = field.is_number_unsigned() &&
                         field.get<std::uint64_t>() >
                             static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (!field.is_number_integer() || too_big || field.get<std::int64_t>() < lo ||
        field.get<std::int64_t>() > hi) {
      throw std::out_of_range("$." + std::string(name) + ": expected an integer from " +
                              std::to_string(lo) + " to " + std::to_string(hi) + ", got " +
                              field.dump().substr(0, 40));
    }
    return field.get<std::int64_t>();
  }
  // small: a count or a duration in ms (fits 32 bits, -1 = absent).
  static std::int32_t small(const nlohmann::json& j, const char* name) {
    return static_cast<std::int32_t>(integer(j, name, -1, INT32_MAX));
  }
  // big: a time in ns, a fencing number or a counter value: within +-2^62, so sums of two of
  // them cannot overflow in the checker.
  static std::int64_t big(const nlohmann::json& j, const char* name) {
    return integer(j, name, -(std::int64_t{1} << 62), std::int64_t{1} << 62);
  }

  void fields(const nlohmann::json& j, Event& event, std::size_t line_number) {
    if (j.contains("token")) event.token = string_id(j.at("token").get<std::string>());
    if (j.contains("ttl_ms")) event.ttl_ms = small(j, "ttl_ms");
    if (j.contains("error")) {
      const auto kind = error_kind_from_string(j.at("error").get<std::string>());
      if (!kind) bad_line(path_, line_number, "$.error: unknown error kind " + j["error"].dump());
      event.error = *kind;
    }
    if (j.contains("message")) event.message = string_id(j.at("message").get<std::string>());
    switch (event.f) {
      case Op::kAcquire:
        acquire_mode(j, event, line_number);
        if (event.type == EventType::kInvoke) {
          if (j.contains("intended_ns")) event.schedule().intended_ns = big(j, "intended_ns");
        } else {
          acquire_fields(j, event);
        }
        break;
      case Op::kRelease:
        if (j.contains("deleted")) event.release().deleted = small(j, "deleted");
        break;
      case Op::kExtend:
        if (j.contains("extended")) event.extend().extended = small(j, "extended");
        break;
      case Op::kWork:
        if (j.contains("planned_ms")) event.work().planned_ms = small(j, "planned_ms");
        break;
      case Op::kRead:
      case Op::kWrite: {
        ResourceFacts& facts = event.resource();
        if (j.contains("value")) facts.value = big(j, "value");
        if (j.contains("base")) {
          facts.base = big(j, "base");
          facts.has_base = true;
        }
        if (j.contains("fencing")) facts.fencing = big(j, "fencing");
        if (j.contains("record")) facts.record = string_id(j.at("record").get<std::string>());
        break;
      }
      case Op::kFault: {
        FaultFacts& facts = event.fault();
        facts.kind = fault_kind_of(
            j.contains("fault") ? std::optional(j.at("fault").get<std::string>()) : std::nullopt,
            "$.fault", line_number);
        if (j.contains("target")) facts.target = client_id(j.at("target").get<std::string>());
        if (j.contains("server")) facts.server = string_id(j.at("server").get<std::string>());
        if (j.contains("phase")) {
          const auto phase = fault_phase_from_string(j.at("phase").get<std::string>());
          if (!phase) bad_line(path_, line_number, "$.phase: expected instant, start or end");
          facts.phase = *phase;
        }
        break;
      }
      case Op::kServerDied:
        if (j.contains("server"))
          event.server().server = string_id(j.at("server").get<std::string>());
        break;
      case Op::kStop: {
        const auto reason = stop_reason_from_string(j.value("reason", ""));
        if (!reason) bad_line(path_, line_number, "$.reason: expected time_limit or interrupted");
        event.stop().reason = *reason;
        break;
      }
      default:
        break;
    }
  }

  void acquire_mode(const nlohmann::json& j, Event& event, std::size_t line_number) {
    if (!j.contains("mode")) return;
    const nlohmann::json& word = j.at("mode");
    const auto mode =
        lock_mode_from_string(word.is_string() ? word.get<std::string>() : std::string());
    if (!mode) {
      bad_line(path_, line_number,
               "$.mode: expected \"read\", \"write\" or \"exclusive\", got " + word.dump());
    }
    event.mode = *mode;
  }

  void acquire_fields(const nlohmann::json& j, Event& event) {
    AcquireFacts& facts = event.acquire();
    if (j.contains("attempts")) facts.attempts = small(j, "attempts");
    if (j.contains("sent_ns")) facts.sent_ns = big(j, "sent_ns");
    if (j.contains("queued_ns")) set_queued_ns(event, big(j, "queued_ns"));
    if (j.contains("fencing")) facts.fencing = big(j, "fencing");
    if (j.contains("validity_ms")) facts.validity_ms = small(j, "validity_ms");
    if (j.contains("granted_on")) {
      facts.granted = grant(j);
    } else if (schema_ < 5 && event.type == EventType::kOk) {
      legacy_grant(event);
    }
  }

  // grant: `granted_on` (server names) and `granted_of` (servers asked) of a multi-server grant.
  ServerGrant grant(const nlohmann::json& j) {
    const nlohmann::json& names = j.at("granted_on");
    if (!names.is_array()) throw std::out_of_range("$.granted_on: expected a list of server names");
    ServerGrant granted;
    for (const auto& name : names) {
      granted.on |= 1U << server_index(name.get<std::string>(), "granted_on");
    }
    const std::int64_t of = integer(j, "granted_of", 1, kMaxGrantServers);
    if (of < std::popcount(granted.on)) {
      throw std::out_of_range("$.granted_of: expected at least the " +
                              std::to_string(std::popcount(granted.on)) +
                              " servers of granted_on, got " + std::to_string(of));
    }
    granted.of = static_cast<std::uint8_t>(of);
    return granted;
  }

  // legacy_grant: before schema 5 a multi-server acquire's ok said in its message which servers
  // granted it ("granted by n1, n2, n4 of 5"); that becomes the typed grant, and the message goes.
  void legacy_grant(Event& event) {
    constexpr std::string_view kPrefix = "granted by ";
    const std::string_view message = history_.message(event);
    const std::size_t of_at = message.rfind(" of ");
    if (!message.starts_with(kPrefix) || of_at == std::string_view::npos ||
        of_at <= kPrefix.size()) {
      return;
    }
    const std::string_view count = message.substr(of_at + 4);
    std::uint32_t of = 0;
    const auto [end, error] = std::from_chars(count.data(), count.data() + count.size(), of);
    if (error != std::errc() || end != count.data() + count.size() || of < 1 ||
        of > kMaxGrantServers) {
      return;
    }
    ServerGrant granted;
    const std::string_view names = message.substr(kPrefix.size(), of_at - kPrefix.size());
    for (std::size_t start = 0; start < names.size();) {
      const std::size_t comma = std::min(names.find(", ", start), names.size());
      if (comma > start) {
        granted.on |= 1U << server_index(names.substr(start, comma - start), "message");
      }
      start = comma + 2;
    }
    // Words naming more servers than they counted (never written) still read as a valid grant.
    granted.of = static_cast<std::uint8_t>(
        std::max(of, static_cast<std::uint32_t>(std::popcount(granted.on))));
    event.acquire().granted = granted;
    event.message = 0;
  }

  // legacy_fields: schema 1 kept everything in value.{token,ttl_ms,count,base} and wrote errors
  // as "kind: text".
  void legacy_fields(const nlohmann::json& j, Event& event, std::size_t line_number) {
    std::string token;
    std::int64_t count = -1;
    std::optional<std::int64_t> base;
    if (j.contains("value")) {
      const auto& value = j.at("value");
      token = value.value("token", "");
      if (value.contains("ttl_ms")) event.ttl_ms = small(value, "ttl_ms");
      if (value.contains("count")) count = big(value, "count");
      if (value.contains("base")) base = big(value, "base");
    }
    const std::string error = j.value("error", "");
    if (!error.empty()) {
      const std::size_t colon = error.find(':');
      const std::string kind = error.substr(0, colon);
      std::string text = colon == std::string::npos ? "" : error.substr(colon + 1);
      if (!text.empty() && text.front() == ' ') text.erase(0, 1);
      if (kind == "timeout" && text.starts_with("lock still held")) {
        event.error = ErrorKind::kGaveUp;
      } else if (const auto parsed = error_kind_from_string(kind)) {
        event.error = *parsed;
      } else {
        event.error =
            event.type == EventType::kInfo ? ErrorKind::kProtocol : ErrorKind::kReplyError;
        text = error;
      }
      // Schema 1 filed a script's wrong reply under "protocol".
      if (event.error == ErrorKind::kProtocol && text.starts_with("script ")) {
        event.error = ErrorKind::kUnexpectedReply;
      }
      event.message = string_id(text);
    }
    switch (event.f) {
      case Op::kAcquire:
        event.token = string_id(token);
        if (event.type == EventType::kInvoke) break;  // schema 1 recorded no schedule
        event.acquire().attempts = static_cast<std::int32_t>(count);
        if (base) event.acquire().sent_ns = *base;
        break;
      case Op::kRelease:
        event.token = string_id(token);
        if (event.type == EventType::kOk)
          event.release().deleted = static_cast<std::int32_t>(count);
        break;
      case Op::kExtend:
        event.token = string_id(token);
        if (event.type == EventType::kOk)
          event.extend().extended = static_cast<std::int32_t>(count);
        break;
      case Op::kWork:
        event.work().planned_ms = static_cast<std::int32_t>(count);
        break;
      case Op::kRead:
      case Op::kWrite:
        event.resource().value = count;
        if (base) {
          event.resource().base = *base;
          event.resource().has_base = true;
        }
        event.resource().record = string_id(token);
        break;
      case Op::kFault:
        // Schema 1 wrote no fault without its word: an empty token is a missing one.
        event.fault().kind = fault_kind_of(token.empty() ? std::nullopt : std::optional(token),
                                           "$.value.token", line_number);
        break;
      default:
        break;
    }
  }

  const std::filesystem::path& path_;
  History& history_;
  int schema_ = 0;
  std::unordered_map<std::string, std::int32_t> clients_;
  std::unordered_map<std::string, KeyId> keys_;
};

}  // namespace

std::string event_to_json_line(const History& history, const Event& event, std::size_t index) {
  std::string line;
  append_event(line, history, event, index);
  return line;
}

void write_history_jsonl(const std::filesystem::path& path, const History& history) {
  AtomicFile file(path);
  std::string buffer;
  {
    JsonObjectWriter header(buffer);
    header.number("history_schema", kHistorySchemaVersion);
    header.raw("clients", json_strings(history.clients));
    if (!history.servers.empty()) header.raw("servers", json_strings(history.servers));
    if (history.semaphore()) header.number("permits", history.permits);
    if (history.reentrant) header.raw("reentrant", "true");
    if (history.read_write) header.raw("read_write", "true");
    if (history.client_clocks) header.raw("client_clocks", "true");
    header.close();
    buffer += '\n';
  }
  for (std::size_t i = 0; i < history.events.size(); ++i) {
    append_event(buffer, history, history.events[i], i);
    buffer += '\n';
    if (buffer.size() >= (1 << 20)) {
      file.write(buffer);
      buffer.clear();
    }
  }
  file.write(buffer);
  file.commit();
}

History read_history_jsonl(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string() + ": cannot open (expected a history.jsonl file)");
  History history;
  Reader reader(path, history);
  std::string line;
  std::size_t line_number = 0;
  while (read_bounded_line(in, line, json::kHistoryLineLimits.max_bytes)) {
    ++line_number;
    if (line.size() > json::kHistoryLineLimits.max_bytes) {
      bad_line(path, line_number,
               "line longer than " + std::to_string(json::kHistoryLineLimits.max_bytes) +
                   " bytes (a history line is about 200)");
    }
    if (line.empty()) continue;
    nlohmann::json j;
    try {
      j = json::parse_json_line(line, path.string(), line_number, json::kHistoryLineLimits);
    } catch (const nlohmann::json::exception& e) {
      bad_line(path, line_number, std::string("not valid JSON: ") + e.what());
    }
    if (!j.is_object()) bad_line(path, line_number, "expected a JSON object");
    try {
      if (line_number == 1 && j.contains("history_schema")) {
        reader.header(j, line_number);
      } else {
        reader.event(j, line_number);
      }
    } catch (const nlohmann::json::exception& e) {
      bad_line(path, line_number, std::string("malformed event: ") + e.what());
    } catch (const std::out_of_range& e) {
      bad_line(path, line_number, std::string("malformed event: ") + e.what());
    }
  }
  return history;
}

}  // namespace locksim
