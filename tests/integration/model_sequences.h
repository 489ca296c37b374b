// model_sequences.h: the random command sequences of the model's differential test
// (model_differential_test.cc): SequenceGenerator, and the lock variants' Lua scripts it draws
// from, read from sim/lock/*.cc.
//
// A sequence mixes the commands the model has, with arguments drawn from a small alphabet (so
// keys collide, types clash, numbers hit their limits, options conflict and arities are
// sometimes wrong), the variants' scripts (mostly called as a lock calls them) and random small
// scripts, while virtual time advances in steps around the TTLs in play. It never makes what
// docs/model.md lists as a known difference (DBSIZE, SELECT 1..15, WAIT for replicas,
// math.random, tables printed with tostring...).
//
//   Rng rng(seed);
//   Generator generator(rng, lock_scripts(source_dir));
//   for (const Generator::Step& step : generator.sequence()) { ... }
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/clock.h"
#include "sim/core/random.h"
#include "sim/core/sha1.h"

namespace locksim::test_support {

// kEpochBaseMs: the unix time (ms) of virtual time 0, on the model and on the frozen server.
constexpr std::int64_t kEpochBaseMs = 1'700'000'000'000;

// LockScript: a Lua script of a built-in variant, with how many KEYS and ARGV it reads.
struct LockScript {
  std::string body;
  int keys = 0;
  int args = 0;
};

inline int highest_index(const std::string& body, const std::string& table) {
  const std::regex use(table + R"(\[(\d+)\])");
  int highest = 0;
  for (auto it = std::sregex_iterator(body.begin(), body.end(), use); it != std::sregex_iterator();
       ++it) {
    highest = std::max(highest, std::stoi((*it)[1]));
  }
  return highest;
}

// lock_scripts: every R"lua(...)lua" raw string of sim/lock/*.cc.
inline std::vector<LockScript> lock_scripts(const std::filesystem::path& source_dir) {
  std::vector<LockScript> scripts;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(source_dir / "sim" / "lock")) {
    if (entry.path().extension() == ".cc") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    std::ifstream in(file);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string open = "R\"lua(";
    const std::string close = ")lua\"";
    for (std::size_t at = text.find(open); at != std::string::npos; at = text.find(open, at)) {
      at += open.size();
      const std::size_t end = text.find(close, at);
      if (end == std::string::npos) break;
      const std::string body = text.substr(at, end - at);
      scripts.push_back({body, highest_index(body, "KEYS"), highest_index(body, "ARGV")});
      at = end;
    }
  }
  return scripts;
}

// Generator: one random sequence of commands, each with the virtual time it runs at.
class Generator {
 public:
  Generator(Rng& rng, const std::vector<LockScript>& scripts) : rng_(rng), scripts_(scripts) {}

  struct Step {
    Nanos at_ns = 0;
    std::vector<std::string> argv;
  };

  std::vector<Step> sequence() {
    std::vector<Step> steps;
    const auto length = rng_.uniform(1, 16);
    now_ = 0;
    for (std::int64_t i = 0; i < length; ++i) {
      advance();
      steps.push_back({now_, command()});
    }
    advance();
    steps.push_back({now_, {}});  // the keyspace comparison's time
    return steps;
  }

 private:
  template <typename T>
  const T& pick(const std::vector<T>& options) {
    return options[static_cast<std::size_t>(
        rng_.uniform(0, static_cast<std::int64_t>(options.size()) - 1))];
  }
  bool chance(double p) { return rng_.chance(p); }

  void advance() {
    if (chance(0.6)) return;
    static const std::vector<Nanos> kSteps = {1,
                                              999'999,
                                              ms_to_ns(1),
                                              ms_to_ns(2),
                                              ms_to_ns(9),
                                              ms_to_ns(10),
                                              ms_to_ns(11),
                                              ms_to_ns(99),
                                              ms_to_ns(100),
                                              ms_to_ns(101),
                                              ms_to_ns(499),
                                              ms_to_ns(500),
                                              ms_to_ns(501),
                                              ms_to_ns(999),
                                              ms_to_ns(1000),
                                              ms_to_ns(1001),
                                              ms_to_ns(1500),
                                              ms_to_ns(5000)};
    now_ += pick(kSteps);
  }

