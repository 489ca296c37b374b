// redis_fixture.h: one private redis-server per test program, and a fixture that gives each test
// a fresh key prefix on it.
//
// The server is started by a GoogleTest global environment (on the main thread, which matters
// for PR_SET_PDEATHSIG) and stopped when the program ends. Include this header in exactly one
// translation unit per test program.
//
//   TEST_F(RedisTest, SetWorks) {
//     HiredisConnection conn = connect();
//     EXPECT_TRUE(conn.command({"SET", key("a"), "1"}).ok());
//   }
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <string_view>

#include "sim/redis/connection.h"
#include "sim/redis/server.h"

namespace locksim::test_support {

// RedisEnvironment: starts the program's RedisServer before the first test and stops it after the
// last. A start failure is remembered and fails every RedisTest (integration tests need Redis).
class RedisEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    try {
      server_ = std::make_unique<RedisServer>(RedisServer::start(RedisServerOptions{}));
    } catch (const std::exception& error) {
      start_error_ = error.what();
    }
  }
  void TearDown() override { server_.reset(); }

  static RedisServer* server() { return server_.get(); }
  static const std::string& start_error() { return start_error_; }

 private:
  static inline std::unique_ptr<RedisServer> server_;
  static inline std::string start_error_;
};

inline ::testing::Environment* const kRedisEnvironment =
    ::testing::AddGlobalTestEnvironment(new RedisEnvironment);

// RedisTest: a test against the shared private server with its own key prefix
// ("locksim:test:<suite>.<test>:<n>:"), so tests never see each other's keys.
class RedisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(RedisEnvironment::server(), nullptr)
        << "private redis-server did not start: " << RedisEnvironment::start_error();
    static std::atomic<int> next_prefix{0};
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    prefix_ = std::string("locksim:test:") + info->test_suite_name() + "." + info->name() + ":" +
              std::to_string(next_prefix++) + ":";
  }

  const RedisServer& server() const { return *RedisEnvironment::server(); }
  const Endpoint& endpoint() const { return server().endpoint(); }
  HiredisConnection connect(ConnectionOptions options = {}) const {
    return HiredisConnection(endpoint(), options);
  }
  // key: `name` under this test's prefix.
  std::string key(std::string_view name) const { return prefix_ + std::string(name); }

 private:
  std::string prefix_;
};

}  // namespace locksim::test_support
