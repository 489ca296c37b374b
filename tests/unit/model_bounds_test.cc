// model_bounds_test: a model server is bounded as a real one is: its keyspace by maxmemory
// (commands that grow memory are refused with Redis's OOM error), and a script whose time goes to
// Lua's C functions (string.rep in a loop, a backtracking string.find), which no instruction
// count sees, is stopped instead of hanging the simulator. docs/model.md, items 10 and 11.
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "sim/model/model_server.h"
#include "tests/support/reply_text.h"

namespace locksim {
namespace {

using test_support::show;

constexpr std::string_view kOom = "-OOM command not allowed when used memory > 'maxmemory'.";

// Proves a lock that appends 1 MB four times a call stops growing once past maxmemory: the next
// call's first APPEND is refused (a script may overshoot, as on Redis, only once it wrote), and
// a DEL makes room again.
TEST(ModelMemory, ALockThatGrowsWithoutEndIsRefusedPastMaxmemory) {
  EXPECT_EQ(ModelOptions{}.maxmemory_bytes, std::size_t{64} << 20);
  ModelOptions options;
  options.maxmemory_bytes = std::size_t{8} << 20;
  ModelServer server(options);
  const std::string_view grow =
      "for i = 1, 4 do redis.call('APPEND', KEYS[1], string.rep('x', 1048576)) end return 1";
  EXPECT_EQ(show(server.execute({"EVAL", grow, "1", "k"}, 0)), ":1");
  EXPECT_EQ(show(server.execute({"EVAL", grow, "1", "k"}, 0)), ":1");  // 8 MiB and a little
  for (int call = 0; call < 5; ++call) {
    EXPECT_NE(show(server.execute({"EVAL", grow, "1", "k"}, 0)).find(kOom.substr(1)),
              std::string::npos);
  }
  EXPECT_EQ(show(server.execute({"STRLEN", "k"}, 0)), ":8388608");
  EXPECT_EQ(show(server.execute({"RPUSH", "l", "x"}, 0)), kOom);
  EXPECT_EQ(show(server.execute({"GET", "missing"}, 0)), "(nil)");  // reads still run
  EXPECT_EQ(show(server.execute({"DEL", "k"}, 0)), ":1");
  EXPECT_EQ(show(server.execute({"RPUSH", "l", "x"}, 0)), ":1");
}

// Proves string.rep in a loop, whose time goes to C, is stopped by the allocation budget, with
// or without pcall around it, within about half a second each, and the gap is noted. On a thread
// of its own, so on a Lua state of its own: one from the thread's pool, after other tests in the
// same process, may find its strings interned and allocate nothing (the time limit's case,
// below), and the time limit is off here so that only the allocation budget can stop it (a
// sanitizer's allocations take 8 to 11 s).
TEST(ModelScriptBounds, StringRepInALoopIsStopped) {
  std::thread([] {
    ModelOptions options;
    options.script_time_limit_ms = 0;
    ModelServer server(options);
    for (const std::string_view script :
         {"while true do local s = string.rep('x', 1000000) end",
          "while true do pcall(string.rep, 'x', 1000000) end",
          "for i = 1, 3000 do pcall(string.rep, 'x', 1000000) end return 1"}) {
      // The reply says the allocation bound stopped it (a script that ran on would never return:
      // ctest's time limit is the backstop, not a timed assertion, which a sanitizer's slower
      // allocations broke: 8 to 11 s under ThreadSanitizer).
      const Reply reply = server.execute({"EVAL", script, "0"}, 0);
      EXPECT_NE(reply.str.find("locksim model: script killed after it allocated 268435456 bytes"),
                std::string::npos)
          << script << ": " << show(reply);
    }
    EXPECT_NE(server.first_gap().find("script killed after it allocated"), std::string::npos);
    EXPECT_EQ(show(server.execute({"EVAL", "return #string.rep('x', 1000000)", "0"}, 0)),
              ":1000000");
  }).join();
}

// Proves a script that neither budget stops is stopped by the real-time limit, which says so: in
// one process, after the simulation tests, string.rep in a loop ran on a Lua state from the
// thread's pool for over 14 minutes (the strings it made were found interned again, so little
// was allocated, and a C function's copying is no Lua instruction). The two budgets are off
// here, so only the time limit (300 ms; 5 s, as Redis's lua-time-limit, by default) can end it.
TEST(ModelScriptBounds, AScriptNoBudgetStopsIsStoppedByTime) {
  EXPECT_EQ(ModelOptions{}.script_time_limit_ms, 5000);
  ModelOptions options;
  options.script_instruction_budget = 0;
  options.script_allocation_budget_bytes = 0;
  options.script_time_limit_ms = 300;
  ModelServer server(options);
  const Reply reply =
      server.execute({"EVAL", "while true do local s = string.rep('x', 100000) end", "0"}, 0);
  EXPECT_NE(reply.str.find("locksim model: script killed after it ran 300 ms of real time"),
            std::string::npos)
      << show(reply);
  EXPECT_NE(server.first_gap().find("script killed after it ran 300 ms"), std::string::npos);
  // A lock's script is far from it.
  EXPECT_EQ(show(server.execute({"EVAL", "return #string.rep('x', 1000)", "0"}, 0)), ":1000");
}

// Proves a script that reads large values through redis.call in a loop is stopped by the
// allocation budget like string.rep, with or without pcall around the call: the budget runs out
// while a reply is pushed to Lua (under AddressSanitizer, that the reply a failed push left
// behind is not leaked: Lua's error longjmps over redis.call's frame). Each reply differs from
// the last, one byte longer (Lua would find an equal string interned, and allocate nothing).
TEST(ModelScriptBounds, ALargeReplyInALoopIsStopped) {
  ModelServer server;
  const std::string big(std::size_t{1} << 20, 'x');
  EXPECT_EQ(show(server.execute({"SET", "big", big}, 0)), "+OK");
  for (const std::string_view script :
       {"while true do redis.call('APPEND', KEYS[1], 'y') local v = redis.call('GET', KEYS[1]) end",
        "while true do redis.call('APPEND', KEYS[1], 'y') pcall(redis.call, 'GET', KEYS[1]) end",
        "while true do redis.call('APPEND', KEYS[1], 'y') redis.pcall('GET', KEYS[1]) end"}) {
    const Reply reply = server.execute({"EVAL", script, "1", "big"}, 0);
    EXPECT_NE(reply.str.find("locksim model: script killed after it allocated 268435456 bytes"),
              std::string::npos)
        << script << ": " << show(reply);
  }
  EXPECT_EQ(
      show(server.execute({"EVAL", "return #redis.call('GET', KEYS[1]) > 1048576", "1", "big"}, 0)),
      ":1");
}

// Proves a pattern that would backtrack for hours inside Lua's matcher is refused before it
// starts (a gap, noted even under pcall), while ordinary patterns run as Lua's.
TEST(ModelScriptBounds, ARunawayPatternIsRefusedBeforeItStarts) {
  ModelServer server;
  const std::string runaway =
      "string.find(string.rep('a', 40), '(.-)(.-)(.-)(.-)(.-)(.-)(.-)(.-)b')";
  const Reply reply = server.execute({"EVAL", "return " + runaway, "0"}, 0);
  EXPECT_NE(reply.str.find("user_script:1: locksim model: string.find with a pattern that may "
                           "backtrack more than 10^9 steps on a 40-byte string"),
            std::string::npos)
      << show(reply);
  ModelServer caught;
  EXPECT_EQ(
      show(caught.execute(
          {"EVAL", "local ok = pcall(function() return " + runaway + " end) return 1", "0"}, 0)),
      ":1");
  EXPECT_NE(caught.first_gap().find("string.find with a pattern"), std::string::npos);
  ModelServer plain;
  EXPECT_EQ(show(plain.execute({"EVAL",
                                "return {string.find('lock:42', '^(%a+):(%d+)$'), "
                                "string.match(string.rep('ab', 5000), '(a-)b$'), "
                                "select(2, string.gsub(string.rep('a b ', 1000), '%s+', ''))}",
                                "0"},
                               0)),
            "[:1, \"a\", :2000]");
  EXPECT_EQ(plain.first_gap(), "");
}

}  // namespace
}  // namespace locksim