  std::int64_t wall_ms() const { return kEpochBaseMs + now_ / kNanosPerMilli; }

  std::string key() { return pick(std::vector<std::string>{"k1", "k2", "k3", "k4"}); }
  std::string value() {
    return pick(std::vector<std::string>{"v", "w", "0", "1", "-1", "10", "100", "01", " 1", "",
                                         "1.5", "abc", "x y", "9223372036854775807",
                                         "-9223372036854775808", "9223372036854775808"});
  }
  std::string field() { return pick(std::vector<std::string>{"f1", "f2", "f3"}); }
  std::string element() { return pick(std::vector<std::string>{"e1", "e2", "e3"}); }
  std::string index() {
    return pick(std::vector<std::string>{"0", "1", "2", "-1", "-2", "-10", "10", "abc",
                                         "9223372036854775807", "-9223372036854775808"});
  }
  std::string small_count() {
    return pick(std::vector<std::string>{"0", "1", "2", "3", "-1", "-2", "x"});
  }
  // ttl: a relative time, mostly valid, sometimes not.
  std::string ttl() {
    return pick(std::vector<std::string>{
        "1", "2", "5", "10", "100", "101", "500", "1000", "0", "-1", "-1000", "1.5", "abc", "",
        "9223372036854775807", "9223372036854774", "9223372036854775", "99999999999999999999"});
  }
  // absolute_ms / absolute_s: unix times near the model's current wall clock.
  std::string absolute_ms() {
    if (chance(0.1)) return pick(std::vector<std::string>{"0", "-1", "1", "abc"});
    return std::to_string(
        wall_ms() + pick(std::vector<std::int64_t>{-1000, -1, 0, 1, 5, 100, 999, 1000, 5000}));
  }
  std::string absolute_s() {
    if (chance(0.1)) return pick(std::vector<std::string>{"0", "-1", "1", "abc"});
    return std::to_string(wall_ms() / 1000 + pick(std::vector<std::int64_t>{-1, 0, 1, 2, 10}));
  }
  std::string score() {
    return pick(std::vector<std::string>{"0", "1", "2", "1.5", "-2", "10", "inf", "-inf", "+inf",
                                         "1e400", "nan", "abc", "", " 1", "0x10", "1e3", "0.1"});
  }
  std::string score_bound() {
    return pick(std::vector<std::string>{"0", "1", "2", "1.5", "(1", "(1.5", "(2", "-inf", "+inf",
                                         "inf", "(-inf", "abc", "", "(", "10", "-2"});
  }

  void append_set_options(std::vector<std::string>& argv) {
    const auto count = rng_.uniform(0, 3);
    for (std::int64_t i = 0; i < count; ++i) {
      switch (rng_.uniform(0, 9)) {
        case 0:
          argv.push_back(pick(std::vector<std::string>{"NX", "nx"}));
          break;
        case 1:
          argv.push_back("XX");
          break;
        case 2:
          argv.push_back("GET");
          break;
        case 3:
          argv.push_back("KEEPTTL");
          break;
        case 4:
          argv.insert(argv.end(), {"EX", ttl()});
          break;
        case 5:
          argv.insert(argv.end(), {"PX", ttl()});
          break;
        case 6:
          argv.insert(argv.end(), {"PX", ttl()});
          break;
        case 7:
          argv.insert(argv.end(), {"EXAT", absolute_s()});
          break;
        case 8:
          argv.insert(argv.end(), {"PXAT", absolute_ms()});
          break;
        default:
          argv.push_back(pick(std::vector<std::string>{"PX", "FOO", "PERSIST"}));
          break;
      }
    }
  }

