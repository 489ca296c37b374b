// read_write_test: a read-write lock (History::read_write) lets read holds overlap each other but
// nothing overlap a write hold; a writer kept waiting past the scenario's bound while readers got
// in after it asked is starved; a reader refused the write lock while reading is an upgrade
// deadlock; a reader's release that frees nothing is no idle hold.
#include <gtest/gtest.h>

#include <string>

#include "sim/checker/check.h"
#include "tests/unit/checker/checker_test_support.h"
#include "tests/unit/history_builder.h"

namespace locksim {
namespace {

using test::A;
using test::B;
using test::C;
using test::contains;
using test::deadlocks;
using test::HistoryBuilder;
using test::ms;
using test::violations;

constexpr std::int64_t kRwTtlMs = 5000;

History read_write(History history) {
  history.read_write = true;
  return history;
}

CheckResult check_rw(const History& history, Nanos writer_wait_ns = ms(500)) {
  CheckOptions options;
  options.stuck_threshold_ns = ms(500);
  options.writer_wait_ns = writer_wait_ns;
  return check_history(history, options);
}

// hold_as: a whole cycle of `client` whose acquire asked for `mode`.
void hold_as(HistoryBuilder& builder, int client, LockMode mode, Nanos ok, Nanos exit,
             std::int64_t deleted = 1) {
  builder.acquire_invoke(ok - ms(1), client, kRwTtlMs);
  builder.last().mode = mode;
  builder.acquire_ok(ok, client, kRwTtlMs);
  for (auto it = builder.events().rbegin(); it != builder.events().rend(); ++it) {
    if (it->f == Op::kAcquire && it->type == EventType::kOk) {
      it->mode = mode;
      break;
    }
  }
  builder.release(exit, exit + ms(1), client, deleted);
}

// Proves two read holds may overlap, while a write hold overlapping a read hold is a violation,
// and the same two reads are one in a history that is not a read-write lock's.
TEST(ReadWrite, ReadersShareAWriterExcludes) {
  HistoryBuilder readers;
  hold_as(readers, A, LockMode::kRead, ms(1), ms(100), 0);
  hold_as(readers, B, LockMode::kRead, ms(10), ms(110));
  EXPECT_EQ(check_rw(read_write(readers.build())).verdict, Verdict::kOk);
  EXPECT_EQ(check_rw(readers.build()).verdict, Verdict::kMutexViolation);

  HistoryBuilder writer;
  hold_as(writer, A, LockMode::kRead, ms(1), ms(100), 0);
  hold_as(writer, B, LockMode::kWrite, ms(10), ms(110));
  const CheckResult r = check_rw(read_write(writer.build()));
  EXPECT_EQ(r.verdict, Verdict::kMutexViolation);
  ASSERT_EQ(violations(r).size(), 1u);
  EXPECT_EQ(violations(r)[0]->clients, (std::vector<int>{A, B}));
}

// Proves a writer that waited past the bound while readers got in after its first busy answer is
// starved (writer_starved, the lock's own), and that the same wait without a reader coming after
// it, or within the bound, is not.
TEST(ReadWrite, AWriterKeptWaitingByLaterReadersIsStarved) {
  const auto history = [](Nanos second_reader_ok) {
    HistoryBuilder builder;
    hold_as(builder, A, LockMode::kRead, ms(1), ms(700), 0);
    builder.acquire_invoke(ms(5), C, kRwTtlMs);
    builder.last().mode = LockMode::kWrite;
    hold_as(builder, B, LockMode::kRead, second_reader_ok, ms(900));
    builder.acquire_ok(ms(901), C, kRwTtlMs);
    builder.release(ms(950), ms(951), C);
    History h = read_write(builder.build());
    for (Event& e : h.events) {
      if (e.client == C && e.f == Op::kAcquire && e.type == EventType::kOk) {
        e.mode = LockMode::kWrite;
        set_queued_ns(e, ms(6));
      }
    }
    return h;
  };
  const CheckResult starved = check_rw(history(ms(300)));
  EXPECT_EQ(starved.verdict, Verdict::kDeadlock);
  ASSERT_EQ(deadlocks(starved).size(), 1u);
  EXPECT_EQ(deadlocks(starved)[0]->cause, "writer_starved");
  EXPECT_TRUE(is_own_finding(*deadlocks(starved)[0]));
  EXPECT_TRUE(contains(deadlocks(starved)[0]->words,
                       "C waited for the write lock of lock from 6.0 ms (its first busy answer) "
                       "and got it only at 901.0 ms"))
      << deadlocks(starved)[0]->words;
  EXPECT_TRUE(contains(deadlocks(starved)[0]->words, "readers got in 1 time after it had asked"))
      << deadlocks(starved)[0]->words;
  // Within a bound of a second: no finding.
  EXPECT_TRUE(deadlocks(check_rw(history(ms(300)), ms(1000))).empty());
}

// Proves a reader that asked for the write lock while reading and gave up is an upgrade deadlock
// (a limit of the kind, not the lock's own), and its read hold goes on.
TEST(ReadWrite, AReaderRefusedTheWriteLockIsAnUpgradeDeadlock) {
  HistoryBuilder builder;
  builder.acquire_invoke(ms(0), A, kRwTtlMs);
  builder.acquire_ok(ms(1), A, kRwTtlMs);
  builder.acquire_invoke(ms(10), A, kRwTtlMs).acquire_end(ms(810), A, EventType::kFail);
  builder.release(ms(820), ms(821), A);
  History h = read_write(builder.build());
  for (Event& e : h.events) {
    if (e.f != Op::kAcquire) continue;
    e.mode = e.time_ns <= ms(1) ? LockMode::kRead : LockMode::kWrite;
  }
  const CheckResult r = check_rw(h);
  EXPECT_EQ(r.verdict, Verdict::kDeadlock);
  ASSERT_EQ(deadlocks(r).size(), 1u);
  EXPECT_EQ(deadlocks(r)[0]->cause, "upgrade_deadlock");
  EXPECT_FALSE(is_own_finding(*deadlocks(r)[0]));
  ASSERT_EQ(r.holds.size(), 1u);
  EXPECT_EQ(r.holds[0].end_ns, ms(820));
}

// Proves a reader's release that frees nothing (another reader's hold is left, or on its way out)
// is no idle hold, while a writer's is.
TEST(ReadWrite, AReadersReleaseThatFreesNothingIsNoIdleHold) {
  HistoryBuilder reader;
  hold_as(reader, A, LockMode::kRead, ms(1), ms(100), 0);
  EXPECT_EQ(check_rw(read_write(reader.build())).count(FindingKind::kIdleHold), 0u);
  HistoryBuilder writer;
  hold_as(writer, A, LockMode::kWrite, ms(1), ms(100), 0);
  EXPECT_EQ(check_rw(read_write(writer.build())).count(FindingKind::kIdleHold), 1u);
}

}  // namespace
}  // namespace locksim
