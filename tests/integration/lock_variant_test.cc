// lock_variant_test: each built-in lock variant against a real redis-server: the lock cycle, TTL
// behaviour, and the documented ownership properties (and flaws) of each.
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "sim/core/random.h"
#include "sim/lock/registry.h"
#include "tests/integration/redis_fixture.h"

namespace locksim {
namespace {

using namespace std::chrono_literals;
using Acquire = AcquireAttempt::Outcome;
using Release = ReleaseResult::Outcome;
using Extend = ExtendResult::Outcome;

constexpr std::int64_t kTtlMs = 30000;
constexpr std::string_view kForeignToken = "0123456789abcdef0123456789abcdef";

// InjectedCrash: what a checkpoint callback throws to stand in for the driver's crash fault.
struct InjectedCrash {};

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
  // context: this test's connection, as the waiter "test-client" (queueing variants need one).
  LockContext context() { return context_as("test-client", kTtlMs); }
  // context_as: this test's connection, as the waiter `waiter` with that queue timeout (several
  // waiters may share the connection: the queue knows them by id only).
  LockContext context_as(std::string_view waiter, std::int64_t queue_timeout_ms) {
    return LockContext{*connection_, rng_, real_clock(), {}, waiter, queue_timeout_ms};
  }
  // context_with: a context whose checkpoints call `checkpoint`, whatever the call's state.
  LockContext context_with(std::function<void(std::string_view)> checkpoint) {
    LockContext with = context();
    with.checkpoint = [checkpoint = std::move(checkpoint)](std::string_view point, CallState) {
      checkpoint(point);
    };
    return with;
  }
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
  std::optional<HiredisConnection> connection_;
  Rng rng_{42};
};

// EveryVariantTest: the lock cycle of every variant that stores a key (all but no_lock). redlock,
// which reconnects a broken node itself, and lua_owner_wait, which needs a replica, have test
// programs of their own (redlock_test, lua_owner_wait_test).
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
                         ::testing::Values("naive", "set_nx_ex", "lua_owner", "setnx_then_expire",
                                           "lua_setnx_expire", "get_then_del", "lua_acquire_owner",
                                           "lua_owner_renew", "lua_fair_queue",
                                           "lua_owner_fenced"));

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

INSTANTIATE_TEST_SUITE_P(Variants, TtlVariantTest,
                         ::testing::Values("set_nx_ex", "lua_owner", "setnx_then_expire",
                                           "lua_setnx_expire", "get_then_del", "lua_acquire_owner",
                                           "lua_owner_renew", "lua_fair_queue",
                                           "lua_owner_fenced", "redlock"));

class AnyVariantTest : public VariantTest, public ::testing::WithParamInterface<const char*> {};

// Each variant reaches exactly its documented checkpoints, in order, on a full lock cycle: the
// points scenarios inject faults at must exist where the documents put the race window.
TEST_P(AnyVariantTest, ReachesItsCheckpoints) {
  const std::map<std::string, std::vector<std::string>> acquire_points = {
      {"setnx_then_expire", {"after_setnx"}}, {"redlock", {"after_first_node"}}};
  const std::map<std::string, std::vector<std::string>> release_points = {
      {"get_then_del", {"after_get"}}};
  const LockVariant& v = variant(GetParam());
  const std::string lock = key("lock");
  std::vector<std::string> reached;
  const auto record = [&reached](std::string_view point) { reached.emplace_back(point); };

  const AcquireAttempt held = v.try_acquire(context_with(record), lock, kTtlMs);
  ASSERT_EQ(held.outcome, Acquire::kAcquired) << held.error.describe();
  const auto acquire_it = acquire_points.find(GetParam());
  EXPECT_EQ(reached,
            acquire_it == acquire_points.end() ? std::vector<std::string>{} : acquire_it->second);

  reached.clear();
  const ReleaseResult released = v.release(context_with(record), lock, held.token);
  EXPECT_NE(released.outcome, Release::kError) << released.error.describe();
  const auto release_it = release_points.find(GetParam());
  EXPECT_EQ(reached,
            release_it == release_points.end() ? std::vector<std::string>{} : release_it->second);
}

// Only the watchdog variant renews; the others answer extend() with kNotHeld and leave the TTL.
TEST_P(AnyVariantTest, OnlyTheWatchdogVariantRenews) {
  const LockVariant& v = variant(GetParam());
  const bool watchdog = std::string_view(GetParam()) == "lua_owner_renew";
  EXPECT_EQ(v.renews(), watchdog);
  if (watchdog) return;  // extend() has its own tests below
  const std::string lock = key("lock");
  const AcquireAttempt held = v.try_acquire(context(), lock, kTtlMs);
  ASSERT_EQ(held.outcome, Acquire::kAcquired);
  if (v.uses_ttl()) {
    ASSERT_TRUE(conn().command({"PEXPIRE", lock, "5000"}).reply.is_integer(1));
  }
  const std::int64_t before_ms = pttl(lock);
  EXPECT_EQ(v.extend(context(), lock, held.token, kTtlMs).outcome, Extend::kNotHeld);
  EXPECT_LE(pttl(lock), before_ms);
}

INSTANTIATE_TEST_SUITE_P(Variants, AnyVariantTest,
                         ::testing::Values("naive", "set_nx_ex", "lua_owner", "setnx_then_expire",
                                           "lua_setnx_expire", "get_then_del", "lua_acquire_owner",
                                           "lua_owner_renew", "no_lock", "lua_fair_queue",
                                           "lua_owner_fenced", "redlock"));

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

