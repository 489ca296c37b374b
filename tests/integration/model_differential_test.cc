// model_differential_test: the in-memory Redis (sim/model) and a real redis-server answer random
// command sequences identically: every reply byte for byte (error texts included), and the
// keyspace at the end of each sequence (keys, types, values, TTLs to the millisecond).
//
// Sequences mix the commands locks use with random arguments over a small alphabet (so keys
// collide, types clash and numbers hit their limits), the Lua scripts of the built-in lock
// variants (read from sim/lock/*.cc, so a new variant's script is covered without editing this
// file) and random small scripts, with virtual time advancing between commands.
//
// Exact time: the real server runs with liblocksim_clockshift.so in its frozen mode, and before
// each command its wall clock is set to the model's (unix base + virtual time), so TTLs, expiry
// and TIME are compared exactly, however long the real round trips take.
//
// 10,000 sequences by default (seed 1), in four shards ctest runs side by side. Longer runs:
//   LOCKSIM_MODEL_DIFF_SEQUENCES=200000 LOCKSIM_MODEL_DIFF_SEED=7
//   build/tests/model_differential_test
// A difference fails with the seed, the sequence and both transcripts.
// LOCKSIM_MODEL_DIFF_COVERAGE=1 prints how each command's replies split into errors and the rest.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "sim/core/random.h"
#include "sim/model/model_server.h"
#include "sim/redis/connection.h"
#include "sim/redis/server.h"
#include "tests/integration/model_sequences.h"
#include "tests/support/reply_text.h"

namespace locksim {
namespace {

constexpr int kShards = 4;

using test_support::kEpochBaseMs;

std::filesystem::path source_dir() {
  const char* dir = std::getenv("LOCKSIM_SOURCE_DIR");
  return dir != nullptr ? dir : LOCKSIM_TEST_SOURCE_DIR;
}

std::int64_t env_int(const char* name, std::int64_t fallback) {
  const char* value = std::getenv(name);
  return value == nullptr || *value == '\0' ? fallback : std::strtoll(value, nullptr, 10);
}

using test_support::show;

std::string show_argv(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& arg : argv) {
    std::string quoted;
    for (const char c : arg) {
      if (c == '\n') {
        quoted += "\\n";
      } else if (c == '"' || c == '\\') {
        quoted += std::string("\\") + c;
      } else {
        quoted += c;
      }
    }
    out += (out.empty() ? "\"" : " \"") + quoted + "\"";
  }
  return out;
}

// sorted: KEYS answers in hash order on the real server; compared as a set.
Reply sorted(Reply reply) {
  if (reply.type == Reply::Type::kArray) {
    std::sort(reply.elements.begin(), reply.elements.end(),
              [](const Reply& a, const Reply& b) { return a.str < b.str; });
  }
  return reply;
}

constexpr const char* kDumpScript = R"lua(
local keys = redis.call('KEYS', '*')
table.sort(keys)
local out = {}
for _, k in ipairs(keys) do
  local t = redis.call('TYPE', k)['ok']
  local v
  if t == 'string' then v = redis.call('GET', k)
  elseif t == 'hash' then v = redis.call('HGETALL', k)
  elseif t == 'list' then v = redis.call('LRANGE', k, 0, -1)
  elseif t == 'zset' then v = redis.call('ZRANGE', k, 0, -1, 'WITHSCORES')
  else v = 'other' end
  out[#out + 1] = {k, t, v, redis.call('PTTL', k)}
end
return out
)lua";

class Differential {
 public:
  Differential() {
    RedisServerOptions options;
    options.clock_shift_library = clock_shift_library_path();
    options.freeze_clock = true;
    if (options.clock_shift_library.empty()) {
      throw std::runtime_error("liblocksim_clockshift.so not found next to the test binary");
    }
    server_ = std::make_unique<RedisServer>(RedisServer::start(options));
    connection_ = std::make_unique<HiredisConnection>(server_->endpoint(), ConnectionOptions{});
    real({"DEBUG", "SET-ACTIVE-EXPIRE", "0"});
  }

