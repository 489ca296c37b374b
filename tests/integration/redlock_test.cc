// redlock_test: the redlock variant on five real private redis-servers (one per node, as the
// Redis docs' example): a majority acquires, a minority or a held key does not and leaves none of
// its keys behind, the validity shrinks with the time spent acquiring, and the release deletes
// on every node it reaches. Servers are stopped (RedisServer::stop) or paused (SIGSTOP) for real.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
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

constexpr int kServers = 5;
constexpr std::int64_t kTtlMs = 10000;
// The nodes' command timeout: short, as Redlock wants (the docs suggest 5-50 ms for a 10 s TTL),
// but long enough that a live node on a loaded 2-core machine always answers in time.
constexpr auto kNodeTimeout = 200ms;
const ConnectionOptions kNodeOptions{kNodeTimeout, kNodeTimeout};
const std::string kKey = "locksim:test:redlock:lock";

// Client: one Redlock client: a connection to every server and its own random stream.
class Client {
 public:
  Client(const std::vector<std::unique_ptr<RedisServer>>& servers, std::uint64_t seed)
      : rng_(seed) {
    connections_.reserve(servers.size());
    for (const auto& server : servers) {
      connections_.emplace_back(server->endpoint(), kNodeOptions);
      nodes_.push_back(&connections_.back());
    }
  }
  LockContext context() { return LockContext{*nodes_.front(), rng_, real_clock(), {}, "test-client", 0, nodes_}; }
  Connection& node(int index) { return connections_.at(static_cast<std::size_t>(index)); }

 private:
  Rng rng_;
  std::vector<HiredisConnection> connections_;
  std::vector<Connection*> nodes_;
};

// ResumeOnExit: SIGCONT for a SIGSTOPped server, whatever way the test leaves its scope.
struct ResumeOnExit {
  pid_t pid;
  ~ResumeOnExit() { kill(pid, SIGCONT); }
};

class RedlockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < kServers; ++i) {
      servers_.push_back(std::make_unique<RedisServer>(RedisServer::start({})));
    }
    client_ = std::make_unique<Client>(servers_, 42);
  }

  const LockVariant& redlock() {
    const LockVariant* found = find_variant("redlock");
    EXPECT_NE(found, nullptr);
    return *found;
  }
  AcquireAttempt acquire(std::int64_t ttl_ms = kTtlMs) {
    return redlock().try_acquire(client_->context(), kKey, ttl_ms);
  }
  ReleaseResult release(const std::string& token) {
    return redlock().release(client_->context(), kKey, token);
  }
  // value: the lock key on server `index`, read on a connection of its own ("" if absent).
  std::string value(int index) {
    HiredisConnection admin(servers_.at(static_cast<std::size_t>(index))->endpoint(), {});
    const RedisResult got = admin.command({"GET", kKey});
    EXPECT_TRUE(got.ok()) << got.describe();
    return got.reply.str;
  }
  void stop(int index) { servers_.at(static_cast<std::size_t>(index))->stop(); }

  std::vector<std::unique_ptr<RedisServer>> servers_;
  std::unique_ptr<Client> client_;
};

