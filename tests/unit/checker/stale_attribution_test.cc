// stale_attribution_test: a release is stale, and a renewal stolen, only if the key it changed was
// granted to another client after the caller's own grant; the boundary cases of that rule.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "sim/checker/check.h"
#include "sim/history/jsonl.h"
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
using test::stale_releases;
using test::violations;

constexpr int kAttributionNemesis = 3;

// set_grant_validity: gives the latest acquire ok the validity a multi-server lock promised (Redlock).
void set_grant_validity(HistoryBuilder& h, std::int32_t validity_ms) {
  for (auto it = h.events().rbegin(); it != h.events().rend(); ++it) {
    if (it->f == Op::kAcquire && it->type == EventType::kOk) {
      it->acquire().validity_ms = validity_ms;
      return;
    }
  }
}

// Proves the lua_owner seed-15007 shape is no stale release: B's lease ran out at 100.1 ms, C was
// granted after it and later re-granted; C's release that deleted in between deleted C's own key
// (B's was gone when C was granted), so both overlaps with B are B's expired lease.
TEST(StaleAttributionTest, ReleaseOfAKeyReGrantedToTheReleaserIsNotStale) {
  HistoryBuilder h;
  h.acquire_invoke(0, B, 100).acquire_ok(ms(0.1), B, 100).sent_at(0);
  h.acquire_invoke(ms(0.9), C, 100).acquire_ok(ms(104.3), C, 100).sent_at(ms(103.9));
  h.release(ms(203.1), ms(204.8), C, 1);  // its lease ran out from 203.9 ms on
  h.acquire_invoke(ms(204.8), C, 100).acquire_ok(ms(205.3), C, 100).sent_at(ms(204.8));
  h.release(ms(206.2), ms(206.9), B, 0);
  h.release(ms(225.6), ms(226.2), C, 1);
  const CheckResult r = check(h.build());
  ASSERT_EQ(violations(r).size(), 2u);
  for (const Finding* v : violations(r)) {
    EXPECT_EQ(v->cause, "lease_expired") << v->words;
    EXPECT_EQ(v->clients, (std::vector<int>{B, C})) << v->words;
  }
  EXPECT_TRUE(stale_releases(r).empty());
}

// Proves a release invoked exactly at its own lease end judges its victims by grant order: B,
// granted before C (and still inside on its expired lease), lost nothing to C's release; a client
// granted at that very instant, after C, did (a blind DEL's stale release).
TEST(StaleAttributionTest, ReleaseExactlyAtTheLeaseEnd) {
  HistoryBuilder before;
  before.acquire_invoke(0, B, 50).acquire_ok(0, B, 50).sent_at(0);
  before.acquire_invoke(ms(1), C, 100).acquire_ok(ms(60), C, 100).sent_at(ms(55));
  before.release(ms(155), ms(156), C, 1);  // exactly at its lease's earliest end, 155 ms
  before.release(ms(300), ms(301), B, 0);
  EXPECT_TRUE(stale_releases(check(before.build())).empty());

  HistoryBuilder after;
  after.acquire_invoke(0, A, 100).acquire_ok(0, A, 100).sent_at(0);
  after.acquire_invoke(ms(1), B, 100).acquire_ok(ms(100), B, 100).sent_at(ms(100));
  after.release(ms(100), ms(101), A, 1);  // exactly at its lease end, as B got in
  after.release(ms(150), ms(151), B, 0);
  const CheckResult r = check(after.build());
  ASSERT_EQ(stale_releases(r).size(), 1u);
  EXPECT_EQ(stale_releases(r)[0]->clients, (std::vector<int>{A, B}));
}

