// lua_owner_wait_test: the lua_owner_wait variant on a real primary with a real replica: a grant
// needs the replica's acknowledgement (WAIT 1); without one (no replica, or the replica paused by
// SIGSTOP) the attempt is a clear error, not indeterminate, and the key is released. On a
// (writable) replica WAIT itself is refused, which is an error too.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "sim/core/random.h"
#include "sim/lock/registry.h"
#include "sim/redis/connection.h"
#include "sim/redis/server.h"

namespace locksim {
namespace {

using namespace std::chrono_literals;
using Acquire = AcquireAttempt::Outcome;
using Release = ReleaseResult::Outcome;

// A 1 s lease: the variant waits max(10, ttl/10) = 100 ms for an acknowledgement.
constexpr std::int64_t kTtlMs = 1000;
const std::string kKey = "locksim:test:wait:lock";
const std::string kNoAckMessage = "no replica acknowledged the lock within 100 ms; released it";

// ResumeOnExit: SIGCONT for a SIGSTOPped server, whatever way the test leaves its scope.
struct ResumeOnExit {
  pid_t pid;
  ~ResumeOnExit() { kill(pid, SIGCONT); }
};

// info_field: `field`'s value in the INFO `section` of the server behind `connection`, or "".
std::string info_field(Connection& connection, std::string_view section, std::string_view field) {
  const RedisResult info = connection.command({"INFO", section});
  const std::string prefix = std::string(field) + ":";
  const std::string& text = info.reply.str;
  const std::size_t at = text.find("\n" + prefix);
  if (at == std::string::npos) return "";
  const std::size_t begin = at + 1 + prefix.size();
  return text.substr(begin, text.find_first_of("\r\n", begin) - begin);
}

class LuaOwnerWaitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    primary_ = std::make_unique<RedisServer>(RedisServer::start({}));
    connection_ = std::make_unique<HiredisConnection>(primary_->endpoint(), ConnectionOptions{});
    ASSERT_FALSE(connection_->broken()) << connection_->last_error().describe();
  }

  // start_replica: a second server replicating the primary, once the link is up on both sides and
  // the replica acknowledges a write (polled for at most 10 s). Redis 7 reports the replica
  // online before it streams commands to it: that starts at the replica's first acknowledgement,
  // up to a second later.
  void start_replica() {
    // The full sync otherwise waits 5 s (repl-diskless-sync-delay) for more replicas to join.
    ASSERT_TRUE(connection_->command({"CONFIG", "SET", "repl-diskless-sync-delay", "0"}).ok());
    replica_ = std::make_unique<RedisServer>(RedisServer::start({}));
    replica_connection_ =
        std::make_unique<HiredisConnection>(replica_->endpoint(), ConnectionOptions{});
    const std::string port = std::to_string(primary_->endpoint().port);
    const RedisResult following = replica_connection_->command({"REPLICAOF", "127.0.0.1", port});
    ASSERT_TRUE(following.ok()) << following.describe();
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    const auto linked = [this] {
      return info_field(*connection_, "replication", "connected_slaves") == "1" &&
             info_field(*replica_connection_, "replication", "master_link_status") == "up";
    };
    const auto acknowledges = [this] {
      connection_->command({"SET", "locksim:test:wait:probe", "1"});
      return connection_->command({"WAIT", "1", "50"}).reply.is_integer(1);
    };
    while (!linked() || !acknowledges()) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the replica never caught up";
      std::this_thread::sleep_for(10ms);
    }
  }

  const LockVariant& variant() {
    const LockVariant* found = find_variant("lua_owner_wait");
    EXPECT_NE(found, nullptr);
    return *found;
  }
  LockContext context() { return LockContext{*connection_, rng_, real_clock(), {}, "test-client", 0}; }
  bool exists(Connection& on) { return on.command({"EXISTS", kKey}).reply.is_integer(1); }

  std::unique_ptr<RedisServer> primary_;
  std::unique_ptr<RedisServer> replica_;
  std::unique_ptr<Connection> connection_;
  std::unique_ptr<Connection> replica_connection_;
  Rng rng_{42};
};