// With every server up, the lock is granted on all five, with a validity below its TTL.
TEST_F(RedlockTest, AcquiresOnEveryServer) {
  EXPECT_TRUE(redlock().multi_server());
  EXPECT_TRUE(redlock().uses_ttl());
  const AcquireAttempt held = acquire();
  ASSERT_EQ(held.outcome, Acquire::kAcquired) << held.error.describe();
  EXPECT_EQ(held.granted_on, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_GT(held.validity_ms, 0);
  EXPECT_LT(held.validity_ms, kTtlMs);
  for (int i = 0; i < kServers; ++i) EXPECT_EQ(value(i), held.token) << "server " << i;
}

// A second client, while the first holds the lock, is answered busy and changes nothing.
TEST_F(RedlockTest, SecondClientIsBusy) {
  const AcquireAttempt held = acquire();
  ASSERT_EQ(held.outcome, Acquire::kAcquired) << held.error.describe();
  Client other(servers_, 7);
  const AcquireAttempt second = redlock().try_acquire(other.context(), kKey, kTtlMs);
  EXPECT_EQ(second.outcome, Acquire::kBusy);
  EXPECT_TRUE(second.granted_on.empty());
  EXPECT_TRUE(second.token.empty());
  for (int i = 0; i < kServers; ++i) EXPECT_EQ(value(i), held.token) << "server " << i;
}

// Three of five servers down (before the client connects): two grants are no majority; the
// attempt fails, not indeterminate, and leaves no key on the two live servers.
TEST_F(RedlockTest, ThreeOfFiveDownIsNotAcquired) {
  stop(0);
  stop(2);
  stop(4);
  client_ = std::make_unique<Client>(servers_, 42);
  const AcquireAttempt attempt = acquire();
  ASSERT_EQ(attempt.outcome, Acquire::kError);
  EXPECT_FALSE(attempt.error.indeterminate());
  EXPECT_EQ(attempt.error.error, RedisErrorKind::kRefused);
  EXPECT_TRUE(attempt.error.message.starts_with("granted on 2 of 5 nodes, 3 needed; node 0 ("))
      << attempt.error.message;
  EXPECT_TRUE(attempt.error.message.ends_with("; released it")) << attempt.error.message;
  EXPECT_EQ(attempt.granted_on, (std::vector<int>{1, 3}));
  EXPECT_EQ(value(1), "");
  EXPECT_EQ(value(3), "");
}

// Three of five servers die while the client is connected: their SETs get no reply (may have
// run), so the cleanup tries them too, cannot reach them, and says so; the live two are clean.
TEST_F(RedlockTest, ThreeOfFiveDyingIsNotAcquired) {
  stop(0);
  stop(2);
  stop(4);
  const AcquireAttempt attempt = acquire();
  ASSERT_EQ(attempt.outcome, Acquire::kError);
  EXPECT_FALSE(attempt.error.indeterminate());
  EXPECT_EQ(attempt.granted_on, (std::vector<int>{1, 3}));
  EXPECT_NE(attempt.error.message.find("; releasing it failed; node 0 ("), std::string::npos)
      << attempt.error.message;
  EXPECT_TRUE(attempt.error.message.ends_with("; it expires with its TTL there"))
      << attempt.error.message;
  EXPECT_EQ(value(1), "");
  EXPECT_EQ(value(3), "");
}

// Two of five servers down: three grants are a majority; the release deletes on the three.
TEST_F(RedlockTest, TwoOfFiveDownIsAcquired) {
  stop(1);
  stop(3);
  const AcquireAttempt held = acquire();
  ASSERT_EQ(held.outcome, Acquire::kAcquired) << held.error.describe();
  EXPECT_EQ(held.granted_on, (std::vector<int>{0, 2, 4}));
  const ReleaseResult released = release(held.token);
  EXPECT_EQ(released.outcome, Release::kReleased) << released.error.describe();
  EXPECT_EQ(released.deleted, 3);
  for (int i : {0, 2, 4}) EXPECT_EQ(value(i), "") << "server " << i;
}

// The release deletes the key on every node; a second release, or one with another client's
// token, deletes nothing.
TEST_F(RedlockTest, ReleaseDeletesOnEveryNode) {
  const AcquireAttempt held = acquire();
  ASSERT_EQ(held.outcome, Acquire::kAcquired) << held.error.describe();
  const ReleaseResult foreign = release("0123456789abcdef0123456789abcdef");
  EXPECT_EQ(foreign.outcome, Release::kNotHeld);
  EXPECT_EQ(foreign.deleted, 0);
  const ReleaseResult released = release(held.token);
  EXPECT_EQ(released.outcome, Release::kReleased) << released.error.describe();
  EXPECT_EQ(released.deleted, kServers);
  for (int i = 0; i < kServers; ++i) EXPECT_EQ(value(i), "") << "server " << i;
  const ReleaseResult again = release(held.token);
  EXPECT_EQ(again.outcome, Release::kNotHeld);
  EXPECT_EQ(again.deleted, 0);
}

// A release that reaches no node is an error naming every node; one node is enough for kReleased.
TEST_F(RedlockTest, ReleaseIsAnErrorOnlyWhenEveryNodeFails) {
  const AcquireAttempt held = acquire();
  ASSERT_EQ(held.outcome, Acquire::kAcquired) << held.error.describe();
  for (int i = 1; i < kServers; ++i) stop(i);
  const ReleaseResult one_left = release(held.token);
  EXPECT_EQ(one_left.outcome, Release::kReleased) << one_left.error.describe();
  EXPECT_EQ(one_left.deleted, 1);
  stop(0);
  const ReleaseResult none_left = release(held.token);
  EXPECT_EQ(none_left.outcome, Release::kError);
  EXPECT_TRUE(none_left.error.message.starts_with("every node failed: node 0 ("))
      << none_left.error.message;
  EXPECT_NE(none_left.error.message.find("; node 4 ("), std::string::npos)
      << none_left.error.message;
}

// Another client holds the key on three nodes: the two grants this attempt got are a minority, so
// it is busy, and it deletes its own two keys, not the other client's three.
TEST_F(RedlockTest, MinorityGrantIsBusyAndCleanedUp) {
  for (int i : {0, 1, 2}) {
    HiredisConnection admin(servers_.at(static_cast<std::size_t>(i))->endpoint(), {});
    ASSERT_TRUE(admin.command({"SET", kKey, "other", "PX", "30000"}).ok());
  }
  const AcquireAttempt attempt = acquire();
  EXPECT_EQ(attempt.outcome, Acquire::kBusy);
  EXPECT_TRUE(attempt.token.empty());
  EXPECT_EQ(attempt.granted_on, (std::vector<int>{3, 4}));
  for (int i : {0, 1, 2}) EXPECT_EQ(value(i), "other") << "server " << i;
  for (int i : {3, 4}) EXPECT_EQ(value(i), "") << "server " << i;
}

// A node that does not answer costs its command timeout, and that time comes off the validity: a
// SIGSTOPped server still lets four of five grant, but the lease left is shorter by the wait. The
// release, with that node still paused, deletes on the other four.
TEST_F(RedlockTest, PausedNodeShrinksTheValidity) {
  ASSERT_EQ(kill(servers_[2]->pid(), SIGSTOP), 0);
  const ResumeOnExit resume{servers_[2]->pid()};
  const auto started = std::chrono::steady_clock::now();
  const AcquireAttempt held = acquire();
  ASSERT_EQ(held.outcome, Acquire::kAcquired) << held.error.describe();
  EXPECT_EQ(held.granted_on, (std::vector<int>{0, 1, 3, 4}));
  EXPECT_GT(held.validity_ms, 0);
  EXPECT_LE(held.validity_ms, kTtlMs - kNodeTimeout.count());
  const ReleaseResult released = release(held.token);
  EXPECT_EQ(released.outcome, Release::kReleased) << released.error.describe();
  EXPECT_EQ(released.deleted, 4);
  // Bounded: the acquire and the release each wait one command timeout (plus a connect) for the
  // paused node, never more.
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10 * kNodeTimeout);
}

