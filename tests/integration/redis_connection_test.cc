// redis_connection_test: Connection, Script and RedisServer against a real private redis-server:
// each error kind is produced for real and classified, and servers never outlive their owner.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>

#include "sim/core/clock.h"
#include "sim/core/error.h"
#include "sim/redis/script.h"
#include "tests/integration/redis_fixture.h"

namespace locksim {
namespace {

using namespace std::chrono_literals;
using test_support::RedisTest;

// A socket bound to a loopback port without listening: connecting to it is refused, and no other
// program can take the port while the socket is open.
class UnlistenedPort {
 public:
  UnlistenedPort() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      ADD_FAILURE() << "cannot bind a loopback socket: " << std::strerror(errno);
    }
    port_ = ntohs(address.sin_port);
  }
  ~UnlistenedPort() {
    if (fd_ >= 0) ::close(fd_);
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

std::string config_get(Connection& connection, const std::string& name) {
  const RedisResult r = connection.command({"CONFIG", "GET", name});
  if (!r.ok() || r.reply.elements.size() != 2) return "";
  return r.reply.elements[1].str;
}

// The private server answers PING and reports its version, also through server_version().
TEST_F(RedisTest, ServerStartsAndAnswersPing) {
  HiredisConnection conn = connect();
  ASSERT_FALSE(conn.broken()) << conn.last_error().describe();
  const RedisResult r = conn.command({"PING"});
  ASSERT_TRUE(r.ok()) << r.describe();
  EXPECT_TRUE(r.reply.is_status("PONG"));
  EXPECT_FALSE(server().version().empty());
  EXPECT_NE(server().version(), "unknown");
  EXPECT_EQ(server_version(endpoint()), server().version());
  EXPECT_EQ(config_get(conn, "bind"), "127.0.0.1");
  EXPECT_EQ(config_get(conn, "save"), "");
  EXPECT_EQ(config_get(conn, "appendonly"), "no");
}

// stop() ends the server process and removes its directory; calling it again is harmless.
TEST(RedisServerTest, StopRemovesProcessAndDirectory) {
  RedisServer server = RedisServer::start(RedisServerOptions{});
  const pid_t pid = server.pid();
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, 0), 0);
  HiredisConnection conn(server.endpoint(), {});
  const std::filesystem::path directory = config_get(conn, "dir");
  ASSERT_FALSE(directory.empty());
  EXPECT_TRUE(std::filesystem::exists(directory / "redis.log"));
  EXPECT_NE(directory.filename().string().find("locksim-redis-"), std::string::npos);

  server.stop();
  errno = 0;
  EXPECT_EQ(::kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
  EXPECT_FALSE(std::filesystem::exists(directory));
  server.stop();
  EXPECT_EQ(server.pid(), -1);
}

// Two servers started by one program get different ports and both answer.
TEST(RedisServerTest, TwoServersCoexist) {
  RedisServer first = RedisServer::start(RedisServerOptions{});
  RedisServer second = RedisServer::start(RedisServerOptions{});
  EXPECT_NE(first.endpoint().port, second.endpoint().port);
  HiredisConnection a(first.endpoint(), {});
  HiredisConnection b(second.endpoint(), {});
  EXPECT_TRUE(a.command({"PING"}).ok());
  EXPECT_TRUE(b.command({"PING"}).ok());
}

// A missing executable is an EnvironmentError that says how to install redis-server.
TEST(RedisServerTest, MissingExecutableIsEnvironmentError) {
  RedisServerOptions options;
  options.executable = "locksim-no-such-redis-server";
  try {
    RedisServer::start(options);
    FAIL() << "start() did not throw";
  } catch (const EnvironmentError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("not found on PATH"), std::string::npos) << message;
    EXPECT_NE(message.find("apt-get install redis-server"), std::string::npos) << message;
  }
}

