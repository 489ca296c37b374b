#include "sim/history/event.h"

#include <algorithm>
#include <array>

#include "sim/core/assert.h"
#include "sim/history/utf8.h"

namespace locksim {
namespace {

constexpr std::array<std::string_view, 4> kTypeNames = {"invoke", "ok", "fail", "info"};
constexpr std::array<std::string_view, 14> kOpNames = {
    "acquire", "release", "extend", "enter", "exit",        "crash",       "work",
    "write",   "read",    "fault",  "stop",  "server_lost", "server_died", "redirect"};
constexpr std::array<std::string_view, 13> kErrorNames = {
    "none",        "gave_up",          "stopped", "timeout", "closed",    "refused", "protocol",
    "reply_error", "unexpected_reply", "crashed", "fenced",  "cancelled", "not_held"};
constexpr std::array<std::string_view, 2> kStopNames = {"time_limit", "interrupted"};

template <typename Enum, std::size_t N>
std::optional<Enum> from_names(const std::array<std::string_view, N>& names,
                               std::string_view word) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == word) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

template <typename Facts>
Facts& facts_of(Event& event) {
  Facts* facts = std::get_if<Facts>(&event.facts);
  LOCKSIM_ASSERT(facts != nullptr);
  return *facts;
}

template <typename Facts>
const Facts& facts_of(const Event& event) {
  const Facts* facts = std::get_if<Facts>(&event.facts);
  LOCKSIM_ASSERT(facts != nullptr);
  return *facts;
}

}  // namespace

static_assert(sizeof(Event) <= 72, "keep events compact: memory per event is budgeted");

Nanos queued_ns(const Event& event) {
  const AcquireFacts& facts = facts_of<AcquireFacts>(event);
  const std::uint32_t kept = static_cast<std::uint32_t>(facts.queued[0]) |
                             static_cast<std::uint32_t>(facts.queued[1]) << 8 |
                             static_cast<std::uint32_t>(facts.queued[2]) << 16;
  if (kept == 0) return -1;
  return event.time_ns - static_cast<Nanos>(kept - 1) * 1000;
}

void set_queued_ns(Event& event, Nanos queued_ns) {
  constexpr std::uint32_t kMost = (1U << 24) - 2;  // in whole microseconds before the event
  const Nanos before_us = std::max<Nanos>(0, event.time_ns - queued_ns) / 1000;  // rounded later
  const std::uint32_t kept = static_cast<std::uint32_t>(std::min<Nanos>(before_us, kMost)) + 1;
  AcquireFacts& facts = event.acquire();
  facts.queued[0] = static_cast<std::uint8_t>(kept & 0xff);
  facts.queued[1] = static_cast<std::uint8_t>((kept >> 8) & 0xff);
  facts.queued[2] = static_cast<std::uint8_t>((kept >> 16) & 0xff);
}

std::string_view to_string(EventType type) { return kTypeNames[static_cast<std::size_t>(type)]; }
std::string_view to_string(Op op) { return kOpNames[static_cast<std::size_t>(op)]; }
std::string_view to_string(ErrorKind kind) { return kErrorNames[static_cast<std::size_t>(kind)]; }
std::string_view to_string(StopReason reason) {
  return kStopNames[static_cast<std::size_t>(reason)];
}

std::optional<EventType> event_type_from_string(std::string_view word) {
  return from_names<EventType>(kTypeNames, word);
}
std::optional<Op> op_from_string(std::string_view word) { return from_names<Op>(kOpNames, word); }
std::optional<ErrorKind> error_kind_from_string(std::string_view word) {
  return from_names<ErrorKind>(kErrorNames, word);
}
std::optional<StopReason> stop_reason_from_string(std::string_view word) {
  return from_names<StopReason>(kStopNames, word);
}

