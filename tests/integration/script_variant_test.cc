// script_variant_test: a user's Lua lock (--variant-file): strict loading with JSON-path errors,
// placeholders filled into KEYS and ARGV, replies mapped to outcomes, and wrong replies and
// syntax errors reported naming the script. Against a real redis-server.
#include "sim/lock/script_variant.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sim/core/error.h"
#include "sim/lock/registry.h"
#include "tests/integration/redis_fixture.h"

namespace locksim {
namespace {

namespace fs = std::filesystem;

fs::path write_file(const std::string& name, const std::string& text) {
  const fs::path dir =
      fs::temp_directory_path() / ("locksim-script-variant-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / name) << text;
  return dir / name;
}

const char* kOwnerLock = R"({
  "name": "owner_lock", "like": "lua_owner",
  "acquire": {"script": "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end return 0",
              "keys": ["{key}"], "args": ["{token}", "{ttl_ms}"]},
  "release": {"script": "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
              "keys": ["{key}"], "args": ["{token}"]},
  "extend": {"script": "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0",
             "keys": ["{key}"], "args": ["{token}", "{ttl_ms}"]}
})";

std::string load_error(const std::string& text) {
  try {
    load_script_variant(write_file("bad.json", text), variant_names());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Bad files are rejected with the file, the JSON path and what was expected.
TEST(ScriptVariantLoad, ErrorsNameFilePathAndExpectation) {
  EXPECT_NE(load_error(R"({"name": "x", "acquire": {"script": "return 1"}})")
                .find("$: missing required key \"release\""),
            std::string::npos);
  EXPECT_NE(load_error(R"({"name": "x", "acquire": {"script": "return 1", "argz": []},
                          "release": {"script": "return 1"}})")
                .find("$.acquire.argz: unknown key"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"name": "x", "acquire": {"script": "return 1", "args": ["{tokn}"]},
                          "release": {"script": "return 1"}})")
                .find("unknown placeholder {tokn}"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"name": "lua_owner", "acquire": {"script": "return 1"},
                          "release": {"script": "return 1"}})")
                .find("already a variant's name"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"name": "x", "like": "lua_ownr", "acquire": {"script": "return 1"},
                          "release": {"script": "return 1"}})")
                .find("$.like: unknown variant"),
            std::string::npos);
  EXPECT_NE(
      load_error(R"({"name": "x", "acquire": {"script": ""}, "release": {"script": "return 1"}})")
          .find("bad.json: $.acquire.script"),
      std::string::npos);
  EXPECT_EQ(load_error(kOwnerLock), "");
}

class ScriptVariantTest : public test_support::RedisTest {};

// The user's owner lock acquires, is busy for a second taker, renews and releases like lua_owner.
TEST_F(ScriptVariantTest, OwnerLockBehavesLikeLuaOwner) {
  const ScriptVariantSpec spec =
      load_script_variant(write_file("owner.json", kOwnerLock), variant_names());
  const auto variant = make_script_variant(spec);
  EXPECT_TRUE(variant->renews());
  HiredisConnection connection = connect();
  EXPECT_EQ(compile_script_variant(spec, connection), "");
  Rng rng(1);
  LockContext context{connection, rng, real_clock(), {}, "test-client", 30000};
  const std::string lock_key = key("lock");
  const AcquireAttempt first = variant->try_acquire(context, lock_key, 1000);
  ASSERT_EQ(first.outcome, AcquireAttempt::Outcome::kAcquired);
  EXPECT_EQ(connection.command({"GET", lock_key}).reply.str, first.token);  // {token} was filled in
  EXPECT_EQ(variant->try_acquire(context, lock_key, 1000).outcome, AcquireAttempt::Outcome::kBusy);
  connection.command({"PEXPIRE", lock_key, "50"});
  EXPECT_EQ(variant->extend(context, lock_key, first.token, 1000).outcome,
            ExtendResult::Outcome::kExtended);
  EXPECT_GT(connection.command({"PTTL", lock_key}).reply.integer, 50);
  EXPECT_EQ(variant->release(context, lock_key, "not-the-token").outcome,
            ReleaseResult::Outcome::kNotHeld);
  const ReleaseResult released = variant->release(context, lock_key, first.token);
  EXPECT_EQ(released.outcome, ReleaseResult::Outcome::kReleased);
  EXPECT_EQ(released.deleted, 1);
}