class UnconditionalDeleteTest : public VariantTest,
                                public ::testing::WithParamInterface<const char*> {};

// The documented flaw of the variants released by a plain DEL (Doc E, Doc B claim 2): the release
// deletes the lock even when someone else holds it.
TEST_P(UnconditionalDeleteTest, ReleaseDeletesAnotherHoldersLock) {
  const LockVariant& v = variant(GetParam());
  const std::string lock = key("lock");
  ASSERT_TRUE(conn().command({"SET", lock, "someone-else", "PX", "30000"}).ok());
  const ReleaseResult r = v.release(context(), lock, "1");
  EXPECT_EQ(r.outcome, Release::kReleased);
  EXPECT_EQ(r.deleted, 1);
  EXPECT_FALSE(exists(lock));
}

INSTANTIATE_TEST_SUITE_P(Variants, UnconditionalDeleteTest,
                         ::testing::Values("set_nx_ex", "setnx_then_expire", "lua_setnx_expire"));

class OwnerCheckedTest : public VariantTest, public ::testing::WithParamInterface<const char*> {};

// An owner-checked release refuses a lock held under another token: kNotHeld, and the key survives.
TEST_P(OwnerCheckedTest, RefusesWrongToken) {
  const LockVariant& v = variant(GetParam());
  const std::string lock = key("lock");
  const AcquireAttempt held = v.try_acquire(context(), lock, kTtlMs);
  ASSERT_EQ(held.outcome, Acquire::kAcquired);
  const ReleaseResult r = v.release(context(), lock, std::string(kForeignToken));
  EXPECT_EQ(r.outcome, Release::kNotHeld);
  EXPECT_EQ(r.deleted, 0);
  EXPECT_TRUE(exists(lock));
  EXPECT_EQ(conn().command({"GET", lock}).reply.str, held.token);
  EXPECT_EQ(v.release(context(), lock, held.token).outcome, Release::kReleased);
}

// Every acquisition of an owner-checked variant stores a fresh 32-hex-digit token.
TEST_P(OwnerCheckedTest, TokensDifferAcrossAcquisitions) {
  const LockVariant& v = variant(GetParam());
  const std::string lock = key("lock");
  std::set<std::string> tokens;
  for (int i = 0; i < 20; ++i) {
    const AcquireAttempt held = v.try_acquire(context(), lock, kTtlMs);
    ASSERT_EQ(held.outcome, Acquire::kAcquired);
    ASSERT_EQ(held.token.size(), 32u);
    EXPECT_EQ(held.token.find_first_not_of("0123456789abcdef"), std::string::npos);
    EXPECT_EQ(conn().command({"GET", lock}).reply.str, held.token);
    tokens.insert(held.token);
    ASSERT_EQ(v.release(context(), lock, held.token).outcome, Release::kReleased);
  }
  EXPECT_EQ(tokens.size(), 20u);
}

INSTANTIATE_TEST_SUITE_P(Variants, OwnerCheckedTest,
                         ::testing::Values("lua_owner", "get_then_del", "lua_acquire_owner",
                                           "lua_owner_renew", "lua_fair_queue",
                                           "lua_owner_fenced", "redlock"));

// setnx_then_expire (Doc B1): a crash between SETNX and PEXPIRE leaves the key without a TTL
// (PTTL -1), so it is held forever: the deadlock the document warns about.
TEST_F(VariantTest, SetNxThenExpireCrashAfterSetNxLeavesKeyWithoutTtl) {
  const LockVariant& v = variant("setnx_then_expire");
  const std::string lock = key("lock");
  const auto crash = [](std::string_view point) {
    if (point == "after_setnx") throw InjectedCrash{};
  };
  EXPECT_THROW(v.try_acquire(context_with(crash), lock, kTtlMs), InjectedCrash);
  EXPECT_EQ(conn().command({"GET", lock}).reply.str, "1");
  EXPECT_EQ(pttl(lock), -1);
  EXPECT_EQ(v.try_acquire(context(), lock, kTtlMs).outcome, Acquire::kBusy);
}

// setnx_then_expire without a crash: the second command sets a PTTL in (0, ttl].
TEST_F(VariantTest, SetNxThenExpireWithoutCrashSetsTtl) {
  const LockVariant& v = variant("setnx_then_expire");
  const std::string lock = key("lock");
  bool reached = false;
  const AcquireAttempt held =
      v.try_acquire(context_with([&reached](std::string_view) { reached = true; }), lock, kTtlMs);
  ASSERT_EQ(held.outcome, Acquire::kAcquired) << held.error.describe();
  EXPECT_TRUE(reached);
  EXPECT_EQ(held.token, "1");
  EXPECT_GT(pttl(lock), 0);
  EXPECT_LE(pttl(lock), kTtlMs);
}

// setnx_then_expire: a busy SETNX stops there (kBusy) and never touches the holder's TTL.
TEST_F(VariantTest, SetNxThenExpireBusyLeavesHoldersTtl) {
  const LockVariant& v = variant("setnx_then_expire");
  const std::string lock = key("lock");
  ASSERT_TRUE(conn().command({"SET", lock, "someone-else", "PX", "5000"}).ok());
  bool reached = false;
  const AcquireAttempt busy =
      v.try_acquire(context_with([&reached](std::string_view) { reached = true; }), lock, kTtlMs);
  EXPECT_EQ(busy.outcome, Acquire::kBusy);
  EXPECT_FALSE(reached);
  EXPECT_LE(pttl(lock), 5000);
  EXPECT_EQ(conn().command({"GET", lock}).reply.str, "someone-else");
}

