// lock_variant_test: each built-in lock variant against a real redis-server: the lock cycle, TTL
// behaviour, and the documented ownership properties (and flaws) of each.
#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "sim/core/random.h"
#include "sim/lock/registry.h"
#include "tests/integration/redis_fixture.h"

namespace locksim {
namespace {

using namespace std::chrono_literals;
using Acquire = AcquireAttempt::Outcome;
using Release = ReleaseResult::Outcome;

constexpr std::int64_t kTtlMs = 30000;

class VariantTest : public test_support::RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    if (HasFatalFailure()) return;
    connection_.emplace(connect());
    ASSERT_FALSE(connection_->broken()) << connection_->last_error().describe();
  }

  const LockVariant& variant(std::string_view name) {
    const LockVariant* found = find_variant(name);
    EXPECT_NE(found, nullptr) << name;
    return *found;
  }
  LockContext context() { return LockContext{*connection_, rng_, {}}; }
  Connection& conn() { return *connection_; }
  std::int64_t pttl(const std::string& k) { return conn().command({"PTTL", k}).reply.integer; }
  bool exists(const std::string& k) { return conn().command({"EXISTS", k}).reply.is_integer(1); }

  // wait_until_gone: polls EXISTS every 5 ms for at most 2 s (a bound, not a hopeful sleep).
  bool wait_until_gone(const std::string& k) {
    const auto deadline = std::chrono::steady_clock::now() + 2s;
    while (std::chrono::steady_clock::now() < deadline) {
      if (!exists(k)) return true;
      std::this_thread::sleep_for(5ms);
    }
    return false;
  }

 private:
  std::optional<Connection> connection_;
  Rng rng_{42};
};

class EveryVariantTest : public VariantTest, public ::testing::WithParamInterface<const char*> {};

// Acquire on a free key succeeds, a second acquire is busy, release deletes the key.
TEST_P(EveryVariantTest, AcquireBusyRelease) {
  const LockVariant& v = variant(GetParam());
  const std::string lock = key("lock");
  const AcquireAttempt first = v.try_acquire(context(), lock, kTtlMs);
  ASSERT_EQ(first.outcome, Acquire::kAcquired) << first.error.describe();
  EXPECT_FALSE(first.token.empty());
  EXPECT_EQ(conn().command({"GET", lock}).reply.str, first.token);

  const AcquireAttempt second = v.try_acquire(context(), lock, kTtlMs);
  EXPECT_EQ(second.outcome, Acquire::kBusy);
  EXPECT_TRUE(second.token.empty());

  const ReleaseResult released = v.release(context(), lock, first.token);
  EXPECT_EQ(released.outcome, Release::kReleased) << released.error.describe();
  EXPECT_EQ(released.deleted, 1);
  EXPECT_FALSE(exists(lock));

  const ReleaseResult again = v.release(context(), lock, first.token);
  EXPECT_EQ(again.outcome, Release::kNotHeld);
  EXPECT_EQ(again.deleted, 0);
}

// A connection error is kError carrying the classified error, never acquired, busy or not held.
TEST_P(EveryVariantTest, ConnectionErrorIsError) {
  const LockVariant& v = variant(GetParam());
  conn().close();
  const AcquireAttempt attempt = v.try_acquire(context(), key("lock"), kTtlMs);
  EXPECT_EQ(attempt.outcome, Acquire::kError);
  EXPECT_EQ(attempt.error.error, RedisErrorKind::kClosed);
  EXPECT_TRUE(attempt.token.empty());
  const ReleaseResult release = v.release(context(), key("lock"), "1");
  EXPECT_EQ(release.outcome, Release::kError);
  EXPECT_EQ(release.error.error, RedisErrorKind::kClosed);
}

