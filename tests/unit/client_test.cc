// client_test: the coroutine client's pieces without a server: Task and Op on a blocking host
// (run_inline) and on a host that answers later, and the acquire loop against a scripted host.
#include <gtest/gtest.h>

#include <deque>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/client/acquire.h"
#include "sim/core/task.h"

namespace locksim {
namespace {

Task<int> twice(Ask<int> read) { co_return 2 * co_await read; }

Task<long long> sum_of_twices(int n) {
  long long total = 0;
  for (int i = 0; i < n; ++i) total += co_await twice(Ask<int>(i));
  co_return total;
}

Task<int> throws_after(Ask<int> read) {
  const int value = co_await read;
  if (value > 0) throw std::runtime_error("boom " + std::to_string(value));
  co_return value;
}

TEST(Task, RunsInlineWhenEveryOpIsDone) {
  EXPECT_EQ(run_inline(twice(Ask<int>(21))), 42);
  // A long chain of awaited tasks that never suspend neither grows the stack nor leaks.
  EXPECT_EQ(run_inline(sum_of_twices(1'000'000)), 999'999LL * 1'000'000);
}

TEST(Task, ResumesWhenTheHostCompletesTheOpLater) {
  Slot<int>* pending = nullptr;
  Task<int> task = twice(Ask<int>::later([&pending](Slot<int>& slot) { pending = &slot; }));
  EXPECT_EQ(pending, nullptr);  // lazy: nothing runs before start()
  task.start();
  ASSERT_NE(pending, nullptr);
  EXPECT_TRUE(pending->waiting());
  EXPECT_FALSE(task.done());
  pending->complete(21);
  ASSERT_TRUE(task.done());
  EXPECT_EQ(task.result(), 42);
}

TEST(Task, AnExceptionReachesWhoReadsTheResult) {
  EXPECT_EQ(run_inline(throws_after(Ask<int>(0))), 0);
  EXPECT_THROW(run_inline(throws_after(Ask<int>(3))), std::runtime_error);
  Slot<int>* pending = nullptr;
  Task<int> task = throws_after(Ask<int>::later([&pending](Slot<int>& slot) { pending = &slot; }));
  task.start();
  pending->complete(5);
  ASSERT_TRUE(task.done());
  EXPECT_THROW(task.result(), std::runtime_error);
}

// Proves a frame is reused for the next frame of its size class on the same thread (so a client's
// attempt after attempt allocates nothing), a frame too large is not kept, and many live frames
// of one class are all distinct.
TEST(Task, FramesAreRecycledByThreadAndSize) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "frames are not recycled under a sanitizer";
#else
  // Every frame of the class that earlier tests left in the pool, taken out: all distinct.
  std::vector<void*> live;
  for (int i = 0; i < 40; ++i) live.push_back(task_detail::allocate_frame(200));
  EXPECT_EQ(std::set<void*>(live.begin(), live.end()).size(), live.size());
  void* first = task_detail::allocate_frame(200);
  task_detail::free_frame(first, 200);
  void* again = task_detail::allocate_frame(220);  // the same class: 193 to 256 bytes
  EXPECT_EQ(again, first);
  task_detail::free_frame(again, 220);
  for (void* frame : live) task_detail::free_frame(frame, 200);
  void* large = task_detail::allocate_frame(100'000);
  task_detail::free_frame(large, 100'000);
  EXPECT_EQ(run_inline(twice(Ask<int>(4))), 8);  // and tasks still run on recycled frames
#endif
}

// ScriptedHost: answers attempts from a list, on the spot or later; its clock moves by `step_ns`
// per attempt and by the whole wait.
class ScriptedHost final : public AcquireHost {
 public:
  std::deque<AcquireAttempt::Outcome> answers;
  bool later = false;  // answer attempts through a Slot the test completes
  bool stop_after_first_wait = false;
  bool waits_cut_short = false;  // every wait ends early: the run's stop
  Nanos clock_ns = 0;
  Nanos step_ns = 1;
  int busy_calls = 0;
  std::vector<std::pair<int, Nanos>> waits;  // (failed attempts, max_ns) of each wait
  Slot<AcquireAttempt>* pending = nullptr;
  int refused_passes = 0;  // the server refuses the connection this many passes, -1: for ever
  int attempts_sent = 0;
  RedisResult refused{RedisErrorKind::kRefused, "Connection refused", {}};

  const RedisResult* unreachable() override {
    if (refused_passes == 0) return nullptr;
    if (refused_passes > 0) --refused_passes;
    return &refused;
  }

  Task<void> attempt(AcquireAttempt& out) override {
    ++attempts_sent;
    clock_ns += step_ns;
    if (!later) {
      out = next();
      co_return;
    }
    out = co_await Ask<AcquireAttempt>::later(
        [this](Slot<AcquireAttempt>& slot) { pending = &slot; });
  }
  Ask<bool> wait(int failed_attempts, Nanos max_ns) override {
    waits.emplace_back(failed_attempts, max_ns);
    clock_ns += std::min<Nanos>(10, max_ns);
    return Ask<bool>(!waits_cut_short);
  }
  Nanos now() override { return clock_ns; }
  bool stopping() override { return stop_after_first_wait && !waits.empty(); }
  void busy() override { ++busy_calls; }

  AcquireAttempt next() {
    AcquireAttempt a;
    a.outcome = answers.empty() ? AcquireAttempt::Outcome::kBusy : answers.front();
    if (!answers.empty()) answers.pop_front();
    if (a.outcome == AcquireAttempt::Outcome::kAcquired) a.token = "t";
    if (a.outcome == AcquireAttempt::Outcome::kError) a.error.error = RedisErrorKind::kTimeout;
    return a;
  }
};

using Outcome = AcquireAttempt::Outcome;

TEST(AcquireLoop, WaitsBetweenBusyAnswersAndReturnsTheGrant) {
  ScriptedHost host;
  host.answers = {Outcome::kBusy, Outcome::kBusy, Outcome::kAcquired};
  const AcquireEnd end = run_inline(acquire_loop(host, 1000));
  EXPECT_EQ(end.kind, AcquireEnd::Kind::kAcquired);
  EXPECT_EQ(end.attempts, 3);
  EXPECT_EQ(end.attempt.token, "t");
  EXPECT_EQ(host.busy_calls, 1);  // once, at the first busy answer
  ASSERT_EQ(host.waits.size(), 2u);
  EXPECT_EQ(host.waits[0].first, 1);
  EXPECT_EQ(host.waits[1].first, 2);
  EXPECT_EQ(host.waits[0].second, 1000 - 1);  // the deadline bounds each wait
  EXPECT_EQ(end.sent_ns, 1 + 10 + 1 + 10);    // the clock before the third attempt
}

TEST(AcquireLoop, GivesUpAtTheDeadlineAndStopsWithTheRun) {
  ScriptedHost host;  // always busy
  const AcquireEnd gave_up = run_inline(acquire_loop(host, 50));
  EXPECT_EQ(gave_up.kind, AcquireEnd::Kind::kGaveUp);
  EXPECT_GE(host.clock_ns, 50);
  EXPECT_EQ(gave_up.attempts, static_cast<int>(host.waits.size()) + 1);

  ScriptedHost stopping;
  stopping.stop_after_first_wait = true;
  const AcquireEnd stopped = run_inline(acquire_loop(stopping, 1'000'000));
  EXPECT_EQ(stopped.kind, AcquireEnd::Kind::kStopped);
  EXPECT_EQ(stopped.attempts, 2);
}

TEST(AcquireLoop, AWaitTheStopCutShortEndsItWithoutAnotherAttempt) {
  ScriptedHost host;
  host.answers = {Outcome::kBusy, Outcome::kAcquired};
  host.waits_cut_short = true;
  const AcquireEnd end = run_inline(acquire_loop(host, 1000));
  EXPECT_EQ(end.kind, AcquireEnd::Kind::kStopped);
  EXPECT_EQ(end.attempts, 1);
  EXPECT_EQ(host.answers.size(), 1u);  // the grant was never asked for
}

TEST(AcquireLoop, AnErrorEndsItAtOnce) {
  ScriptedHost host;
  host.answers = {Outcome::kBusy, Outcome::kError};
  const AcquireEnd end = run_inline(acquire_loop(host, 1000));
  EXPECT_EQ(end.kind, AcquireEnd::Kind::kError);
  EXPECT_TRUE(end.attempt.error.indeterminate());
  EXPECT_EQ(end.attempts, 2);
}

// Proves a refused connection (a server down or restarting) sends nothing and is waited out like
// a busy answer, within the deadline: the client waits for the server as a client library with a
// connection retry policy does, and is granted once it is back. Before, the acquire ended at the
// first refusal, so a waiter never saw a server that restarted without the key.
TEST(AcquireLoop, ARefusedConnectionIsTriedAgainWithinTheDeadline) {
  ScriptedHost host;
  host.refused_passes = 2;
  host.answers = {Outcome::kAcquired};
  const AcquireEnd end = run_inline(acquire_loop(host, 1000));
  EXPECT_EQ(end.kind, AcquireEnd::Kind::kAcquired);
  EXPECT_EQ(end.attempts, 3);
  EXPECT_EQ(host.attempts_sent, 1);  // nothing was sent to a server that refused
  ASSERT_EQ(host.waits.size(), 2u);
  EXPECT_EQ(host.waits[0].first, 1);
  EXPECT_EQ(host.waits[1].first, 2);
  EXPECT_EQ(host.busy_calls, 1);      // it waits from the first refusal on
  EXPECT_EQ(end.sent_ns, 10 + 10);    // the clock before the attempt that was sent

  // Refused until the deadline: a definite failure (nothing ran), the refusal kept.
  ScriptedHost down;
  down.refused_passes = -1;
  const AcquireEnd failed = run_inline(acquire_loop(down, 50));
  EXPECT_EQ(failed.kind, AcquireEnd::Kind::kError);
  EXPECT_EQ(failed.attempt.error.error, RedisErrorKind::kRefused);
  EXPECT_FALSE(failed.attempt.error.indeterminate());
  EXPECT_GE(down.clock_ns, 50);
  EXPECT_EQ(down.attempts_sent, 0);
  EXPECT_EQ(failed.attempts, static_cast<int>(down.waits.size()) + 1);

  // The run's stop ends the wait for the server.
  ScriptedHost stopping;
  stopping.refused_passes = -1;
  stopping.stop_after_first_wait = true;
  const AcquireEnd stopped = run_inline(acquire_loop(stopping, 1'000'000));
  EXPECT_EQ(stopped.kind, AcquireEnd::Kind::kStopped);
  EXPECT_EQ(stopped.attempts, 2);
}

TEST(AcquireLoop, RunsTheSameOnAHostThatAnswersLater) {
  ScriptedHost host;
  host.later = true;
  host.answers = {Outcome::kBusy, Outcome::kAcquired};
  Task<AcquireEnd> task = acquire_loop(host, 1000);
  task.start();
  for (int replies = 0; !task.done(); ++replies) {
    ASSERT_LT(replies, 10);
    ASSERT_NE(host.pending, nullptr);
    host.pending->complete(host.next());
  }
  const AcquireEnd end = task.result();
  EXPECT_EQ(end.kind, AcquireEnd::Kind::kAcquired);
  EXPECT_EQ(end.attempts, 2);
  EXPECT_EQ(host.busy_calls, 1);
}

}  // namespace
}  // namespace locksim