  // run: one sequence on both; "" if they agree, else the transcript of the difference.
  std::string run(const std::vector<test_support::Generator::Step>& steps) {
    real({"FLUSHALL"});
    real({"SCRIPT", "FLUSH"});
    ModelOptions options;
    options.unix_epoch_base_ms = kEpochBaseMs;
    ModelServer model(options);
    std::ostringstream transcript;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const test_support::Generator::Step& step = steps[i];
      set_time(step.at_ns);
      std::vector<std::string> argv = step.argv;
      const bool dump = argv.empty();
      if (dump) argv = {"EVAL", kDumpScript, "0"};
      const bool unordered = !dump && argv[0] == "KEYS";
      const std::vector<std::string_view> views(argv.begin(), argv.end());
      Reply expected = real(views);
      Reply actual = model.execute(views, step.at_ns);
      if (unordered) {
        expected = sorted(std::move(expected));
        actual = sorted(std::move(actual));
      }
      if (!dump) count(argv, expected);
      transcript << "  t=" << step.at_ns << "ns " << (dump ? "(keyspace)" : show_argv(argv))
                 << "\n      redis: " << show(expected) << "\n";
      if (show(expected) != show(actual) || expected.type != actual.type) {
        transcript << "      model: " << show(actual) << "   <-- differs\n";
        return transcript.str();
      }
    }
    return "";
  }

  // coverage: per command (a script by its first line), how its replies split into errors and
  // the rest, so a generator that only ever provokes errors is seen.
  std::string coverage() const {
    std::ostringstream out;
    for (const auto& [name, counts] : replies_) {
      out << "  " << name << ": " << counts.first << " ok, " << counts.second << " errors\n";
    }
    return out.str();
  }

 private:
  void count(const std::vector<std::string>& argv, const Reply& reply) {
    std::string name = argv[0];
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (name == "EVAL" && argv.size() > 1 && argv[1].starts_with("local v1")) {
      name += " (random script)";
    } else if (name == "EVAL" && argv.size() > 1) {
      const std::string& body = argv[1];
      const std::size_t start = body.find_first_not_of('\n');
      if (start != std::string::npos)
        name += " " + body.substr(start, std::min<std::size_t>(50, body.find('\n', start) - start));
    }
    auto& counts = replies_[name];
    (reply.type == Reply::Type::kError ? counts.second : counts.first) += 1;
  }

  void set_time(Nanos at_ns) {
    const std::int64_t unix_ns = kEpochBaseMs * kNanosPerMilli + at_ns;
    if (unix_ns == frozen_ns_) return;
    if (!server_->set_frozen_clock_ns(unix_ns)) throw std::runtime_error("cannot set the clock");
    frozen_ns_ = unix_ns;
  }
  Reply real(std::span<const std::string_view> argv) {
    RedisResult result = connection_->command(argv);
    if (!result.ok() && result.error != RedisErrorKind::kReplyError) {
      throw std::runtime_error("redis-server failed: " + result.describe());
    }
    return result.reply;
  }
  Reply real(std::initializer_list<std::string_view> argv) {
    return real(std::span<const std::string_view>(argv.begin(), argv.size()));
  }

  std::unique_ptr<RedisServer> server_;
  std::unique_ptr<HiredisConnection> connection_;
  std::int64_t frozen_ns_ = 0;
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> replies_;
};

class ModelDifferential : public ::testing::TestWithParam<int> {};

