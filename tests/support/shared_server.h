// shared_server.h: one private redis-server for a whole test program, and the catalogue's
// scenarios, for the integration tests that run the driver.
//
//   RedisServer* server = nullptr;
//   const auto* const kEnvironment =
//       ::testing::AddGlobalTestEnvironment(new test_support::SharedServer(&server));
//   const Scenario s = test_support::catalogue("stale-release");
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "sim/lock/registry.h"
#include "sim/redis/server.h"
#include "sim/scenario/loader.h"

namespace locksim::test_support {

// SharedServer: starts the server before the first test and stops it after the last; `*slot`
// points at it in between.
class SharedServer : public ::testing::Environment {
 public:
  explicit SharedServer(RedisServer** slot) : slot_(slot) {}
  void SetUp() override {
    server_ = std::make_unique<RedisServer>(RedisServer::start({}));
    *slot_ = server_.get();
  }
  void TearDown() override {
    server_.reset();
    *slot_ = nullptr;
  }

 private:
  RedisServer** slot_;
  std::unique_ptr<RedisServer> server_;
};

// source_dir: the source tree ($LOCKSIM_SOURCE_DIR, else the one the test was built from).
inline std::filesystem::path source_dir() {
  const char* dir = std::getenv("LOCKSIM_SOURCE_DIR");
  return dir ? dir : LOCKSIM_TEST_SOURCE_DIR;
}

// catalogue: scenarios/<name>.json of the source tree.
inline Scenario catalogue(const std::string& name) {
  return load_scenario(source_dir() / "scenarios" / (name + ".json"), variant_names());
}

}  // namespace locksim::test_support