Event Event::make(EventType type, Op f) {
  Event event;
  event.type = type;
  event.f = f;
  switch (f) {
    case Op::kAcquire:
      if (type == EventType::kInvoke) {
        event.facts = ScheduleFacts{};
      } else {
        event.facts = AcquireFacts{};
      }
      break;
    case Op::kRelease:
      event.facts = ReleaseFacts{};
      break;
    case Op::kExtend:
      event.facts = ExtendFacts{};
      break;
    case Op::kWork:
      event.facts = WorkFacts{};
      break;
    case Op::kRead:
    case Op::kWrite:
      event.facts = ResourceFacts{};
      break;
    case Op::kFault:
      event.facts = FaultFacts{};
      break;
    case Op::kStop:
      event.facts = StopFacts{};
      break;
    case Op::kServerDied:
      event.facts = ServerFacts{};
      break;
    case Op::kEnter:
    case Op::kExit:
    case Op::kCrash:
    case Op::kServerLost:
    case Op::kRedirect:
      break;
  }
  return event;
}

AcquireFacts& Event::acquire() { return facts_of<AcquireFacts>(*this); }
const AcquireFacts& Event::acquire() const { return facts_of<AcquireFacts>(*this); }
ScheduleFacts& Event::schedule() { return facts_of<ScheduleFacts>(*this); }
const ScheduleFacts& Event::schedule() const { return facts_of<ScheduleFacts>(*this); }
ReleaseFacts& Event::release() { return facts_of<ReleaseFacts>(*this); }
const ReleaseFacts& Event::release() const { return facts_of<ReleaseFacts>(*this); }
ExtendFacts& Event::extend() { return facts_of<ExtendFacts>(*this); }
const ExtendFacts& Event::extend() const { return facts_of<ExtendFacts>(*this); }
WorkFacts& Event::work() { return facts_of<WorkFacts>(*this); }
const WorkFacts& Event::work() const { return facts_of<WorkFacts>(*this); }
ResourceFacts& Event::resource() { return facts_of<ResourceFacts>(*this); }
const ResourceFacts& Event::resource() const { return facts_of<ResourceFacts>(*this); }
FaultFacts& Event::fault() { return facts_of<FaultFacts>(*this); }
const FaultFacts& Event::fault() const { return facts_of<FaultFacts>(*this); }
StopFacts& Event::stop() { return facts_of<StopFacts>(*this); }
const StopFacts& Event::stop() const { return facts_of<StopFacts>(*this); }
ServerFacts& Event::server() { return facts_of<ServerFacts>(*this); }
const ServerFacts& Event::server() const { return facts_of<ServerFacts>(*this); }

StringId StringTable::add(std::string_view text) {
  if (text.empty()) return 0;
  // A reply's bytes may be anything; every output that carries the string must be UTF-8.
  if (!is_utf8(text)) return add(escape_invalid_utf8(text));
  if (ends_.empty()) {  // room for a run's few tokens at once, not grown one doubling at a time
    chars_.reserve(std::max<std::size_t>(text.size(), 256));
    ends_.reserve(8);
  }
  chars_.append(text);
  ends_.push_back(chars_.size());
  LOCKSIM_ASSERT(ends_.size() < UINT32_MAX);
  return static_cast<StringId>(ends_.size());
}

std::string_view StringTable::get(StringId id) const {
  if (id == 0 || id > ends_.size()) return {};
  const std::uint64_t begin = id == 1 ? 0 : ends_[id - 2];
  const std::uint64_t end = ends_[id - 1];
  return std::string_view(chars_).substr(begin, end - begin);
}

int History::client_index(std::string_view name) const {
  for (std::size_t i = 0; i < clients.size(); ++i) {
    if (clients[i] == name) return static_cast<int>(i);
  }
  return -1;
}

KeyId History::key_id(std::string_view key) {
  if (key.empty()) return 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == key) return static_cast<KeyId>(i);
  }
  keys.emplace_back(key);
  return static_cast<KeyId>(keys.size() - 1);
}

const std::string& History::key_name(const Event& event) const {
  static const std::string kNone;
  return event.key < keys.size() ? keys[event.key] : kNone;
}

std::vector<std::string> History::granted_servers(const ServerGrant& grant) const {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < kMaxGrantServers; ++i) {
    if ((grant.on >> i & 1U) == 0) continue;
    names.push_back(i < servers.size() ? servers[i] : "server#" + std::to_string(i));
  }
  return names;
}

}  // namespace locksim