// lua_setnx_expire (Doc B2): SETNX and PEXPIRE in one script, so there is no point to crash at in
// between and the key always has a PTTL in (0, ttl].
TEST_F(VariantTest, LuaSetNxExpireSetsTtlAtomically) {
  const LockVariant& v = variant("lua_setnx_expire");
  const std::string lock = key("lock");
  const auto crash = [](std::string_view) { throw InjectedCrash{}; };
  const AcquireAttempt held = v.try_acquire(context_with(crash), lock, kTtlMs);
  ASSERT_EQ(held.outcome, Acquire::kAcquired) << held.error.describe();
  EXPECT_EQ(held.token, "1");
  EXPECT_EQ(conn().command({"GET", lock}).reply.str, "1");
  EXPECT_GT(pttl(lock), 0);
  EXPECT_LE(pttl(lock), kTtlMs);
}

// get_then_del (Doc B3): if the lease expires and another client takes the lock between the GET
// and the DEL, the release deletes the other client's lock.
TEST_F(VariantTest, GetThenDelDeletesLockTakenBetweenGetAndDel) {
  const LockVariant& v = variant("get_then_del");
  const std::string lock = key("lock");
  const AcquireAttempt held = v.try_acquire(context(), lock, kTtlMs);
  ASSERT_EQ(held.outcome, Acquire::kAcquired);

  HiredisConnection other = connect();
  ASSERT_FALSE(other.broken()) << other.last_error().describe();
  bool taken_over = false;
  const auto expire_and_take = [&](std::string_view point) {
    if (point != "after_get") return;
    // Expiry, then the other client's acquire, as seen from the server.
    ASSERT_TRUE(other.command({"DEL", lock}).reply.is_integer(1));
    ASSERT_TRUE(other.command({"SET", lock, std::string(kForeignToken), "NX", "PX", "30000"}).ok());
    taken_over = true;
  };
  const ReleaseResult r = v.release(context_with(expire_and_take), lock, held.token);
  ASSERT_TRUE(taken_over);
  EXPECT_EQ(r.outcome, Release::kReleased) << r.error.describe();
  EXPECT_EQ(r.deleted, 1);
  EXPECT_FALSE(exists(lock));  // the other client's lock is gone
}

// get_then_del's check alone works: a release after someone else took the lock deletes nothing
// and never reaches the DEL.
TEST_F(VariantTest, GetThenDelKeepsLockTakenBeforeGet) {
  const LockVariant& v = variant("get_then_del");
  const std::string lock = key("lock");
  const AcquireAttempt held = v.try_acquire(context(), lock, kTtlMs);
  ASSERT_EQ(held.outcome, Acquire::kAcquired);
  ASSERT_TRUE(conn().command({"SET", lock, std::string(kForeignToken), "PX", "30000"}).ok());
  bool reached = false;
  const ReleaseResult r =
      v.release(context_with([&reached](std::string_view) { reached = true; }), lock, held.token);
  EXPECT_EQ(r.outcome, Release::kNotHeld);
  EXPECT_EQ(r.deleted, 0);
  EXPECT_FALSE(reached);
  EXPECT_EQ(conn().command({"GET", lock}).reply.str, kForeignToken);
}

// lua_owner_renew.extend with the holder's token resets the lease to ttl_ms.
TEST_F(VariantTest, LuaOwnerRenewExtendResetsTtl) {
  const LockVariant& v = variant("lua_owner_renew");
  const std::string lock = key("lock");
  const AcquireAttempt held = v.try_acquire(context(), lock, kTtlMs);
  ASSERT_EQ(held.outcome, Acquire::kAcquired);
  ASSERT_TRUE(conn().command({"PEXPIRE", lock, "50"}).reply.is_integer(1));
  const ExtendResult r = v.extend(context(), lock, held.token, 1000);
  EXPECT_EQ(r.outcome, Extend::kExtended) << r.error.describe();
  EXPECT_GT(pttl(lock), 50);
  EXPECT_LE(pttl(lock), 1000);
  EXPECT_EQ(conn().command({"GET", lock}).reply.str, held.token);
}

// lua_owner_renew.extend with another token, or on a missing key, is kNotHeld and changes nothing.
TEST_F(VariantTest, LuaOwnerRenewExtendRefusesWrongToken) {
  const LockVariant& v = variant("lua_owner_renew");
  const std::string lock = key("lock");
  const AcquireAttempt held = v.try_acquire(context(), lock, kTtlMs);
  ASSERT_EQ(held.outcome, Acquire::kAcquired);
  ASSERT_TRUE(conn().command({"PEXPIRE", lock, "5000"}).reply.is_integer(1));
  const ExtendResult r = v.extend(context(), lock, std::string(kForeignToken), kTtlMs);
  EXPECT_EQ(r.outcome, Extend::kNotHeld);
  EXPECT_GT(pttl(lock), 0);
  EXPECT_LE(pttl(lock), 5000);

  const std::string missing = key("missing");
  EXPECT_EQ(v.extend(context(), missing, held.token, kTtlMs).outcome, Extend::kNotHeld);
  EXPECT_FALSE(exists(missing));
}

