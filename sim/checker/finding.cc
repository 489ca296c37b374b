// The finding kinds: their words, the verdict each supports and their headings. A new kind is its
// enumerator in check.h (with its line in the contract there), one line here, and the checker that
// finds it.
#include <array>

#include "sim/checker/check.h"

namespace locksim {
namespace {

struct KindInfo {
  FindingKind kind;
  std::string_view word;   // in results.json
  Verdict verdict;         // the verdict it supports (kOk: reported, no verdict)
  std::string_view label;  // the heading of the kind in every report
};

constexpr std::array<KindInfo, 19> kKinds = {{
    {FindingKind::kMutexViolation, "mutex_violation", Verdict::kMutexViolation,
     "Mutual exclusion violated"},
    {FindingKind::kResourceCorrupted, "resource_corrupted", Verdict::kResourceCorrupted,
     "Resource corrupted"},
    {FindingKind::kDeadlock, "deadlock", Verdict::kDeadlock, "Deadlock"},
    {FindingKind::kLockError, "lock_error", Verdict::kError, "Lock error"},
    {FindingKind::kNeverGranted, "never_granted", Verdict::kError, "Never granted"},
    {FindingKind::kServerLost, "server_lost", Verdict::kError, "Server lost"},
    {FindingKind::kServerDied, "server_died", Verdict::kUnknown, "Server died"},
    {FindingKind::kIndeterminate, "indeterminate", Verdict::kUnknown, "Unknown outcome"},
    {FindingKind::kIncomplete, "incomplete", Verdict::kUnknown, "Incomplete run"},
    {FindingKind::kStaleRelease, "stale_release", Verdict::kOk, "Stale release"},
    {FindingKind::kStaleWrite, "stale_write", Verdict::kOk, "Stale write"},
    {FindingKind::kStolenRenewal, "stolen_renewal", Verdict::kOk, "Stolen renewal"},
    {FindingKind::kRecovery, "recovery", Verdict::kOk, "Recovery"},
    {FindingKind::kIdleHold, "idle_hold", Verdict::kOk, "Idle hold"},
    {FindingKind::kServerOutage, "server_outage", Verdict::kOk, "Server outage"},
    {FindingKind::kLeaseOverrun, "lease_overrun", Verdict::kOk, "Inside after the lease ran out"},
    {FindingKind::kBarging, "barging", Verdict::kOk, "Barged past a waiter"},
    {FindingKind::kUnplannedStall, "unplanned_stall", Verdict::kOk,
     "The machine stalled (no fault planned)"},
    {FindingKind::kEarlyRelease, "early_release", Verdict::kOk, "Reentrant lock freed early"},
}};

const KindInfo& info(FindingKind kind) { return kKinds[static_cast<std::size_t>(kind)]; }

// The table is indexed by the enumerator: each row must sit at its own kind's place.
constexpr bool rows_in_order() {
  for (std::size_t i = 0; i < kKinds.size(); ++i) {
    if (static_cast<std::size_t>(kKinds[i].kind) != i) return false;
  }
  return true;
}
static_assert(rows_in_order(), "kKinds must list the kinds in the order of FindingKind");

}  // namespace

std::string_view to_string(FindingKind kind) { return info(kind).word; }
Verdict verdict_of(FindingKind kind) { return info(kind).verdict; }
std::string_view label_of(FindingKind kind) { return info(kind).label; }

const std::vector<FindingKind>& all_finding_kinds() {
  static const std::vector<FindingKind> kinds = [] {
    std::vector<FindingKind> all;
    for (const KindInfo& k : kKinds) all.push_back(k.kind);
    return all;
  }();
  return kinds;
}

}  // namespace locksim