  std::vector<std::string> command() {
    std::vector<std::string> argv = base_command();
    // SELECT keeps its argument: SELECT 1..15 is a known difference (docs/model.md).
    if (argv[0] == "SELECT") return argv;
    // Sometimes an argument too few or too many: arity errors.
    if (chance(0.02) && argv.size() > 1) argv.pop_back();
    if (chance(0.02)) argv.push_back(value());
    return argv;
  }

  std::vector<std::string> base_command() {
    const auto family = rng_.uniform(0, 99);
    if (family < 22) return string_command();
    if (family < 40) return key_command();
    if (family < 50) return hash_command();
    if (family < 58) return list_command();
    if (family < 66) return zset_command();
    if (family < 70) return server_command();
    if (family < 85) return lock_script_command();
    return random_script_command();
  }

  std::vector<std::string> string_command() {
    switch (rng_.uniform(0, 17)) {
      case 0:
      case 1:
      case 2: {
        std::vector<std::string> argv = {"SET", key(), value()};
        append_set_options(argv);
        return argv;
      }
      case 3:
        return {"GET", key()};
      case 4:
        return {"SETNX", key(), value()};
      case 5:
        return {"SETEX", key(), ttl(), value()};
      case 6:
        return {"PSETEX", key(), ttl(), value()};
      case 7:
        return {"INCR", key()};
      case 8:
        return {"DECR", key()};
      case 9:
        return {"INCRBY", key(), value()};
      case 10:
        return {"DECRBY", key(), value()};
      case 11:
        return {"GETDEL", key()};
      case 12: {
        std::vector<std::string> argv = {"GETEX", key()};
        switch (rng_.uniform(0, 6)) {
          case 0:
            argv.insert(argv.end(), {"PX", ttl()});
            break;
          case 1:
            argv.insert(argv.end(), {"EX", ttl()});
            break;
          case 2:
            argv.insert(argv.end(), {"PXAT", absolute_ms()});
            break;
          case 3:
            argv.insert(argv.end(), {"EXAT", absolute_s()});
            break;
          case 4:
            argv.push_back("PERSIST");
            break;
          case 5:
            argv.push_back(pick(std::vector<std::string>{"NX", "KEEPTTL", "PX"}));
            break;
          default:
            break;
        }
        return argv;
      }
      case 13:
        return {"GETSET", key(), value()};
      case 14:
        return {"MGET", key(), key(), key()};
      case 15:
        return chance(0.5) ? std::vector<std::string>{"MSET", key(), value(), key(), value()}
                           : std::vector<std::string>{"MSETNX", key(), value()};
      case 16:
        return {"APPEND", key(), value()};
      default:
        return {"STRLEN", key()};
    }
  }

  std::vector<std::string> expire_options(std::vector<std::string> argv) {
    if (chance(0.3))
      argv.push_back(pick(std::vector<std::string>{"NX", "XX", "GT", "LT", "gt", "FOO"}));
    if (chance(0.05)) argv.push_back(pick(std::vector<std::string>{"NX", "XX", "GT", "LT"}));
    return argv;
  }

  std::vector<std::string> key_command() {
    switch (rng_.uniform(0, 14)) {
      case 0:
        return {"DEL", key(), key()};
      case 1:
        return {"UNLINK", key()};
      case 2:
        return {"EXISTS", key(), key()};
      case 3:
        return expire_options({"EXPIRE", key(), ttl()});
      case 4:
      case 5:
        return expire_options({"PEXPIRE", key(), ttl()});
      case 6:
        return expire_options({"EXPIREAT", key(), absolute_s()});
      case 7:
        return expire_options({"PEXPIREAT", key(), absolute_ms()});
      case 8:
        return {"TTL", key()};
      case 9:
      case 10:
        return {"PTTL", key()};
      case 11:
        return {chance(0.5) ? "EXPIRETIME" : "PEXPIRETIME", key()};
      case 12:
        return {"PERSIST", key()};
      case 13:
        return {"TYPE", key()};
      default:
        return {"KEYS", pick(std::vector<std::string>{"*", "k*", "k[12]", "k?", "*3", "x*", "k[^1]",
                                                      "k\\1", "[", "k[1-3]"})};
    }
  }