// Connecting to a port nobody listens on is kRefused, definite (the command did not run).
TEST(ConnectionErrorTest, RefusedWhenNothingListens) {
  UnlistenedPort port;
  Endpoint endpoint;
  endpoint.port = port.port();
  HiredisConnection conn(endpoint, ConnectionOptions{500ms, 500ms});
  EXPECT_TRUE(conn.broken());
  EXPECT_EQ(conn.last_error().error, RedisErrorKind::kRefused) << conn.last_error().describe();
  EXPECT_FALSE(conn.last_error().indeterminate());
  const RedisResult r = conn.command({"PING"});
  EXPECT_EQ(r.error, RedisErrorKind::kRefused);
  EXPECT_TRUE(r.describe().starts_with("refused: ")) << r.describe();
}

// A command that outlives the command timeout is kTimeout, indeterminate, and breaks the
// connection for good; reconnect() gives a working one.
TEST_F(RedisTest, TimeoutBreaksConnectionUntilReconnect) {
  HiredisConnection conn = connect(ConnectionOptions{1000ms, 100ms});
  ASSERT_FALSE(conn.broken());
  const RedisResult r = conn.command({"BLPOP", key("empty"), "2"});
  EXPECT_EQ(r.error, RedisErrorKind::kTimeout) << r.describe();
  EXPECT_TRUE(r.indeterminate());
  EXPECT_TRUE(r.describe().starts_with("timeout: ")) << r.describe();
  EXPECT_TRUE(conn.broken());
  // A broken connection does not send; it repeats the error.
  EXPECT_EQ(conn.command({"PING"}).error, RedisErrorKind::kTimeout);

  const RedisResult reconnected = conn.reconnect();
  ASSERT_TRUE(reconnected.ok()) << reconnected.describe();
  EXPECT_FALSE(conn.broken());
  EXPECT_TRUE(conn.command({"PING"}).reply.is_status("PONG"));
}

// A connection the server kills is kClosed on the next command, and broken afterwards.
TEST_F(RedisTest, ServerClosedConnectionIsClosed) {
  HiredisConnection victim = connect();
  HiredisConnection killer = connect();
  const RedisResult id = victim.command({"CLIENT", "ID"});
  ASSERT_EQ(id.reply.type, Reply::Type::kInteger) << id.describe();
  const RedisResult kill =
      killer.command({"CLIENT", "KILL", "ID", std::to_string(id.reply.integer)});
  ASSERT_TRUE(kill.reply.is_integer(1)) << kill.describe();

  const RedisResult r = victim.command({"PING"});
  EXPECT_EQ(r.error, RedisErrorKind::kClosed) << r.describe();
  EXPECT_TRUE(r.indeterminate());
  EXPECT_TRUE(victim.broken());
  EXPECT_TRUE(victim.reconnect().ok());
  EXPECT_TRUE(victim.command({"PING"}).ok());
}

// close() drops the connection on our side: broken, and commands report kClosed.
TEST_F(RedisTest, CloseMakesConnectionBroken) {
  HiredisConnection conn = connect();
  conn.close();
  EXPECT_TRUE(conn.broken());
  EXPECT_EQ(conn.command({"PING"}).error, RedisErrorKind::kClosed);
}

// An error reply is kReplyError, definite, and leaves the connection usable.
TEST_F(RedisTest, ReplyErrorKeepsConnectionUsable) {
  HiredisConnection conn = connect();
  ASSERT_TRUE(conn.command({"SET", key("string"), "v"}).ok());
  const RedisResult r = conn.command({"LPUSH", key("string"), "x"});
  EXPECT_EQ(r.error, RedisErrorKind::kReplyError);
  EXPECT_TRUE(r.message.starts_with("WRONGTYPE")) << r.message;
  EXPECT_EQ(r.reply.type, Reply::Type::kError);
  EXPECT_FALSE(r.indeterminate());
  EXPECT_FALSE(conn.broken());
  EXPECT_TRUE(conn.command({"PING"}).reply.is_status("PONG"));
}

