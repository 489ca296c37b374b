// redis_acl_test: PrefixUser and ACL logins against a real private redis-server: the restricted
// user can do everything a lock client does on its own prefix, and is refused, visibly, every key
// outside it, FLUSHALL, INFO and a script that touches another key.
#include <memory>
#include <string>

#include "sim/core/error.h"
#include "sim/redis/acl_user.h"
#include "sim/redis/script.h"
#include "tests/integration/redis_fixture.h"

namespace locksim {
namespace {

using test_support::RedisTest;

// A test with a PrefixUser for this test's own key prefix.
class AclTest : public RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    if (HasFatalFailure()) return;
    user_ = std::make_unique<PrefixUser>(
        PrefixUser::create(endpoint(), "locksim-test-" + std::to_string(next_user_++), key("")));
  }
  const PrefixUser& user() const { return *user_; }
  HiredisConnection connect_as_user() const { return HiredisConnection(user_->endpoint(), {}); }

  std::unique_ptr<PrefixUser> user_;
  static inline int next_user_ = 0;
};

void expect_denied(const RedisResult& result, const std::string& what) {
  EXPECT_EQ(result.error, RedisErrorKind::kReplyError) << what << ": " << result.describe();
  EXPECT_TRUE(is_acl_denial(result)) << what << ": " << result.describe();
}

// A library that keeps its lock under a prefix of its own gets that prefix too, and no more.
TEST_F(AclTest, MorePrefixesReachOnlyTheirOwnKeys) {
  PrefixUser library = PrefixUser::create(endpoint(), "locksim-test-library", key(""),
                                          {"mutex:" + key("")});
  HiredisConnection conn(library.endpoint(), {});
  EXPECT_TRUE(conn.command({"SET", "mutex:" + key("lock"), "t", "NX", "PX", "1000"}).ok());
  EXPECT_TRUE(conn.command({"SET", key("lock"), "t"}).ok());
  expect_denied(conn.command({"SET", "mutex:elsewhere", "t"}), "SET outside both prefixes");
  HiredisConnection admin(endpoint(), {});
  admin.command({"DEL", "mutex:" + key("lock"), key("lock")});
}

// Every command a lock client sends works on the user's own prefix.
TEST_F(AclTest, LockCommandsWorkOnOwnPrefix) {
  HiredisConnection conn = connect_as_user();
  ASSERT_FALSE(conn.broken()) << conn.last_error().describe();
  const std::string lock = key("lock");
  auto ok = [&conn](std::initializer_list<std::string_view> args) {
    const RedisResult r = conn.command(args);
    EXPECT_TRUE(r.ok()) << *args.begin() << ": " << r.describe();
    return r;
  };
  EXPECT_TRUE(ok({"PING"}).reply.is_status("PONG"));
  EXPECT_TRUE(ok({"SET", lock, "token", "NX", "PX", "5000"}).reply.is_status("OK"));
  EXPECT_EQ(ok({"GET", lock}).reply.str, "token");
  EXPECT_TRUE(ok({"PEXPIRE", lock, "4000"}).reply.is_integer(1));
  EXPECT_TRUE(ok({"EXISTS", lock}).reply.is_integer(1));
  EXPECT_TRUE(ok({"DEL", lock}).reply.is_integer(1));
  EXPECT_TRUE(ok({"SETNX", lock, "1"}).reply.is_integer(1));
  EXPECT_TRUE(ok({"LPUSH", key("notify"), "1"}).reply.is_integer(1));
  EXPECT_TRUE(ok({"RPUSH", key("notify"), "1"}).reply.is_integer(2));
  EXPECT_EQ(ok({"BLPOP", key("notify"), "1"}).reply.elements.size(), 2u);
  EXPECT_TRUE(ok({"HSET", key("records"), "id", "A"}).reply.is_integer(1));
  EXPECT_TRUE(ok({"HEXISTS", key("records"), "id"}).reply.is_integer(1));
  EXPECT_TRUE(ok({"PUBLISH", key("channel"), "hello"}).reply.is_integer(0));
  EXPECT_TRUE(ok({"WAIT", "0", "0"}).reply.is_integer(0));
  const RedisResult scan = ok({"SCAN", "0", "MATCH", key("*"), "COUNT", "1000"});
  ASSERT_EQ(scan.reply.elements.size(), 2u);
  EXPECT_FALSE(scan.reply.elements[1].elements.empty());

  // SCRIPT LOAD and EVALSHA (through Script), touching only the declared key.
  const Script release("acl_test.release", R"lua(
    if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
    return 0)lua");
  ASSERT_TRUE(release.load(conn).ok());
  const RedisResult released = release.run(conn, {lock}, {"1"});
  EXPECT_TRUE(released.ok()) << released.describe();
  EXPECT_TRUE(released.reply.is_integer(1));
}

// A key outside the prefix is refused with NOPERM, and nothing is written.
TEST_F(AclTest, KeyOutsidePrefixIsRefused) {
  HiredisConnection conn = connect_as_user();
  const RedisResult r = conn.command({"SET", "locksim:test:other-run:lock", "1"});
  expect_denied(r, "SET outside the prefix");
  EXPECT_TRUE(r.message.starts_with("NOPERM")) << r.message;
  expect_denied(conn.command({"GET", "other"}), "GET outside the prefix");
  HiredisConnection admin = connect();
  EXPECT_TRUE(admin.command({"EXISTS", "locksim:test:other-run:lock"}).reply.is_integer(0));
}

