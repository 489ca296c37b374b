// action_test: Action, what a simulation event runs: it calls what it holds, moves it along,
// and destroys it exactly once, whether it is kept inline (small) or on the heap (large).
#include "sim/simulate/action.h"

#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <utility>
#include <vector>

namespace locksim {
namespace {

TEST(Action, ASmallCallableIsCalledMovedAndDestroyedOnce) {
  auto owned = std::make_shared<int>(0);
  {
    Action first = [owned] { ++*owned; };
    EXPECT_EQ(owned.use_count(), 2);
    first();
    Action second = std::move(first);
    EXPECT_FALSE(first);  // NOLINT(bugprone-use-after-move): a moved-from Action is empty
    EXPECT_TRUE(second);
    EXPECT_EQ(owned.use_count(), 2);  // moved, not copied
    second();
    EXPECT_EQ(*owned, 2);
  }
  EXPECT_EQ(owned.use_count(), 1);
}

TEST(Action, ALargeCallableLivesOnTheHeapAndBehavesTheSame) {
  auto owned = std::make_shared<int>(0);
  std::array<long, 16> padding{};  // 128 bytes: more than kInlineBytes
  padding[15] = 5;
  {
    Action first = [owned, padding] { *owned += static_cast<int>(padding[15]); };
    Action second;
    second = std::move(first);
    second();
    EXPECT_EQ(*owned, 5);
    EXPECT_EQ(owned.use_count(), 2);
    second.reset();
    EXPECT_EQ(owned.use_count(), 1);
    EXPECT_FALSE(second);
  }
  EXPECT_EQ(owned.use_count(), 1);
}

TEST(Action, AssigningOverOneDestroysWhatItHeld) {
  auto a = std::make_shared<int>(0);
  auto b = std::make_shared<int>(0);
  Action action = [a] {};
  action = Action([b] {});
  EXPECT_EQ(a.use_count(), 1);
  EXPECT_EQ(b.use_count(), 2);
}

TEST(Action, ManyInAVectorSurviveItsGrowth) {
  int calls = 0;
  std::vector<Action> actions;
  for (int i = 0; i < 100; ++i) actions.emplace_back([&calls, i] { calls += i; });
  for (Action& action : actions) action();
  EXPECT_EQ(calls, 4950);
}

}  // namespace
}  // namespace locksim