// lua_owner_renew.extend reports errors as kError: a script error, and a closed connection.
TEST_F(VariantTest, LuaOwnerRenewExtendErrorsAreErrors) {
  const LockVariant& v = variant("lua_owner_renew");
  const std::string lock = key("lock");
  ASSERT_TRUE(conn().command({"RPUSH", lock, "x"}).ok());
  const ExtendResult script_error = v.extend(context(), lock, "token", kTtlMs);
  EXPECT_EQ(script_error.outcome, Extend::kError);
  EXPECT_EQ(script_error.error.error, RedisErrorKind::kReplyError);
  EXPECT_TRUE(script_error.error.message.starts_with("script lua_owner_renew.extend: "))
      << script_error.error.message;

  conn().close();
  const ExtendResult closed = v.extend(context(), lock, "token", kTtlMs);
  EXPECT_EQ(closed.outcome, Extend::kError);
  EXPECT_EQ(closed.error.error, RedisErrorKind::kClosed);
}

// no_lock is not exclusive and never touches Redis: every acquire succeeds, even on a closed
// connection, the release deletes nothing, and no key is ever created.
TEST_F(VariantTest, NoLockAlwaysAcquiresAndStoresNothing) {
  const LockVariant& v = variant("no_lock");
  EXPECT_FALSE(v.uses_ttl());
  const std::string lock = key("lock");
  const AcquireAttempt first = v.try_acquire(context(), lock, kTtlMs);
  const AcquireAttempt second = v.try_acquire(context(), lock, kTtlMs);
  EXPECT_EQ(first.outcome, Acquire::kAcquired);
  EXPECT_EQ(second.outcome, Acquire::kAcquired);
  EXPECT_EQ(first.token, "none");
  EXPECT_FALSE(exists(lock));
  const ReleaseResult released = v.release(context(), lock, first.token);
  EXPECT_EQ(released.outcome, Release::kNotHeld);
  EXPECT_EQ(released.deleted, 0);

  ASSERT_TRUE(conn().command({"SET", lock, "someone-else"}).ok());
  EXPECT_EQ(v.release(context(), lock, first.token).deleted, 0);
  EXPECT_TRUE(exists(lock));  // release did not touch the key

  conn().close();
  EXPECT_EQ(v.try_acquire(context(), lock, kTtlMs).outcome, Acquire::kAcquired);
  EXPECT_EQ(v.release(context(), lock, first.token).outcome, Release::kNotHeld);
}

class CompareAndDeleteTest : public VariantTest,
                             public ::testing::WithParamInterface<const char*> {};

// A script error in the shared compare-and-delete release (the key is not a string) is kError
// naming the script.
TEST_P(CompareAndDeleteTest, ScriptErrorIsError) {
  const LockVariant& v = variant(GetParam());
  const std::string lock = key("lock");
  ASSERT_TRUE(conn().command({"RPUSH", lock, "x"}).ok());
  const ReleaseResult r = v.release(context(), lock, "token");
  EXPECT_EQ(r.outcome, Release::kError);
  EXPECT_EQ(r.error.error, RedisErrorKind::kReplyError);
  EXPECT_TRUE(r.error.message.starts_with("script lua_owner.release: ")) << r.error.message;
  EXPECT_TRUE(exists(lock));
}

// The Lua variants still work after the server lost its script cache (every script reloads).
TEST_P(CompareAndDeleteTest, SurvivesScriptFlush) {
  const LockVariant& v = variant(GetParam());
  const std::string lock = key("lock");
  AcquireAttempt held = v.try_acquire(context(), lock, kTtlMs);
  ASSERT_EQ(v.release(context(), lock, held.token).outcome, Release::kReleased);
  ASSERT_TRUE(conn().command({"SCRIPT", "FLUSH"}).ok());
  held = v.try_acquire(context(), lock, kTtlMs);
  const ReleaseResult r = v.release(context(), lock, held.token);
  EXPECT_EQ(r.outcome, Release::kReleased) << r.error.describe();
}

INSTANTIATE_TEST_SUITE_P(Variants, CompareAndDeleteTest,
                         ::testing::Values("lua_owner", "lua_acquire_owner", "lua_owner_renew",
                                           "lua_fair_queue", "lua_owner_fenced"));

// FencedLockTest: lua_owner_fenced's fencing numbers, as two clients on their own connections
// see them.
class FencedLockTest : public VariantTest {
 protected:
  const LockVariant& fenced() { return variant("lua_owner_fenced"); }
  std::string lock() { return key("lock"); }
  std::string counter() { return key("lock") + ":fence"; }
};

// The numbers strictly increase across acquisitions by different clients, whether the lock was
// released or its lease ran out, and the counter keeps the latest one without ever expiring.
TEST_F(FencedLockTest, NumbersStrictlyIncreaseAcrossClients) {
  HiredisConnection other_connection = connect();
  Rng other_rng(7);
  const LockContext other{other_connection, other_rng, real_clock(), {}, "other-client", kTtlMs};
  std::int64_t previous = 0;
  for (int i = 0; i < 10; ++i) {
    const LockContext holder = i % 2 == 0 ? context() : other;
    const AcquireAttempt held = fenced().try_acquire(holder, lock(), kTtlMs);
    ASSERT_EQ(held.outcome, Acquire::kAcquired) << held.error.describe();
    EXPECT_GT(held.fencing, previous) << "grant " << i;
    previous = held.fencing;
    EXPECT_EQ(conn().command({"GET", counter()}).reply.str, std::to_string(held.fencing));
    if (i % 3 == 2) {
      // This holder's lease runs out instead of being released.
      ASSERT_TRUE(conn().command({"PEXPIRE", lock(), "20"}).reply.is_integer(1));
      ASSERT_TRUE(wait_until_gone(lock()));
    } else {
      ASSERT_EQ(fenced().release(holder, lock(), held.token).outcome, Release::kReleased);
    }
  }
  EXPECT_EQ(previous, 10);  // one number per grant, none skipped
  EXPECT_EQ(pttl(counter()), -1);
}