  std::vector<std::string> hash_command() {
    switch (rng_.uniform(0, 12)) {
      case 0:
      case 1:
        return {"HSET", key(), field(), value(), field(), value()};
      case 2:
        return {"HMSET", key(), field(), value()};
      case 3:
        return {"HSETNX", key(), field(), value()};
      case 4:
        return {"HGET", key(), field()};
      case 5:
        return {"HMGET", key(), field(), field()};
      case 6:
        return {"HDEL", key(), field(), field()};
      case 7:
        return {"HEXISTS", key(), field()};
      case 8:
        return {"HGETALL", key()};
      case 9:
        return {"HINCRBY", key(), field(), value()};
      case 10:
        return {"HLEN", key()};
      case 11:
        return {chance(0.5) ? "HKEYS" : "HVALS", key()};
      default:
        return {"HSTRLEN", key(), field()};
    }
  }

  std::vector<std::string> list_command() {
    switch (rng_.uniform(0, 8)) {
      case 0:
        return {"RPUSH", key(), element(), element()};
      case 1:
        return {"LPUSH", key(), element()};
      case 2:
        return chance(0.5) ? std::vector<std::string>{"LPOP", key()}
                           : std::vector<std::string>{"LPOP", key(), small_count()};
      case 3:
        return chance(0.5) ? std::vector<std::string>{"RPOP", key()}
                           : std::vector<std::string>{"RPOP", key(), small_count()};
      case 4:
        return {"LREM", key(), small_count(), element()};
      case 5:
        return {"LRANGE", key(), index(), index()};
      case 6:
        return {"LINDEX", key(), index()};
      default:
        return {"LLEN", key()};
    }
  }

  std::vector<std::string> zset_command() {
    switch (rng_.uniform(0, 11)) {
      case 0:
      case 1: {
        std::vector<std::string> argv = {"ZADD", key()};
        const auto options = rng_.uniform(0, 2);
        for (std::int64_t i = 0; i < options; ++i) {
          argv.push_back(pick(std::vector<std::string>{"NX", "XX", "GT", "LT", "CH", "INCR"}));
        }
        argv.insert(argv.end(), {score(), element()});
        if (chance(0.3)) argv.insert(argv.end(), {score(), element()});
        return argv;
      }
      case 2:
        return {"ZREM", key(), element(), element()};
      case 3:
        return {"ZSCORE", key(), element()};
      case 4:
        return {"ZCARD", key()};
      case 5:
        return {"ZCOUNT", key(), score_bound(), score_bound()};
      case 6: {
        std::vector<std::string> argv = {"ZRANGE", key()};
        const bool by_score = chance(0.5);
        if (by_score) {
          argv.insert(argv.end(), {score_bound(), score_bound(), "BYSCORE"});
        } else {
          argv.insert(argv.end(), {index(), index()});
        }
        if (chance(0.3)) argv.push_back("REV");
        if (chance(0.3)) argv.insert(argv.end(), {"LIMIT", index(), index()});
        if (chance(0.4)) argv.push_back("WITHSCORES");
        return argv;
      }
      case 7: {
        std::vector<std::string> argv = {"ZRANGEBYSCORE", key(), score_bound(), score_bound()};
        if (chance(0.4)) argv.push_back("WITHSCORES");
        if (chance(0.3)) argv.insert(argv.end(), {"LIMIT", index(), index()});
        return argv;
      }
      case 8:
        return {"ZRANK", key(), element()};
      case 9:
        return zinterstore_command();
      default:
        return {"ZREMRANGEBYSCORE", key(), score_bound(), score_bound()};
    }
  }