// A subscribed connection reads pushed messages with a bound: nothing in time is nullopt and the
// connection stays usable; a published message arrives; a killed connection is an error.
TEST_F(RedisTest, NextMessageWaitsBoundedForAPublishedMessage) {
  HiredisConnection subscriber = connect();
  HiredisConnection publisher = connect();
  const std::string channel = key("channel");
  const RedisResult subscribed = subscriber.command({"SUBSCRIBE", channel});
  ASSERT_EQ(subscribed.reply.type, Reply::Type::kArray) << subscribed.describe();

  EXPECT_FALSE(subscriber.next_message(ms_to_ns(20)).has_value());
  EXPECT_FALSE(subscriber.broken());

  ASSERT_TRUE(publisher.command({"PUBLISH", channel, "a"}).reply.is_integer(1));
  ASSERT_TRUE(publisher.command({"PUBLISH", channel, "b"}).reply.is_integer(1));
  for (const char* payload : {"a", "b"}) {
    const std::optional<RedisResult> message = subscriber.next_message(ms_to_ns(5000));
    ASSERT_TRUE(message.has_value());
    ASSERT_TRUE(message->ok()) << message->describe();
    ASSERT_EQ(message->reply.elements.size(), 3u);
    EXPECT_EQ(message->reply.elements[0].str, "message");
    EXPECT_EQ(message->reply.elements[1].str, channel);
    EXPECT_EQ(message->reply.elements[2].str, payload);
  }
  EXPECT_FALSE(subscriber.next_message(0).has_value());

  HiredisConnection killer = connect();
  ASSERT_TRUE(killer.command({"CLIENT", "KILL", "TYPE", "pubsub"}).ok());
  const std::optional<RedisResult> lost = subscriber.next_message(ms_to_ns(5000));
  ASSERT_TRUE(lost.has_value());
  EXPECT_EQ(lost->error, RedisErrorKind::kClosed) << lost->describe();
  EXPECT_TRUE(subscriber.broken());
}

// Arguments are binary-safe (embedded NUL and CRLF survive) and arrays are copied recursively.
TEST_F(RedisTest, BinarySafeArgumentsAndNestedReplies) {
  HiredisConnection conn = connect();
  const std::string value("a\0b\r\nc", 6);
  ASSERT_TRUE(conn.command({"SET", key("bin"), value}).ok());
  const RedisResult got = conn.command({"GET", key("bin")});
  EXPECT_EQ(got.reply.type, Reply::Type::kString);
  EXPECT_EQ(got.reply.str, value);
  EXPECT_TRUE(conn.command({"GET", key("missing")}).reply.is_nil());

  const RedisResult nested =
      conn.command(std::vector<std::string>{"EVAL", "return {1, {'x', 2}, false}", "0"});
  ASSERT_EQ(nested.reply.type, Reply::Type::kArray) << nested.describe();
  ASSERT_EQ(nested.reply.elements.size(), 3u);
  EXPECT_TRUE(nested.reply.elements[0].is_integer(1));
  ASSERT_EQ(nested.reply.elements[1].elements.size(), 2u);
  EXPECT_EQ(nested.reply.elements[1].elements[0].str, "x");
  EXPECT_TRUE(nested.reply.elements[2].is_nil());
}

// A db in the endpoint is SELECTed on connect (and again on reconnect).
TEST_F(RedisTest, SelectsDatabaseOnConnect) {
  Endpoint db3 = endpoint();
  db3.db = 3;
  HiredisConnection in_db3(db3, {});
  ASSERT_FALSE(in_db3.broken()) << in_db3.last_error().describe();
  ASSERT_TRUE(in_db3.command({"SET", key("db"), "3"}).ok());
  HiredisConnection in_db0 = connect();
  EXPECT_TRUE(in_db0.command({"EXISTS", key("db")}).reply.is_integer(0));
  ASSERT_TRUE(in_db3.reconnect().ok());
  EXPECT_TRUE(in_db3.command({"EXISTS", key("db")}).reply.is_integer(1));
}

