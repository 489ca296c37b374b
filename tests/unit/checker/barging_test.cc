// barging_test: with CheckOptions::barging, a grant made while another client's earlier acquire
// of the same key still waited is a `barging` finding (newcomer, waiter; from the waiter's invoke
// to the grant) that changes no verdict; a FIFO handoff, a waiter that gave up first, another key,
// and the option off are not.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "sim/checker/check.h"
#include "sim/history/jsonl.h"
#include "tests/unit/checker/checker_test_support.h"
#include "tests/unit/history_builder.h"

namespace locksim {
namespace {

using test::A;
using test::B;
using test::C;
using test::HistoryBuilder;
using test::ms;

CheckResult check_barging(const History& h, bool barging = true) {
  return check_history(h, CheckOptions{.stuck_threshold_ns = ms(10000), .barging = barging});
}

// A holds [0, 100]; B asks at 10 and waits; C asks at 101, just after A's release, and gets it
// at 102 while B still waits (B gets it at 300, after C).
HistoryBuilder c_barges_past_b() {
  HistoryBuilder h;
  h.hold(A, ms(0), ms(1), ms(100), ms(101), 5000);
  h.acquire_invoke(ms(10), B, 5000);
  h.acquire_invoke(ms(101), C, 5000).acquire_ok(ms(102), C, 5000).release(ms(110), ms(111), C);
  h.acquire_ok(ms(300), B, 5000).release(ms(310), ms(311), B);
  return h;
}

TEST(Barging, ANewcomerGrantedWhileAnEarlierAcquireWaitsIsReported) {
  const CheckResult r = check_barging(c_barges_past_b().build());
  EXPECT_EQ(r.verdict, Verdict::kOk);
  const std::vector<const Finding*> found = r.of(FindingKind::kBarging);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0]->clients, (std::vector<int>{C, B}));
  EXPECT_EQ(found[0]->from_ns, ms(10));
  EXPECT_EQ(found[0]->to_ns, ms(102));
  EXPECT_EQ(found[0]->key, "lock");
  EXPECT_EQ(found[0]->words,
            "C got lock at 102.0 ms (it asked at 101.0 ms) while B, who asked earlier, was still "
            "waiting for it (since 10.0 ms): it barged past a waiter.");
}

TEST(Barging, OnlyWhenTheScenarioAsks) {
  EXPECT_EQ(check_barging(c_barges_past_b().build(), false).count(FindingKind::kBarging), 0u);
}

TEST(Barging, AFifoHandoffIsNot) {
  // B, who asked first, gets it at A's release; C, who asked later, after B.
  HistoryBuilder h;
  h.hold(A, ms(0), ms(1), ms(100), ms(101), 5000);
  h.acquire_invoke(ms(10), B, 5000);
  h.acquire_invoke(ms(20), C, 5000);
  h.acquire_ok(ms(102), B, 5000).release(ms(110), ms(111), B);
  h.acquire_ok(ms(112), C, 5000).release(ms(120), ms(121), C);
  EXPECT_EQ(check_barging(h.build()).count(FindingKind::kBarging), 0u);
}

TEST(Barging, AWaiterThatGaveUpOrDiedIsNoLongerWaiting) {
  HistoryBuilder h;
  h.hold(A, ms(0), ms(1), ms(100), ms(101), 5000);
  h.acquire_invoke(ms(10), B, 5000).acquire_end(ms(50), B, EventType::kFail);
  h.acquire_invoke(ms(101), C, 5000).acquire_ok(ms(102), C, 5000).release(ms(110), ms(111), C);
  EXPECT_EQ(check_barging(h.build()).count(FindingKind::kBarging), 0u);
}

TEST(Barging, AWaiterForAnotherKeyDoesNotCount) {
  HistoryBuilder h;
  h.hold(A, ms(0), ms(1), ms(100), ms(101), 5000);
  h.acquire_invoke(ms(10), B, 5000, "other");
  h.acquire_invoke(ms(101), C, 5000).acquire_ok(ms(102), C, 5000).release(ms(110), ms(111), C);
  h.acquire_ok(ms(300), B, 5000, "other").release(ms(310), ms(311), B, 1, "other");
  EXPECT_EQ(check_barging(h.build()).count(FindingKind::kBarging), 0u);
}

// queued_at: gives `client`'s acquire ending at `t` the time its first try was answered busy.
void queued_at(History& history, int client, Nanos t, Nanos queued) {
  for (Event& e : history.events) {
    if (e.f == Op::kAcquire && e.type != EventType::kInvoke && e.client == client &&
        e.time_ns == t) {
      set_queued_ns(e, queued);
      return;
    }
  }
  ADD_FAILURE() << "no acquire end at " << t;
}