// Variants with a TTL set a PTTL in (0, ttl]; the naive lock sets none (PTTL -1).
TEST_P(EveryVariantTest, TtlMatchesVariant) {
  const LockVariant& v = variant(GetParam());
  const std::string lock = key("lock");
  ASSERT_EQ(v.try_acquire(context(), lock, kTtlMs).outcome, Acquire::kAcquired);
  const std::int64_t remaining_ms = pttl(lock);
  if (v.uses_ttl()) {
    EXPECT_GT(remaining_ms, 0);
    EXPECT_LE(remaining_ms, kTtlMs);
  } else {
    EXPECT_EQ(remaining_ms, -1);
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, EveryVariantTest,
                         ::testing::Values("naive", "set_nx_ex", "lua_owner"));

class TtlVariantTest : public VariantTest, public ::testing::WithParamInterface<const char*> {};

// Once the key's TTL elapses, a new acquire succeeds (the lease frees itself).
TEST_P(TtlVariantTest, ExpiredLockCanBeTakenAgain) {
  const LockVariant& v = variant(GetParam());
  ASSERT_TRUE(v.uses_ttl());
  const std::string lock = key("lock");
  ASSERT_EQ(v.try_acquire(context(), lock, kTtlMs).outcome, Acquire::kAcquired);
  ASSERT_EQ(v.try_acquire(context(), lock, kTtlMs).outcome, Acquire::kBusy);
  ASSERT_TRUE(conn().command({"PEXPIRE", lock, "20"}).reply.is_integer(1));
  ASSERT_TRUE(wait_until_gone(lock));
  EXPECT_EQ(v.try_acquire(context(), lock, kTtlMs).outcome, Acquire::kAcquired);
}

INSTANTIATE_TEST_SUITE_P(Variants, TtlVariantTest, ::testing::Values("set_nx_ex", "lua_owner"));

// The naive lock never frees itself: its key has no expiry, so a crashed holder blocks forever.
TEST_F(VariantTest, NaiveLockStaysHeldWithoutRelease) {
  const LockVariant& v = variant("naive");
  EXPECT_FALSE(v.uses_ttl());
  const std::string lock = key("lock");
  const AcquireAttempt held = v.try_acquire(context(), lock, 10);
  ASSERT_EQ(held.outcome, Acquire::kAcquired);
  EXPECT_EQ(held.token, "1");
  EXPECT_EQ(pttl(lock), -1);  // the ttl_ms of 10 was ignored
  EXPECT_EQ(v.try_acquire(context(), lock, 10).outcome, Acquire::kBusy);
}

// set_nx_ex's documented flaw: its release deletes the lock even when someone else holds it.
TEST_F(VariantTest, SetNxExReleaseDeletesAnotherHoldersLock) {
  const LockVariant& v = variant("set_nx_ex");
  const std::string lock = key("lock");
  ASSERT_TRUE(conn().command({"SET", lock, "someone-else", "PX", "30000"}).ok());
  const ReleaseResult r = v.release(context(), lock, "1");
  EXPECT_EQ(r.outcome, Release::kReleased);
  EXPECT_EQ(r.deleted, 1);
  EXPECT_FALSE(exists(lock));
}

// lua_owner refuses to release a lock held under another token: kNotHeld, and the key survives.
TEST_F(VariantTest, LuaOwnerRefusesWrongToken) {
  const LockVariant& v = variant("lua_owner");
  const std::string lock = key("lock");
  const AcquireAttempt held = v.try_acquire(context(), lock, kTtlMs);
  ASSERT_EQ(held.outcome, Acquire::kAcquired);
  const ReleaseResult r = v.release(context(), lock, "0123456789abcdef0123456789abcdef");
  EXPECT_EQ(r.outcome, Release::kNotHeld);
  EXPECT_EQ(r.deleted, 0);
  EXPECT_TRUE(exists(lock));
  EXPECT_EQ(conn().command({"GET", lock}).reply.str, held.token);
  EXPECT_EQ(v.release(context(), lock, held.token).outcome, Release::kReleased);
}

// A script error in lua_owner's release (the key is not a string) is kError naming the script.
TEST_F(VariantTest, LuaOwnerScriptErrorIsError) {
  const LockVariant& v = variant("lua_owner");
  const std::string lock = key("lock");
  ASSERT_TRUE(conn().command({"RPUSH", lock, "x"}).ok());
  const ReleaseResult r = v.release(context(), lock, "token");
  EXPECT_EQ(r.outcome, Release::kError);
  EXPECT_EQ(r.error.error, RedisErrorKind::kReplyError);
  EXPECT_TRUE(r.error.message.starts_with("script lua_owner.release: ")) << r.error.message;
  EXPECT_TRUE(exists(lock));
}

// lua_owner uses a fresh 32-hex-digit token for every acquisition.
TEST_F(VariantTest, LuaOwnerTokensDifferAcrossAcquisitions) {
  const LockVariant& v = variant("lua_owner");
  const std::string lock = key("lock");
  std::set<std::string> tokens;
  for (int i = 0; i < 20; ++i) {
    const AcquireAttempt held = v.try_acquire(context(), lock, kTtlMs);
    ASSERT_EQ(held.outcome, Acquire::kAcquired);
    ASSERT_EQ(held.token.size(), 32u);
    EXPECT_EQ(held.token.find_first_not_of("0123456789abcdef"), std::string::npos);
    tokens.insert(held.token);
    ASSERT_EQ(v.release(context(), lock, held.token).outcome, Release::kReleased);
  }
  EXPECT_EQ(tokens.size(), 20u);
}

// lua_owner's release still works after the server lost its script cache.
TEST_F(VariantTest, LuaOwnerReleaseSurvivesScriptFlush) {
  const LockVariant& v = variant("lua_owner");
  const std::string lock = key("lock");
  AcquireAttempt held = v.try_acquire(context(), lock, kTtlMs);
  ASSERT_EQ(v.release(context(), lock, held.token).outcome, Release::kReleased);
  ASSERT_TRUE(conn().command({"SCRIPT", "FLUSH"}).ok());
  held = v.try_acquire(context(), lock, kTtlMs);
  const ReleaseResult r = v.release(context(), lock, held.token);
  EXPECT_EQ(r.outcome, Release::kReleased) << r.error.describe();
}

// The registry lists the three variants in a stable order and finds each by name only.
TEST(RegistryTest, FindsVariantsByName) {
  const std::vector<std::string> expected = {"naive", "set_nx_ex", "lua_owner"};
  EXPECT_EQ(variant_names(), expected);
  ASSERT_EQ(all_variants().size(), expected.size());
  for (const std::string& name : expected) {
    const LockVariant* v = find_variant(name);
    ASSERT_NE(v, nullptr) << name;
    EXPECT_EQ(v->name(), name);
    EXPECT_FALSE(v->summary().empty());
  }
  EXPECT_EQ(find_variant("redlock"), nullptr);
  EXPECT_EQ(find_variant(""), nullptr);
  EXPECT_EQ(find_variant("Naive"), nullptr);
}

}  // namespace
}  // namespace locksim
