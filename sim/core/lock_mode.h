// lock_mode.h: LockMode, what an acquire of a read-write lock asks for: a read hold (shared with
// other readers) or a write hold (exclusive); every other lock's acquires are exclusive. Used by
// scenarios ("mode" on an acquire step), the lock context and the history (`mode` in JSON).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace locksim {

enum class LockMode : std::uint8_t { kExclusive, kRead, kWrite };

// to_string: "exclusive", "read", "write".
constexpr std::string_view to_string(LockMode mode) {
  switch (mode) {
    case LockMode::kRead:
      return "read";
    case LockMode::kWrite:
      return "write";
    case LockMode::kExclusive:
      break;
  }
  return "exclusive";
}

// lock_mode_from_string: the inverse of to_string.
constexpr std::optional<LockMode> lock_mode_from_string(std::string_view word) {
  if (word == "read") return LockMode::kRead;
  if (word == "write") return LockMode::kWrite;
  if (word == "exclusive") return LockMode::kExclusive;
  return std::nullopt;
}

}  // namespace locksim