// Proves a release under way while the next holder was granted, whose own key could not yet have
// expired (its TTL from the send, not Redlock's shorter validity), deleted its own key and no
// other: the next holder's SET NX needed it gone, and nothing else could have removed it (Redlock
// seed 11106). A lost release reply of another client in between can have removed it: then the
// order is unknown, and the stale release stands.
TEST(StaleAttributionTest, ReleaseThatRemovedItsOwnKeyBeforeTheNextGrant) {
  const auto history = [](bool lost_release_between) {
    HistoryBuilder h;
    if (lost_release_between) {
      h.acquire_invoke(0, A, 100).acquire_ok(ms(1), A, 100).sent_at(0);
      h.event(ms(100), A, EventType::kOk, Op::kExit);
      h.event(ms(100), A, EventType::kInvoke, Op::kRelease);
      h.acquire_end(ms(150), A, EventType::kInfo);
      h.last().f = Op::kRelease;  // the release's reply was lost: it may have deleted
    }
    h.acquire_invoke(ms(100), C, 100).acquire_ok(ms(110), C, 100).sent_at(ms(105));
    set_grant_validity(h, 80);  // lease until 190 ms; the key lives until at least 205 ms
    h.event(ms(160), C, EventType::kOk, Op::kExit);
    h.event(ms(160), C, EventType::kInvoke, Op::kRelease);
    h.nemesis(ms(160), kAttributionNemesis, C, FaultKind::kDelay, FaultPhase::kStart);
    h.acquire_invoke(ms(120), B, 100).acquire_ok(ms(185), B, 100).sent_at(ms(175));
    set_grant_validity(h, 80);
    h.nemesis(ms(188), kAttributionNemesis, C, FaultKind::kDelay, FaultPhase::kEnd);
    h.event(ms(195), C, EventType::kOk, Op::kRelease).last().release().deleted = 1;
    h.release(ms(400), ms(401), B, 0);
    return h.build();
  };
  EXPECT_TRUE(stale_releases(check(history(false))).empty());
  const CheckResult r = check(history(true));
  ASSERT_EQ(stale_releases(r).size(), 1u);
  EXPECT_EQ(stale_releases(r)[0]->clients, (std::vector<int>{C, B}));
}

// Proves a genuine stale release of a blind DEL is still found and named as the overlap's cause
// (scenarios/stale-release.json): A's lease ran out, B was granted after A, A's DEL deleted B's
// key and C got in while B's lease still ran.
TEST(StaleAttributionTest, BlindDeleteOfANewerGrantIsStale) {
  HistoryBuilder h;
  h.hold(A, 0, 0, ms(200), ms(201), 100);
  h.hold(B, ms(10), ms(150), ms(400), ms(401), 1000);
  h.hold(C, ms(20), ms(210), ms(300), ms(301), 1000);
  const CheckResult r = check(h.build());
  ASSERT_EQ(violations(r).size(), 2u);
  EXPECT_EQ(violations(r)[0]->cause, "lease_expired");  // A, B
  EXPECT_EQ(violations(r)[1]->clients, (std::vector<int>{B, C, A}));
  EXPECT_EQ(violations(r)[1]->cause, "stale_release");
  ASSERT_EQ(stale_releases(r).size(), 1u);
  EXPECT_EQ(stale_releases(r)[0]->clients, (std::vector<int>{A, B}));
}

// Proves a renewal sent before another client was granted and answered after it (lua_owner_renew
// seed 2478, a clock jump) is not stolen: it may have run first, on the renewer's own key. Sent
// after that grant was answered, it can only have extended the other client's key: stolen.
TEST(StaleAttributionTest, RenewalInFlightAcrossAGrantIsNotStolen) {
  const auto history = [](Nanos extend_invoke_ns) {
    HistoryBuilder h;
    h.acquire_invoke(0, A, 100).acquire_ok(ms(2.6), A, 100).sent_at(0);
    h.acquire_invoke(ms(2.6), B, 100).acquire_ok(ms(41.15), B, 100).sent_at(ms(39.7));
    h.extend(extend_invoke_ns, ms(41.17), A, 100);
    h.release(ms(41.17), ms(46.2), A, 0);
    h.release(ms(47.2), ms(49.0), B, 1);
    return h.build();
  };
  EXPECT_EQ(check(history(ms(35.6))).count(FindingKind::kStolenRenewal), 0u);
  const CheckResult r = check(history(ms(41.16)));
  const std::vector<const Finding*> stolen = r.of(FindingKind::kStolenRenewal);
  ASSERT_EQ(stolen.size(), 1u);
  EXPECT_EQ(stolen[0]->clients, (std::vector<int>{A, B}));
}

