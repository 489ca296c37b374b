// model_test: the in-memory Redis (sim/model) answers as Redis 7.0.15 does on the cases locks
// depend on: expiry to the millisecond, the SET family, error texts, Lua conversions and script
// errors, pub/sub through a ModelConnection, restart, clock offset and an asynchronous replica.
// The differential test (tests/integration/model_differential_test.cc) compares it with a real
// server on random sequences; these cases pin the behaviour down one by one.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sim/model/command.h"
#include "sim/model/lua_scripting.h"
#include "sim/model/model_connection.h"
#include "sim/model/model_server.h"
#include "tests/support/reply_text.h"

namespace locksim {
namespace {

// ManualClock: virtual time that only sleep_for and advance move.
class ManualClock final : public Clock {
 public:
  Nanos now_ns() const override { return now_; }
  bool wait_until(std::condition_variable&, std::unique_lock<std::mutex>&, Nanos deadline_ns,
                  const std::function<bool()>& done) const override {
    if (!done() && deadline_ns > now_) now_ = deadline_ns;
    return done();
  }
  void sleep_for(Nanos duration) const override {
    if (duration > 0) now_ += duration;
  }
  std::int64_t unix_seconds() const override { return 1'700'000'000; }
  void advance_ms(std::int64_t ms) { now_ += ms_to_ns(ms); }

 private:
  mutable Nanos now_ = 0;
};

using test_support::show;

class ModelTest : public ::testing::Test {
 protected:
  // run: one command at the current virtual time, shown.
  std::string run(std::initializer_list<std::string_view> argv) {
    return show(server_.execute(argv, now_));
  }
  void advance_ms(std::int64_t ms) { now_ += ms_to_ns(ms); }