  // ZINTERSTORE: mostly as fair_semaphore sends it (the destination among its inputs, WEIGHTS),
  // sometimes with counts, weights and options that do not fit.
  std::vector<std::string> zinterstore_command() {
    const auto inputs = rng_.uniform(1, 3);
    std::vector<std::string> argv = {"ZINTERSTORE", key()};
    argv.push_back(chance(0.9) ? std::to_string(inputs)
                               : pick(std::vector<std::string>{"0", "-1", "x", "9"}));
    for (std::int64_t i = 0; i < inputs; ++i)
      argv.push_back(i == 0 && chance(0.5) ? argv[1] : key());
    const auto weight = [&] {
      return pick(std::vector<std::string>{"1", "0", "-1", "2.5", "inf", "-inf", "x", ""});
    };
    if (chance(0.6)) {
      argv.push_back(chance(0.5) ? "WEIGHTS" : "weights");
      const auto weights = chance(0.9) ? inputs : inputs + 1;
      for (std::int64_t i = 0; i < weights; ++i) argv.push_back(weight());
    }
    if (chance(0.3)) {
      argv.insert(argv.end(),
                  {"AGGREGATE", pick(std::vector<std::string>{"SUM", "min", "MAX", "avg"})});
    }
    return argv;
  }

  std::vector<std::string> server_command() {
    switch (rng_.uniform(0, 11)) {
      case 0:
        return {"PING"};
      case 1:
        return {"PING", value()};
      case 2:
        return {"ECHO", value()};
      case 3:
        return {"TIME"};
      case 4:
        return {"PUBLISH", "ch", value()};
      case 5:
        return {"SELECT", pick(std::vector<std::string>{"0", "16", "-1", "x"})};
      case 6:
        return {"WAIT", "0", pick(std::vector<std::string>{"0", "10", "-1", "x"})};
      case 7:
        return {chance(0.9) ? "FLUSHDB" : "FLUSHALL"};
      case 8:
        return {"SCRIPT", pick(std::vector<std::string>{"FLUSH", "KILL", "FOO", "EXISTS"}),
                sha_of_a_lock_script()};
      case 9:
        return {"TOUCH", key(), key()};
      case 10:
        return {"NOSUCH", value()};
      default:
        return {"SCRIPT", "LOAD", pick(scripts_).body};
    }
  }

  std::string sha_of_a_lock_script() { return locksim::sha1_hex(pick(scripts_).body); }

  std::string script_arg() {
    return pick(std::vector<std::string>{"1", "100", "250", "1000", "0", "-5", "t1", "t2", "",
                                         "1.5", "w1"});
  }

  std::vector<std::string> lock_script_command() {
    const LockScript& script = pick(scripts_);
    std::vector<std::string> argv;
    if (chance(0.3)) {
      argv = {"EVALSHA", locksim::sha1_hex(script.body)};
    } else {
      argv = {"EVAL", script.body};
    }
    argv.push_back(std::to_string(script.keys));
    // Mostly as a lock calls it (distinct keys, numbers that serve as TTLs and tokens alike),
    // sometimes anything.
    const bool as_a_lock = chance(0.7);
    std::vector<std::string> keys = {"k1", "k2", "k3", "k4"};
    for (std::size_t i = keys.size() - 1; i > 0; --i) {
      std::swap(keys[i],
                keys[static_cast<std::size_t>(rng_.uniform(0, static_cast<std::int64_t>(i)))]);
    }
    for (int i = 0; i < script.keys; ++i) {
      argv.push_back(as_a_lock && i < 4 ? keys[static_cast<std::size_t>(i)] : key());
    }
    for (int i = 0; i < script.args; ++i) {
      argv.push_back(as_a_lock ? pick(std::vector<std::string>{"5", "100", "250", "1000"})
                               : script_arg());
    }
    return argv;
  }

