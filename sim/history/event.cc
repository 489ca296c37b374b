#include "sim/history/event.h"

#include <array>

namespace locksim {
namespace {

constexpr std::array<std::string_view, 4> kTypeNames = {"invoke", "ok", "fail", "info"};
constexpr std::array<std::string_view, 10> kOpNames = {
    "acquire", "release", "extend", "enter", "exit", "crash", "work", "write", "read", "fault"};

}  // namespace

std::string_view to_string(EventType type) { return kTypeNames[static_cast<std::size_t>(type)]; }
std::string_view to_string(Op op) { return kOpNames[static_cast<std::size_t>(op)]; }

std::optional<EventType> event_type_from_string(std::string_view word) {
  for (std::size_t i = 0; i < kTypeNames.size(); ++i) {
    if (kTypeNames[i] == word) return static_cast<EventType>(i);
  }
  return std::nullopt;
}

std::optional<Op> op_from_string(std::string_view word) {
  for (std::size_t i = 0; i < kOpNames.size(); ++i) {
    if (kOpNames[i] == word) return static_cast<Op>(i);
  }
  return std::nullopt;
}

int History::client_index(std::string_view name) const {
  for (std::size_t i = 0; i < clients.size(); ++i) {
    if (clients[i] == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace locksim