// A busy attempt carries no number and spends none: the next grant gets the next number.
TEST_F(FencedLockTest, BusyAttemptGetsNoNumber) {
  const AcquireAttempt held = fenced().try_acquire(context(), lock(), kTtlMs);
  ASSERT_EQ(held.outcome, Acquire::kAcquired);
  EXPECT_EQ(held.fencing, 1);
  for (int i = 0; i < 3; ++i) {
    const AcquireAttempt busy = fenced().try_acquire(context(), lock(), kTtlMs);
    EXPECT_EQ(busy.outcome, Acquire::kBusy);
    EXPECT_EQ(busy.fencing, -1);
  }
  EXPECT_EQ(conn().command({"GET", counter()}).reply.str, "1");
  ASSERT_EQ(fenced().release(context(), lock(), held.token).outcome, Release::kReleased);
  EXPECT_EQ(fenced().try_acquire(context(), lock(), kTtlMs).fencing, 2);
}

// A reply outside the acquire script's contract (a number below 0, a string) is an error that may
// have acquired, never a grant; the variant runs in the event-loop mode (one command each way).
TEST_F(FencedLockTest, ReadsOnlyItsContract) {
  const LockVariant& v = fenced();
  EXPECT_TRUE(v.one_command());
  EXPECT_FALSE(v.renews());
  RedisResult negative;
  negative.reply.type = Reply::Type::kInteger;
  negative.reply.integer = -1;
  RedisResult text;
  text.reply.type = Reply::Type::kString;
  text.reply.str = "34";
  for (const RedisResult& reply : {negative, text}) {
    const AcquireAttempt attempt = v.read_acquire(reply, "token");
    EXPECT_EQ(attempt.outcome, Acquire::kError);
    EXPECT_EQ(attempt.error.error, RedisErrorKind::kUnexpectedReply);
    EXPECT_TRUE(attempt.error.indeterminate());
    EXPECT_EQ(attempt.fencing, -1);
  }
  // Only lua_owner_fenced hands out numbers.
  const AcquireAttempt plain = variant("lua_owner").try_acquire(context(), key("plain"), kTtlMs);
  ASSERT_EQ(plain.outcome, Acquire::kAcquired);
  EXPECT_EQ(plain.fencing, -1);
}

// FairQueueTest: lua_fair_queue's queue, driven waiter by waiter on one connection.
class FairQueueTest : public VariantTest {
 protected:
  const LockVariant& fair() { return variant("lua_fair_queue"); }
  // attempt: one acquire attempt of `waiter`.
  AcquireAttempt attempt(std::string_view waiter, std::int64_t queue_timeout_ms = kTtlMs) {
    return fair().try_acquire(context_as(waiter, queue_timeout_ms), lock(), kTtlMs);
  }
  std::vector<std::string> queue() {
    std::vector<std::string> ids;
    for (const Reply& r : conn().command({"LRANGE", lock() + ":queue", "0", "-1"}).reply.elements)
      ids.push_back(r.str);
    return ids;
  }
  std::string lock() { return key("lock"); }
};

// Waiters get the lock in the order they queued, across releases, and a releaser that tries again
// at once while others wait joins the back of the queue instead of barging in.
TEST_F(FairQueueTest, GrantsInQueueOrderWithoutBarging) {
  const AcquireAttempt holder = attempt("H");
  ASSERT_EQ(holder.outcome, Acquire::kAcquired) << holder.error.describe();
  for (const char* waiter : {"A", "B", "C"}) EXPECT_EQ(attempt(waiter).outcome, Acquire::kBusy);
  EXPECT_EQ(queue(), (std::vector<std::string>{"A", "B", "C"}));

  AcquireAttempt held = holder;
  std::string holder_id = "H";
  for (const char* next : {"A", "B", "C"}) {
    ASSERT_EQ(fair().release(context(), lock(), held.token).outcome, Release::kReleased);
    // The releaser is first to try again, and the later waiters try before the head does.
    EXPECT_EQ(attempt(holder_id).outcome, Acquire::kBusy) << holder_id << " barged in";
    for (const std::string& other : queue()) {
      if (other != next && other != holder_id) {
        EXPECT_EQ(attempt(other).outcome, Acquire::kBusy) << other << " before " << next;
      }
    }
    EXPECT_FALSE(exists(lock()));  // free, yet nobody but the head may take it
    held = attempt(next);
    ASSERT_EQ(held.outcome, Acquire::kAcquired) << next << ": " << held.error.describe();
    EXPECT_EQ(conn().command({"GET", lock()}).reply.str, held.token);
    holder_id = next;
  }
  // Each releaser went to the back: H, then A, then B wait behind the holder C.
  EXPECT_EQ(queue(), (std::vector<std::string>{"H", "A", "B"}));
}

