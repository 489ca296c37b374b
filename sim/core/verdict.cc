#include "sim/core/verdict.h"

namespace locksim {

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::kOk:
      return "ok";
    case Verdict::kUnknown:
      return "unknown";
    case Verdict::kError:
      return "error";
    case Verdict::kDeadlock:
      return "deadlock";
    case Verdict::kResourceCorrupted:
      return "resource_corrupted";
    case Verdict::kMutexViolation:
      return "mutex_violation";
  }
  return "unknown";
}

std::optional<Verdict> verdict_from_string(std::string_view word) {
  for (Verdict v : {Verdict::kOk, Verdict::kUnknown, Verdict::kError, Verdict::kDeadlock,
                    Verdict::kResourceCorrupted, Verdict::kMutexViolation}) {
    if (to_string(v) == word) return v;
  }
  return std::nullopt;
}

Verdict strongest(Verdict a, Verdict b) {
  return static_cast<int>(a) >= static_cast<int>(b) ? a : b;
}

}  // namespace locksim