  ModelServer server_;
  Nanos now_ = 0;
};

// Every command name is found, in any case, and only those: the name table is hashed.
TEST(ModelCommandTable, FindsEveryCommandInAnyCaseAndNothingElse) {
  const auto specs = model_detail::command_specs();
  ASSERT_GT(specs.size(), 200u);  // Redis 7.0's commands, modelled or not
  for (const model_detail::CommandSpec& spec : specs) {
    EXPECT_EQ(model_detail::find_command(spec.name), &spec) << spec.name;
    std::string upper(spec.name);
    for (char& c : upper) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    EXPECT_EQ(model_detail::find_command(upper), &spec) << upper;
    std::string longer(spec.name);
    longer += '!';  // no command has it
    EXPECT_EQ(model_detail::find_command(longer), nullptr) << longer;
  }
  EXPECT_NE(model_detail::find_command("SeT"), nullptr);
  EXPECT_EQ(model_detail::find_command(""), nullptr);
  EXPECT_EQ(model_detail::find_command("nosuchcommand"), nullptr);
  EXPECT_EQ(model_detail::find_command(std::string(33, 'a')), nullptr);
  EXPECT_EQ(model_detail::find_command(std::string_view("get\0", 4)), nullptr);
}

TEST_F(ModelTest, SetNxPxExpiresOneMillisecondAfterItsTtl) {
  EXPECT_EQ(run({"SET", "lock", "a", "NX", "PX", "100"}), "+OK");
  EXPECT_EQ(run({"SET", "lock", "b", "NX", "PX", "100"}), "(nil)");
  advance_ms(100);
  EXPECT_EQ(run({"PTTL", "lock"}), ":0");
  EXPECT_EQ(run({"GET", "lock"}), "\"a\"");  // live while now <= expiry (db.c: now > when)
  now_ += 999'999;                           // still the same millisecond
  EXPECT_EQ(run({"GET", "lock"}), "\"a\"");
  now_ += 1;
  EXPECT_EQ(run({"GET", "lock"}), "(nil)");
  EXPECT_EQ(run({"SET", "lock", "b", "NX", "PX", "100"}), "+OK");
}

TEST_F(ModelTest, TtlRoundsAndPttlCountsDown) {
  run({"SET", "k", "v", "EX", "10"});
  advance_ms(1499);
  EXPECT_EQ(run({"PTTL", "k"}), ":8501");
  EXPECT_EQ(run({"TTL", "k"}), ":9");  // (8501 + 500) / 1000
  advance_ms(1);
  EXPECT_EQ(run({"TTL", "k"}), ":9");
  EXPECT_EQ(run({"TTL", "missing"}), ":-2");
  run({"SET", "p", "v"});
  EXPECT_EQ(run({"PTTL", "p"}), ":-1");
  EXPECT_EQ(run({"PEXPIRETIME", "k"}), ":1700000010000");
}

TEST_F(ModelTest, SetOptionsFollowRedis) {
  EXPECT_EQ(run({"SET", "k", "v1", "XX"}), "(nil)");
  EXPECT_EQ(run({"SET", "k", "v1", "PX", "500"}), "+OK");
  EXPECT_EQ(run({"SET", "k", "v2", "KEEPTTL", "GET"}), "\"v1\"");
  EXPECT_EQ(run({"PTTL", "k"}), ":500");
  EXPECT_EQ(run({"SET", "k", "v3"}), "+OK");
  EXPECT_EQ(run({"PTTL", "k"}), ":-1");  // a plain SET drops the TTL
  EXPECT_EQ(run({"SET", "k", "v", "NX", "GET"}), "\"v3\"");
  EXPECT_EQ(run({"SET", "k", "v", "XX", "NX"}), "-ERR syntax error");
  EXPECT_EQ(run({"SET", "k", "v", "PX", "10", "EX", "10"}), "-ERR syntax error");
  EXPECT_EQ(run({"SET", "k", "v", "KEEPTTL", "PX", "10"}), "-ERR syntax error");
  EXPECT_EQ(run({"SET", "k", "v", "PX"}), "-ERR syntax error");
  EXPECT_EQ(run({"SET", "k", "v", "PX", "0"}), "-ERR invalid expire time in 'set' command");
  EXPECT_EQ(run({"SET", "k", "v", "PX", "-5"}), "-ERR invalid expire time in 'set' command");
  EXPECT_EQ(run({"SET", "k", "v", "PX", "1.5"}), "-ERR value is not an integer or out of range");
  EXPECT_EQ(run({"SET", "k", "v", "EX", "9223372036854775"}),
            "-ERR invalid expire time in 'set' command");
  EXPECT_EQ(run({"SETEX", "k", "0", "v"}), "-ERR invalid expire time in 'setex' command");
  EXPECT_EQ(run({"SET", "k"}), "-ERR wrong number of arguments for 'set' command");
  EXPECT_EQ(run({"SETNX", "k", "x"}), ":0");
  EXPECT_EQ(run({"SETNX", "n", "x"}), ":1");
}

TEST_F(ModelTest, WrongTypeAndIntegerErrors) {
  run({"HSET", "h", "f", "v"});
  EXPECT_EQ(run({"GET", "h"}),
            "-WRONGTYPE Operation against a key holding the wrong kind of value");
  EXPECT_EQ(run({"SET", "h", "v", "GET"}),
            "-WRONGTYPE Operation against a key holding the wrong kind of value");
  run({"SET", "s", "abc"});
  EXPECT_EQ(run({"INCR", "s"}), "-ERR value is not an integer or out of range");
  run({"SET", "n", "9223372036854775807"});
  EXPECT_EQ(run({"INCR", "n"}), "-ERR increment or decrement would overflow");
  EXPECT_EQ(run({"INCRBY", "n", "01"}), "-ERR value is not an integer or out of range");
  EXPECT_EQ(run({"DECRBY", "n", "-9223372036854775808"}), "-ERR decrement would overflow");
  run({"SET", "c", "41", "PX", "100"});
  EXPECT_EQ(run({"INCR", "c"}), ":42");
  EXPECT_EQ(run({"PTTL", "c"}), ":100");  // INCR keeps the TTL
  EXPECT_EQ(run({"HINCRBY", "h", "f", "1"}), "-ERR hash value is not an integer");
}

TEST_F(ModelTest, UnknownAndUnmodelledCommandsAreNamed) {
  EXPECT_EQ(run({"FOO", "bar"}), "-ERR unknown command 'FOO', with args beginning with: 'bar' ");
  EXPECT_EQ(run({"XADD", "s", "*", "f", "v"}), "-ERR locksim model: unknown command 'XADD'");
  // The mark a run tells the model's gaps by (run_simulated), and only they carry it.
  EXPECT_TRUE(run({"XADD", "s", "*", "f", "v"}).starts_with("-ERR " + std::string(kModelGap)));
  EXPECT_EQ(run({"FOO", "bar"}).find(kModelGap), std::string::npos);
  EXPECT_EQ(run({"XADD"}), "-ERR wrong number of arguments for 'xadd' command");
  EXPECT_EQ(run({"GET", "a", "b"}), "-ERR wrong number of arguments for 'get' command");
}

TEST_F(ModelTest, KeysMatchesGlobsAndSkipsExpiredKeys) {
  run({"MSET", "k1", "a", "k2", "b", "x1", "c"});
  run({"PEXPIRE", "k2", "5"});
  EXPECT_EQ(run({"KEYS", "k*"}), "[\"k1\", \"k2\"]");
  EXPECT_EQ(run({"KEYS", "[kx]1"}), "[\"k1\", \"x1\"]");
  EXPECT_EQ(run({"KEYS", "k[^1]"}), "[\"k2\"]");
  EXPECT_EQ(run({"KEYS", "?1"}), "[\"k1\", \"x1\"]");
  advance_ms(6);
  EXPECT_EQ(run({"KEYS", "*"}), "[\"k1\", \"x1\"]");
}

TEST_F(ModelTest, GetexSetsAndDropsTtls) {
  run({"SET", "k", "v"});
  EXPECT_EQ(run({"GETEX", "k", "PX", "50"}), "\"v\"");
  EXPECT_EQ(run({"PTTL", "k"}), ":50");
  EXPECT_EQ(run({"GETEX", "k", "PERSIST"}), "\"v\"");
  EXPECT_EQ(run({"PTTL", "k"}), ":-1");
  EXPECT_EQ(run({"GETEX", "k", "PXAT", "1700000000000"}), "\"v\"");  // now: deleted
  EXPECT_EQ(run({"EXISTS", "k"}), ":0");
  EXPECT_EQ(run({"GETEX", "k", "NX"}), "-ERR syntax error");
}

TEST_F(ModelTest, ExpireFamily) {
  run({"SET", "k", "v"});
  EXPECT_EQ(run({"EXPIRE", "k", "10", "XX"}), ":0");
  EXPECT_EQ(run({"EXPIRE", "k", "10", "NX"}), ":1");
  EXPECT_EQ(run({"EXPIRE", "k", "5", "GT"}), ":0");
  EXPECT_EQ(run({"EXPIRE", "k", "5", "LT"}), ":1");
  EXPECT_EQ(run({"PTTL", "k"}), ":5000");
  EXPECT_EQ(run({"PERSIST", "k"}), ":1");
  EXPECT_EQ(run({"PERSIST", "k"}), ":0");
  EXPECT_EQ(run({"EXPIRE", "k", "1", "NX", "XX"}),
            "-ERR NX and XX, GT or LT options at the same time are not compatible");
  EXPECT_EQ(run({"EXPIRE", "k", "1", "FOO"}), "-ERR Unsupported option FOO");
  EXPECT_EQ(run({"PEXPIRE", "k", "0"}), ":1");  // in the past: deleted at once
  EXPECT_EQ(run({"EXISTS", "k"}), ":0");
  EXPECT_EQ(run({"PEXPIRE", "missing", "10"}), ":0");
}

TEST_F(ModelTest, HashesAnswerInInsertionOrder) {
  EXPECT_EQ(run({"HSET", "h", "z", "1", "a", "2"}), ":2");
  EXPECT_EQ(run({"HSET", "h", "z", "3", "m", "4"}), ":1");
  EXPECT_EQ(run({"HGETALL", "h"}), "[\"z\", \"3\", \"a\", \"2\", \"m\", \"4\"]");
  EXPECT_EQ(run({"HINCRBY", "h", "a", "5"}), ":7");
  EXPECT_EQ(run({"HDEL", "h", "z", "a", "m", "zz"}), ":3");
  EXPECT_EQ(run({"EXISTS", "h"}), ":0");  // an emptied hash is no key
  EXPECT_EQ(run({"HSET", "h", "f"}), "-ERR wrong number of arguments for 'hset' command");
}

TEST_F(ModelTest, ListsAndSortedSets) {
  EXPECT_EQ(run({"RPUSH", "q", "a", "b", "a"}), ":3");
  EXPECT_EQ(run({"LPUSH", "q", "z"}), ":4");
  EXPECT_EQ(run({"LRANGE", "q", "0", "-1"}), "[\"z\", \"a\", \"b\", \"a\"]");
  EXPECT_EQ(run({"LREM", "q", "-1", "a"}), ":1");
  EXPECT_EQ(run({"LINDEX", "q", "-1"}), "\"b\"");
  EXPECT_EQ(run({"LPOP", "q", "5"}), "[\"z\", \"a\", \"b\"]");
  EXPECT_EQ(run({"LLEN", "q"}), ":0");
  EXPECT_EQ(run({"LPOP", "q"}), "(nil)");
  EXPECT_EQ(run({"ZADD", "z", "2", "b", "1", "c", "1", "a"}), ":3");
  EXPECT_EQ(run({"ZRANGE", "z", "0", "-1", "WITHSCORES"}),
            "[\"a\", \"1\", \"c\", \"1\", \"b\", \"2\"]");
  EXPECT_EQ(run({"ZADD", "z", "0.1", "a"}), ":0");
  EXPECT_EQ(run({"ZSCORE", "z", "a"}), "\"0.10000000000000001\"");
  EXPECT_EQ(run({"ZRANGEBYSCORE", "z", "(1", "+inf"}), "[\"b\"]");
  EXPECT_EQ(run({"ZRANK", "z", "b"}), ":2");
  EXPECT_EQ(run({"ZRANK", "z", "a"}), ":0");
  EXPECT_EQ(run({"ZRANK", "z", "nobody"}), "(nil)");
  EXPECT_EQ(run({"ZRANK", "nokey", "a"}), "(nil)");
  EXPECT_EQ(run({"ZREMRANGEBYSCORE", "z", "-inf", "1"}), ":2");
  EXPECT_EQ(run({"ZADD", "z", "x", "a"}), "-ERR value is not a valid float");
  EXPECT_EQ(run({"ZRANGEBYSCORE", "z", "a", "1"}), "-ERR min or max is not a float");
}

// Proves LTRIM and BLPOP answer as Redis 7.0.15 does (each answer below was taken from a real
// redis-server): the model's BLPOP never blocks, it answers nil when every list is empty (the
// simulator's connection asks again until its timeout), and its timeout is parsed as Redis does.
TEST_F(ModelTest, LtrimAndBlpopAreRedis) {
  EXPECT_EQ(run({"RPUSH", "l", "a", "b", "c", "d"}), ":4");
  EXPECT_EQ(run({"LTRIM", "l", "1", "-2"}), "+OK");
  EXPECT_EQ(run({"LRANGE", "l", "0", "-1"}), "[\"b\", \"c\"]");
  EXPECT_EQ(run({"LTRIM", "nokey", "0", "1"}), "+OK");
  EXPECT_EQ(run({"LTRIM", "l", "x", "1"}), "-ERR value is not an integer or out of range");
  EXPECT_EQ(run({"SET", "s", "x"}), "+OK");
  EXPECT_EQ(run({"LTRIM", "s", "0", "1"}),
            "-WRONGTYPE Operation against a key holding the wrong kind of value");
  EXPECT_EQ(run({"BLPOP", "nokey", "l", "0"}), "[\"l\", \"b\"]");
  EXPECT_EQ(run({"BLPOP", "s", "l", "0"}),
            "-WRONGTYPE Operation against a key holding the wrong kind of value");
  EXPECT_EQ(run({"BLPOP", "l", "s", "0"}), "[\"l\", \"c\"]");
  EXPECT_EQ(run({"EXISTS", "l"}), ":0");  // served empty: no key
  EXPECT_EQ(run({"BLPOP", "l", "0.01"}), "(nil)");
  EXPECT_EQ(run({"RPUSH", "l", "a"}), ":1");
  EXPECT_EQ(run({"LTRIM", "l", "5", "1"}), "+OK");  // start past end: all of it
  EXPECT_EQ(run({"EXISTS", "l"}), ":0");
  for (const char* bad : {"abc", "", " 1", "nan"}) {
    EXPECT_EQ(run({"BLPOP", "l", bad}), "-ERR timeout is not a float or out of range") << bad;
  }
  for (const char* negative : {"-1", "-0.5", "inf", "1e300", "1e18", "9.3e15"}) {
    EXPECT_EQ(run({"BLPOP", "l", negative}), "-ERR timeout is negative") << negative;
  }
  for (const char* blocks : {"0x10", "-0", "9223372036854"}) {
    EXPECT_EQ(run({"BLPOP", "l", blocks}), "(nil)") << blocks;  // Redis blocks on these
  }
}

TEST_F(ModelTest, ScriptConversionsAreRedis) {
  EXPECT_EQ(run({"EVAL", "return {1, 2, nil, 3}", "0"}), "[:1, :2]");
  EXPECT_EQ(run({"EVAL", "return 3.99", "0"}), ":3");
  EXPECT_EQ(run({"EVAL", "return -3.99", "0"}), ":-3");
  EXPECT_EQ(run({"EVAL", "return 1e20", "0"}), ":-9223372036854775808");
  EXPECT_EQ(run({"EVAL", "return false", "0"}), "(nil)");
  EXPECT_EQ(run({"EVAL", "return true", "0"}), ":1");
  EXPECT_EQ(run({"EVAL", "return {true, false, 'x'}", "0"}), "[:1, (nil), \"x\"]");
  EXPECT_EQ(run({"EVAL", "return redis.status_reply('FINE')", "0"}), "+FINE");
  EXPECT_EQ(run({"EVAL", "return redis.error_reply('bad')", "0"}), "-ERR bad");
  EXPECT_EQ(run({"EVAL", "return redis.error_reply('MY bad')", "0"}), "-MY bad");
  EXPECT_EQ(run({"EVAL", "return {err='a\\nb'}", "0"}), "-a b");
  EXPECT_EQ(run({"EVAL", "return redis.sha1hex('')", "0"}),
            "\"da39a3ee5e6b4b0d3255bfef95601890afd80709\"");
  EXPECT_EQ(run({"EVAL", "return {KEYS[1], ARGV[1], #ARGV}", "1", "k", "a", "b"}),
            "[\"k\", \"a\", :2]");
  EXPECT_EQ(run({"EVAL", "return redis.call('set', 'n', 12345678901234567890)", "0"}), "+OK");
  EXPECT_EQ(run({"GET", "n"}), "\"1.2345678901234567e+19\"");
  EXPECT_EQ(run({"EVAL", "return type(redis.call('get', 'missing'))", "0"}), "\"boolean\"");
  EXPECT_EQ(run({"EVAL", "return redis.call('ping')", "0"}), "+PONG");
}

TEST_F(ModelTest, ScriptErrorsCarryRedisText) {
  EXPECT_EQ(run({"EVAL", "return x", "0"}),
            "-ERR user_script:1: Script attempted to access nonexistent global variable 'x' "
            "script: 03c387736bb5cc009ff35151572cee04677aa374, on @user_script:1.");
  EXPECT_EQ(run({"EVAL", "x = 1", "0"}),
            "-ERR user_script:1: Attempt to modify a readonly table script: "
            "34bce5f775de97f557a34088509c8bfe1ea17e52, on @user_script:1.");
  run({"HSET", "h", "f", "v"});
  EXPECT_EQ(run({"EVAL", "return redis.call('get', KEYS[1])", "1", "h"}),
            "-WRONGTYPE Operation against a key holding the wrong kind of value script: "
            "4e6d8fc8bb01276962cce5371fa795a7763657ae, on @user_script:1.");
  EXPECT_EQ(run({"EVAL", "return redis.pcall('get', KEYS[1])", "1", "h"}),
            "-WRONGTYPE Operation against a key holding the wrong kind of value");
  EXPECT_EQ(run({"EVAL", "return redis.call('nosuch')", "0"}),
            "-ERR Unknown Redis command called from script script: "
            "206396248e12c6e742fd7296250433c8d7343b74, on @user_script:1.");
  EXPECT_EQ(run({"EVAL", "return redis.call('get')", "0"}),
            "-ERR Wrong number of args calling Redis command from script script: "
            "f187dee77f607f7cff00bbabc9df38507582c78d, on @user_script:1.");
  EXPECT_EQ(run({"EVAL", "error('boom')", "0"}),
            "-ERR user_script:1: boom script: 82903a0434f1503e152f89c03c9acd881a0e8150, on "
            "@user_script:1.");
  EXPECT_EQ(run({"EVAL", "return redis.call('subscribe','x')", "0"}),
            "-ERR This Redis command is not allowed from script script: "
            "2f334966be3d5602175118691c9d198b0a695e53, on @user_script:1.");
  EXPECT_EQ(run({"EVAL", "return", "0"}), "(nil)");
  EXPECT_EQ(run({"EVAL", "x(", "0"}),
            "-ERR Error compiling script (new function): user_script:1: unexpected symbol near "
            "'<eof>'");
  EXPECT_EQ(run({"EVALSHA", "abc", "0"}), "-NOSCRIPT No matching script. Please use EVAL.");
  EXPECT_EQ(run({"EVAL", "return 1", "-1"}), "-ERR Number of keys can't be negative");
  EXPECT_EQ(run({"EVAL", "return 1", "5"}),
            "-ERR Number of keys can't be greater than number of args");
  EXPECT_TRUE(run({"EVAL", "return cjson.encode({1})", "0"})
                  .starts_with("-ERR user_script:1: locksim model: Lua library 'cjson' is not "
                               "modelled script: "));
}

TEST_F(ModelTest, ScriptLoadEvalshaAndFlush) {
  const std::string sha = server_.execute({"SCRIPT", "LOAD", "return ARGV[1]"}, now_).str;
  EXPECT_EQ(sha.size(), 40u);
  EXPECT_EQ(run({"EVALSHA", sha, "0", "hello"}), "\"hello\"");
  EXPECT_EQ(run({"SCRIPT", "EXISTS", sha, "0000000000000000000000000000000000000000"}), "[:1, :0]");
  EXPECT_EQ(run({"SCRIPT", "FLUSH"}), "+OK");
  EXPECT_EQ(run({"EVALSHA", sha, "0", "hello"}), "-NOSCRIPT No matching script. Please use EVAL.");
  EXPECT_EQ(run({"SCRIPT", "LOAD"}), "-ERR wrong number of arguments for 'script|load' command");
  EXPECT_EQ(run({"SCRIPT", "foo"}), "-ERR unknown subcommand 'foo'. Try SCRIPT HELP.");
}

TEST_F(ModelTest, ScriptsSeeFrozenTimeAndAreAtomic) {
  run({"SET", "k", "v", "PX", "10"});
  // Time does not move within a script, and the script's writes all land or none before it.
  EXPECT_EQ(run({"EVAL",
                 "local a = redis.call('TIME') local b = redis.call('TIME') "
                 "return {a[1] == b[1] and a[2] == b[2], redis.call('PTTL', KEYS[1])}",
                 "1", "k"}),
            "[:1, :10]");
  EXPECT_EQ(run({"TIME"}), "[\"1700000000\", \"0\"]");
  now_ += 1'500'000'123;
  EXPECT_EQ(run({"TIME"}), "[\"1700000001\", \"500000\"]");
}

// Every script sees KEYS and ARGV holding exactly its own values, whatever the script before it
// did to them (the model fills the same tables again; Redis makes new ones).
TEST_F(ModelTest, KeysAndArgvHoldOnlyThisScriptsValues) {
  const std::string shape =
      "return {#KEYS, #ARGV, tostring(KEYS[1]), tostring(KEYS[2]), tostring(ARGV[1]), "
      "tostring(ARGV[3]), tostring(KEYS.x), tostring(getmetatable(KEYS)), "
      "tostring(getmetatable(ARGV))}";
  EXPECT_EQ(run({"EVAL", shape, "2", "k1", "k2", "a1", "a2", "a3"}),
            "[:2, :3, \"k1\", \"k2\", \"a1\", \"a3\", \"nil\", \"nil\", \"nil\"]");
  for (const char* mess :
       {"KEYS[9] = 'k9' ARGV[7] = 'a7' return 1", "KEYS.x = 1 return 1",
        "setmetatable(KEYS, {__index = function() return 'meta' end}) return 1",
        "setmetatable(ARGV, {}) KEYS[1] = nil return 1", "KEYS[1.5] = 'half' return 1",
        "KEYS[2] = 'two' ARGV[1] = nil return 1"}) {
    EXPECT_EQ(run({"EVAL", mess, "1", "k", "a"}), ":1") << mess;
    EXPECT_EQ(run({"EVAL", shape, "1", "only", "arg"}),
              "[:1, :1, \"only\", \"nil\", \"arg\", \"nil\", \"nil\", \"nil\", \"nil\"]")
        << "after: " << mess;
  }
  EXPECT_EQ(run({"EVAL", shape, "0"}),
            "[:0, :0, \"nil\", \"nil\", \"nil\", \"nil\", \"nil\", \"nil\", \"nil\"]");
}

TEST_F(ModelTest, MathRandomStartsWhereRedisStarts) {
  // A fresh redis-server answers 40 to its first math.random(100).
  EXPECT_EQ(run({"EVAL", "return math.random(100)", "0"}), ":40");
}

TEST(ModelScripts, AScriptThatNeverEndsIsStopped) {
  ModelOptions options;
  options.script_instruction_budget = 1'000'000;
  ModelServer server(options);
  const Reply reply = server.execute({"EVAL", "while true do end", "0"}, 0);
  ASSERT_EQ(reply.type, Reply::Type::kError);
  EXPECT_NE(reply.str.find("locksim model: script killed after 1000000 Lua instructions"),
            std::string::npos)
      << reply.str;
  // pcall cannot swallow it for good.
  const Reply again =
      server.execute({"EVAL", "while true do pcall(function() while true do end end) end", "0"}, 0);
  ASSERT_EQ(again.type, Reply::Type::kError) << show(again);
  // The server goes on.
  EXPECT_EQ(show(server.execute({"EVAL", "return 1", "0"}, 0)), ":1");
}

TEST(ModelScripts, AScriptOverTheMemoryLimitFailsAndTheServerGoesOn) {
  ModelOptions options;
  options.lua_memory_limit_bytes = std::size_t{16} << 20;
  ModelServer server(options);
  const Reply reply = server.execute({"EVAL", "return string.rep('x', 100000000)", "0"}, 0);
  ASSERT_EQ(reply.type, Reply::Type::kError);
  EXPECT_NE(reply.str.find("not enough memory"), std::string::npos) << reply.str;
  EXPECT_EQ(show(server.execute({"EVAL", "return #string.rep('x', 1000)", "0"}, 0)), ":1000");
}

// A server's Lua state goes to the next server made on the thread (explore makes one or five per
// schedule); what a script sees there is a fresh server's: an empty script cache, math.random
// from its start, and nothing a script of the first could have left (it could change nothing).
TEST(ModelScripts, TheNextServerTakesTheLuaStateAndSeesNothingOfTheFirst) {
  const auto eval = [](ModelServer& server, std::string_view script, std::string_view arg = {}) {
    return show(arg.empty() ? server.execute({"EVAL", script, "0"}, 0)
                            : server.execute({"EVAL", script, "0", arg}, 0));
  };
  std::string sha;
  {
    ModelServer first;
    sha = first.execute({"SCRIPT", "LOAD", "return ARGV[1]"}, 0).str;
    EXPECT_EQ(show(first.execute({"EVALSHA", sha, "0", "a"}, 0)), "\"a\"");
    EXPECT_EQ(eval(first, "return math.random(100)"), ":40");
    EXPECT_EQ(eval(first, "math.randomseed(5) return math.random(100)"), ":53");
    // As in Redis 7.0.15, the string metatable cannot carry anything to a later script.
    EXPECT_NE(eval(first, "getmetatable('').__index.x = 1").find("Attempt to modify a readonly"),
              std::string::npos);
    EXPECT_NE(
        eval(first, "local m = getmetatable('') m.y = 2").find("Attempt to modify a readonly"),
        std::string::npos);
    // Nor the stand-ins of the libraries the model lacks, nor the collector's settings.
    EXPECT_NE(eval(first, "cjson.x = 1").find("Lua library 'cjson' is not modelled"),
              std::string::npos);
    EXPECT_NE(eval(first, "rawset(bit, 'x', 1)").find("Attempt to modify a readonly table"),
              std::string::npos);
    EXPECT_EQ(eval(first, "collectgarbage('stop') return 1"), ":1");
    EXPECT_EQ(eval(first, "return collectgarbage('setpause', 150)"), ":200");
    EXPECT_EQ(eval(first, "return collectgarbage('setstepmul', 400)"), ":200");
  }
  const std::uint64_t set_up = model_detail::LuaScripting::states_set_up();
  ModelServer second;
  EXPECT_EQ(show(second.execute({"EVALSHA", sha, "0", "b"}, 0)),
            "-NOSCRIPT No matching script. Please use EVAL.");
  EXPECT_EQ(show(second.execute({"SCRIPT", "EXISTS", sha}, 0)), "[:0]");
  EXPECT_EQ(eval(second, "return math.random(100)"), ":40");
  EXPECT_EQ(eval(second, "return ARGV[1]", "c"), "\"c\"");  // compiled by the first, still right
  EXPECT_EQ(show(second.execute({"EVALSHA", sha, "0", "d"}, 0)), "\"d\"");
  EXPECT_EQ(eval(second, "return getmetatable('').y"), "(nil)");
  EXPECT_EQ(eval(second, "return rawget(bit, 'x')"), "(nil)");
  // The collector's settings are Lua's defaults again.
  EXPECT_EQ(eval(second, "return collectgarbage('setpause', 200)"), ":200");
  EXPECT_EQ(eval(second, "return collectgarbage('setstepmul', 200)"), ":200");
  // The collector runs again: a script's garbage (about 11 MB) is collected. The margin is wide:
  // how much garbage waits for the next cycle grows with what the state holds, and a state on a
  // thread that ran other tests before holds more.
  EXPECT_EQ(eval(second,
                 "local a = collectgarbage('count') for i = 1, 200000 do local t = {i} end "
                 "return collectgarbage('count') < a + 4096"),
            ":1");
  EXPECT_EQ(model_detail::LuaScripting::states_set_up(), set_up);  // the first one's, reused
}

// Proves what one server's scripts left as garbage in a pooled Lua state does not count against
// the next server's: on its own thread (a pool of its own), a server whose script dropped some
// 40 MB of strings hands its state on, and the next server's script that holds 40 MB at once runs
// as on a fresh state (as on Redis, whose Lua state has no limit), rather than failing with "not
// enough memory" (the state's limit, 64 MiB here, counted the garbage, which Lua 5.1 does not
// collect before it gives up). The next server's state is the first one's, reused.
TEST(ModelScripts, AnEarlierServersGarbageDoesNotCountAgainstTheNext) {
  std::thread([] {
    ModelOptions options;
    options.lua_memory_limit_bytes = std::size_t{64} << 20;
    options.script_allocation_budget_bytes = 0;
    const std::string_view script =
        "local t = {} for i = 1, 40 do t[i] = string.rep(ARGV[1], 1000000 + i) end return #t";
    const std::uint64_t set_up = model_detail::LuaScripting::states_set_up();
    {
      ModelServer first(options);
      EXPECT_EQ(show(first.execute({"EVAL", script, "0", "x"}, 0)), ":40");
    }
    ModelServer second(options);
    EXPECT_EQ(show(second.execute({"EVAL", script, "0", "y"}, 0)), ":40");
    EXPECT_EQ(model_detail::LuaScripting::states_set_up(), set_up + 1);
  }).join();
}

TEST(ModelScripts, ReadOnlyGlobalsAndLibraries) {
  ModelServer server;
  const auto run = [&server](std::string_view script) {
    return show(server.execute({"EVAL", script, "0"}, 0));
  };
  EXPECT_NE(run("string.x = 1").find("user_script:1: Attempt to modify a readonly table"),
            std::string::npos);
  EXPECT_NE(run("KEYS = {}").find("Attempt to modify a readonly table"), std::string::npos);
  EXPECT_NE(run("rawset(_G, 'y', 1)").find("-ERR Attempt to modify a readonly table script:"),
            std::string::npos);
  EXPECT_EQ(run("local n = 0 for k in pairs(string) do n = n + 1 end return n"), ":15");
  EXPECT_EQ(run("return rawget(_G, 'redis') ~= nil"), ":1");
  EXPECT_EQ(run("return loadstring('return 1 + 1')()"), ":2");
  EXPECT_NE(run("return getfenv").find("nonexistent global variable 'getfenv'"), std::string::npos);
  EXPECT_NE(run("print('x')").find("nonexistent global variable 'print'"), std::string::npos);
}

TEST(ModelScripts, TheLockVariantsScriptsRun) {
  ModelServer server;
  const char* acquire = R"lua(
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return 0
)lua";
  const char* release = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
else
  return 0
end
)lua";
  EXPECT_EQ(show(server.execute({"EVAL", acquire, "2", "l", "l:fence", "t1", "100"}, 0)), ":1");
  EXPECT_EQ(show(server.execute({"EVAL", acquire, "2", "l", "l:fence", "t2", "100"}, 0)), ":0");
  EXPECT_EQ(show(server.execute({"EVAL", release, "1", "l", "t2"}, 0)), ":0");
  EXPECT_EQ(show(server.execute({"EVAL", release, "1", "l", "t1"}, 0)), ":1");
  EXPECT_EQ(show(server.execute({"EVAL", acquire, "2", "l", "l:fence", "t2", "100"}, 0)), ":2");
}

TEST(ModelPubSub, AConnectionHearsWhatIsPublished) {
  ModelServer server;
  ManualClock clock;
  ModelConnection subscriber(server, clock);
  ModelConnection publisher(server, clock);
  const RedisResult confirmation = subscriber.command({"SUBSCRIBE", "a", "b"});
  EXPECT_EQ(show(confirmation.reply), "[\"subscribe\", \"a\", :1]");
  std::optional<RedisResult> second = subscriber.next_message(0);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(show(second->reply), "[\"subscribe\", \"b\", :2]");
  EXPECT_EQ(show(publisher.command({"PUBLISH", "a", "hi"}).reply), ":1");
  std::optional<RedisResult> message = subscriber.next_message(ms_to_ns(10));
  ASSERT_TRUE(message.has_value());
  EXPECT_EQ(show(message->reply), "[\"message\", \"a\", \"hi\"]");
  EXPECT_FALSE(subscriber.next_message(ms_to_ns(10)).has_value());
  EXPECT_EQ(clock.now_ns(), ms_to_ns(10));  // the empty wait passed on the clock
  EXPECT_EQ(subscriber.command({"GET", "k"}).message,
            "ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / "
            "RESET are allowed in this context");
  EXPECT_EQ(show(subscriber.command({"PING"}).reply), "[\"pong\", \"\"]");
  EXPECT_EQ(show(subscriber.command({"UNSUBSCRIBE"}).reply), "[\"unsubscribe\", \"a\", :1]");
  EXPECT_EQ(show(subscriber.next_message(0)->reply), "[\"unsubscribe\", \"b\", :0]");
  EXPECT_EQ(show(subscriber.command({"GET", "k"}).reply), "(nil)");
}

// A subscriber that reads more slowly than messages come, and never catches up for long, still
// gets every message once, in the order published.
TEST(ModelPubSub, ASlowReaderGetsEveryMessageInOrder) {
  ModelServer server;
  ManualClock clock;
  ModelConnection subscriber(server, clock);
  ModelConnection publisher(server, clock);
  ASSERT_TRUE(subscriber.command({"SUBSCRIBE", "c"}).ok());
  int published = 0;
  int read = 0;
  const auto read_one = [&] {
    std::optional<RedisResult> message = subscriber.next_message(0);
    ASSERT_TRUE(message.has_value()) << "after " << read;
    EXPECT_EQ(show(message->reply), "[\"message\", \"c\", \"" + std::to_string(read) + "\"]");
    ++read;
  };
  for (int round = 0; round < 300; ++round) {
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(publisher.command({"PUBLISH", "c", std::to_string(published++)}).ok());
    }
    read_one();
  }
  while (read < published) read_one();
  EXPECT_FALSE(subscriber.next_message(0).has_value());
}