// A waiter that stops trying is dropped once its queue timeout has passed, and the next waiter
// gets the free lock then, not before; a waiter that keeps trying keeps its place past the
// timeout.
TEST_F(FairQueueTest, DropsAWaiterThatStopsTryingAfterTheQueueTimeout) {
  constexpr std::int64_t kQueueTimeoutMs = 200;
  const AcquireAttempt holder = attempt("H", kQueueTimeoutMs);
  ASSERT_EQ(holder.outcome, Acquire::kAcquired);
  // "live" keeps trying every 20 ms for 1.5 queue timeouts while H holds the lock.
  ASSERT_EQ(attempt("live", kQueueTimeoutMs).outcome, Acquire::kBusy);
  const auto live_until = std::chrono::steady_clock::now() + 300ms;
  while (std::chrono::steady_clock::now() < live_until) {
    std::this_thread::sleep_for(20ms);
    ASSERT_EQ(attempt("live", kQueueTimeoutMs).outcome, Acquire::kBusy);
  }
  ASSERT_EQ(fair().release(context(), lock(), holder.token).outcome, Release::kReleased);
  const AcquireAttempt live = attempt("live", kQueueTimeoutMs);
  ASSERT_EQ(live.outcome, Acquire::kAcquired) << "a waiter that kept trying lost its place";

  // "dead" queues once and never tries again; "next" queues behind it.
  const auto dead_queued = std::chrono::steady_clock::now();
  ASSERT_EQ(attempt("dead", kQueueTimeoutMs).outcome, Acquire::kBusy);
  ASSERT_EQ(attempt("next", kQueueTimeoutMs).outcome, Acquire::kBusy);
  ASSERT_EQ(fair().release(context(), lock(), live.token).outcome, Release::kReleased);
  // Bounded: 5 ms polls for at most 2 s.
  std::optional<AcquireAttempt> granted;
  const auto give_up = std::chrono::steady_clock::now() + 2s;
  while (!granted && std::chrono::steady_clock::now() < give_up) {
    AcquireAttempt a = attempt("next", kQueueTimeoutMs);
    if (a.outcome == Acquire::kAcquired) {
      granted = a;
    } else {
      ASSERT_EQ(a.outcome, Acquire::kBusy) << a.error.describe();
      std::this_thread::sleep_for(5ms);
    }
  }
  ASSERT_TRUE(granted.has_value()) << "the dead waiter blocked the queue for 2 s";
  const auto waited = std::chrono::steady_clock::now() - dead_queued;
  // The dead waiter's place was held until its deadline, then dropped from both keys.
  EXPECT_GE(waited, std::chrono::milliseconds(kQueueTimeoutMs - 5));
  EXPECT_TRUE(queue().empty());
  EXPECT_TRUE(conn().command({"ZSCORE", lock() + ":queue:deadlines", "dead"}).reply.is_nil());
}

// A busy attempt queues the waiter with a deadline one queue timeout ahead, lets the queue keys
// expire two timeouts after the last attempt, and reaches the checkpoint "queued" as a busy state
// (a crash there holds nothing); an attempt that gets the lock reaches no checkpoint and leaves
// the queue.
TEST_F(FairQueueTest, BusyAttemptQueuesWithDeadlineAndReachesQueued) {
  const AcquireAttempt holder = attempt("H");
  ASSERT_EQ(holder.outcome, Acquire::kAcquired);
  std::vector<std::pair<std::string, CallState>> reached;
  LockContext waiter = context_as("W", 5000);
  waiter.checkpoint = [&reached](std::string_view point, CallState state) {
    reached.emplace_back(point, state);
  };
  const Reply before = conn().command({"TIME"}).reply;
  EXPECT_EQ(fair().try_acquire(waiter, lock(), kTtlMs).outcome, Acquire::kBusy);
  ASSERT_EQ(reached.size(), 1u);
  EXPECT_EQ(reached[0].first, "queued");
  EXPECT_EQ(reached[0].second, CallState::kBusy);
  const std::int64_t before_ms =
      std::stoll(before.elements[0].str) * 1000 + std::stoll(before.elements[1].str) / 1000;
  const double deadline_ms =
      std::stod(conn().command({"ZSCORE", lock() + ":queue:deadlines", "W"}).reply.str);
  EXPECT_GE(deadline_ms, static_cast<double>(before_ms + 5000));
  EXPECT_LE(deadline_ms, static_cast<double>(before_ms + 5000 + 1000));
  for (const char* suffix : {":queue", ":queue:deadlines"}) {
    EXPECT_GT(pttl(lock() + suffix), 5000) << suffix;
    EXPECT_LE(pttl(lock() + suffix), 10000) << suffix;
  }
  EXPECT_EQ(conn().command({"GET", lock()}).reply.str, holder.token);  // the holder's key stays

  ASSERT_TRUE(conn().command({"DEL", lock()}).reply.is_integer(1));
  reached.clear();
  EXPECT_EQ(fair().try_acquire(waiter, lock(), kTtlMs).outcome, Acquire::kAcquired);
  EXPECT_TRUE(reached.empty());
  EXPECT_FALSE(exists(lock() + ":queue"));
  EXPECT_FALSE(exists(lock() + ":queue:deadlines"));
}

