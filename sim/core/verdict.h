// verdict.h: Verdict, the outcome of checking one run, shared by scenarios (expectations) and
// checkers (observations).
//
// Precedence, strongest first: mutex_violation, resource_corrupted, deadlock, error, unknown, ok.
// One definite violation outweighs everything else. `error` means the lock or the server did not
// work (the lock's calls failed or answered outside its contract, it never granted a wanted key,
// the server stopped answering); `unknown` means the run could not decide (an indeterminate
// event could hide a violation, or the run was stopped before it finished). Neither is ever
// reported as ok.
#pragma once

#include <optional>
#include <string_view>

namespace locksim {

enum class Verdict { kOk, kUnknown, kError, kDeadlock, kResourceCorrupted, kMutexViolation };

// to_string: the verdict word used in scenario files and reports ("mutex_violation").
std::string_view to_string(Verdict verdict);
// verdict_from_string: the inverse of to_string; nullopt for an unknown word.
std::optional<Verdict> verdict_from_string(std::string_view word);
// strongest: the verdict that outweighs the other.
Verdict strongest(Verdict a, Verdict b);

}  // namespace locksim
