// link_proxy_test: LinkProxy in front of a real redis-server, used by real hiredis clients: it
// forwards everything faithfully, and each fault does to a command or a reply exactly what it
// says, observed on the server through a direct connection. No assertion depends on how fast the
// machine is: a fault that must hold something is checked by waiting for a condition that a
// correct proxy never lets happen (a wait that must time out), and what must happen is waited
// for with a generous bound.
#include "sim/proxy/link_proxy.h"

#include <arpa/inet.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "sim/core/error.h"
#include "sim/fault/fault.h"
#include "sim/fault/link_fault.h"
#include "sim/history/recorder.h"
#include "sim/nemesis/nemesis.h"
#include "tests/integration/redis_fixture.h"

namespace locksim {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// kPatience: how long something that must happen may take on a loaded machine.
constexpr auto kPatience = 10s;
// kQuiet: how long something that must not happen is given to happen anyway.
constexpr auto kQuiet = 300ms;

// wait_until: polls `condition` until it holds (true) or `limit` passed (false).
bool wait_until(const std::function<bool()>& condition, Clock::duration limit = kPatience) {
  const Clock::time_point end = Clock::now() + limit;
  while (!condition()) {
    if (Clock::now() >= end) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

ConnectionOptions short_timeout() { return ConnectionOptions{2000ms, 300ms}; }
ConnectionOptions long_timeout() { return ConnectionOptions{2000ms, 10000ms}; }

struct ContextDeleter {
  void operator()(redisContext* context) const { redisFree(context); }
};
using Context = std::unique_ptr<redisContext, ContextDeleter>;

// pipeline_client: a raw hiredis context to `port`, for pipelining (Connection sends one command
// at a time).
Context pipeline_client(int port) {
  Context context(redisConnect("127.0.0.1", port));
  EXPECT_TRUE(context != nullptr && context->err == 0);
  const timeval timeout{10, 0};
  redisSetTimeout(context.get(), timeout);
  return context;
}

// send_all: writes every appended command now, without reading a reply.
void send_all(redisContext* context) {
  int done = 0;
  while (done == 0) ASSERT_EQ(redisBufferWrite(context, &done), REDIS_OK);
}

// next_reply: the next reply on a pipelined context, as a Connection would return it.
RedisResult next_reply(redisContext* context) {
  void* raw = nullptr;
  if (redisGetReply(context, &raw) != REDIS_OK || raw == nullptr) {
    return RedisResult{RedisErrorKind::kProtocol, context->errstr, {}};
  }
  RedisResult result = result_of(*static_cast<redisReply*>(raw));
  freeReplyObject(raw);
  return result;
}

// RawClient: a plain socket to the proxy, for bytes no client library would send.
class RawClient {
 public:
  explicit RawClient(int port) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
      ADD_FAILURE() << "cannot connect to the proxy: " << std::strerror(errno);
    }
  }
  ~RawClient() { close(); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  void send(std::string_view bytes) {
    ASSERT_EQ(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  // read: bytes until `count` arrived, the peer closed, or kPatience passed.
  std::string read(std::size_t count) {
    std::string bytes;
    const Clock::time_point end = Clock::now() + kPatience;
    while (bytes.size() < count && Clock::now() < end) {
      pollfd ready{fd_, POLLIN, 0};
      if (::poll(&ready, 1, 10) <= 0) continue;
      char buffer[4096];
      const ssize_t got = ::recv(fd_, buffer, std::min(sizeof(buffer), count - bytes.size()), 0);
      if (got <= 0) break;
      bytes.append(buffer, static_cast<std::size_t>(got));
    }
    return bytes;
  }
  // closed_by_peer: the proxy closed the connection (end of stream or reset) within kPatience.
  bool closed_by_peer() {
    return wait_until([this] {
      pollfd ready{fd_, POLLIN, 0};
      if (::poll(&ready, 1, 0) <= 0) return false;
      char byte = 0;
      return ::recv(fd_, &byte, 1, MSG_DONTWAIT) <= 0;
    });
  }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// UnlistenedPort: a loopback port bound without listening: connecting to it is refused, and no
// other program can take it while this exists.
class UnlistenedPort {
 public:
  UnlistenedPort() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
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
  UnlistenedPort(const UnlistenedPort&) = delete;
  UnlistenedPort& operator=(const UnlistenedPort&) = delete;
  int port() const { return port_; }

 private:
  int fd_;
  int port_ = 0;
};

class LinkProxyTest : public test_support::RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    if (HasFatalFailure()) return;
    proxy_ = LinkProxy::start(endpoint());
  }

  LinkProxy& proxy() { return *proxy_; }
  HiredisConnection through_proxy(ConnectionOptions options = {}) {
    return HiredisConnection(proxy_->endpoint(), options);
  }
  // value_on_server: `name`'s value read directly from the server ("" if absent).
  std::string value_on_server(std::string_view name) {
    HiredisConnection direct = connect();
    const RedisResult r = direct.command({"GET", key(name)});
    EXPECT_TRUE(r.ok()) << r.describe();
    return r.reply.str;
  }
  bool on_server(std::string_view name, std::string_view value) {
    return value_on_server(name) == value;
  }

  std::unique_ptr<LinkProxy> proxy_;
};

// Commands and replies pass through unchanged, and the proxy's endpoint is the upstream's with
// its own host and port.
TEST_F(LinkProxyTest, ForwardsCommandsAndReplies) {
  EXPECT_EQ(proxy().endpoint().host, "127.0.0.1");
  EXPECT_EQ(proxy().endpoint().port, proxy().port());
  EXPECT_NE(proxy().port(), endpoint().port);
  HiredisConnection conn = through_proxy();
  ASSERT_FALSE(conn.broken()) << conn.last_error().describe();
  ASSERT_TRUE(conn.command({"SET", key("a"), "1"}).reply.is_status("OK"));
  EXPECT_EQ(conn.command({"GET", key("a")}).reply.str, "1");
  EXPECT_TRUE(conn.command({"GET", key("absent")}).reply.is_nil());
  const RedisResult error = conn.command({"INCR", key("a"), "extra"});
  EXPECT_EQ(error.error, RedisErrorKind::kReplyError);
  EXPECT_TRUE(on_server("a", "1"));
  const LinkProxyCounters counters = proxy().counters();
  EXPECT_EQ(counters.connections_accepted, 1u);
  EXPECT_EQ(counters.connections_open, 1u);
  EXPECT_EQ(counters.commands_received, 4u);
  EXPECT_EQ(counters.commands_forwarded, 4u);
  EXPECT_EQ(counters.replies_forwarded, 4u);
  EXPECT_EQ(counters.replies_dropped, 0u);
}

// Pipelined commands get their own replies, in order.
TEST_F(LinkProxyTest, ForwardsPipelinedCommandsInOrder) {
  Context client = pipeline_client(proxy().port());
  const std::string counter = key("counter");
  for (int i = 0; i < 200; ++i) redisAppendCommand(client.get(), "INCR %s", counter.c_str());
  redisAppendCommand(client.get(), "GET %s", counter.c_str());
  for (int i = 1; i <= 200; ++i) ASSERT_TRUE(next_reply(client.get()).reply.is_integer(i));
  EXPECT_EQ(next_reply(client.get()).reply.str, "200");
}

// A 1 MiB value arrives whole in both directions.
TEST_F(LinkProxyTest, ForwardsABigValue) {
  std::string value(std::size_t{1} << 20, '\0');
  for (std::size_t i = 0; i < value.size(); ++i) value[i] = static_cast<char>(i * 7 % 251);
  HiredisConnection conn = through_proxy();
  ASSERT_TRUE(conn.command({"SET", key("big"), value}).ok());
  EXPECT_EQ(conn.command({"GET", key("big")}).reply.str, value);
  EXPECT_EQ(value_on_server("big"), value);
}

// A script's nested array reply, nulls included, is one reply.
TEST_F(LinkProxyTest, ForwardsEvalWithNestedReplies) {
  HiredisConnection conn = through_proxy();
  const RedisResult r =
      conn.command({"EVAL", "return {KEYS[1], ARGV[1], {1, {2}}, false, 3}", "1", key("k"), "v"});
  ASSERT_TRUE(r.ok()) << r.describe();
  ASSERT_EQ(r.reply.elements.size(), 5u);
  EXPECT_EQ(r.reply.elements[0].str, key("k"));
  EXPECT_EQ(r.reply.elements[1].str, "v");
  EXPECT_EQ(r.reply.elements[2].elements.at(1).elements.at(0).integer, 2);
  EXPECT_TRUE(r.reply.elements[3].is_nil());  // Lua's false is a null bulk string
  EXPECT_TRUE(r.reply.elements[4].is_integer(3));
  EXPECT_TRUE(conn.command({"PING"}).reply.is_status("PONG"));  // the next reply still matches
}

// Inline commands, empty lines (no reply) and a command written one byte at a time all work.
TEST_F(LinkProxyTest, ForwardsInlineAndByteByByteCommands) {
  RawClient client(proxy().port());
  client.send("\r\nPING\r\n");
  EXPECT_EQ(client.read(7), "+PONG\r\n");
  const std::string set = "*3\r\n$3\r\nSET\r\n$" + std::to_string(key("b").size()) + "\r\n" +
                          key("b") + "\r\n$2\r\nok\r\n";
  for (const char byte : set) client.send(std::string_view(&byte, 1));
  EXPECT_EQ(client.read(5), "+OK\r\n");
  EXPECT_TRUE(on_server("b", "ok"));
  EXPECT_EQ(proxy().counters().commands_received, 2u);  // the empty line is not a command
}

// A dropped reply: the server ran the SET, the client timed out; a new connection works.
TEST_F(LinkProxyTest, DropReplyOfNextRunsTheCommandButTheClientTimesOut) {
  HiredisConnection conn = through_proxy(short_timeout());
  ASSERT_TRUE(conn.command({"PING"}).ok());
  proxy().drop_reply_of_next();
  const RedisResult r = conn.command({"SET", key("a"), "1"});
  EXPECT_EQ(r.error, RedisErrorKind::kTimeout) << r.describe();
  EXPECT_TRUE(on_server("a", "1"));
  EXPECT_EQ(proxy().counters().replies_dropped, 1u);
  ASSERT_TRUE(conn.reconnect().ok());
  EXPECT_TRUE(conn.command({"GET", key("a")}).reply.str == "1");
}

// With skip 1 only the second command's reply is dropped; later replies on the same
// connection still flow (a pipelining client would now pair them wrongly, as after a real loss).
TEST_F(LinkProxyTest, DropWithSkipDropsOnlyThatReply) {
  proxy().drop_reply_of_next(1);
  Context client = pipeline_client(proxy().port());
  for (const char* name : {"a", "b", "c"}) {
    const std::string k = key(name);
    redisAppendCommand(client.get(), "SET %s %s", k.c_str(), name);
  }
  redisAppendCommand(client.get(), "GET %s", key("b").c_str());
  EXPECT_TRUE(next_reply(client.get()).reply.is_status("OK"));  // a
  EXPECT_TRUE(next_reply(client.get()).reply.is_status("OK"));  // c (b's was dropped)
  EXPECT_EQ(next_reply(client.get()).reply.str, "b");           // GET b
  EXPECT_TRUE(on_server("a", "a") && on_server("b", "b") && on_server("c", "c"));
  const LinkProxyCounters counters = proxy().counters();
  EXPECT_EQ(counters.replies_dropped, 1u);
  EXPECT_EQ(counters.replies_forwarded, 3u);
}

// drop_every: drop_commands's own policy, made from its step's parameters as the scenario
// parser would, so these tests run the kind's real file.
std::shared_ptr<CommandPolicy> drop_every(int every) {
  const nlohmann::json step = {{"every", every}};
  const std::string file = "test";
  const json::JsonReader reader(step, "$.steps[0]", file);
  return traits(FaultKind::kDropCommands).link_fault->parse(reader)->make_policy();
}

// With every 3, the 3rd and 6th commands on the link never reach the server and are never
// answered (the client times out on exactly those), the others are answered; once the policy is
// removed every command is answered again.
TEST_F(LinkProxyTest, DropCommandsPolicySwallowsEveryNthCommand) {
  HiredisConnection conn = through_proxy(short_timeout());
  ASSERT_TRUE(conn.command({"PING"}).ok());  // before the policy: not counted by it
  proxy().set_command_policy(drop_every(3));
  for (int i = 1; i <= 6; ++i) {
    const std::string name = "k" + std::to_string(i);
    const RedisResult r = conn.command({"SET", key(name), "v"});
    if (i % 3 == 0) {
      EXPECT_EQ(r.error, RedisErrorKind::kTimeout) << "command " << i << ": " << r.describe();
      ASSERT_TRUE(conn.reconnect().ok());
    } else {
      EXPECT_TRUE(r.reply.is_status("OK")) << "command " << i << ": " << r.describe();
    }
  }
  for (int i = 1; i <= 6; ++i) {
    EXPECT_EQ(on_server("k" + std::to_string(i), "v"), i % 3 != 0) << "k" << i;
  }
  LinkProxyCounters counters = proxy().counters();
  EXPECT_EQ(counters.commands_received, 7u);
  EXPECT_EQ(counters.commands_dropped, 2u);
  EXPECT_EQ(counters.commands_forwarded, 5u);
  EXPECT_EQ(counters.replies_dropped, 0u);

  proxy().set_command_policy(nullptr);
  for (int i = 7; i <= 9; ++i) {
    EXPECT_TRUE(conn.command({"SET", key("k" + std::to_string(i)), "v"}).reply.is_status("OK"))
        << "command " << i << " after the policy was removed";
  }
  counters = proxy().counters();
  EXPECT_EQ(counters.commands_dropped, 2u);
  EXPECT_EQ(counters.commands_forwarded, 8u);
}

// A swallowed command does not shift the pairing of replies to commands: pipelined ECHOs get
// their own replies with the 3rd and 6th missing, and a reply drop aimed at the 4th command
// drops the 4th's reply, not a neighbour's.
TEST_F(LinkProxyTest, DroppedCommandsKeepRepliesPairedWithTheirCommands) {
  proxy().set_command_policy(drop_every(3));
  proxy().drop_reply_of_next(3);  // the 4th command's reply
  Context client = pipeline_client(proxy().port());
  for (int i = 1; i <= 7; ++i) redisAppendCommand(client.get(), "ECHO %d", i);
  for (const char* expected : {"1", "2", "5", "7"}) {
    EXPECT_EQ(next_reply(client.get()).reply.str, expected);
  }
  const LinkProxyCounters counters = proxy().counters();
  EXPECT_EQ(counters.commands_dropped, 2u);
  EXPECT_EQ(counters.replies_dropped, 1u);
  EXPECT_EQ(counters.replies_forwarded, 4u);
}

// A delayed command reaches the server late: absent during the delay, present after, and its
// reply arrives.
TEST_F(LinkProxyTest, DelayNextCommandRunsItLate) {
  HiredisConnection conn = through_proxy(long_timeout());
  ASSERT_TRUE(conn.command({"PING"}).ok());
  proxy().delay_next_command(2000 * kNanosPerMilli);  // far longer than one direct GET
  RedisResult result;
  std::thread client([&] { result = conn.command({"SET", key("a"), "1"}); });
  ASSERT_TRUE(wait_until([&] { return proxy().counters().commands_received == 2; }));
  EXPECT_EQ(value_on_server("a"), "");
  client.join();
  EXPECT_TRUE(result.reply.is_status("OK")) << result.describe();
  EXPECT_TRUE(on_server("a", "1"));
}

// A held command waits for release_held(), and is delivered even though its client gave up and
// closed: a release arriving after the lease.
TEST_F(LinkProxyTest, HoldNextCommandUntilReleasedEvenAfterTheClientLeft) {
  proxy().hold_next_command();
  {
    HiredisConnection conn = through_proxy(short_timeout());
    EXPECT_EQ(conn.command({"SET", key("a"), "late"}).error, RedisErrorKind::kTimeout);
  }  // the client closes its connection
  EXPECT_FALSE(wait_until([&] { return on_server("a", "late"); }, kQuiet));
  EXPECT_EQ(proxy().counters().commands_forwarded, 0u);
  proxy().release_held();
  EXPECT_TRUE(wait_until([&] { return on_server("a", "late"); }));
  // Redis closes its side after the last command: the connection ends.
  EXPECT_TRUE(wait_until([&] { return proxy().counters().connections_open == 0; }));
}

// Commands after a held one queue behind it, and keep their order when released.
TEST_F(LinkProxyTest, CommandsQueueBehindAHeldOne) {
  proxy().hold_next_command();
  Context client = pipeline_client(proxy().port());
  redisAppendCommand(client.get(), "SET %s first", key("a").c_str());
  redisAppendCommand(client.get(), "SET %s second", key("a").c_str());
  redisAppendCommand(client.get(), "SET %s behind", key("b").c_str());
  send_all(client.get());
  ASSERT_TRUE(wait_until([&] { return proxy().counters().commands_received == 3; }));
  EXPECT_FALSE(wait_until([&] { return on_server("b", "behind"); }, kQuiet));
  EXPECT_EQ(value_on_server("a"), "");
  proxy().release_held();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(next_reply(client.get()).reply.is_status("OK"));
  EXPECT_TRUE(on_server("a", "second"));
  EXPECT_TRUE(on_server("b", "behind"));
}

// A delayed reply: the server has run the command at once, the client hears of it only when the
// delay ends (here: when delay_replies(0, 0, 0) ends it and forwards the replies it holds).
TEST_F(LinkProxyTest, DelayRepliesRunsTheCommandAtOnceAndAnswersLate) {
  HiredisConnection conn = through_proxy(long_timeout());
  ASSERT_TRUE(conn.command({"PING"}).ok());
  proxy().delay_replies(60'000 * kNanosPerMilli, 0, 1);
  std::atomic<bool> replied = false;
  RedisResult result;
  std::thread client([&] {
    result = conn.command({"SET", key("a"), "1"});
    replied = true;
  });
  ASSERT_TRUE(wait_until([&] { return on_server("a", "1"); }));
  EXPECT_FALSE(wait_until([&] { return replied.load(); }, kQuiet));
  proxy().delay_replies(0, 0, 0);
  client.join();
  EXPECT_TRUE(result.reply.is_status("OK")) << result.describe();
  EXPECT_EQ(conn.command({"GET", key("a")}).reply.str, "1");
}

// A short reply delay ends on its own (its timer fires): every reply arrives, in order.
TEST_F(LinkProxyTest, DelayedRepliesArriveWhenTheDelayPassed) {
  HiredisConnection conn = through_proxy(long_timeout());
  proxy().delay_replies(50 * kNanosPerMilli, 0, 1);
  for (int i = 1; i <= 3; ++i) {
    ASSERT_TRUE(conn.command({"INCR", key("n")}).reply.is_integer(i));
    EXPECT_TRUE(on_server("n", std::to_string(i)));
  }
  EXPECT_EQ(proxy().counters().replies_forwarded, 3u);
}

// Jittered reply delays never reorder the replies of one connection.
TEST_F(LinkProxyTest, JitteredRepliesKeepTheirOrder) {
  proxy().delay_replies(0, 20 * kNanosPerMilli, 7);
  Context client = pipeline_client(proxy().port());
  const std::string counter = key("counter");
  for (int i = 0; i < 50; ++i) redisAppendCommand(client.get(), "INCR %s", counter.c_str());
  for (int i = 1; i <= 50; ++i) ASSERT_TRUE(next_reply(client.get()).reply.is_integer(i));
}

// A hold partition: the command times out and the server does not see it until heal(); then
// it runs.
TEST_F(LinkProxyTest, PartitionHoldDeliversNothingUntilHeal) {
  HiredisConnection conn = through_proxy(short_timeout());
  ASSERT_TRUE(conn.command({"PING"}).ok());
  proxy().partition(PartitionMode::kHold);
  EXPECT_EQ(conn.command({"SET", key("a"), "1"}).error, RedisErrorKind::kTimeout);
  EXPECT_FALSE(wait_until([&] { return on_server("a", "1"); }, kQuiet));
  HiredisConnection fresh = through_proxy(short_timeout());  // accepted, but held too
  EXPECT_EQ(fresh.command({"SET", key("b"), "1"}).error, RedisErrorKind::kTimeout);
  EXPECT_EQ(proxy().counters().commands_forwarded, 1u);  // the PING
  proxy().heal();
  EXPECT_TRUE(wait_until([&] { return on_server("a", "1") && on_server("b", "1"); }));
  ASSERT_TRUE(conn.reconnect().ok());
  EXPECT_TRUE(conn.command({"PING"}).ok());
}

// A hold partition holds replies too: the server answered, the client hears only after heal().
TEST_F(LinkProxyTest, PartitionHoldHoldsReplies) {
  HiredisConnection conn = through_proxy(long_timeout());
  std::atomic<bool> replied = false;
  RedisResult result;
  std::thread client([&] {
    result = conn.command({"BLPOP", key("list"), "0"});
    replied = true;
  });
  ASSERT_TRUE(wait_until([&] { return proxy().counters().commands_forwarded == 1; }));
  proxy().partition(PartitionMode::kHold);
  HiredisConnection direct = connect();
  ASSERT_TRUE(direct.command({"LPUSH", key("list"), "x"}).ok());
  // The BLPOP took the element: the server has answered.
  ASSERT_TRUE(wait_until([&] {
    return direct.command({"LLEN", key("list")}).reply.is_integer(0);
  }));
  EXPECT_FALSE(wait_until([&] { return replied.load(); }, kQuiet));
  proxy().heal();
  client.join();
  ASSERT_EQ(result.reply.elements.size(), 2u) << result.describe();
  EXPECT_EQ(result.reply.elements[1].str, "x");
}

// A reset partition closes every connection at once and refuses new ones until heal().
TEST_F(LinkProxyTest, PartitionResetClosesConnectionsUntilHeal) {
  HiredisConnection conn = through_proxy(short_timeout());
  ASSERT_TRUE(conn.command({"PING"}).ok());
  proxy().partition(PartitionMode::kReset);
  EXPECT_EQ(conn.command({"PING"}).error, RedisErrorKind::kClosed);
  EXPECT_TRUE(wait_until([&] { return proxy().counters().connections_open == 0; }));
  HiredisConnection during = through_proxy(short_timeout());
  const RedisResult refused = during.broken() ? during.last_error() : during.command({"PING"});
  EXPECT_TRUE(refused.error == RedisErrorKind::kClosed || refused.error == RedisErrorKind::kRefused)
      << refused.describe();
  EXPECT_EQ(proxy().counters().connections_open, 0u);
  proxy().heal();
  ASSERT_TRUE(conn.reconnect().ok());
  EXPECT_TRUE(conn.command({"PING"}).ok());
}

// The server closing a connection closes the client's, and the link ends.
TEST_F(LinkProxyTest, ServerClosingClosesTheClient) {
  HiredisConnection conn = through_proxy(short_timeout());
  ASSERT_TRUE(conn.command({"CLIENT", "SETNAME", "proxied"}).ok());
  HiredisConnection direct = connect();
  const RedisResult list = direct.command({"CLIENT", "LIST"});
  const std::size_t at = list.reply.str.find("name=proxied");
  ASSERT_NE(at, std::string::npos);
  const std::size_t line = list.reply.str.rfind("id=", at);
  const std::string id = list.reply.str.substr(line + 3, list.reply.str.find(' ', line) - line - 3);
  ASSERT_TRUE(direct.command({"CLIENT", "KILL", "ID", id}).reply.is_integer(1));
  EXPECT_EQ(conn.command({"PING"}).error, RedisErrorKind::kClosed);
  EXPECT_TRUE(wait_until([&] { return proxy().counters().connections_open == 0; }));
}

// An upstream that cannot be reached: the client's connection is closed.
TEST_F(LinkProxyTest, UnreachableUpstreamClosesTheClient) {
  const UnlistenedPort unlistened;
  Endpoint nowhere = endpoint();
  nowhere.port = unlistened.port();
  std::unique_ptr<LinkProxy> proxy = LinkProxy::start(nowhere);
  HiredisConnection conn(proxy->endpoint(), short_timeout());
  const RedisResult r = conn.broken() ? conn.last_error() : conn.command({"PING"});
  EXPECT_EQ(r.error, RedisErrorKind::kClosed) << r.describe();
  EXPECT_TRUE(wait_until([&] { return proxy->counters().connections_open == 0; }));
  EXPECT_EQ(proxy->counters().connections_accepted, 1u);
}

// An upstream host that does not resolve is an EnvironmentError from start().
TEST(LinkProxyStartTest, UnresolvableUpstreamIsAnEnvironmentError) {
  Endpoint bad;
  bad.host = "no-such-host.invalid";
  EXPECT_THROW(LinkProxy::start(bad), EnvironmentError);
}

// A client closing in the middle of a command: nothing reaches the server, the link ends.
TEST_F(LinkProxyTest, ClientClosingMidCommandEndsTheLink) {
  RawClient client(proxy().port());
  client.send("*3\r\n$3\r\nSET\r\n$" + std::to_string(key("a").size()) + "\r\n" + key("a"));
  ASSERT_TRUE(wait_until([&] { return proxy().counters().connections_open == 1; }));
  client.close();
  EXPECT_TRUE(wait_until([&] { return proxy().counters().connections_open == 0; }));
  EXPECT_EQ(proxy().counters().commands_received, 0u);
  EXPECT_EQ(value_on_server("a"), "");
}

// Bytes that are not RESP close the link: no command boundary can be trusted after them.
TEST_F(LinkProxyTest, MalformedRequestClosesTheLink) {
  RawClient client(proxy().port());
  client.send("*1\r\n:1\r\n");
  EXPECT_TRUE(client.closed_by_peer());
  EXPECT_TRUE(wait_until([&] { return proxy().counters().connections_open == 0; }));
}

// Destroying the proxy with idle, held and partitioned connections closes them all; what was
// held never reaches the server.
TEST_F(LinkProxyTest, DestructionWithOpenAndHeldConnectionsIsClean) {
  HiredisConnection idle = through_proxy(short_timeout());
  ASSERT_TRUE(idle.command({"PING"}).ok());
  proxy().hold_next_command();
  HiredisConnection held = through_proxy(short_timeout());
  EXPECT_EQ(held.command({"SET", key("held"), "1"}).error, RedisErrorKind::kTimeout);
  proxy().partition(PartitionMode::kHold);
  HiredisConnection partitioned = through_proxy(short_timeout());
  EXPECT_EQ(partitioned.command({"SET", key("partitioned"), "1"}).error, RedisErrorKind::kTimeout);
  const int port = proxy().port();
  proxy_.reset();
  EXPECT_EQ(idle.command({"PING"}).error, RedisErrorKind::kClosed);
  EXPECT_FALSE(
      wait_until([&] { return on_server("held", "1") || on_server("partitioned", "1"); }, kQuiet));
  Endpoint gone = endpoint();
  gone.port = port;
  HiredisConnection after(gone, short_timeout());
  EXPECT_EQ(after.last_error().error, RedisErrorKind::kRefused);
}

}  // namespace
}  // namespace locksim

namespace locksim {
namespace {

// The nemesis picks a client's links by server: with one link per server (two proxies here,
// standing for two servers), a partition or a lost reply aimed at one link leaves the other alone;
// with no choice it hits every link.
TEST_F(LinkProxyTest, NemesisFaultsHitOnlyTheChosenLinks) {
  RunClock clock;
  Recorder recorder(clock, {"c1", "nemesis"});
  Nemesis nemesis(recorder.log(1));
  std::unique_ptr<LinkProxy> second = LinkProxy::start(endpoint());
  nemesis.attach(0, nullptr, {&proxy(), second.get()});
  HiredisConnection first_link = through_proxy(short_timeout());
  HiredisConnection second_link(second->endpoint(), short_timeout());

  nemesis.partition(0, /*reset=*/true, {1});
  EXPECT_TRUE(first_link.command({"PING"}).ok());
  EXPECT_FALSE(second_link.command({"PING"}).ok()) << "the chosen link is cut";
  nemesis.heal(0, {1});
  ASSERT_TRUE(second_link.reconnect().ok());
  EXPECT_TRUE(second_link.command({"PING"}).ok()) << "healed";

  nemesis.lose_next_reply(0, {0});
  EXPECT_EQ(first_link.command({"SET", key("k"), "v"}).error, RedisErrorKind::kTimeout);
  EXPECT_TRUE(wait_until([&] { return on_server("k", "v"); })) << "the command itself ran";
  EXPECT_TRUE(second_link.command({"PING"}).ok()) << "the other link lost nothing";
  ASSERT_TRUE(first_link.reconnect().ok());
  ASSERT_TRUE(first_link.command({"PING"}).ok());

  // A link fault window on link 0 only: its policy is installed there for the window.
  const nlohmann::json every_one = {{"every", 1}};
  const std::string file = "test";
  const std::shared_ptr<const LinkFaultSettings> drop_all =
      traits(FaultKind::kDropCommands).link_fault->parse(json::JsonReader(every_one, "$", file));
  nemesis.open_link_fault(0, FaultKind::kDropCommands, *drop_all, {0});
  EXPECT_EQ(first_link.command({"PING"}).error, RedisErrorKind::kTimeout);
  EXPECT_TRUE(second_link.command({"PING"}).ok()) << "the other link dropped nothing";
  nemesis.close_link_fault(0, FaultKind::kDropCommands, {0});
  ASSERT_TRUE(first_link.reconnect().ok());
  EXPECT_TRUE(first_link.command({"PING"}).ok()) << "the window closed";
  EXPECT_EQ(proxy().counters().commands_dropped, 1u);
  EXPECT_EQ(second->counters().commands_dropped, 0u);

  nemesis.partition(0, /*reset=*/true);  // no choice: every link
  EXPECT_FALSE(first_link.command({"PING"}).ok());
  EXPECT_FALSE(second_link.command({"PING"}).ok());
  nemesis.heal(0);
  EXPECT_EQ(proxy().counters().replies_dropped, 1u);
  EXPECT_EQ(second->counters().replies_dropped, 0u);
}

}  // namespace
}  // namespace locksim