// Granted everywhere but with no time left (the drift alone, 1% of 1 ms + 2 ms, exceeds a 1 ms
// TTL): not acquired, released everywhere.
TEST_F(RedlockTest, MajorityWithoutValidityIsNotAcquired) {
  const AcquireAttempt attempt = acquire(/*ttl_ms=*/1);
  ASSERT_EQ(attempt.outcome, Acquire::kError);
  EXPECT_FALSE(attempt.error.indeterminate());
  EXPECT_NE(attempt.error.message.find("no validity left"), std::string::npos)
      << attempt.error.message;
  EXPECT_EQ(attempt.validity_ms, -1);
  for (int i = 0; i < kServers; ++i) EXPECT_EQ(value(i), "") << "server " << i;
}

// A node connection that broke is reconnected at the next attempt, not given up for good.
TEST_F(RedlockTest, ReconnectsABrokenNodeAtTheNextAttempt) {
  client_->node(1).close();
  ASSERT_TRUE(client_->node(1).broken());
  const AcquireAttempt held = acquire();
  ASSERT_EQ(held.outcome, Acquire::kAcquired) << held.error.describe();
  EXPECT_EQ(held.granted_on, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_FALSE(client_->node(1).broken());
}

// Without nodes, redlock is Redlock over one server, the context's connection (majority 1).
TEST_F(RedlockTest, WithoutNodesUsesTheConnection) {
  HiredisConnection connection(servers_[3]->endpoint(), kNodeOptions);
  Rng rng(3);
  const LockContext single{connection, rng, real_clock(), {}, "single", 0};
  const AcquireAttempt held = redlock().try_acquire(single, kKey, kTtlMs);
  ASSERT_EQ(held.outcome, Acquire::kAcquired) << held.error.describe();
  EXPECT_EQ(held.granted_on, (std::vector<int>{0}));
  EXPECT_GT(held.validity_ms, 0);
  EXPECT_EQ(value(3), held.token);
  EXPECT_EQ(redlock().try_acquire(single, kKey, kTtlMs).outcome, Acquire::kBusy);
  const ReleaseResult released = redlock().release(single, kKey, held.token);
  EXPECT_EQ(released.outcome, Release::kReleased);
  EXPECT_EQ(released.deleted, 1);
}

}  // namespace
}  // namespace locksim