// Script survives SCRIPT FLUSH: the NOSCRIPT reply makes it load itself again and retry.
TEST_F(RedisTest, ScriptReloadsAfterFlush) {
  static const Script echo("test.echo", R"lua(return ARGV[1] .. KEYS[1])lua");
  HiredisConnection conn = connect();
  const RedisResult first = echo.run(conn, {"k"}, {"v"});
  ASSERT_TRUE(first.ok()) << first.describe();
  EXPECT_EQ(first.reply.str, "vk");

  const RedisResult sha = conn.command({"SCRIPT", "LOAD", echo.source()});
  ASSERT_EQ(sha.reply.type, Reply::Type::kString);
  ASSERT_TRUE(conn.command({"SCRIPT", "FLUSH"}).ok());
  const RedisResult gone = conn.command({"SCRIPT", "EXISTS", sha.reply.str});
  ASSERT_EQ(gone.reply.elements.size(), 1u);
  EXPECT_TRUE(gone.reply.elements[0].is_integer(0));

  const RedisResult again = echo.run(conn, {"k2"}, {"v2"});
  ASSERT_TRUE(again.ok()) << again.describe();
  EXPECT_EQ(again.reply.str, "v2k2");
  const RedisResult back = conn.command({"SCRIPT", "EXISTS", sha.reply.str});
  EXPECT_TRUE(back.reply.elements[0].is_integer(1));
}

// A script that does not compile is a kReplyError naming the script; the connection survives.
TEST_F(RedisTest, ScriptSyntaxErrorNamesScript) {
  static const Script broken_script("test.broken", R"lua(return +)lua");
  HiredisConnection conn = connect();
  const RedisResult r = broken_script.run(conn, {}, {});
  EXPECT_EQ(r.error, RedisErrorKind::kReplyError);
  EXPECT_TRUE(r.message.starts_with("script test.broken: ")) << r.message;
  EXPECT_FALSE(conn.broken());
}

// A runtime error inside a script is a kReplyError naming the script.
TEST_F(RedisTest, ScriptRuntimeErrorNamesScript) {
  static const Script incr("test.incr", R"lua(return redis.call('INCR', KEYS[1]))lua");
  HiredisConnection conn = connect();
  ASSERT_TRUE(conn.command({"SET", key("text"), "not a number"}).ok());
  const RedisResult r = incr.run(conn, {key("text")}, {});
  EXPECT_EQ(r.error, RedisErrorKind::kReplyError);
  EXPECT_TRUE(r.message.starts_with("script test.incr: ")) << r.message;
  EXPECT_TRUE(incr.run(conn, {key("counter")}, {}).reply.is_integer(1));
}

// With requirepass set, the right password authenticates on connect; a wrong one fails the
// connect without revealing the password, and no password gets NOAUTH.
TEST(RedisAuthTest, PasswordIsSentOnConnect) {
  const std::string password = "pw-locksim-test";
  RedisServer server = RedisServer::start(RedisServerOptions{});
  {
    HiredisConnection admin(server.endpoint(), {});
    ASSERT_TRUE(admin.command({"CONFIG", "SET", "requirepass", password}).ok());
  }
  Endpoint with_password = server.endpoint();
  with_password.password = password;
  HiredisConnection good(with_password, {});
  ASSERT_FALSE(good.broken()) << good.last_error().describe();
  EXPECT_TRUE(good.command({"PING"}).reply.is_status("PONG"));
  ASSERT_TRUE(good.reconnect().ok());
  EXPECT_TRUE(good.command({"PING"}).ok());

  Endpoint wrong = server.endpoint();
  wrong.password = "not-" + password;
  HiredisConnection bad(wrong, {});
  EXPECT_TRUE(bad.broken());
  EXPECT_EQ(bad.last_error().error, RedisErrorKind::kReplyError);
  EXPECT_EQ(bad.last_error().describe().find(wrong.password), std::string::npos)
      << bad.last_error().describe();

  HiredisConnection anonymous(server.endpoint(), {});
  const RedisResult r = anonymous.command({"PING"});
  EXPECT_EQ(r.error, RedisErrorKind::kReplyError);
  EXPECT_TRUE(r.message.starts_with("NOAUTH")) << r.message;
}

}  // namespace
}  // namespace locksim
