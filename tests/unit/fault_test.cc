// fault_test: every fault kind has its own word, which reads back to it, and the traits the
// checkers judge by hold for the kinds they were written for.
#include "sim/fault/fault.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sim/fault/link_fault.h"

namespace locksim {
namespace {

// kinds_where: the words of the kinds whose `trait` is true, in the order of the enumeration.
template <typename Trait>
std::vector<std::string> kinds_where(Trait trait) {
  std::vector<std::string> words;
  for (const FaultKind kind : all_fault_kinds()) {
    if (trait(traits(kind))) words.emplace_back(traits(kind).word);
  }
  return words;
}

// Proves the words are exactly those every history.jsonl since schema 2 has written, one per
// kind: a renamed or lost word would make older histories unreadable.
TEST(FaultKind, WordsAreTheHistorysWords) {
  EXPECT_EQ(
      kinds_where([](const FaultTraits&) { return true; }),
      (std::vector<std::string>{
          "pause", "partition", "lose_reply", "delay", "lose_lock", "drop_commands", "kill_server",
          "down", "restart_server", "pause_server", "clock_jump", "replication_cut", "promote",
          "failover", "client_clock", "cluster_failover", "slot_migration", "server_partition"}));
}

// Proves every kind has a distinct, non-empty word that reads back to it, each row sits at its own
// kind, and words that are not a kind's (another case, empty, a phase) read as none.
TEST(FaultKind, EveryKindRoundTripsThroughItsWord) {
  std::set<std::string> seen;
  for (const FaultKind kind : all_fault_kinds()) {
    const FaultTraits& row = traits(kind);
    EXPECT_EQ(row.kind, kind);
    EXPECT_FALSE(row.word.empty());
    EXPECT_TRUE(seen.insert(std::string(row.word)).second) << row.word << " is listed twice";
    EXPECT_EQ(fault_kind(row.word), kind) << row.word;
  }
  for (const std::string_view word : {"", "Pause", "pause ", "start", "crash", "lose_locks"}) {
    EXPECT_FALSE(fault_kind(word).has_value()) << word;
  }
}

// Proves the traits the checkers rely on: which kinds have a start and an end, which may make a
// server forget a key it granted (a later overlap is lock_lost), and which open a server outage.
TEST(FaultKind, TraitsHoldForTheKindsTheCheckersNameThem) {
  EXPECT_EQ(kinds_where([](const FaultTraits& t) { return t.window; }),
            (std::vector<std::string>{"pause", "partition", "delay", "drop_commands", "down",
                                      "pause_server", "replication_cut", "slot_migration",
                                      "server_partition"}));
  EXPECT_EQ(kinds_where([](const FaultTraits& t) { return t.forgets_key; }),
            (std::vector<std::string>{"restart_server", "clock_jump", "promote", "failover",
                                      "cluster_failover", "server_partition"}));
  EXPECT_EQ(kinds_where([](const FaultTraits& t) { return t.opens_outage; }),
            (std::vector<std::string>{"kill_server", "pause_server", "promote", "failover",
                                      "cluster_failover", "server_partition"}));
}

// Proves every link fault kind is a window with a complete step type (the scenario parser and the
// driver rely on it), and that drop_commands is one.
TEST(FaultKind, LinkFaultKindsAreWindowsWithACompleteType) {
  EXPECT_EQ(kinds_where([](const FaultTraits& t) { return t.link_fault != nullptr; }),
            (std::vector<std::string>{"drop_commands"}));
  for (const FaultKind kind : link_fault_kinds()) {
    const FaultTraits& row = traits(kind);
    EXPECT_TRUE(row.window) << row.word;
    EXPECT_FALSE(row.forgets_key || row.opens_outage) << row.word;
    ASSERT_NE(row.link_fault->parse, nullptr) << row.word;
    EXPECT_TRUE(row.link_fault->duration_key.ends_with("_ms")) << row.word;
  }
}

// Proves drop_commands's policy swallows exactly every Nth command, counted from 1, and nothing
// else about a command's fate.
TEST(FaultKind, DropCommandsPolicyDropsEveryNth) {
  const nlohmann::json step = {{"every", 3}};
  const std::string file = "test.json";
  const std::shared_ptr<CommandPolicy> policy =
      traits(FaultKind::kDropCommands)
          .link_fault->parse(::locksim::json::JsonReader(step, "$", file))
          ->make_policy();
  for (std::uint64_t index = 1; index <= 9; ++index) {
    const CommandFate fate = policy->next(index, 42);
    EXPECT_EQ(fate.drop_command, index % 3 == 0) << index;
    EXPECT_FALSE(fate.held || fate.drop_reply) << index;
    EXPECT_LE(fate.due, 42) << index;
  }
}

// Proves the phases keep their words in history.jsonl and read back.
TEST(FaultPhase, RoundTripsThroughItsWord) {
  for (const FaultPhase phase : {FaultPhase::kInstant, FaultPhase::kStart, FaultPhase::kEnd}) {
    EXPECT_EQ(fault_phase_from_string(to_string(phase)), phase);
  }
  EXPECT_EQ(to_string(FaultPhase::kStart), "start");
  EXPECT_EQ(to_string(FaultPhase::kEnd), "end");
  EXPECT_FALSE(fault_phase_from_string("pause").has_value());
}

}  // namespace
}  // namespace locksim