  // Random small scripts: a few redis.call / redis.pcall statements and a return.
  std::string lua_argument() {
    switch (rng_.uniform(0, 6)) {
      case 0:
        return "KEYS[1]";
      case 1:
        return "KEYS[2]";
      case 2:
        return "ARGV[1]";
      case 3:
        return "'" + value() + "'";
      case 4:
        return pick(std::vector<std::string>{"5", "2.5", "-1", "1e3", "0", "100.7", "2^53"});
      case 5:
        return "'" + field() + "'";
      default:
        return "'" + key() + "'";
    }
  }
  std::string lua_call() {
    static const std::vector<std::pair<std::string, int>> kCommands = {
        {"get", 1},    {"set", 2},    {"incr", 1},   {"del", 1},     {"exists", 1}, {"pexpire", 2},
        {"pttl", 1},   {"hset", 3},   {"hget", 2},   {"hgetall", 1}, {"rpush", 2},  {"lrange", 3},
        {"zadd", 3},   {"zscore", 2}, {"time", 0},   {"ping", 0},    {"type", 1},   {"set", 4},
        {"nosuch", 1}, {"get", 0},    {"incrby", 2}, {"lpop", 1},    {"getex", 1}};
    const auto& [name, arity] = pick(kCommands);
    std::string call = std::string(chance(0.7) ? "redis.call" : "redis.pcall") + "('" + name + "'";
    if (name == "set" && arity == 4) {
      // SET key value PX 100
      return call + ", " + lua_argument() + ", " + lua_argument() + ", 'PX', 100)";
    }
    for (int i = 0; i < arity; ++i) call += ", " + lua_argument();
    return call + ")";
  }
  std::vector<std::string> random_script_command() {
    std::string body;
    const auto statements = rng_.uniform(1, 3);
    for (std::int64_t i = 1; i <= statements; ++i) {
      body += "local v" + std::to_string(i) + " = " + lua_call() + "\n";
    }
    const std::string v = "v" + std::to_string(rng_.uniform(1, statements));
    static const std::vector<std::string> kReturns = {"{}",
                                                      "3.7",
                                                      "-2.5",
                                                      "0",
                                                      "1e3",
                                                      "2^63",
                                                      "{1, nil, 2}",
                                                      "{err='E x'}",
                                                      "{ok='S'}",
                                                      "redis.status_reply('S')",
                                                      "redis.error_reply('bad')",
                                                      "redis.error_reply('MY bad')",
                                                      "false",
                                                      "true",
                                                      "nil",
                                                      "{false, 'x', true}",
                                                      "#ARGV",
                                                      "KEYS[1]",
                                                      "tonumber(ARGV[1])",
                                                      "math.floor(7/2)",
                                                      "string.format('%d', 12)",
                                                      "undefined_global",
                                                      "error('boom')",
                                                      "redis.call('nosuch')",
                                                      "redis.sha1hex(ARGV[1] or '')",
                                                      "table.concat({'a','b'}, '-')",
                                                      "{double=1.5}",
                                                      "redis.pcall('get')",
                                                      "pcall(error, 'x')",
                                                      "('ab'):upper()",
                                                      "getmetatable('').__index.rep('x', 2)"};
    switch (rng_.uniform(0, 4)) {
      case 0:
        body += "return " + v;
        break;
      case 1:
        body += "return {" + v + ", type(" + v + ")}";
        break;
      case 2:
        body += "return type(" + v + ")";
        break;
      case 3:
        body += "return " + v + " == ARGV[1]";
        break;
      default:
        body += "return " + pick(kReturns);
        break;
    }
    if (chance(0.05)) body += "\nx = 1";  // a global: refused
    if (chance(0.03)) body += "\ngetmetatable('').__index.z = 1";  // the string library: refused
    const int keys = static_cast<int>(rng_.uniform(0, 2));
    std::vector<std::string> argv = {"EVAL", body, std::to_string(keys)};
    for (int i = 0; i < keys; ++i) argv.push_back(key());
    const auto args = rng_.uniform(0, 2);
    for (std::int64_t i = 0; i < args; ++i) argv.push_back(value());
    return argv;
  }

  Rng& rng_;
  const std::vector<LockScript>& scripts_;
  Nanos now_ = 0;
};

}  // namespace locksim::test_support