// Proves an acquire that answers OK is acquired whether OK comes as SET's status reply or as the
// string a script's `return 'OK'` gives (a client library reads both as "OK").
TEST_F(ScriptVariantTest, AnAcquireAnsweringOkAsAStatusOrAStringIsAcquired) {
  for (const char* answer : {"redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])",
                             "redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) and 'OK'"}) {
    const std::string script = std::string("return ") + answer;
    const ScriptVariantSpec spec = load_script_variant(
        write_file("ok.json", R"json({"name": "ok", "acquire": {"script": ")json" + script +
                                  R"json(", "keys": ["{key}"], "args": ["{token}", "{ttl_ms}"]},
          "release": {"script": "return redis.call('DEL', KEYS[1])", "keys": ["{key}"]}})json"),
        variant_names());
    const auto variant = make_script_variant(spec);
    HiredisConnection connection = connect();
    EXPECT_EQ(compile_script_variant(spec, connection), "");
    Rng rng(1);
    LockContext context{connection, rng, real_clock(), {}, "test-client", 30000};
    const std::string lock_key = key(std::string("ok-") + (script.ends_with("'OK'") ? "s" : "t"));
    const AcquireAttempt first = variant->try_acquire(context, lock_key, 1000);
    EXPECT_EQ(first.outcome, AcquireAttempt::Outcome::kAcquired)
        << script << ": " << first.error.message;
    // Held: the second SET NX answers nil (busy) either way.
    EXPECT_EQ(variant->try_acquire(context, lock_key, 1000).outcome,
              AcquireAttempt::Outcome::kBusy);
  }
}

// A script answering outside the contract is an error naming the script and the reply; a syntax
// error is found by compile_script_variant before any run.
TEST_F(ScriptVariantTest, WrongRepliesAndSyntaxErrorsNameTheScript) {
  const ScriptVariantSpec spec = load_script_variant(write_file("wrong.json", R"({
    "name": "wrong", "acquire": {"script": "return 'yes'"}, "release": {"script": "return {1}"}})"),
                                                     variant_names());
  const auto variant = make_script_variant(spec);
  HiredisConnection connection = connect();
  Rng rng(1);
  LockContext context{connection, rng, real_clock(), {}, "test-client", 30000};
  const AcquireAttempt attempt = variant->try_acquire(context, key("k"), 100);
  ASSERT_EQ(attempt.outcome, AcquireAttempt::Outcome::kError);
  EXPECT_NE(attempt.error.message.find("script wrong.acquire returned the string \"yes\""),
            std::string::npos)
      << attempt.error.message;
  connection.reconnect();
  const ReleaseResult release = variant->release(context, key("k"), "t");
  ASSERT_EQ(release.outcome, ReleaseResult::Outcome::kError);
  EXPECT_NE(release.error.message.find("script wrong.release returned an array"),
            std::string::npos);

  const ScriptVariantSpec broken = load_script_variant(write_file("broken.json", R"({
    "name": "broken", "acquire": {"script": "return 1"}, "release": {"script": "if then"}})"),
                                                       variant_names());
  connection.reconnect();
  const std::string error = compile_script_variant(broken, connection);
  EXPECT_NE(error.find("$.release.script: script broken.release"), std::string::npos) << error;
}

// A release answering an integer no count of deleted keys can be (-5, or past 2^31 - 1) is an
// unexpected reply, not a refusal: what it did to the key is unknown. 0 stays a refusal.
TEST_F(ScriptVariantTest, AReleaseIntegerOutsideTheContractIsAnUnexpectedReply) {
  HiredisConnection connection = connect();
  Rng rng(1);
  LockContext context{connection, rng, real_clock(), {}, "test-client", 30000};
  for (const std::string reply : {"-5", "-1", "4294967297"}) {
    const ScriptVariantSpec spec = load_script_variant(
        write_file("odd.json", R"({"name": "odd", "acquire": {"script": "return 1"},
                                   "release": {"script": "return )" +
                                   reply + R"("}})"),
        variant_names());
    const auto variant = make_script_variant(spec);
    const ReleaseResult release = variant->release(context, key("k"), "t");
    ASSERT_EQ(release.outcome, ReleaseResult::Outcome::kError) << reply;
    EXPECT_EQ(release.error.error, RedisErrorKind::kUnexpectedReply) << reply;
    EXPECT_NE(release.error.message.find("returned the integer " + reply), std::string::npos)
        << release.error.message;
  }
  const ScriptVariantSpec refusing = load_script_variant(
      write_file("refusing.json", R"({"name": "refusing", "acquire": {"script": "return 1"},
                                      "release": {"script": "return 0"}})"),
      variant_names());
  EXPECT_EQ(make_script_variant(refusing)->release(context, key("k"), "t").outcome,
            ReleaseResult::Outcome::kNotHeld);
}

}  // namespace
}  // namespace locksim