// Proves a renewal of the renewer's own re-granted key is not stolen while an earlier holder,
// granted before that re-grant, is still inside on its expired lease; a renewal that returned 1
// after its own lease had certainly run out, while a newer holder was inside, is stolen.
TEST(StaleAttributionTest, RenewalOfOwnReGrantedKeyIsNotStolen) {
  HistoryBuilder own;
  own.hold(A, 0, 0, ms(10), ms(11), 100);
  own.acquire_invoke(ms(5), B, 100).acquire_ok(ms(12), B, 100).sent_at(ms(11));
  own.acquire_invoke(ms(20), A, 100).acquire_ok(ms(130), A, 100).sent_at(ms(125));
  own.extend(ms(160), ms(161), A, 100);  // B is inside, but A's grant came after B's
  own.release(ms(200), ms(201), B, 0);
  own.release(ms(210), ms(211), A, 1);
  EXPECT_EQ(check(own.build()).count(FindingKind::kStolenRenewal), 0u);

  HistoryBuilder late;
  late.acquire_invoke(0, A, 100).acquire_ok(ms(1), A, 100).sent_at(0);
  late.acquire_invoke(ms(5), B, 100).acquire_ok(ms(102), B, 100).sent_at(ms(101.5));
  late.extend(ms(101.8), ms(103), A, 100);  // sent before B's grant, but after A's key expired
  late.release(ms(150), ms(151), A, 0);
  late.release(ms(160), ms(161), B, 1);
  const CheckResult late_result = check(late.build());  // kept: of() points into its findings
  const std::vector<const Finding*> stolen = late_result.of(FindingKind::kStolenRenewal);
  ASSERT_EQ(stolen.size(), 1u);
  EXPECT_TRUE(contains(stolen[0]->words, "it extended B's lock, not A's")) << stolen[0]->words;
}

// Proves a release whose reply never came is the cause of an overlap nothing else explains: A's
// DEL (a blind one) was held on the link past its call's timeout and let go once B held the lock;
// C got in while B's lease was valid. The overlap is A's stale release, not a racy acquire. A
// victim granted before the releaser's own grant lost nothing to it (its key was gone when the
// releaser's SET NX found the lock free): then the overlap stays what it was.
TEST(StaleAttributionTest, UnansweredReleaseLateDelete) {
  const auto history = [](bool victim_before_releaser) {
    HistoryBuilder h;
    if (victim_before_releaser) {
      h.acquire_invoke(0, B, 300).acquire_ok(ms(1), B, 300).sent_at(0);
      h.acquire_invoke(ms(2), A, 100).acquire_ok(ms(3), A, 100).sent_at(ms(2));  // racy itself
    } else {
      h.acquire_invoke(0, A, 100).acquire_ok(ms(1), A, 100).sent_at(0);
    }
    h.event(ms(2), A, EventType::kOk, Op::kExit);
    h.event(ms(2), A, EventType::kInvoke, Op::kRelease);
    h.acquire_end(ms(202), A, EventType::kInfo);
    h.last().f = Op::kRelease;  // timed out: the DEL may land any time later
    if (!victim_before_releaser) {
      h.acquire_invoke(ms(250), B, 100).acquire_ok(ms(251), B, 100).sent_at(ms(250));
    }
    h.acquire_invoke(ms(252), C, 100).acquire_ok(ms(253), C, 100).sent_at(ms(253));
    h.release(ms(310), ms(311), B, 0);
    h.release(ms(320), ms(321), C, 1);
    return h.build();
  };
  const CheckResult late = check(history(false));
  ASSERT_EQ(violations(late).size(), 1u);
  EXPECT_EQ(violations(late)[0]->cause, "stale_release") << violations(late)[0]->words;
  EXPECT_EQ(violations(late)[0]->clients, (std::vector<int>{B, C, A}));
  EXPECT_TRUE(contains(violations(late)[0]->words, "A's release invoked at 2.0 ms was never answered"))
      << violations(late)[0]->words;

  const CheckResult own = check(history(true));
  for (const Finding* v : violations(own)) {
    if (v->clients[0] == B && v->clients[1] == C) {
      EXPECT_EQ(v->cause, "racy_acquire") << v->words;
    }
  }
}

