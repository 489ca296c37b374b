// stale_writes_test: a write under a superseded grant is stale, accepted or rejected by fencing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/checker/check.h"
#include "tests/unit/checker/checker_test_support.h"
#include "tests/unit/history_builder.h"

namespace locksim {
namespace {

using test::A;
using test::B;
using test::check;
using test::counter;
using test::fenced_counter;
using test::HistoryBuilder;
using test::ms;
using test::resource_findings;
using test::stale_writes;

// kleppmann_pause: Kleppmann's example with a stock of 10. A is granted the lock (TTL 100 ms) and
// reads 10, then stalls past its lease; B is granted it at 150 ms, reads 10 and sells one (9);
// A resumes at 300 ms and writes 9 from its stale read, then both release. With `fenced`, the
// grants carry fencing numbers 1 and 2, the writes present them and the store refuses A's.
History kleppmann_pause(bool fenced) {
  HistoryBuilder h;
  h.acquire_invoke(ms(0), A, 100).acquire_ok(ms(1), A, 100).read(ms(2), A, "stock", 10);
  if (fenced) h.grant_fencing(1);
  h.acquire_invoke(ms(5), B, 100).acquire_ok(ms(150), B, 100).read(ms(151), B, "stock", 10);
  if (fenced) {
    h.grant_fencing(2)
        .fenced_write(ms(152), B, "stock", 9, 10, 2, true)
        .fenced_write(ms(300), A, "stock", 9, 10, 1, false);
  } else {
    h.write(ms(152), B, "stock", 9, 10).write(ms(300), A, "stock", 9, 10);
  }
  return h.release(ms(301), ms(302), A, 0).release(ms(310), ms(311), B).build();
}

// Proves a fenced store that refused the paused holder's stale write keeps the stock intact: the
// windows still overlap (mutex_violation, lease_expired), the resource is judged from the write it
// accepted, and the refused write is reported as a stale write, rejected.
TEST(CheckerTest, FencedStoreRejectsTheStaleWrite) {
  const CheckResult r = check(kleppmann_pause(true), fenced_counter(10));
  EXPECT_EQ(r.verdict, Verdict::kMutexViolation);
  EXPECT_EQ(r.causes(), std::vector<std::string>{"lease_expired"});
  EXPECT_TRUE(r.resource_intact());
  EXPECT_EQ(r.stats.resource_writes, 1);
  ASSERT_EQ(stale_writes(r).size(), 1u);
  const Finding& stale = *stale_writes(r)[0];
  EXPECT_EQ(stale.cause, "rejected");
  EXPECT_EQ(stale.key, "stock");
  EXPECT_EQ(stale.clients, (std::vector<int>{A, B}));
  EXPECT_EQ(stale.from_ns, ms(150));
  EXPECT_EQ(stale.to_ns, ms(300));
  EXPECT_EQ(stale.words,
            "A wrote 9 to stock at 300.0 ms under its grant of lock at 1.0 ms (fencing 1), "
            "superseded by B's at 150.0 ms (fencing 2): the fenced store rejected it (it had "
            "accepted fencing 2), so it changed nothing.");
  EXPECT_EQ(r.stats.stale_writes_accepted, 0);
  EXPECT_EQ(r.stats.stale_writes_rejected, 1);
  EXPECT_EQ(verdict_of(FindingKind::kStaleWrite), Verdict::kOk);
}

// Proves the same pause against a store that takes every write loses B's sale: resource_corrupted
// (lost_update) beside the overlap, and A's write is a stale write the store accepted. A fenced
// store shown no numbers (a lock without fencing) accepts it too: an unfenced client cannot be
// protected.
TEST(CheckerTest, UnfencedStoreAcceptsTheStaleWrite) {
  const History h = kleppmann_pause(false);
  for (const ResourceSpec& store : {counter(10), fenced_counter(10)}) {
    const CheckResult r = check(h, store);
    EXPECT_EQ(r.verdict, Verdict::kMutexViolation);
    EXPECT_FALSE(r.resource_intact());
    ASSERT_EQ(resource_findings(r).size(), 1u);
    const Finding& lost = *resource_findings(r)[0];
    EXPECT_EQ(lost.cause, "lost_update");
    EXPECT_EQ(lost.amount, 1);
    EXPECT_EQ(lost.words,
              "stock ends at 9 but 2 sales from 10 should leave 8: 1 update lost (A wrote 9 at "
              "300.0 ms computed from a stale read of 10).");
    ASSERT_EQ(stale_writes(r).size(), 1u);
    EXPECT_EQ(stale_writes(r)[0]->cause, "accepted");
    EXPECT_EQ(stale_writes(r)[0]->words,
              "A wrote 9 to stock at 300.0 ms under its grant of lock at 1.0 ms, superseded by "
              "B's at 150.0 ms: the store accepted it.");
    EXPECT_EQ(r.stats.stale_writes_accepted, 1);
    EXPECT_EQ(r.stats.stale_writes_rejected, 0);
  }
}

// Proves the near misses are not stale writes: a holder writing twice under one fencing number (the
// store accepts equal numbers), a holder superseded only by its own later grant, a write that
// failed on a timeout (no evidence either way), and a write under a grant that fencing numbers
// show to be the newer one although it was recorded first.
TEST(CheckerTest, NearMissesAreNotStaleWrites) {
  HistoryBuilder same_holder;
  same_holder.hold(A, ms(0), ms(1), ms(10), ms(11))
      .grant_fencing(1)
      .read(ms(2), A, "stock", 10)
      .fenced_write(ms(3), A, "stock", 9, 10, 1, true)
      .hold(B, ms(5), ms(12), ms(30), ms(31))
      .grant_fencing(2)
      .read(ms(13), B, "stock", 9)
      .fenced_write(ms(14), B, "stock", 8, 9, 2, true)
      .read(ms(15), B, "stock", 8)
      .fenced_write(ms(16), B, "stock", 7, 8, 2, true)
      .hold(A, ms(32), ms(33), ms(40), ms(41))
      .grant_fencing(3)
      .hold(A, ms(42), ms(43), ms(50), ms(51))
      .grant_fencing(4)
      .read(ms(44), A, "stock", 7)
      .fenced_write(ms(45), A, "stock", 6, 7, 4, true);
  const CheckResult ok = check(same_holder.build(), fenced_counter(10));
  EXPECT_EQ(ok.verdict, Verdict::kOk);
  EXPECT_TRUE(stale_writes(ok).empty());
  EXPECT_EQ(ok.stats.resource_writes, 4);

  // A's write timed out after B was granted the lock: it may or may not have happened.
  HistoryBuilder timed_out;
  timed_out.acquire_invoke(ms(0), A, 100).acquire_ok(ms(1), A, 100).read(ms(2), A, "stock", 10);
  timed_out.acquire_invoke(ms(5), B, 100)
      .acquire_ok(ms(150), B, 100)
      .write(ms(300), A, "stock", 9, 10);
  timed_out.last().type = EventType::kFail;
  timed_out.last().error = ErrorKind::kTimeout;
  EXPECT_TRUE(stale_writes(check(timed_out.build(), counter(10))).empty());

  // B's grant was recorded after A's but carries the lower number (its reply was read late): A's
  // is the newer grant, so B's write is the stale one and A's is not.
  HistoryBuilder reordered;
  reordered.acquire_invoke(ms(0), A, 100).acquire_ok(ms(10), A, 100).grant_fencing(2);
  reordered.acquire_invoke(ms(0), B, 100).acquire_ok(ms(12), B, 100).grant_fencing(1);
  reordered.fenced_write(ms(20), A, "stock", 9, 10, 2, true)
      .fenced_write(ms(21), B, "stock", 9, 10, 1, false);
  const CheckResult by_number = check(reordered.build(), fenced_counter(10));
  ASSERT_EQ(stale_writes(by_number).size(), 1u);
  EXPECT_EQ(stale_writes(by_number)[0]->clients, (std::vector<int>{B, A}));
  EXPECT_EQ(stale_writes(by_number)[0]->cause, "rejected");
}

}  // namespace
}  // namespace locksim
