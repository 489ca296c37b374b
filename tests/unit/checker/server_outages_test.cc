// server_outages_test: a server fault that can cut the lock's users off opens an outage, which
// ends at the next grant; other faults open none.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "sim/checker/check.h"
#include "tests/unit/checker/checker_test_support.h"
#include "tests/unit/history_builder.h"

namespace locksim {
namespace {

using test::A;
using test::B;
using test::C;
using test::check;
using test::contains;
using test::HistoryBuilder;
using test::ms;

constexpr int kNemesis = C;

// outages_after: the outages of a history in which A holds, `faults` happen on n1 at 10 ms (and
// 11 ms, ...), one acquire of B fails at 20 ms and B is granted the lock at 50 ms.
std::vector<Finding> outages_after(const std::vector<std::pair<FaultKind, FaultPhase>>& faults) {
  HistoryBuilder b({"A", "B", "nemesis"});
  b.hold(A, ms(0), ms(1), ms(5), ms(6), 1000);
  double at_ms = 10;
  for (const auto& [kind, phase] : faults) b.server_fault(ms(at_ms++), kNemesis, kind, "n1", phase);
  b.acquire_invoke(ms(15), B, 1000).acquire_end(ms(20), B, EventType::kFail);
  b.acquire_invoke(ms(30), B, 1000).acquire_ok(ms(50), B, 1000).release(ms(60), ms(61), B);
  const CheckResult result = check(b.build());
  std::vector<Finding> outages;
  for (const Finding* f : result.of(FindingKind::kServerOutage)) outages.push_back(*f);
  return outages;
}

// Proves a kill, a server pause, a promotion, a failover, a manual cluster failover and a node cut
// off from its cluster each open one outage, named for what
// happened, from the fault to the next grant, counting the acquire that failed in between; a
// kill's `down` window and a pause's end open no second one.
TEST(CheckerTest, ServerFaultsThatCutTheLockOffOpenOneOutageEach) {
  const std::vector<std::pair<std::vector<std::pair<FaultKind, FaultPhase>>, std::string>> cases = {
      {{{FaultKind::kKillServer, FaultPhase::kInstant}, {FaultKind::kDown, FaultPhase::kStart}},
       "n1 killed"},
      {{{FaultKind::kPauseServer, FaultPhase::kStart}, {FaultKind::kPauseServer, FaultPhase::kEnd}},
       "n1 paused"},
      {{{FaultKind::kPromote, FaultPhase::kInstant}}, "n1 promoted"},
      {{{FaultKind::kFailover, FaultPhase::kInstant}}, "the failover to n1"},
      {{{FaultKind::kClusterFailover, FaultPhase::kInstant}}, "CLUSTER FAILOVER to n1"},
      {{{FaultKind::kServerPartition, FaultPhase::kStart},
        {FaultKind::kServerPartition, FaultPhase::kEnd}},
       "n1 cut off from its cluster"},
  };
  for (const auto& [faults, cause] : cases) {
    const std::vector<Finding> outages = outages_after(faults);
    ASSERT_EQ(outages.size(), 1u) << cause;
    EXPECT_EQ(outages[0].cause, cause);
    EXPECT_EQ(outages[0].from_ns, ms(10));
    EXPECT_EQ(outages[0].to_ns, ms(50));
    EXPECT_EQ(outages[0].amount, 1);
    EXPECT_TRUE(contains(outages[0].words, "the lock was next granted at 50.0 ms (to B)"))
        << outages[0].words;
  }
}

// Proves the faults that leave the server reachable (a restart, a clock jump, a cut replication
// link, a link fault naming the server) open no outage.
TEST(CheckerTest, OtherServerFaultsOpenNoOutage) {
  for (const auto& fault : std::vector<std::pair<FaultKind, FaultPhase>>{
           {FaultKind::kRestartServer, FaultPhase::kInstant},
           {FaultKind::kClockJump, FaultPhase::kInstant},
           {FaultKind::kReplicationCut, FaultPhase::kStart},
           {FaultKind::kReplicationCut, FaultPhase::kEnd},
           {FaultKind::kDown, FaultPhase::kEnd},
           {FaultKind::kPartition, FaultPhase::kStart},
           {FaultKind::kLoseReply, FaultPhase::kInstant},
       }) {
    EXPECT_TRUE(outages_after({fault}).empty()) << traits(fault.first).word;
  }
}

}  // namespace
}  // namespace locksim