// Proves a multi-server release that deleted no more keys than its client held where the next
// holder was not granted deleted its own keys there (Redlock seed 408321): A granted on five
// servers, its lease run out, B granted on the three where A's keys had expired (A's outlived B's
// SET NX on n4 and n5), A's release then deleted 2. Deleting 3 it must have deleted one of B's;
// and with a restart in between, A's keys on n4 and n5 may be gone: a stale release both times.
TEST(StaleAttributionTest, MultiServerReleaseOfItsOwnKeysWhereTheVictimHoldsNone) {
  const auto history = [](std::int32_t deleted, bool restart) {
    HistoryBuilder h({"A", "B", "nemesis"});
    h.servers({"n1", "n2", "n3", "n4", "n5"});
    h.acquire_invoke(ms(104), A, 100).acquire_ok(ms(105), A, 100).sent_at(ms(104.9));
    h.granted_on({0, 1, 2, 3, 4});
    if (restart) h.server_fault(ms(150), C, FaultKind::kRestartServer, "n4");
    h.acquire_invoke(ms(205.2), B, 100).acquire_ok(ms(205.49), B, 100).sent_at(ms(205.2));
    h.granted_on({0, 1, 2});
    h.release(ms(205.5), ms(205.7), A, deleted);
    h.release(ms(235), ms(235.3), B, 3);
    return h.build();
  };
  EXPECT_TRUE(stale_releases(check(history(2, false))).empty())
      << stale_releases(check(history(2, false)))[0]->words;
  EXPECT_EQ(stale_releases(check(history(3, false))).size(), 1u);
  EXPECT_EQ(stale_releases(check(history(2, true))).size(), 1u);

  // Seed 518114: a clock jump on n2, the one server both held, took A's key there; A's release
  // deleted 1, its own key on n1 or n3 (a fault elsewhere leaves those alone).
  HistoryBuilder jumped({"A", "B", "nemesis"});
  jumped.servers({"n1", "n2", "n3", "n4", "n5"});
  jumped.acquire_invoke(ms(75), A, 100).acquire_ok(ms(92.5), A, 100).sent_at(ms(75.5));
  jumped.granted_on({0, 1, 2});
  jumped.server_fault(ms(123.3), C, FaultKind::kClockJump, "n2");
  jumped.acquire_invoke(ms(128), B, 100).acquire_ok(ms(140.7), B, 100).sent_at(ms(128.3));
  jumped.granted_on({1, 3, 4});
  jumped.release(ms(172.4), ms(188.7), A, 1);
  jumped.release(ms(212.5), ms(226.3), B, 3);
  EXPECT_TRUE(stale_releases(check(jumped.build())).empty());
}

// Redlock seed 155999 of explore (every fault, three at most), as recorded: clock jumps on n1, n2
// and n5 while A's acquire was under way; C got n1, n3 and n4 (A's key on n1 had been set before
// the jump); A's release deleted 2, its own keys on n2 and n5 (set after their jumps); B got in
// once C's lease had run out while C was paused. Not A's stale release (a jump while a grant is
// under way may come before its SET): the overlaps are the jumps' (lock_lost) and the lease's.
TEST(StaleAttributionTest, AFaultWhileTheGrantWasUnderWayLeavesTheReleasersKeysThere) {
  const History history = read_history_jsonl(
      std::filesystem::path(LOCKSIM_TEST_SOURCE_DIR) /
      "tests/unit/checker/histories/redlock_clock_jumps_as_the_grant_returns.jsonl");
  const CheckResult result = check_history(history, CheckOptions{});
  EXPECT_TRUE(result.of(FindingKind::kStaleRelease).empty())
      << result.of(FindingKind::kStaleRelease)[0]->words;
  std::set<std::string> causes;
  for (const Finding* f : result.of(FindingKind::kMutexViolation)) causes.insert(f->cause);
  EXPECT_EQ(causes, (std::set<std::string>{"lease_expired", "lock_lost"}));
}

// Redlock seed 173643 of the swarm, as recorded (tests/unit/checker/histories): clock jumps on a
// majority let B and then C in (lock_lost); C's release of its keys on n1 and n5 was in flight
// when n1's clock jumped, so what it deleted there is not known; A got in after B's lease had run
// out. The overlap is the lease's (lease_expired), not C's release: no stale release is claimed.
TEST(StaleAttributionTest, AReleaseDuringAServerFaultIsNoStaleReleaseOnceTheLeaseRanOut) {
  const History history =
      read_history_jsonl(std::filesystem::path(LOCKSIM_TEST_SOURCE_DIR) /
                         "tests/unit/checker/histories/redlock_clock_jump_during_release.jsonl");
  const CheckResult result = check_history(history, CheckOptions{});
  std::set<std::string> causes;
  for (const Finding* f : result.of(FindingKind::kMutexViolation)) causes.insert(f->cause);
  EXPECT_EQ(causes, (std::set<std::string>{"lease_expired", "lock_lost"}));
}

}  // namespace
}  // namespace locksim