TEST(ModelFaults, RestartForgetsEverythingAndClosesConnections) {
  ModelServer server;
  ManualClock clock;
  ModelConnection connection(server, clock);
  ASSERT_TRUE(connection.command({"SET", "k", "v"}).ok());
  ASSERT_TRUE(connection.command({"SCRIPT", "LOAD", "return 1"}).ok());
  server.restart();
  const RedisResult after = connection.command({"GET", "k"});
  EXPECT_EQ(after.error, RedisErrorKind::kClosed);
  EXPECT_TRUE(connection.broken());
  ASSERT_TRUE(connection.reconnect().ok());
  EXPECT_TRUE(connection.command({"GET", "k"}).reply.is_nil());
  EXPECT_EQ(connection.command({"SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"})
                .reply.elements.at(0)
                .integer,
            0);
}

TEST(ModelFaults, AClockAheadExpiresKeysEarly) {
  ModelServer server;
  server.execute({"SET", "k", "v", "PX", "1000"}, 0);
  server.set_clock_offset_ms(600);
  EXPECT_EQ(show(server.execute({"PTTL", "k"}, ms_to_ns(100))), ":300");
  EXPECT_EQ(show(server.execute({"GET", "k"}, ms_to_ns(401))), "(nil)");
}

TEST(ModelReplication, ARestartedPrimaryEmptiesItsReplica) {
  ModelServer primary;
  ModelServer replica;
  ReplicationLink link(primary, replica);
  primary.execute({"SET", "k", "v"}, 0);
  link.deliver();
  EXPECT_EQ(show(replica.execute({"GET", "k"}, 0)), "\"v\"");
  primary.restart();  // no persistence: the replica resynchronises to nothing
  EXPECT_TRUE(replica.execute({"GET", "k"}, 0).is_nil());
  EXPECT_TRUE(replica.is_replica());
}