// With a replica, the grant comes once it acknowledged: the replica already holds the token; a
// second attempt is busy; the release deletes the key.
TEST_F(LuaOwnerWaitTest, AcquiredOnceAReplicaAcknowledges) {
  start_replica();
  if (HasFatalFailure()) return;
  EXPECT_FALSE(variant().multi_server());
  EXPECT_TRUE(variant().uses_ttl());
  EXPECT_FALSE(variant().renews());
  std::vector<std::string> reached;
  LockContext with_checkpoint = context();
  with_checkpoint.checkpoint = [&reached](std::string_view point, CallState) {
    reached.emplace_back(point);
  };
  const AcquireAttempt held = variant().try_acquire(with_checkpoint, kKey, kTtlMs);
  ASSERT_EQ(held.outcome, Acquire::kAcquired) << held.error.describe();
  EXPECT_EQ(reached, (std::vector<std::string>{"after_set"}));
  EXPECT_EQ(replica_connection_->command({"GET", kKey}).reply.str, held.token);
  EXPECT_EQ(variant().try_acquire(context(), kKey, kTtlMs).outcome, Acquire::kBusy);
  const ReleaseResult released = variant().release(context(), kKey, held.token);
  EXPECT_EQ(released.outcome, Release::kReleased) << released.error.describe();
  EXPECT_FALSE(exists(*connection_));
}

// Without any replica nobody acknowledges: a clear error, not indeterminate, and no key left.
TEST_F(LuaOwnerWaitTest, NoReplicaIsAnErrorAndReleases) {
  const auto started = std::chrono::steady_clock::now();
  const AcquireAttempt attempt = variant().try_acquire(context(), kKey, kTtlMs);
  EXPECT_GE(std::chrono::steady_clock::now() - started, 100ms);  // it did wait
  ASSERT_EQ(attempt.outcome, Acquire::kError);
  EXPECT_FALSE(attempt.error.indeterminate());
  EXPECT_EQ(attempt.error.message, kNoAckMessage);
  EXPECT_TRUE(attempt.token.empty());
  EXPECT_FALSE(exists(*connection_));
}

// A replica that is connected but paused (SIGSTOP) does not acknowledge either.
TEST_F(LuaOwnerWaitTest, PausedReplicaIsAnErrorAndReleases) {
  start_replica();
  if (HasFatalFailure()) return;
  ASSERT_EQ(kill(replica_->pid(), SIGSTOP), 0);
  const ResumeOnExit resume{replica_->pid()};
  const AcquireAttempt attempt = variant().try_acquire(context(), kKey, kTtlMs);
  ASSERT_EQ(attempt.outcome, Acquire::kError);
  EXPECT_FALSE(attempt.error.indeterminate());
  EXPECT_EQ(attempt.error.message, kNoAckMessage);
  EXPECT_FALSE(exists(*connection_));
}

// On a replica made writable the SET succeeds locally, but WAIT is refused there: the lock was not
// taken (a refusal, as when no replica acknowledged, which the caller may try again: a cluster's
// failover between the SET and the WAIT ends so), saying why, and the local key is released.
TEST_F(LuaOwnerWaitTest, WaitRefusedOnAReplicaIsARefusal) {
  start_replica();
  if (HasFatalFailure()) return;
  ASSERT_TRUE(replica_connection_->command({"CONFIG", "SET", "replica-read-only", "no"}).ok());
  const LockContext on_replica{*replica_connection_, rng_, real_clock(), {}, "test-client", 0};
  const AcquireAttempt attempt = variant().try_acquire(on_replica, kKey, kTtlMs);
  ASSERT_EQ(attempt.outcome, Acquire::kError);
  EXPECT_EQ(attempt.error.error, RedisErrorKind::kRefused);
  EXPECT_TRUE(attempt.error.message.starts_with("WAIT failed: ERR WAIT cannot be used with "))
      << attempt.error.message;
  EXPECT_TRUE(attempt.error.message.ends_with("; released it")) << attempt.error.message;
  EXPECT_FALSE(exists(*replica_connection_));
}

}  // namespace
}  // namespace locksim