namespace locksim {
namespace {

// lua_owner on a Redis Cluster, explore seed 4296 (all faults), as recorded: C's key reached r1;
// a clock jump on p1 expired it there and A was granted on p1 (r1's link cut: A's key never
// reached it); CLUSTER FAILOVER TAKEOVER made r1 the primary, with C's key; C's release there
// deleted its own key (lua_owner checks the owner). The overlaps are the failover's (lock_lost),
// not a stale release: a release after a fault that may have forgotten the earlier key cannot be
// said to have deleted it.
TEST(StaleAttributionTest, AReleaseAfterAFailoverMayHaveDeletedItsOwnResurrectedKey) {
  const History history = read_history_jsonl(
      std::filesystem::path(LOCKSIM_TEST_SOURCE_DIR) /
      "tests/unit/checker/histories/cluster_takeover_resurrects_releasers_key.jsonl");
  const CheckResult result = check_history(history, CheckOptions{});
  std::set<std::string> causes;
  for (const Finding* f : result.of(FindingKind::kMutexViolation)) causes.insert(f->cause);
  EXPECT_EQ(causes.count("stale_release"), 0u);
  EXPECT_EQ(causes.count("lock_lost"), 1u);
  EXPECT_TRUE(result.of(FindingKind::kStaleRelease).empty());
}

// rw_lock_fair on a Redis Cluster, explore seed 11082 (every fault, three at most), as recorded:
// B's read hold reached r1; a clock jump on p1 expired it there, r1's link was cut, and A got the
// write lock on p1; CLUSTER FAILOVER TAKEOVER made r1, with B's hold and without A's key, the
// primary; B, its lease long run out, released its own hold there (deleted 1) while A was inside.
// Not a stale release of rw_lock_fair's: a fault since A's grant may have made the server forget
// A's key (the overlap is the failover's, lock_lost).
TEST(StaleAttributionTest, AReleaseAfterItsLeaseAndAFailoverMayHaveDeletedItsOwnResurrectedKey) {
  const History history = read_history_jsonl(
      std::filesystem::path(LOCKSIM_TEST_SOURCE_DIR) /
      "tests/unit/checker/histories/cluster_takeover_read_hold_released_after_its_lease.jsonl");
  const CheckResult result = check_history(history, CheckOptions{});
  EXPECT_TRUE(result.of(FindingKind::kStaleRelease).empty())
      << result.of(FindingKind::kStaleRelease)[0]->words;
  for (const Finding* f : result.of(FindingKind::kMutexViolation)) {
    EXPECT_NE(f->cause, "stale_release") << f->words;
  }
}

}  // namespace
}  // namespace locksim

namespace locksim {
namespace {

// lua_owner_renew on a Redis Cluster, explore seed 26571 (all faults), as recorded: B's key
// reached r1; a clock jump on p1 let A in there (r1's link cut); CLUSTER FAILOVER TAKEOVER made r1
// the primary, with B's key, and B's owner-checked renewal extended its own key there. No stolen
// renewal is claimed: a fault since A entered may have made the server forget A's key.
TEST(StaleAttributionTest, ARenewalAfterAFailoverMayHaveExtendedItsOwnResurrectedKey) {
  // Seed 350490: the same, but the takeover came while A's SET on p1 was being answered.
  for (const char* file :
       {"cluster_takeover_renews_own_key.jsonl", "cluster_takeover_as_the_grant_returns.jsonl"}) {
    const History history = read_history_jsonl(std::filesystem::path(LOCKSIM_TEST_SOURCE_DIR) /
                                               "tests/unit/checker/histories" / file);
    const CheckResult result = check_history(history, CheckOptions{});
    EXPECT_TRUE(result.of(FindingKind::kStolenRenewal).empty()) << file;
    std::set<std::string> causes;
    for (const Finding* f : result.of(FindingKind::kMutexViolation)) causes.insert(f->cause);
    EXPECT_EQ(causes.count("lock_lost"), 1u) << file;
  }
}

}  // namespace
}  // namespace locksim
