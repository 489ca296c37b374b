// fault.h: FaultKind and FaultPhase, what a fault event in the history is, and FaultTraits, what
// the checkers may conclude from each kind.
//
// The nemesis and the clients record a fault as a kind, history.jsonl writes the kind's word
// ("pause", "kill_server", ...), and the checkers read the kind's traits, never the word. A new
// kind is its enumerator below and its row in fault.cc (tests/unit/fault_test.cc checks the
// table); its word is then written and read back with no other change. A link fault kind (a
// window of a CommandPolicy on a client's links) adds its own file; see link_fault.h. A scripted
// server fault step's kind is a file of its own too (server_fault.h), but not a FaultKind: what it
// records are the kinds of the host operations it runs (a cut_replication step, the window
// "replication_cut").
//
//   const FaultTraits& pause = traits(FaultKind::kPause);  // pause.word == "pause"
//   std::optional<FaultKind> kind = fault_kind("kill_server");  // FaultKind::kKillServer
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace locksim {

struct LinkFaultType;  // link_fault.h

// FaultKind: what a fault event is about (`fault` in history.jsonl and results.json).
enum class FaultKind : std::uint8_t {
  // Faults aimed at a client (the event's `target`, or the client itself for lose_lock).
  kPause,      // window: the client is frozen (SIGSTOP, or its renewal thread held)
  kPartition,  // window: the client's links are cut (held or reset)
  kLoseReply,  // instant: the reply of the next command on the client's links is dropped
  kDelay,      // window: the client's next command is held in the proxy, then forwarded
  kLoseLock,   // instant: Doc D's lost iteration, recorded by the client itself; renewal stops
  // window: every Nth command on the client's links is swallowed (drop_commands.cc)
  kDropCommands,
  // Faults aimed at a server (the event's `server`).
  kKillServer,      // instant: SIGKILL; a window `down` opens with it
  kDown,            // window: from the kill until the restarted server answers
  kRestartServer,   // instant: the server is started again (it may answer from here on; the
                    // window `down` closes once it does), with what it persisted
  kPauseServer,     // window: SIGSTOP, then SIGCONT
  kClockJump,       // instant: the server's wall clock jumps ahead, so its keys expire early
  kReplicationCut,  // window: the replica's link to its primary is cut
  kPromote,         // instant: REPLICAOF NO ONE on a replica
  kFailover,        // instant: Sentinel promoted another server (the event names it)
  // Aimed at a client again (the event's `target`), recorded as the run starts:
  kClientClock,  // instant: the client's own clock runs off the others' (scenario client_clocks)
  // Aimed at a server of a Redis Cluster (the event's `server`):
  kClusterFailover,  // instant: CLUSTER FAILOVER [FORCE|TAKEOVER] made the replica a primary
  kSlotMigration,    // window: the lock key's slot migrates from the server to another primary
  kServerPartition,  // window: the server is cut off from the rest of its cluster (clients still
                     // reach it)
};

// FaultPhase: where a fault event stands in its fault window.
enum class FaultPhase : std::uint8_t {
  kInstant,  // a fault with no duration (an armed lost reply) or Doc D's lose_lock
  kStart,    // the window opens (a pause, a partition, a delayed command)
  kEnd,      // the window closes (resume, heal, the held command forwarded)
};

// FaultTraits: one kind's word and what a checker may conclude from it.
struct FaultTraits {
  FaultKind kind = FaultKind::kPause;
  // word: the kind's name in history.jsonl, results.json and every report; never changes, so
  // older histories read back.
  std::string_view word;
  // window: recorded as a start and an end (a FaultPhase other than kInstant); otherwise an
  // instant. Histories before schema 3 recorded every fault as an instant.
  bool window = false;
  // forgets_key: the server it is aimed at may no longer hold a key it had granted (it came back
  // without it, it was promoted before receiving it, or its clock made it expire early), so a
  // second holder afterwards is a lost lock rather than a racy acquire.
  bool forgets_key = false;
  // opens_outage: the lock's users may be cut off from the server it is aimed at until the lock
  // is granted again (for a window: at its start).
  bool opens_outage = false;
  // link_fault: set for a kind that is a window step on a client's links, run by a CommandPolicy
  // in its LinkProxy (link_fault.h): the step's parser and the policy's maker, in the kind's own
  // file. Null for every other kind.
  const LinkFaultType* link_fault = nullptr;
};

// traits: the row of `kind`. Asserts that `kind` is one of the enumerators.
const FaultTraits& traits(FaultKind kind);
// fault_kind: the kind whose word is `word`; nullopt for any other word.
std::optional<FaultKind> fault_kind(std::string_view word);
// all_fault_kinds: every kind, in the order of the enumeration.
const std::vector<FaultKind>& all_fault_kinds();
// link_fault_kinds: the kinds with a `link_fault` type, in the order of the enumeration.
const std::vector<FaultKind>& link_fault_kinds();

// to_string: the phase's word in history.jsonl ("instant", "start", "end").
std::string_view to_string(FaultPhase phase);
// fault_phase_from_string: the inverse of to_string; nullopt for any other word.
std::optional<FaultPhase> fault_phase_from_string(std::string_view word);

}  // namespace locksim