// Two clients that ask within a round trip of each other reach the queue in either order: B asks
// at 50.000 ms and C at 50.010 ms while A holds; C is granted first. If B's first try was answered
// busy only after C asked (at 51 ms), C may have been queued first: no barging. If it was answered
// before C asked (at 50.005 ms), B was queued first and C barged past it.
TEST(Barging, AsksWithinARoundTripReachTheQueueInEitherOrder) {
  const auto history = [](Nanos b_queued) {
    HistoryBuilder h;
    h.hold(A, ms(0), ms(1), ms(100), ms(101), 5000);
    h.acquire_invoke(ms(50), B, 5000);
    h.acquire_invoke(ms(50) + 10'000, C, 5000).acquire_ok(ms(102), C, 5000);
    h.release(ms(110), ms(111), C);
    h.acquire_ok(ms(300), B, 5000).release(ms(310), ms(311), B);
    History built = h.build();
    queued_at(built, B, ms(300), b_queued);
    return built;
  };
  EXPECT_EQ(check_barging(history(ms(51))).count(FindingKind::kBarging), 0u);
  EXPECT_EQ(check_barging(history(ms(50) + 5'000)).count(FindingKind::kBarging), 1u);
  // Written to history.jsonl and read back, it is the same.
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("barging-" + std::to_string(::getpid()) + ".jsonl");
  write_history_jsonl(file, history(ms(50) + 5'000));
  const History read = read_history_jsonl(file);
  std::filesystem::remove(file);
  int seen = 0;
  for (const Event& e : read.events) {
    if (e.client == B && e.f == Op::kAcquire && e.type == EventType::kOk) {
      EXPECT_EQ(queued_ns(e), ms(50) + 5'000);
      ++seen;
    }
  }
  EXPECT_EQ(seen, 1);
  EXPECT_EQ(check_barging(read).count(FindingKind::kBarging), 1u);
}

// A queue keeps a waiter's place for the queue timeout after its last try: C asks at 10 and gives
// up at 20 (queued), B asks at 30 and waits, C asks again at 90 and is served first at 102. With
// a queue timeout of 500 ms C kept its place from 10: no barging; without one, C barged past B.
TEST(Barging, AClientAskingAgainWithinTheQueueTimeoutKeepsItsPlace) {
  HistoryBuilder h;
  h.hold(A, ms(0), ms(1), ms(100), ms(101), 5000);
  h.acquire_invoke(ms(10), C, 5000).acquire_end(ms(20), C, EventType::kFail);
  h.acquire_invoke(ms(30), B, 5000);
  h.acquire_invoke(ms(90), C, 5000).acquire_ok(ms(102), C, 5000).release(ms(110), ms(111), C);
  h.acquire_ok(ms(300), B, 5000).release(ms(310), ms(311), B);
  const History history = h.build();
  CheckOptions options{.stuck_threshold_ns = ms(10000), .barging = true};
  options.queue_timeout_ns = ms(500);
  EXPECT_EQ(check_history(history, options).count(FindingKind::kBarging), 0u);
  options.queue_timeout_ns = ms(50);  // C's place was gone at 70
  EXPECT_EQ(check_history(history, options).count(FindingKind::kBarging), 1u);
}

// A server that restarted without persistence while B waited forgot the queue with the key: C's
// grant past B is the cause queue_lost, a limit every queue on such a server has.
TEST(Barging, AQueueLostWithItsServerIsSaidSo) {
  HistoryBuilder h({"A", "B", "C", "nemesis"});
  h.hold(A, ms(0), ms(1), ms(100), ms(101), 5000);
  h.acquire_invoke(ms(10), B, 5000);
  h.server_fault(ms(50), 3, FaultKind::kRestartServer, "n1");
  h.acquire_invoke(ms(101), C, 5000).acquire_ok(ms(102), C, 5000).release(ms(110), ms(111), C);
  h.acquire_ok(ms(300), B, 5000).release(ms(310), ms(311), B);
  const CheckResult r = check_barging(h.build());
  const std::vector<const Finding*> found = r.of(FindingKind::kBarging);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0]->cause, "queue_lost");
  EXPECT_NE(found[0]->words.find("n1 was restarted at 50.0 ms"), std::string::npos)
      << found[0]->words;
  // A limit, not the lock's own (a run's summary said "the lock's own bug" where explore said a
  // limit of every queue).
  EXPECT_FALSE(is_own_finding(*found[0]));
  // Without the restart the same grant is the lock's own barging.
  const CheckResult own = check_barging(c_barges_past_b().build());
  EXPECT_EQ(own.of(FindingKind::kBarging)[0]->cause, "");
  EXPECT_TRUE(is_own_finding(*own.of(FindingKind::kBarging)[0]));
}

// lua_fair_queue on a Redis Cluster, explore seed 32695 (all faults), as recorded: C asked first,
// and its place was written on p1 as CLUSTER FAILOVER FORCE made r1 the primary, which never got
// it; B, queued on r1, went first. The queue was lost by the failover while C's ask was on its
// way (queue_lost, a limit), not barged past by the lock.
TEST(Barging, AFailoverWhileTheWaitersAskWasOnItsWayLosesTheQueue) {
  // Seed 33091: A's grant on p1 never reached r1, which FORCE made the primary with A's old place
  // first in its queue: A went first again past B, who asked after the failover.
  for (const char* file : {"cluster_failover_loses_a_queued_place.jsonl",
                           "cluster_failover_restores_a_granted_place.jsonl"}) {
    const History history = read_history_jsonl(std::filesystem::path(LOCKSIM_TEST_SOURCE_DIR) /
                                               "tests/unit/checker/histories" / file);
    const CheckResult result = check_barging(history);  // `of` points into it: kept alive
    const auto barged = result.of(FindingKind::kBarging);
    ASSERT_FALSE(barged.empty()) << file;
    for (const Finding* f : barged) EXPECT_EQ(f->cause, "queue_lost") << f->words;
  }
}

}  // namespace
}  // namespace locksim
