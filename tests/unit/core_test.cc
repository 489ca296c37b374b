// core_test: the seeded Rng, verdict words and precedence, StopSignal's interruptible sleep, and
// the small blocks a simulated run's thread keeps.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "sim/core/random.h"
#include "sim/core/small_blocks.h"
#include "sim/core/stop.h"
#include "sim/core/verdict.h"

namespace locksim {
namespace {

// The same seed gives the same stream, so a run can be repeated with --seed.
TEST(Rng, SameSeedSameStream) {
  Rng a(42), b(42), c(43);
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next();
    EXPECT_EQ(x, b.next());
    (void)c.next();
  }
  EXPECT_NE(Rng(42).next(), Rng(43).next());
}

// fork gives distinct streams per client, deterministic for one seed.
TEST(Rng, ForkIsDeterministicAndDistinct) {
  const Rng base(7);
  EXPECT_EQ(base.fork(1).token_hex(), base.fork(1).token_hex());
  EXPECT_NE(base.fork(1).token_hex(), base.fork(2).token_hex());
}

// uniform stays in its inclusive range and reaches both ends.
TEST(Rng, UniformInclusiveRange) {
  Rng rng(1);
  std::set<std::int64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    const auto v = rng.uniform(3, 6);
    ASSERT_GE(v, 3);
    ASSERT_LE(v, 6);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 4u);
}

// scaled stays in its inclusive range, reaches both ends, spreads evenly, and is the draw's high
// bits times the span (so not uniform's value: uniform's are kept for plans across builds).
TEST(Rng, ScaledInclusiveRangeFromTheHighBits) {
  Rng rng(1);
  Rng same(1);
  std::map<std::int64_t, int> seen;
  for (int i = 0; i < 40'000; ++i) {
    const auto v = rng.scaled(3, 6);
    ASSERT_GE(v, 3);
    ASSERT_LE(v, 6);
    ++seen[v];
    ASSERT_EQ(v, 3 + static_cast<std::int64_t>(same.next() >> 62));  // span 4: the top 2 bits
  }
  ASSERT_EQ(seen.size(), 4u);
  for (const auto& [value, count] : seen) {
    EXPECT_NEAR(count, 10'000, 500) << value;
  }
  EXPECT_EQ(rng.scaled(-5, -5), -5);
  Rng full(4), full_same(4);  // the full range: the draw itself
  EXPECT_EQ(full.scaled(INT64_MIN, INT64_MAX), static_cast<std::int64_t>(full_same.next()));
  Rng a(9), b(9);
  int differ = 0;
  for (int i = 0; i < 100; ++i) differ += a.scaled(0, 999) != b.uniform(0, 999);
  EXPECT_GT(differ, 90);
}

// chance honours 0 and 1 exactly and is near p in between.
TEST(Rng, ChanceProbability) {
  Rng rng(5);
  int hits = 0;
  for (int i = 0; i < 10000; ++i) hits += rng.chance(0.2) ? 1 : 0;
  EXPECT_NEAR(hits, 2000, 200);
  EXPECT_FALSE(rng.chance(0.0));
  EXPECT_TRUE(rng.chance(1.0));
}

// Tokens are lowercase hex of the requested length and unique across draws.
TEST(Rng, TokensAreHexAndUnique) {
  Rng rng(9);
  std::set<std::string> tokens;
  for (int i = 0; i < 1000; ++i) {
    const std::string t = rng.token_hex(32);
    ASSERT_EQ(t.size(), 32u);
    ASSERT_EQ(t.find_first_not_of("0123456789abcdef"), std::string::npos);
    tokens.insert(t);
  }
  EXPECT_EQ(tokens.size(), 1000u);
}

// A token's digits are its draws' nibbles, lowest first, 16 to a draw (so a seed recorded before
// gives the same tokens), for every length, odd ones and ones that end inside a draw included.
TEST(Rng, TokenDigitsAreTheDrawsNibblesLowestFirst) {
  for (const int digits : {0, 1, 2, 15, 16, 17, 31, 32, 33, 40}) {
    Rng drawn(77);
    Rng reference(77);
    std::string expected;
    std::uint64_t bits = 0;
    for (int i = 0; i < digits; ++i) {
      if (i % 16 == 0) bits = reference.next();
      expected += "0123456789abcdef"[bits & 0xf];
      bits >>= 4;
    }
    EXPECT_EQ(drawn.token_hex(digits), expected) << digits << " digits";
    EXPECT_EQ(drawn.next(), reference.next()) << "the same draws were used, " << digits;
  }
}

// Verdict words round-trip, unknown words are rejected, and a violation outweighs the rest.
TEST(Verdict, WordsAndPrecedence) {
  for (const char* word : {"ok", "unknown", "deadlock", "resource_corrupted", "mutex_violation"}) {
    const auto v = verdict_from_string(word);
    ASSERT_TRUE(v.has_value()) << word;
    EXPECT_EQ(to_string(*v), word);
  }
  EXPECT_FALSE(verdict_from_string("safe").has_value());
  EXPECT_EQ(strongest(Verdict::kOk, Verdict::kUnknown), Verdict::kUnknown);
  EXPECT_EQ(strongest(Verdict::kDeadlock, Verdict::kUnknown), Verdict::kDeadlock);
  EXPECT_EQ(strongest(Verdict::kMutexViolation, Verdict::kDeadlock), Verdict::kMutexViolation);
  EXPECT_EQ(strongest(Verdict::kResourceCorrupted, Verdict::kDeadlock),
            Verdict::kResourceCorrupted);
}

// A stop request wakes a long sleep at once and makes it report the stop.
// A thread that keeps its small blocks serves the next request of a size from the last block of
// that size it freed (sized or not), and never from a smaller one.
TEST(SmallBlocks, AThreadThatKeepsThemServesAFreedBlockOfTheSameSize) {
  std::thread([] {
    keep_small_blocks();
    if (!keeps_small_blocks()) GTEST_SKIP() << "a sanitizer build allocates as malloc does";
    void* token = ::operator new(33);  // a 32-digit token's string: 40 usable bytes
    ::operator delete(token, 33);
    void* larger = ::operator new(41);  // needs 56: not the token's block
    EXPECT_NE(larger, token);
    void* same = ::operator new(40);
    EXPECT_EQ(same, token);
    ::operator delete(same);  // unsized: its class read back from its usable size
    EXPECT_EQ(::operator new(25), token);
    ::operator delete(token, 25);
    ::operator delete(larger, 41);
  }).join();
}

TEST(StopSignal, RequestInterruptsSleep) {
  StopSignal stop;
  EXPECT_TRUE(stop.sleep_for(std::chrono::milliseconds(1)));
  std::thread waker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    stop.request();
  });
  EXPECT_FALSE(stop.sleep_for(std::chrono::seconds(60)));  // returns at the request, not in 60 s
  waker.join();
  EXPECT_TRUE(stop.requested());
  EXPECT_FALSE(stop.sleep_for(std::chrono::milliseconds(1)));
}

}  // namespace
}  // namespace locksim
