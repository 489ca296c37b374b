// The finding kinds: their words and the verdict each supports. A new kind is one line here.
#include <array>

#include "sim/checker/check.h"

namespace locksim {
namespace {

struct KindInfo {
  FindingKind kind;
  std::string_view word;
  Verdict verdict;
};

constexpr std::array<KindInfo, 15> kKinds = {{
    {FindingKind::kMutexViolation, "mutex_violation", Verdict::kMutexViolation},
    {FindingKind::kResourceCorrupted, "resource_corrupted", Verdict::kResourceCorrupted},
    {FindingKind::kDeadlock, "deadlock", Verdict::kDeadlock},
    {FindingKind::kLockError, "lock_error", Verdict::kError},
    {FindingKind::kNeverGranted, "never_granted", Verdict::kError},
    {FindingKind::kServerLost, "server_lost", Verdict::kError},
    {FindingKind::kServerDied, "server_died", Verdict::kUnknown},
    {FindingKind::kIndeterminate, "indeterminate", Verdict::kUnknown},
    {FindingKind::kIncomplete, "incomplete", Verdict::kUnknown},
    {FindingKind::kStaleRelease, "stale_release", Verdict::kOk},
    {FindingKind::kStaleWrite, "stale_write", Verdict::kOk},
    {FindingKind::kStolenRenewal, "stolen_renewal", Verdict::kOk},
    {FindingKind::kRecovery, "recovery", Verdict::kOk},
    {FindingKind::kIdleHold, "idle_hold", Verdict::kOk},
    {FindingKind::kServerOutage, "server_outage", Verdict::kOk},
}};

const KindInfo& info(FindingKind kind) { return kKinds[static_cast<std::size_t>(kind)]; }

}  // namespace

std::string_view to_string(FindingKind kind) { return info(kind).word; }
Verdict verdict_of(FindingKind kind) { return info(kind).verdict; }

const std::vector<FindingKind>& all_finding_kinds() {
  static const std::vector<FindingKind> kinds = [] {
    std::vector<FindingKind> all;
    for (const KindInfo& k : kKinds) all.push_back(k.kind);
    return all;
  }();
  return kinds;
}

}  // namespace locksim