TEST_P(ModelDifferential, RepliesAndKeyspaceMatchARealServer) {
  const std::int64_t total = env_int("LOCKSIM_MODEL_DIFF_SEQUENCES", 10'000);
  const auto seed = static_cast<std::uint64_t>(env_int("LOCKSIM_MODEL_DIFF_SEED", 1));
  const int shard = GetParam();
  const std::int64_t count = total / kShards + (shard < total % kShards ? 1 : 0);
  std::printf("model differential: seed %llu, shard %d of %d, %lld sequences\n",
              static_cast<unsigned long long>(seed), shard, kShards, static_cast<long long>(count));
  const std::vector<test_support::LockScript> scripts = test_support::lock_scripts(source_dir());
  ASSERT_GE(scripts.size(), 5u) << "no R\"lua(...)lua\" scripts found under sim/lock/";
  Differential differential;
  Rng rng = Rng(seed).fork(static_cast<std::uint64_t>(shard));
  test_support::Generator generator(rng, scripts);
  std::int64_t compared = 0;
  for (std::int64_t n = 0; n < count; ++n) {
    const std::vector<test_support::Generator::Step> steps = generator.sequence();
    const std::string difference = differential.run(steps);
    ASSERT_TRUE(difference.empty()) << "the model differs from redis-server (seed " << seed
                                    << ", shard " << shard << ", sequence " << n << "):\n"
                                    << difference;
    compared += static_cast<std::int64_t>(steps.size());
  }
  std::printf("model differential: %lld sequences, %lld commands, no difference\n",
              static_cast<long long>(count), static_cast<long long>(compared));
  if (env_int("LOCKSIM_MODEL_DIFF_COVERAGE", 0) != 0) {
    std::printf("replies by command:\n%s", differential.coverage().c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(Shards, ModelDifferential, ::testing::Range(0, kShards));

// difference_on_one_client: `commands` run in order by one client on the model and on a real
// server; the first difference in words, or "" if there is none.
std::string difference_on_one_client(const std::vector<std::vector<std::string>>& commands) {
  std::vector<test_support::Generator::Step> steps;
  for (const auto& argv : commands) steps.push_back({0, argv});
  Differential differential;
  return differential.run(steps);
}

// Proves LTRIM and BLPOP answer as a real redis-server does, keyspace included. BLPOP only where
// it does not block (a list to serve, or a timeout Redis refuses): the server's clock is frozen
// here, so a blocked BLPOP would never time out, and the model never blocks (the simulator's
// connection asks it again until the timeout; docs/model.md). Not drawn by the generator, which
// cannot know whether a list is empty.
TEST(ModelDifferentialFixed, LtrimAndBlpopWhereNothingBlocks) {
  const std::vector<std::vector<std::string>> commands = {
      {"RPUSH", "l", "a", "b", "c", "d", "e"},
      {"LTRIM", "l", "1", "-2"},
      {"LTRIM", "l", "-100", "100"},
      {"LTRIM", "nokey", "0", "1"},
      {"LTRIM", "l", "x", "1"},
      {"LTRIM", "l", "0", "99999999999999999999"},
      {"SET", "s", "x"},
      {"LTRIM", "s", "0", "1"},
      {"BLPOP", "nokey", "l", "0"},
      {"BLPOP", "s", "l", "0"},
      {"BLPOP", "l", "s", "1.5"},
      {"BLPOP", "l", "0x10"},
      {},
      {"BLPOP", "l", "abc"},
      {"BLPOP", "l", ""},
      {"BLPOP", "l", " 1"},
      {"BLPOP", "l", "nan"},
      {"BLPOP", "l", "-1"},
      {"BLPOP", "l", "-0.5"},
      {"BLPOP", "l", "inf"},
      {"BLPOP", "l", "1e300"},
      {"BLPOP", "l", "9.3e15"},
      {"BLPOP", "l"},
      {"EVAL", "return redis.pcall('BLPOP', KEYS[1], '0')", "1", "l"},
      {"RPUSH", "m", "1", "2"},
      {"LTRIM", "m", "5", "1"},
      {},
  };
  EXPECT_EQ(difference_on_one_client(commands), "");
}

// KEYS and ARGV: each script sees exactly its own, whatever the one before it did to the tables
// (the model fills the same two again, docs/model.md item 20; Redis makes new ones).
TEST(ModelDifferentialFixed, EachScriptSeesOnlyItsOwnKeysAndArgv) {
  const std::string shape =
      "return {#KEYS, #ARGV, tostring(KEYS[1]), tostring(KEYS[2]), tostring(ARGV[1]), "
      "tostring(ARGV[3]), tostring(KEYS.x), tostring(getmetatable(KEYS)), "
      "tostring(getmetatable(ARGV))}";
  std::vector<std::vector<std::string>> commands = {
      {"EVAL", shape, "2", "k1", "k2", "a1", "a2", "a3"}};
  for (const char* mess :
       {"KEYS[9] = 'k9' ARGV[7] = 'a7' return 1", "KEYS.x = 1 return 1",
        "setmetatable(KEYS, {__index = function() return 'meta' end}) return 1",
        "setmetatable(ARGV, {}) KEYS[1] = nil return 1", "KEYS[1.5] = 'half' return 1",
        "KEYS[2] = 'two' ARGV[1] = nil return 1"}) {
    commands.push_back({"EVAL", mess, "1", "k", "a"});
    commands.push_back({"EVAL", shape, "1", "only", "arg"});
  }
  commands.push_back({"EVAL", shape, "0"});
  EXPECT_EQ(difference_on_one_client(commands), "");
}

// collectgarbage is the model's own C function (it tells the engine when a script retuned the
// collector): every option answers as Redis's, and a bad option or argument fails with its words.
TEST(ModelDifferentialFixed, CollectgarbageAnswersAsRedis) {
  std::vector<std::vector<std::string>> commands;
  for (const char* script :
       {"return collectgarbage('setpause', 150)", "return collectgarbage('setpause', 200)",
        "return collectgarbage('setstepmul', 300)", "return collectgarbage('setstepmul')",
        "return collectgarbage('setstepmul', 200)", "return type(collectgarbage('count'))",
        "return type(collectgarbage('step'))", "return collectgarbage('collect')",
        "return collectgarbage()", "return collectgarbage('stop')",
        "return collectgarbage('restart')", "return collectgarbage('bogus')",
        "return collectgarbage('count', 'x')", "return collectgarbage(1)",
        "return collectgarbage('setpause', 2.9)", "return collectgarbage('setpause', 200)"}) {
    commands.push_back({"EVAL", script, "0"});
  }
  EXPECT_EQ(difference_on_one_client(commands), "");
}

// The frozen clock is what makes the comparison exact: the server reads the time it is given.
TEST(FrozenClock, TheServerReadsTheTimeItIsGiven) {
  RedisServerOptions options;
  options.clock_shift_library = clock_shift_library_path();
  options.freeze_clock = true;
  ASSERT_FALSE(options.clock_shift_library.empty());
  RedisServer server = RedisServer::start(options);
  HiredisConnection connection(server.endpoint(), ConnectionOptions{});
  ASSERT_TRUE(server.set_frozen_clock_ns(1'700'000'000'123'456'789));
  EXPECT_EQ(show(connection.command({"TIME"}).reply), "[\"1700000000\", \"123456\"]");
  ASSERT_TRUE(connection.command({"SET", "k", "v", "PX", "100"}).ok());
  ASSERT_TRUE(server.set_frozen_clock_ns(1'700'000'000'223'456'789));
  EXPECT_EQ(show(connection.command({"PTTL", "k"}).reply), ":0");
  ASSERT_TRUE(server.set_frozen_clock_ns(1'700'000'000'224'000'000));
  EXPECT_EQ(show(connection.command({"GET", "k"}).reply), "(nil)");
  // A clock jump still adds to the frozen instant.
  ASSERT_TRUE(server.shift_clock(1500));
  EXPECT_EQ(show(connection.command({"TIME"}).reply), "[\"1700000001\", \"724000\"]");
}

}  // namespace
}  // namespace locksim