TEST(ModelReplication, AReplicaHidesExpiredKeysByItsOwnClock) {
  ModelServer primary;
  ModelServer replica;
  ReplicationLink link(primary, replica);
  primary.execute({"SET", "k", "v", "PX", "100"}, 0);
  link.deliver();
  replica.set_clock_offset_ms(200);  // the replica's clock runs ahead
  EXPECT_TRUE(replica.execute({"GET", "k"}, 0).is_nil());
  EXPECT_EQ(show(primary.execute({"GET", "k"}, 0)), "\"v\"");
  replica.set_clock_offset_ms(0);  // hidden, not deleted: the key is back
  EXPECT_EQ(show(replica.execute({"GET", "k"}, 0)), "\"v\"");
}

TEST(ModelReplication, AReplicaGetsWritesWhenTheHostDeliversThem) {
  ModelServer primary;
  ModelServer replica;
  primary.execute({"SET", "before", "1"}, 0);
  ReplicationLink link(primary, replica);
  EXPECT_EQ(show(replica.execute({"GET", "before"}, 0)), "\"1\"");  // full sync
  EXPECT_EQ(show(replica.execute({"SET", "x", "1"}, 0)),
            "-READONLY You can't write against a read only replica.");
  primary.execute({"SET", "lock", "t", "NX", "PX", "100"}, ms_to_ns(10));
  primary.execute({"EVAL", "redis.call('INCR', 'a') redis.call('INCR', 'b')", "0"}, ms_to_ns(10));
  EXPECT_EQ(link.pending(), 2u);
  EXPECT_EQ(show(primary.execute({"WAIT", "1", "0"}, ms_to_ns(10))), ":0");
  EXPECT_TRUE(replica.execute({"GET", "lock"}, ms_to_ns(20)).is_nil());
  EXPECT_EQ(link.deliver(1), 1u);
  // Propagated as SET ... PXAT: the replica's TTL counts from the primary's write.
  EXPECT_EQ(show(replica.execute({"PTTL", "lock"}, ms_to_ns(20))), ":90");
  EXPECT_TRUE(replica.execute({"GET", "a"}, ms_to_ns(20)).is_nil());
  EXPECT_EQ(link.deliver(), 1u);
  EXPECT_EQ(show(replica.execute({"MGET", "a", "b"}, ms_to_ns(20))), "[\"1\", \"1\"]");
  EXPECT_EQ(show(primary.execute({"WAIT", "1", "0"}, ms_to_ns(20))), ":1");
  // A lost write: the primary had it, the promoted replica never will.
  primary.execute({"SET", "lost", "1"}, ms_to_ns(30));
  link.drop_pending();
  replica.promote();
  EXPECT_FALSE(link.attached());
  EXPECT_TRUE(replica.execute({"GET", "lost"}, ms_to_ns(30)).is_nil());
  EXPECT_EQ(show(replica.execute({"SET", "x", "1"}, ms_to_ns(30))), "+OK");
}

}  // namespace
}  // namespace locksim
