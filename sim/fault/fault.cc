// The fault kinds: their words and traits, one row each. A new kind is its enumerator in fault.h
// and one row here.
#include "sim/fault/fault.h"

#include <array>

#include "sim/core/assert.h"

namespace locksim {

// The link fault kinds' own files define these (sim/fault/<word>.cc). Naming one in its row is
// also what links its file into a program: nothing registers itself at start-up.
extern const LinkFaultType kDropCommandsLinkFault;

namespace {

// One row per kind; a trait not named is false. A kill opens the outage, not the `down` window
// that starts with it, so that one kill is one outage.
constexpr std::array<FaultTraits, 18> kFaultKinds = {{
    {.kind = FaultKind::kPause, .word = "pause", .window = true},
    {.kind = FaultKind::kPartition, .word = "partition", .window = true},
    {.kind = FaultKind::kLoseReply, .word = "lose_reply"},
    {.kind = FaultKind::kDelay, .word = "delay", .window = true},
    {.kind = FaultKind::kLoseLock, .word = "lose_lock"},
    {.kind = FaultKind::kDropCommands,
     .word = "drop_commands",
     .window = true,
     .link_fault = &kDropCommandsLinkFault},
    {.kind = FaultKind::kKillServer, .word = "kill_server", .opens_outage = true},
    {.kind = FaultKind::kDown, .word = "down", .window = true},
    {.kind = FaultKind::kRestartServer, .word = "restart_server", .forgets_key = true},
    {.kind = FaultKind::kPauseServer, .word = "pause_server", .window = true, .opens_outage = true},
    {.kind = FaultKind::kClockJump, .word = "clock_jump", .forgets_key = true},
    {.kind = FaultKind::kReplicationCut, .word = "replication_cut", .window = true},
    {.kind = FaultKind::kPromote, .word = "promote", .forgets_key = true, .opens_outage = true},
    {.kind = FaultKind::kFailover, .word = "failover", .forgets_key = true, .opens_outage = true},
    {.kind = FaultKind::kClientClock, .word = "client_clock"},
    // A manual failover's replica had every write of its primary (the default mode waits for
    // it); FORCE and TAKEOVER do not wait, so a key may be missing.
    {.kind = FaultKind::kClusterFailover,
     .word = "cluster_failover",
     .forgets_key = true,
     .opens_outage = true},
    // A migrating key moves with its TTL (MIGRATE); it is never lost.
    {.kind = FaultKind::kSlotMigration, .word = "slot_migration", .window = true},
    // A write the isolated primary took is lost if its replica is elected meanwhile; the
    // isolated side stops taking writes once it counts the majority failing.
    {.kind = FaultKind::kServerPartition,
     .word = "server_partition",
     .window = true,
     .forgets_key = true,
     .opens_outage = true},
}};

// The table is indexed by the enumerator: each row must sit at its own kind's place.
constexpr bool rows_in_order() {
  for (std::size_t i = 0; i < kFaultKinds.size(); ++i) {
    if (static_cast<std::size_t>(kFaultKinds[i].kind) != i) return false;
  }
  return true;
}
static_assert(rows_in_order(), "kFaultKinds must list the kinds in the order of FaultKind");

constexpr std::array<std::string_view, 3> kPhaseWords = {"instant", "start", "end"};

}  // namespace

const FaultTraits& traits(FaultKind kind) {
  const auto index = static_cast<std::size_t>(kind);
  LOCKSIM_ASSERT(index < kFaultKinds.size());
  return kFaultKinds[index];
}

std::optional<FaultKind> fault_kind(std::string_view word) {
  for (const FaultTraits& row : kFaultKinds) {
    if (row.word == word) return row.kind;
  }
  return std::nullopt;
}

const std::vector<FaultKind>& all_fault_kinds() {
  static const std::vector<FaultKind> kinds = [] {
    std::vector<FaultKind> all;
    for (const FaultTraits& row : kFaultKinds) all.push_back(row.kind);
    return all;
  }();
  return kinds;
}

const std::vector<FaultKind>& link_fault_kinds() {
  static const std::vector<FaultKind> kinds = [] {
    std::vector<FaultKind> links;
    for (const FaultTraits& row : kFaultKinds) {
      if (row.link_fault != nullptr) links.push_back(row.kind);
    }
    return links;
  }();
  return kinds;
}

std::string_view to_string(FaultPhase phase) {
  return kPhaseWords[static_cast<std::size_t>(phase)];
}

std::optional<FaultPhase> fault_phase_from_string(std::string_view word) {
  for (std::size_t i = 0; i < kPhaseWords.size(); ++i) {
    if (kPhaseWords[i] == word) return static_cast<FaultPhase>(i);
  }
  return std::nullopt;
}

}  // namespace locksim