// The registry lists the built-in variants in a stable order and finds each by name only.
// Proves hash_reentrant lets its owner in again, counts the holds, refuses another client and
// another client's release, resets the lease on an inner release, and frees the lock with the
// last release only; reentrant_counter's release takes a hold off the owner's count for anyone.
TEST_F(VariantTest, HashReentrantCountsItsOwnersHolds) {
  const LockVariant& v = variant("hash_reentrant");
  EXPECT_TRUE(v.reentrant());
  const std::string lock = key("lock");
  LockContext a = context_as("A", 0);
  a.ttl_ms = kTtlMs;
  LockContext b = context_as("B", 0);
  b.ttl_ms = kTtlMs;
  ASSERT_EQ(v.try_acquire(a, lock, kTtlMs).outcome, Acquire::kAcquired);
  ASSERT_EQ(v.try_acquire(a, lock, kTtlMs).outcome, Acquire::kAcquired);  // nested
  EXPECT_EQ(conn().command({"HGET", lock, "owner:A"}).reply.str, "2");
  EXPECT_EQ(v.try_acquire(b, lock, kTtlMs).outcome, Acquire::kBusy);
  EXPECT_EQ(v.release(b, lock, "").deleted, 0);  // not B's: refused
  EXPECT_EQ(conn().command({"HGET", lock, "owner:A"}).reply.str, "2");
  conn().command({"PEXPIRE", lock, "1000"});
  EXPECT_EQ(v.release(a, lock, "").deleted, 0);  // inner: one hold left, lease reset
  EXPECT_GT(pttl(lock), 1000);
  EXPECT_EQ(v.try_acquire(b, lock, kTtlMs).outcome, Acquire::kBusy);
  EXPECT_EQ(v.release(a, lock, "").deleted, 1);  // the last hold frees it
  EXPECT_FALSE(exists(lock));
  EXPECT_EQ(v.try_acquire(b, lock, kTtlMs).outcome, Acquire::kAcquired);

  const LockVariant& bug = variant("reentrant_counter");
  const std::string other = key("other");
  ASSERT_EQ(bug.try_acquire(a, other, kTtlMs).outcome, Acquire::kAcquired);
  EXPECT_EQ(bug.try_acquire(b, other, kTtlMs).outcome, Acquire::kBusy);
  EXPECT_EQ(bug.release(b, other, "").deleted, 1);  // B's release frees A's lock: the bug
  EXPECT_FALSE(exists(other));
}

// Proves rw_lock lets readers share and keeps a writer out while anyone reads, and rw_lock_fair
// keeps a new reader out once a writer has asked.
TEST_F(VariantTest, ReadWriteLocksShareReadsAndPreferWritersWhenFair) {
  for (const char* name : {"rw_lock", "rw_lock_fair"}) {
    const LockVariant& v = variant(name);
    EXPECT_TRUE(v.read_write());
    const std::string lock = key(std::string("rw-") + name);
    LockContext reader = context();
    reader.read = true;
    const AcquireAttempt r1 = v.try_acquire(reader, lock, kTtlMs);
    ASSERT_EQ(r1.outcome, Acquire::kAcquired) << name;
    const AcquireAttempt r2 = v.try_acquire(reader, lock, kTtlMs);
    ASSERT_EQ(r2.outcome, Acquire::kAcquired) << name;
    EXPECT_EQ(v.try_acquire(context(), lock, kTtlMs).outcome, Acquire::kBusy) << name;
    // After a writer asked: the fair lock keeps a third reader out, the other lets it in.
    const Acquire third = v.try_acquire(reader, lock, kTtlMs).outcome;
    EXPECT_EQ(third, std::string(name) == "rw_lock_fair" ? Acquire::kBusy : Acquire::kAcquired)
        << name;
    EXPECT_EQ(v.release(reader, lock, r1.token).deleted, 0) << name;  // r2 still reads
    EXPECT_EQ(v.release(reader, lock, r2.token).deleted, third == Acquire::kBusy ? 1 : 0)
        << name;
  }
}

// Proves a writer of rw_lock_fair granted while another writer waits takes away its own intent
// only: the other writer, answered busy on every attempt with a new token, still keeps a new
// reader out once the first has written and gone (explore's seed 8639: a writer's grant deleted
// every intent, and a reader got in past the next writer). The intent is the writer's name
// (LockContext::waiter_id), the same over its attempts.
TEST_F(VariantTest, AFairWritersGrantLeavesTheNextWritersIntent) {
  const LockVariant& v = variant("rw_lock_fair");
  const std::string lock = key("rw-two-writers");
  LockContext reader = context();
  reader.read = true;
  reader.waiter_id = "R";
  LockContext first = context();
  first.waiter_id = "W1";
  LockContext second = context();
  second.waiter_id = "W2";
  const AcquireAttempt read = v.try_acquire(reader, lock, kTtlMs);
  ASSERT_EQ(read.outcome, Acquire::kAcquired);
  ASSERT_EQ(v.try_acquire(first, lock, kTtlMs).outcome, Acquire::kBusy);
  ASSERT_EQ(v.try_acquire(second, lock, kTtlMs).outcome, Acquire::kBusy);
  ASSERT_EQ(v.try_acquire(first, lock, kTtlMs).outcome, Acquire::kBusy);
  EXPECT_EQ(v.release(reader, lock, read.token).deleted, 1);
  const AcquireAttempt written = v.try_acquire(first, lock, kTtlMs);
  ASSERT_EQ(written.outcome, Acquire::kAcquired);
  EXPECT_EQ(v.release(first, lock, written.token).deleted, 1);
  EXPECT_EQ(v.try_acquire(reader, lock, kTtlMs).outcome, Acquire::kBusy) << "W2 still waits";
  const AcquireAttempt next = v.try_acquire(second, lock, kTtlMs);
  ASSERT_EQ(next.outcome, Acquire::kAcquired);
  EXPECT_EQ(v.release(second, lock, next.token).deleted, 1);
  // Both writers have written: no intent is left, and readers get in again.
  const AcquireAttempt again = v.try_acquire(reader, lock, kTtlMs);
  EXPECT_EQ(again.outcome, Acquire::kAcquired);
  EXPECT_FALSE(exists(lock + ":writer"));
}