// A prefix's glob characters are literal: "a*" does not grant "aXb".
TEST_F(AclTest, PrefixGlobCharactersAreLiteral) {
  PrefixUser starred = PrefixUser::create(endpoint(), "locksim-test-star", key("a*"));
  HiredisConnection conn(starred.endpoint(), {});
  EXPECT_TRUE(conn.command({"SET", key("a*1"), "1"}).ok());
  expect_denied(conn.command({"SET", key("aX1"), "1"}), "SET a key the '*' would match");
}

// FLUSHALL, FLUSHDB, INFO and KEYS (server-level, @dangerous) are refused and delete nothing.
TEST_F(AclTest, DangerousCommandsAreRefused) {
  HiredisConnection admin = connect();
  ASSERT_TRUE(admin.command({"SET", key("survivor"), "1"}).ok());
  HiredisConnection conn = connect_as_user();
  expect_denied(conn.command({"FLUSHALL"}), "FLUSHALL");
  expect_denied(conn.command({"FLUSHDB"}), "FLUSHDB");
  expect_denied(conn.command({"INFO", "server"}), "INFO");
  expect_denied(conn.command({"KEYS", "*"}), "KEYS");
  expect_denied(conn.command({"SCRIPT", "FLUSH"}), "SCRIPT FLUSH");
  expect_denied(conn.command({"ACL", "SETUSER", user().name(), "allkeys"}), "ACL SETUSER");
  EXPECT_TRUE(admin.command({"EXISTS", key("survivor")}).reply.is_integer(1));
}

// A script that touches an undeclared key outside the prefix, or calls FLUSHALL, fails with the
// script's name in the error, and neither takes effect.
TEST_F(AclTest, ScriptTouchingAnotherKeyIsRefused) {
  HiredisConnection conn = connect_as_user();
  const Script sneaky("acl_test.sneaky", R"lua(
    redis.call('SET', KEYS[1], ARGV[1])
    redis.call('SET', 'other', 1)
    return 1)lua");
  const RedisResult r = sneaky.run(conn, {key("lock")}, {"token"});
  expect_denied(r, "a script writing 'other'");
  EXPECT_NE(r.message.find("script acl_test.sneaky"), std::string::npos) << r.message;
  HiredisConnection admin = connect();
  EXPECT_TRUE(admin.command({"EXISTS", "other"}).reply.is_integer(0));

  const Script flusher("acl_test.flusher", "return redis.call('FLUSHALL')");
  ASSERT_TRUE(admin.command({"SET", key("survivor"), "1"}).ok());
  expect_denied(flusher.run(conn, {}, {}), "a script calling FLUSHALL");
  EXPECT_TRUE(admin.command({"EXISTS", key("survivor")}).reply.is_integer(1));
}

// remove() deletes the user: its connections are closed and it can no longer log in.
TEST_F(AclTest, RemoveDeletesTheUser) {
  HiredisConnection conn = connect_as_user();
  ASSERT_TRUE(conn.command({"PING"}).ok());
  const Endpoint credentials = user().endpoint();
  ASSERT_TRUE(user_->remove().ok());
  EXPECT_FALSE(conn.command({"PING"}).ok());
  HiredisConnection admin = connect();
  EXPECT_TRUE(admin.command({"ACL", "GETUSER", credentials.username}).reply.is_nil());
  HiredisConnection again(credentials, {});
  EXPECT_TRUE(again.broken());
  EXPECT_TRUE(user_->remove().ok());  // idempotent
}

// The destructor deletes the user too.
TEST_F(AclTest, DestructorDeletesTheUser) {
  const std::string name = user().name();
  user_.reset();
  HiredisConnection admin = connect();
  EXPECT_TRUE(admin.command({"ACL", "GETUSER", name}).reply.is_nil());
}

// A wrong password leaves the connection broken with an AUTH error naming the user, never the
// password; the redacted endpoint hides the password too.
TEST_F(AclTest, WrongPasswordIsRefusedWithoutShowingIt) {
  Endpoint wrong = user().endpoint();
  wrong.password = "not-the-password-42";
  HiredisConnection conn(wrong, {});
  ASSERT_TRUE(conn.broken());
  const std::string message = conn.last_error().describe();
  EXPECT_NE(message.find("AUTH as user " + user().name() + " failed"), std::string::npos)
      << message;
  EXPECT_EQ(message.find(wrong.password), std::string::npos) << message;
  EXPECT_EQ(user().endpoint().redacted().find(user().endpoint().password), std::string::npos);
  EXPECT_NE(user().endpoint().redacted().find(user().name() + ":***@"), std::string::npos);
}

// Creating a user on an unreachable server is an EnvironmentError.
TEST(PrefixUserTest, UnreachableServerIsEnvironmentError) {
  Endpoint nowhere;
  nowhere.port = 1;  // privileged and unused on a test machine: refused
  EXPECT_THROW(PrefixUser::create(nowhere, "locksim-test-nowhere", "locksim:x:"), EnvironmentError);
}

}  // namespace
}  // namespace locksim
