// lua_scripting.h: LuaScripting, the model's script engine: one Lua 5.1 state (the version Redis
// embeds) set up the way Redis 7.0 sets up its own (src/script_lua.c, src/eval.c), and the
// script cache EVAL, EVALSHA and SCRIPT LOAD share.
//
// What a script sees: the base library without print/dofile/loadfile, string, table, math (with
// Redis's deterministic math.random), the `redis` table (call, pcall, error_reply, status_reply,
// sha1hex, log, setresp(2), set_repl, replicate_commands, REDIS_VERSION...), KEYS and ARGV, and a
// read-only global table whose missing names are errors. cjson, cmsgpack, struct and bit exist
// as names whose every use is an error naming the library ("locksim model: Lua library 'cjson'
// is not modelled"). Conversions between Lua and replies are Redis's RESP2 ones. A script that
// runs more than the instruction budget is stopped with an error (Redis would keep running it,
// answering BUSY to everyone else, until SCRIPT KILL).
//
// Not thread-safe; one per ModelServer. The Lua state is set up at the first script and, when
// the engine ends, kept for the next engine on the same thread (see StatePool in lua_pool.cc).
// The engine is lua_engine.cc, the `redis` table and the setting up of a state lua_api.cc.
//
//   LuaScripting lua(limits, random);
//   std::string sha; Reply error;
//   if (!lua.load(body, sha, error)) return error;
//   Reply r = lua.run(sha, keys, args, host);
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "sim/redis/connection.h"

struct lua_State;

namespace locksim::model_detail {

// ScriptHost: what a running script's redis.call and redis.pcall reach: runs one command in the
// script's context and returns its reply (an error as an error reply, e.g. "ERR Unknown Redis
// command called from script").
class ScriptHost {
 public:
  virtual ~ScriptHost() = default;
  virtual Reply call(std::span<const std::string_view> argv) = 0;
  // note_gap: the script met something the model lacks (`message` holds kModelGap): noted on
  // the server even if the script catches the error.
  virtual void note_gap(std::string_view message) = 0;
};

// Lrand48: Redis's redisLrand48 (src/rand.c), the generator behind a script's math.random. One
// per server process: SCRIPT FLUSH keeps it, a restart starts it over.
class Lrand48 {
 public:
  std::int32_t next();
  void seed(std::int32_t seed);

 private:
  void step();
  std::uint32_t x_[3] = {0x330E, 0xABCD, 0x1234};
  std::uint32_t a_[3] = {0xE66D, 0xDEEC, 0x5};
  std::uint32_t c_ = 0xB;
};

struct ScriptLimits {
  std::int64_t instruction_budget = 0;  // Lua VM instructions per script run
  std::size_t memory_limit_bytes = 0;   // of the whole Lua state
  // allocation_budget_bytes: bytes a script run may allocate in all (freed ones count too): the
  // bound of work done in C functions, which no instruction count sees. 0: none.
  std::size_t allocation_budget_bytes = 0;
  // time_limit_ms: real time a script run may take, read at each count-hook call (every 1,000
  // instructions): the backstop of both budgets, which a C function that allocates nothing can
  // pass by (string.rep of a string Lua already holds interned). 0: none.
  std::int64_t time_limit_ms = 0;
};

// ScriptFlags: a script's shebang line (evalExtractShebangFlags): whether it has one (without,
// Redis runs it in EVAL's compatibility mode) and the flags the model acts on.
struct ScriptFlags {
  bool shebang = false;
  bool no_writes = false;  // flags=no-writes: a read-only script
  bool allow_oom = false;  // flags=allow-oom: runs, and may grow memory, over maxmemory
  bool no_cluster = false;        // flags=no-cluster: refused on a cluster node
  bool allow_cross_slot = false;  // flags=allow-cross-slot-keys: undeclared keys of any slot
};

class LuaScripting {
 public:
  LuaScripting(ScriptLimits limits, Lrand48& random);
  ~LuaScripting();
  LuaScripting(const LuaScripting&) = delete;
  LuaScripting& operator=(const LuaScripting&) = delete;

  // load: compiles `body` into the cache (once per SHA1) and sets `sha`; on a compile error or a
  // bad shebang line returns false with Redis's error reply.
  bool load(std::string_view body, std::string& sha, Reply& error);
  // exists: whether `sha` (40 hex digits, any case) is in the cache.
  bool exists(std::string_view sha) const;
  // shebang_flags: the flags of `body`'s shebang line, without compiling it (evalGetCommandFlags
  // reads them before the script is loaded); false if the line is not valid.
  static bool shebang_flags(std::string_view body, ScriptFlags& flags);
  // flags: what the cached script `sha` declared in its shebang line (all false if none).
  ScriptFlags flags(std::string_view sha) const;
  // run: runs the cached script `sha` with KEYS and ARGV, redis.call going to `host`; the
  // script's return value or error as a reply.
  Reply run(std::string_view sha, std::span<const std::string_view> keys,
            std::span<const std::string_view> args, ScriptHost& host);

  // stop_soon: the running script is over a budget: the hook stops it at its next instruction
  // (the allocator calls it; a count hook fires only every 1,000 instructions).
  void stop_soon();

  // states_set_up: Lua states this thread has set up (the others were taken from its pool).
  static std::uint64_t states_set_up();

  // The C functions registered in the Lua state reach the engine through these.
  ScriptHost* host() const { return host_; }
  Lrand48& random() const { return *random_; }
  std::int64_t instruction_budget() const { return limits_.instruction_budget; }
  std::size_t memory_limit_bytes() const { return limits_.memory_limit_bytes; }
  std::size_t allocation_budget_bytes() const { return limits_.allocation_budget_bytes; }
  std::int64_t time_limit_ms() const { return limits_.time_limit_ms; }
  std::int64_t started_ns = 0;  // when the running script started (real time)
  bool over_time = false;       // ... and ran past time_limit_ms
  std::size_t memory_used = 0;  // bytes the Lua state holds (its allocator keeps it)
  std::int64_t hook_calls = 0;  // count-hook calls of the running script
  std::size_t allocated_bytes = 0;       // what the running script allocated so far
  bool over_allocation_budget = false;   // ... past allocation_budget_bytes
  bool collector_tuned = false;  // a script stopped, restarted or retuned the collector
  // call_reply: the reply of the redis.call running now, while it is converted to a Lua value:
  // the engine holds it, not redis.call's frame, which a failed allocation longjmps over.
  Reply call_reply;

 private:
  struct CachedScript {
    ScriptFlags flags;
    int function = 0;  // a registry reference to its compiled function, while this engine lives
  };
  // cached: the script `sha` (any case), or nullptr. The last one found is remembered: a lock's
  // EVALSHA asks for the same script three times (exists, read_only, run), and again and again.
  const CachedScript* cached(std::string_view sha) const;
  // remember: `sha` (lowercase) in the cache, its function on top of the stack (popped).
  void remember(const std::string& sha, ScriptFlags flags);
  void create_state();
  lua_State* state();  // the Lua state, taken from the thread's pool or set up at first use

  ScriptLimits limits_;
  Lrand48* random_;
  lua_State* lua_ = nullptr;
  ScriptHost* host_ = nullptr;  // set while a script runs
  std::map<std::string, CachedScript, std::less<>> scripts_;
  mutable const std::string* last_sha_ = nullptr;  // a key of scripts_ (nodes stay put)
  mutable const CachedScript* last_ = nullptr;
  int runs_since_gc_ = 0;
  std::size_t compiled_ = 0;  // compiled functions in the state's registry
};

}  // namespace locksim::model_detail