// FairSemaphoreTest: fair_semaphore (Redis in Action 6.3.2) with 2 permits and 1 s leases, its
// clients' clocks set apart through LockContext::clock_offset_ms.
class FairSemaphoreTest : public VariantTest {
 protected:
  static constexpr std::int64_t kLeaseMs = 1000;
  LockContext client(std::int64_t clock_offset_ms) {
    LockContext with = context();
    with.permits = 2;
    with.clock_offset_ms = clock_offset_ms;
    return with;
  }
  std::int64_t card(const std::string& k) { return conn().command({"ZCARD", k}).reply.integer; }
};

// A client whose clock runs 3 s behind is ranked by its number from the counter, after the two
// live holders, and refused; the basic semaphore lets the same client in (its rank is its clock).
TEST_F(FairSemaphoreTest, RanksANewPermitByTheCounterNotByTheClientsClock) {
  for (const std::string name : {"fair_semaphore", "zset_semaphore"}) {
    const LockVariant& v = variant(name);
    const std::string lock = key(name);
    ASSERT_EQ(v.try_acquire(client(0), lock, kLeaseMs).outcome, Acquire::kAcquired) << name;
    ASSERT_EQ(v.try_acquire(client(0), lock, kLeaseMs).outcome, Acquire::kAcquired) << name;
    const AcquireAttempt behind = v.try_acquire(client(-3000), lock, kLeaseMs);
    if (name == "fair_semaphore") {
      EXPECT_EQ(behind.outcome, Acquire::kBusy);
      EXPECT_EQ(card(lock), 2);
      EXPECT_EQ(card(lock + ":owner"), 2);
      EXPECT_EQ(conn().command({"GET", lock + ":counter"}).reply.str, "3");
    } else {
      EXPECT_EQ(behind.outcome, Acquire::kAcquired) << "the basic semaphore's bug";
    }
  }
}

// A client whose clock runs 3 s ahead (three leases) times both live permits out by its clock,
// removes them from the owner set too, and takes a permit: the limit the book names. The holders'
// releases then free nothing, and the newcomer's frees its own permit from both sets.
TEST_F(FairSemaphoreTest, AClockAheadByMoreThanALeaseTimesLiveHoldersOut) {
  const LockVariant& v = variant("fair_semaphore");
  const std::string lock = key("lock");
  const AcquireAttempt a = v.try_acquire(client(0), lock, kLeaseMs);
  const AcquireAttempt b = v.try_acquire(client(0), lock, kLeaseMs);
  ASSERT_EQ(a.outcome, Acquire::kAcquired);
  ASSERT_EQ(b.outcome, Acquire::kAcquired);
  const AcquireAttempt ahead = v.try_acquire(client(3000), lock, kLeaseMs);
  ASSERT_EQ(ahead.outcome, Acquire::kAcquired);
  EXPECT_EQ(card(lock), 1);
  EXPECT_EQ(card(lock + ":owner"), 1);
  EXPECT_EQ(v.release(client(0), lock, a.token).outcome, Release::kNotHeld);
  EXPECT_EQ(v.release(client(0), lock, b.token).outcome, Release::kNotHeld);
  const ReleaseResult released = v.release(client(3000), lock, ahead.token);
  EXPECT_EQ(released.outcome, Release::kReleased) << released.error.describe();
  EXPECT_FALSE(exists(lock));
  EXPECT_FALSE(exists(lock + ":owner"));
}

// A release removes only the releaser's own permit from both sets, whatever token it names.
TEST_F(FairSemaphoreTest, ReleaseRemovesOnlyItsOwnPermit) {
  const LockVariant& v = variant("fair_semaphore");
  const std::string lock = key("lock");
  const AcquireAttempt a = v.try_acquire(client(0), lock, kLeaseMs);
  ASSERT_EQ(a.outcome, Acquire::kAcquired);
  EXPECT_EQ(v.release(client(0), lock, std::string(kForeignToken)).outcome, Release::kNotHeld);
  EXPECT_EQ(card(lock), 1);
  EXPECT_EQ(card(lock + ":owner"), 1);
  EXPECT_EQ(v.release(client(0), lock, a.token).outcome, Release::kReleased);
  EXPECT_EQ(card(lock + ":owner"), 0);
}

// The registry lists every built-in variant in a stable order and finds each by name only.
TEST(RegistryTest, FindsVariantsByName) {
  const std::vector<std::string> expected = {
      "naive",
      "set_nx_ex",
      "lua_owner",
      "setnx_then_expire",
      "lua_setnx_expire",
      "get_then_del",
      "lua_acquire_owner",
      "lua_owner_renew",
      "no_lock",
      "lua_fair_queue",
      "lua_owner_fenced",
      "redlock",
      "lua_owner_wait",
      "zset_semaphore",
      "zset_semaphore_server",
      "fair_semaphore",
      "hash_reentrant",
      "reentrant_counter",
      "rw_lock",
      "rw_lock_fair",
  };
  EXPECT_EQ(variant_names(), expected);
  ASSERT_EQ(all_variants().size(), expected.size());
  for (const std::string& name : expected) {
    const LockVariant* v = find_variant(name);
    ASSERT_NE(v, nullptr) << name;
    EXPECT_EQ(v->name(), name);
    EXPECT_FALSE(v->summary().empty());
  }
  EXPECT_EQ(find_variant("lib:redlock"), nullptr);  // a library, not a built-in
  EXPECT_EQ(find_variant(""), nullptr);
  EXPECT_EQ(find_variant("Naive"), nullptr);
}

}  // namespace
}  // namespace locksim
