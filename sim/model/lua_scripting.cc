// The Lua side of the model follows Redis 7.0.15's src/script_lua.c and src/eval.c function by
// function; the comments name the Redis function each part stands for.
//
// Lua 5.1 raises errors with longjmp, which skips C++ destructors: every C function registered
// below keeps its C++ objects in an inner block that ends before lua_error() is called, and
// nothing C++ is alive across a call that may raise (only an out-of-memory error inside such a
// block could still skip a destructor; it leaks, it does not corrupt).
#include "sim/model/lua_scripting.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <lua.hpp>
#include <string>
#include <vector>

#include "sim/core/assert.h"
#include "sim/core/sha1.h"
#include "sim/model/command.h"
#include "sim/model/lua_internal.h"
#include "sim/model/numbers.h"
#include "sim/model/replies.h"

namespace locksim::model_detail {

std::int32_t Lrand48::next() {
  step();
  return static_cast<std::int32_t>((x_[2] << 15) + (x_[1] >> 1));
}

void Lrand48::seed(std::int32_t seed) {
  const auto value = static_cast<std::uint32_t>(seed);
  x_[0] = 0x330E;
  x_[1] = value & 0xFFFF;
  x_[2] = (value >> 16) & 0xFFFF;
  a_[0] = 0xE66D;
  a_[1] = 0xDEEC;
  a_[2] = 0x5;
  c_ = 0xB;
}

// step: rand.c next(): x = a * x + c over 48 bits held in three 16-bit words.
void Lrand48::step() {
  constexpr std::uint32_t kMask = 0xFFFF;
  const std::uint64_t x = (std::uint64_t{x_[2]} << 32) | (std::uint64_t{x_[1]} << 16) | x_[0];
  const std::uint64_t a = (std::uint64_t{a_[2]} << 32) | (std::uint64_t{a_[1]} << 16) | a_[0];
  const std::uint64_t next = (a * x + c_) & 0xFFFFFFFFFFFFull;
  x_[0] = static_cast<std::uint32_t>(next) & kMask;
  x_[1] = static_cast<std::uint32_t>(next >> 16) & kMask;
  x_[2] = static_cast<std::uint32_t>(next >> 32) & kMask;
}

namespace {

constexpr int kHookEvery = 100000;  // instructions between two count-hook calls, as in Redis

// Registry slots that every script run reads, keyed by the address of a tag rather than by a
// name (a name is hashed and interned at each lookup): the real globals, the error handler, and
// the KEYS and ARGV tables (push_reused_array).
const char kGlobalsSlot = 0;
const char kErrorHandlerSlot = 0;
const char kKeysSlot = 0;
const char kArgvSlot = 0;

void push_slot(lua_State* lua, const char& slot) {
  lua_pushlightuserdata(lua, const_cast<char*>(&slot));
  lua_rawget(lua, LUA_REGISTRYINDEX);
}
// set_slot: the value on top of the stack into `slot` (popped).
void set_slot(lua_State* lua, const char& slot) {
  lua_pushlightuserdata(lua, const_cast<char*>(&slot));
  lua_insert(lua, -2);
  lua_rawset(lua, LUA_REGISTRYINDEX);
}

void* allocate(void* user, void* block, std::size_t old_size, std::size_t new_size);

// engine_of: the engine whose state this is: its allocator's argument (no lookup: redis.call
// asks at every call).
LuaScripting& engine_of(lua_State* lua) {
  void* engine = nullptr;
  const lua_Alloc allocator = lua_getallocf(lua, &engine);
  LOCKSIM_ASSERT(allocator == allocate && engine != nullptr);
  return *static_cast<LuaScripting*>(engine);
}

// collect_garbage: the base library's collectgarbage (Lua 5.1.5's luaB_collectgarbage, as Redis
// embeds it: the same options, answers and argument errors), which also tells the engine when a
// script stopped or retuned the collector, so that a pooled state is set back only then. Setting
// it back restarts the collector, and a restart makes the next owner's first allocation do a
// collection step (about 4,000 instructions a simulated schedule).
int collect_garbage(lua_State* lua) {
  static constexpr const char* kOptions[] = {"stop", "restart",  "collect",    "count",
                                             "step", "setpause", "setstepmul", nullptr};
  static constexpr int kWhat[] = {LUA_GCSTOP, LUA_GCRESTART,  LUA_GCCOLLECT,   LUA_GCCOUNT,
                                  LUA_GCSTEP, LUA_GCSETPAUSE, LUA_GCSETSTEPMUL};
  const int what = kWhat[luaL_checkoption(lua, 1, "collect", kOptions)];
  const int data = luaL_optint(lua, 2, 0);
  if (what == LUA_GCSTOP || what == LUA_GCRESTART || what == LUA_GCSETPAUSE ||
      what == LUA_GCSETSTEPMUL) {
    engine_of(lua).collector_tuned = true;
  }
  const int result = lua_gc(lua, what, data);
  if (what == LUA_GCCOUNT) {
    const int bytes = lua_gc(lua, LUA_GCCOUNTB, 0);
    lua_pushnumber(lua, result + static_cast<lua_Number>(bytes) / 1024);
  } else if (what == LUA_GCSTEP) {
    lua_pushboolean(lua, result);
  } else {
    lua_pushnumber(lua, result);
  }
  return 1;
}

// allocate: the state's allocator, with the memory limit (Lua reports "not enough memory").
// The limit holds while a script runs: outside a script (setting up, compiling, converting a
// result) an allocation failure would be an error nothing protects.
void* allocate(void* user, void* block, std::size_t old_size, std::size_t new_size) {
  auto* engine = static_cast<LuaScripting*>(user);
  if (new_size == 0) {
    std::free(block);
    engine->memory_used -= old_size;
    return nullptr;
  }
  if (new_size > old_size && engine->host() != nullptr) {
    // Shrinking never fails: Lua relies on it. Growing counts against the script's allocation
    // budget, which bounds the C work no instruction count sees (string.rep in a loop); once
    // over it every growth fails until the count hook stops the script.
    engine->allocated_bytes += new_size - old_size;
    if (engine->allocation_budget_bytes() > 0 &&
        engine->allocated_bytes > engine->allocation_budget_bytes()) {
      if (!engine->over_allocation_budget) engine->stop_soon();
      engine->over_allocation_budget = true;
      return nullptr;
    }
    if (engine->memory_used - old_size + new_size > engine->memory_limit_bytes()) return nullptr;
  }
  void* grown = std::realloc(block, new_size);
  if (grown != nullptr) engine->memory_used = engine->memory_used - old_size + new_size;
  return grown;
}

}  // namespace

void note_script_gap(lua_State* lua, const char* message) {
  if (ScriptHost* host = engine_of(lua).host(); host != nullptr) host->note_gap(message);
}

namespace {

int on_panic(lua_State* lua) {
  std::fprintf(stderr, "locksim model: unprotected Lua error: %s\n", lua_tostring(lua, -1));
  std::abort();
}

// call_command: luaRedisGenericCommand: redis.call (raise_error) and redis.pcall.
int call_command(lua_State* lua, bool raise_error) {
  LuaScripting& engine = engine_of(lua);
  ScriptHost* host = engine.host();
  if (host == nullptr) {
    push_error(lua, "redis.call/pcall can only be called inside a script invocation");
    return lua_error(lua);
  }
  const int argc = lua_gettop(lua);
  if (argc == 0) {
    push_error(lua, "Please specify at least one argument for this redis lib call");
    return raise_error ? lua_error(lua) : 1;
  }
  bool bad_argument = false;
  bool error_reply_seen = false;
  {
    // The arguments are read in place: a Lua string stays alive while it is on the stack, and
    // they are popped only after the command ran. Few commands take more than 16 arguments.
    const auto count = static_cast<std::size_t>(argc);
    std::array<std::string_view, 16> few;
    std::vector<std::string_view> many;
    if (count > few.size()) many.resize(count);
    const std::span<std::string_view> views = count > few.size()
                                                  ? std::span<std::string_view>(many)
                                                  : std::span<std::string_view>(few.data(), count);
    std::vector<std::string> numbers;  // reserved once: views point into its strings
    for (int index = 1; index <= argc; ++index) {
      const auto at = static_cast<std::size_t>(index - 1);
      if (lua_type(lua, index) == LUA_TNUMBER) {
        // Not lua_tolstring: Lua's own "%.14g" would lose precision.
        if (numbers.empty()) numbers.reserve(count);
        numbers.push_back(format_lua_number(lua_tonumber(lua, index)));
        views[at] = numbers.back();
        continue;
      }
      std::size_t length = 0;
      const char* text = lua_tolstring(lua, index, &length);
      if (text == nullptr) {
        bad_argument = true;
        break;
      }
      views[at] = std::string_view(text, length);
    }
    if (bad_argument) {
      lua_pop(lua, argc);
      push_error(lua, "Lua redis lib command arguments must be strings or integers");
    } else {
      Reply reply;
      try {
        reply = host->call(views);
      } catch (const std::exception& failure) {
        reply = error_reply(std::string("ERR locksim model: ") + failure.what());
        host->note_gap(reply.str);
      }
      lua_pop(lua, argc);
      error_reply_seen = is_error(reply);
      push_reply(lua, reply);
    }
  }
  if (bad_argument) return raise_error ? lua_error(lua) : 1;
  if (raise_error && error_reply_seen) return lua_error(lua);
  return 1;
}

int redis_call(lua_State* lua) { return call_command(lua, true); }
int redis_pcall(lua_State* lua) { return call_command(lua, false); }

// lua_pcall_compat: luaRedisPcall, the global pcall: an error table becomes its message.
int lua_pcall_compat(lua_State* lua) {
  const int argc = lua_gettop(lua);
  lua_pushboolean(lua, 1);
  lua_insert(lua, 1);
  if (lua_pcall(lua, argc - 1, LUA_MULTRET, 0) != 0) {
    lua_remove(lua, 1);
    if (lua_istable(lua, -1)) {
      lua_getfield(lua, -1, "err");
      if (lua_isstring(lua, -1)) lua_replace(lua, -2);
    }
    lua_pushboolean(lua, 0);
    lua_insert(lua, 1);
  }
  return lua_gettop(lua);
}

int redis_sha1hex(lua_State* lua) {
  if (lua_gettop(lua) != 1) {
    push_error(lua, "wrong number of arguments");
    return lua_error(lua);
  }
  std::size_t length = 0;
  const char* text = lua_tolstring(lua, 1, &length);
  char digest[41];
  {
    const std::string hex =
        sha1_hex(text == nullptr ? std::string_view() : std::string_view(text, length));
    std::memcpy(digest, hex.c_str(), sizeof(digest));
  }
  lua_pushstring(lua, digest);
  return 1;
}

int redis_error_reply(lua_State* lua) {
  if (lua_gettop(lua) != 1 || lua_type(lua, -1) != LUA_TSTRING) {
    push_error(lua, "wrong number or type of arguments");
    return 1;
  }
  const char* text = lua_tostring(lua, -1);
  if (text[0] != '-') {
    push_error_buffer(lua, std::string("-") + text);
  } else {
    push_error_buffer(lua, text);
  }
  return 1;
}

int redis_status_reply(lua_State* lua) {
  if (lua_gettop(lua) != 1 || lua_type(lua, -1) != LUA_TSTRING) {
    push_error(lua, "wrong number or type of arguments");
    return 1;
  }
  lua_newtable(lua);
  lua_pushstring(lua, "ok");
  lua_pushvalue(lua, -3);
  lua_settable(lua, -3);
  return 1;
}

int redis_log(lua_State* lua) {
  const int argc = lua_gettop(lua);
  if (argc < 2) {
    push_error(lua, "redis.log() requires two arguments or more.");
    return lua_error(lua);
  }
  if (!lua_isnumber(lua, -argc)) {
    push_error(lua, "First argument must be a number (log level).");
    return lua_error(lua);
  }
  const auto level = static_cast<int>(lua_tonumber(lua, -argc));
  if (level < 0 || level > 3) {
    push_error(lua, "Invalid debug level.");
    return lua_error(lua);
  }
  return 0;  // the model keeps no log
}

int redis_setresp(lua_State* lua) {
  if (lua_gettop(lua) != 1) {
    push_error(lua, "redis.setresp() requires one argument.");
    return lua_error(lua);
  }
  const auto resp = static_cast<int>(lua_tonumber(lua, -1));
  if (resp != 2 && resp != 3) {
    push_error(lua, "RESP version must be 2 or 3.");
    return lua_error(lua);
  }
  if (resp == 3) {
    constexpr const char* kGap =
        "locksim model: RESP3 replies in scripts (redis.setresp(3)) are not modelled";
    note_script_gap(lua, kGap);
    push_error(lua, kGap);
    return lua_error(lua);
  }
  return 0;
}

int redis_set_repl(lua_State* lua) {
  if (lua_gettop(lua) != 1) {
    push_error(lua, "redis.set_repl() requires two arguments.");
    return lua_error(lua);
  }
  const auto flags = static_cast<int>(lua_tonumber(lua, -1));
  if ((flags & ~3) != 0) {
    push_error(lua,
               "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
    return lua_error(lua);
  }
  note_script_gap(lua, "locksim model: redis.set_repl is not modelled");
  push_error(lua, "locksim model: redis.set_repl is not modelled");
  return lua_error(lua);
}

int redis_replicate_commands(lua_State* lua) {
  lua_pushboolean(lua, 1);
  return 1;
}

int redis_breakpoint(lua_State* lua) {
  lua_pushboolean(lua, 0);  // no debugging session
  return 1;
}

int redis_debug(lua_State*) { return 0; }

int redis_acl_check_cmd(lua_State* lua) {
  if (lua_gettop(lua) == 0) {
    push_error(lua, "Please specify at least one argument for this redis lib call");
    return lua_error(lua);
  }
  bool known = false;
  {
    std::size_t length = 0;
    const char* name = lua_type(lua, 1) == LUA_TNUMBER ? nullptr : lua_tolstring(lua, 1, &length);
    known = name != nullptr && find_command(std::string_view(name, length)) != nullptr;
  }
  if (!known) {
    push_error(lua, "Invalid command passed to redis.acl_check_cmd()");
    return lua_error(lua);
  }
  lua_pushboolean(lua, 1);  // the default user may run everything
  return 1;
}

// math_random: redis_math_random: Lua's math.random over redisLrand48.
int math_random(lua_State* lua) {
  LuaScripting& engine = engine_of(lua);
  if (engine.host() == nullptr) {
    return luaL_error(lua, "math.random can only be called inside a script invocation");
  }
  constexpr std::int32_t kMax = 2147483647;  // REDIS_LRAND48_MAX (INT32_MAX)
  const lua_Number r =
      static_cast<lua_Number>(engine.random().next() % kMax) / static_cast<lua_Number>(kMax);
  switch (lua_gettop(lua)) {
    case 0:
      lua_pushnumber(lua, r);
      break;
    case 1: {
      const int upper = luaL_checkint(lua, 1);
      luaL_argcheck(lua, 1 <= upper, 1, "interval is empty");
      lua_pushnumber(lua, std::floor(r * upper) + 1);
      break;
    }
    case 2: {
      const int lower = luaL_checkint(lua, 1);
      const int upper = luaL_checkint(lua, 2);
      luaL_argcheck(lua, lower <= upper, 2, "interval is empty");
      lua_pushnumber(lua, std::floor(r * (upper - lower + 1)) + lower);
      break;
    }
    default:
      return luaL_error(lua, "wrong number of arguments");
  }
  return 1;
}

int math_randomseed(lua_State* lua) {
  LuaScripting& engine = engine_of(lua);
  if (engine.host() == nullptr) {
    return luaL_error(lua, "math.randomseed can only be called inside a script invocation");
  }
  engine.random().seed(luaL_checkint(lua, 1));
  return 0;
}

// missing_library: any field of a library Redis has and the model does not (upvalue: its name).
int missing_library(lua_State* lua) {
  char gap[120];
  std::snprintf(gap, sizeof(gap), "locksim model: Lua library '%s' is not modelled",
                lua_tostring(lua, lua_upvalueindex(1)));
  note_script_gap(lua, gap);
  return luaL_error(lua, "locksim model: Lua library '%s' is not modelled",
                    lua_tostring(lua, lua_upvalueindex(1)));
}

// kill_message: the error of a script the model stopped (its budget of instructions, or of
// bytes its C functions allocated, is spent).
void kill_message(const LuaScripting& engine, char* message, std::size_t size) {
  if (engine.over_allocation_budget) {
    std::snprintf(message, size,
                  "locksim model: script killed after it allocated %llu bytes (Redis would keep "
                  "running it, answering BUSY, until SCRIPT KILL)",
                  static_cast<unsigned long long>(engine.allocation_budget_bytes()));
  } else {
    std::snprintf(message, size,
                  "locksim model: script killed after %lld Lua instructions (Redis would keep "
                  "running it, answering BUSY, until SCRIPT KILL)",
                  static_cast<long long>(engine.instruction_budget()));
  }
}

// script_hook: luaMaskCountHook, with the model's budgets instead of SCRIPT KILL: once over a
// budget it fires on every line, so a pcall cannot swallow the error for good. Its call events
// refuse a pattern match that could backtrack for ever (pattern_call_too_long).
void script_hook(lua_State* lua, lua_Debug* event) {
  LuaScripting& engine = engine_of(lua);
  if (event->event == LUA_HOOKCALL) {
    char refused[200];
    if (!pattern_call_too_long(lua, event, refused, sizeof(refused))) return;
    note_script_gap(lua, refused);
    luaL_error(lua, "%s", refused);
    return;
  }
  if (event->event == LUA_HOOKCOUNT) ++engine.hook_calls;
  const bool over_instructions = engine.instruction_budget() > 0 &&
                                 engine.hook_calls * kHookEvery > engine.instruction_budget();
  if (!over_instructions && !engine.over_allocation_budget) return;
  lua_sethook(lua, script_hook, LUA_MASKLINE | LUA_MASKCALL, 0);
  char message[200];
  kill_message(engine, message, sizeof(message));
  note_script_gap(lua, message);
  push_error(lua, message);
  lua_error(lua);
}

void load_library(lua_State* lua, const char* name, lua_CFunction open) {
  lua_pushcfunction(lua, open);
  lua_pushstring(lua, name);
  lua_call(lua, 1, 0);
}

void set_function(lua_State* lua, const char* name, lua_CFunction function) {
  lua_pushcfunction(lua, function);
  lua_setfield(lua, -2, name);
}

void set_number(lua_State* lua, const char* name, lua_Number value) {
  lua_pushnumber(lua, value);
  lua_setfield(lua, -2, name);
}

// push_array: luaCreateArray: KEYS or ARGV.
void push_array(lua_State* lua, std::span<const std::string_view> values) {
  lua_newtable(lua);
  for (std::size_t i = 0; i < values.size(); ++i) {
    lua_pushlstring(lua, values[i].data(), values[i].size());
    lua_rawseti(lua, -2, static_cast<int>(i + 1));
  }
}

// The KEYS and ARGV tables are kept in the registry and filled again for each script (Redis makes
// new ones; a table a script cannot keep costs the same to reuse, without the allocations and the
// collector's work): a script sees exactly values 1..n and nothing else, as with a new table. One
// that the script changed beyond its values (another key, a value past n, a metatable) is
// dropped after the run, and the next script gets a new one.
// push_reused_array: the registry's table at `slot` (made if missing) holding `values` as 1..n.
void push_reused_array(lua_State* lua, const char& slot, std::span<const std::string_view> values) {
  push_slot(lua, slot);
  if (!lua_istable(lua, -1)) {
    lua_pop(lua, 1);
    push_array(lua, values);
    lua_pushvalue(lua, -1);
    set_slot(lua, slot);
    return;
  }
  const auto n = static_cast<int>(values.size());
  for (int i = 0; i < n; ++i) {
    lua_pushlstring(lua, values[static_cast<std::size_t>(i)].data(),
                    values[static_cast<std::size_t>(i)].size());
    lua_rawseti(lua, -2, i + 1);
  }
  // Left from the last script: only 1..m (checked after it ran), so the border is m.
  for (int i = static_cast<int>(lua_objlen(lua, -1)); i > n; --i) {
    lua_pushnil(lua);
    lua_rawseti(lua, -2, i);
  }
}

// check_reused_array: drops the registry's table at `slot` unless it still holds only keys
// 1..n (holes allowed: a script may set KEYS[1] = nil) and no metatable.
void check_reused_array(lua_State* lua, const char& slot, std::size_t n) {
  push_slot(lua, slot);
  bool clean = lua_istable(lua, -1) && lua_getmetatable(lua, -1) == 0;
  if (clean) {
    lua_pushnil(lua);
    while (lua_next(lua, -2) != 0) {
      lua_pop(lua, 1);  // the value
      const bool in_range = lua_type(lua, -1) == LUA_TNUMBER && [&] {
        const lua_Number key = lua_tonumber(lua, -1);
        return key >= 1 && key <= static_cast<lua_Number>(n) &&
               key == static_cast<lua_Number>(static_cast<std::int64_t>(key));
      }();
      if (!in_range) {
        clean = false;
        lua_pop(lua, 1);  // the key: the traversal ends here
        break;
      }
    }
  } else if (lua_istable(lua, -1)) {
    lua_pop(lua, 1);  // the metatable
  }
  lua_pop(lua, 1);
  if (!clean) {
    lua_pushnil(lua);
    set_slot(lua, slot);
  }
}

// The error handler eval.c installs, word for word: it adds the script's source and line to
// an error and turns a plain error into a table.
constexpr const char* kErrorHandler =
    "local dbg = debug\n"
    "debug = nil\n"
    "function __redis__err__handler(err)\n"
    "  local i = dbg.getinfo(2,'nSl')\n"
    "  if i and i.what == 'C' then\n"
    "    i = dbg.getinfo(3,'nSl')\n"
    "  end\n"
    "  if type(err) ~= 'table' then\n"
    "    err = {err='ERR ' .. tostring(err)}"
    "  end"
    "  if i then\n"
    "    err['source'] = i.source\n"
    "    err['line'] = i.currentline\n"
    "  end"
    "  return err\n"
    "end\n";

// ShebangResult: evalExtractShebangFlags.
struct Shebang {
  std::size_t length = 0;  // bytes before the line feed that ends it (kept for line numbers)
  ScriptFlags flags;
  std::string error;
};

Shebang parse_shebang(std::string_view body) {
  Shebang shebang;
  if (!body.starts_with("#!")) return shebang;
  const std::size_t end = body.find('\n');
  if (end == std::string_view::npos) {
    shebang.error = "Invalid script shebang";
    return shebang;
  }
  shebang.length = end;
  shebang.flags.shebang = true;
  // sdssplitargs without quoting (a quoted shebang is not modelled).
  std::vector<std::string> parts;
  {
    std::string current;
    for (const char c : body.substr(0, end)) {
      if (c == ' ' || c == '\t' || c == '\r') {
        if (!current.empty()) parts.push_back(std::move(current));
        current.clear();
      } else {
        current.push_back(c);
      }
    }
    if (!current.empty()) parts.push_back(std::move(current));
  }
  if (parts.empty()) {
    shebang.error = "Invalid engine in script shebang";
    return shebang;
  }
  if (parts[0] != "#!lua") {
    shebang.error = "Unexpected engine in script shebang: " + parts[0];
    return shebang;
  }
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (!parts[i].starts_with("flags=")) {
      shebang.error = "Unknown lua shebang option: " + parts[i];
      return shebang;
    }
    std::string_view flags = std::string_view(parts[i]).substr(6);
    // sdssplitlen splits "" into no flags at all ("#!lua flags=" is a script without flags);
    // an empty flag between commas is still refused.
    if (flags.empty()) continue;
    while (true) {
      const std::size_t comma = flags.find(',');
      const std::string_view flag = flags.substr(0, comma);
      if (flag == "no-writes") {
        shebang.flags.no_writes = true;
      } else if (flag == "allow-oom") {
        shebang.flags.allow_oom = true;
      } else if (flag != "allow-stale" && flag != "no-cluster" &&
                 flag != "allow-cross-slot-keys") {
        shebang.error = "Unexpected flag in script shebang: " + std::string(flag);
        return shebang;
      }
      if (comma == std::string_view::npos) break;
      flags.remove_prefix(comma + 1);
    }
  }
  return shebang;
}

// ScriptName: "f_" and the SHA in lower case, Redis's registry name of a script's function,
// built on the stack for a SHA1's 40 characters (every EVALSHA looks one up) and on the heap for
// anything longer (which names no script).
class ScriptName {
 public:
  explicit ScriptName(std::string_view sha) {
    if (sha.size() + 3 > inline_.size()) {
      heap_ = "f_" + lower(sha);
      text_ = heap_.c_str();
      size_ = heap_.size();
      return;
    }
    inline_[0] = 'f';
    inline_[1] = '_';
    for (std::size_t i = 0; i < sha.size(); ++i) {
      const char c = sha[i];
      inline_[2 + i] = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    }
    inline_[2 + sha.size()] = '\0';
    text_ = inline_.data();
    size_ = 2 + sha.size();
  }
  ScriptName(const ScriptName&) = delete;
  ScriptName& operator=(const ScriptName&) = delete;

  const char* c_str() const { return text_; }                      // the function's name
  std::string_view sha() const { return {text_ + 2, size_ - 2}; }  // the SHA in lower case

 private:
  std::array<char, 64> inline_{};
  std::string heap_;
  const char* text_ = nullptr;
  std::size_t size_ = 0;
};

// pooled_allocate: the allocator of a state waiting in the pool (only lua_close uses it).
void* pooled_allocate(void*, void* block, std::size_t, std::size_t new_size) {
  if (new_size == 0) {
    std::free(block);
    return nullptr;
  }
  return std::realloc(block, new_size);
}

// StatePool: Lua states set up once and handed from one engine to the next on the same thread.
// Setting a state up costs more than a whole simulated schedule, and explore makes a server (or
// five) per schedule. A state comes back with nothing of its last server that a script can see
// but the compiled functions of the scripts it ran (pure functions of their text, keyed by SHA1),
// and with garbage the next owner's allocations collect; the script cache that EVALSHA and SCRIPT
// EXISTS see belongs to the engine and starts empty (docs/model.md, item 20).
thread_local bool pool_gone = false;  // the thread's pool was destroyed (its thread is ending)

class StatePool {
 public:
  struct Entry {
    lua_State* lua = nullptr;
    std::size_t bytes = 0;     // what the state holds
    std::size_t compiled = 0;  // functions in its registry
  };
  ~StatePool() {
    for (const Entry& entry : entries_) lua_close(entry.lua);
    pool_gone = true;  // an engine that ends later closes its state itself
  }
  bool take(Entry& entry) {
    if (entries_.empty()) return false;
    entry = entries_.back();
    entries_.pop_back();
    return true;
  }
  // give: keeps the state unless the pool is full or the state holds many compiled scripts
  // (a differential test compiles thousands of distinct ones).
  void give(const Entry& entry) {
    if (entries_.size() >= kMaxStates || entry.compiled > kMaxCompiled) {
      lua_close(entry.lua);
      return;
    }
    entries_.push_back(entry);
  }

 private:
  static constexpr std::size_t kMaxStates = 16;
  static constexpr std::size_t kMaxCompiled = 64;
  std::vector<Entry> entries_;
};

StatePool& state_pool() {
  thread_local StatePool pool;
  return pool;
}

thread_local std::uint64_t states_set_up_here = 0;

}  // namespace

LuaScripting::LuaScripting(ScriptLimits limits, Lrand48& random)
    : limits_(limits), random_(&random) {}

LuaScripting::~LuaScripting() {
  if (lua_ == nullptr) return;
  lua_settop(lua_, 0);  // its garbage is collected as the next owner allocates
  for (const auto& [sha, script] : scripts_) luaL_unref(lua_, LUA_REGISTRYINDEX, script.function);
  // A script's collectgarbage() stopped or retuned the collector: Lua 5.1's defaults again.
  if (collector_tuned) {
    lua_gc(lua_, LUA_GCRESTART, 0);
    lua_gc(lua_, LUA_GCSETPAUSE, 200);
    lua_gc(lua_, LUA_GCSETSTEPMUL, 200);
  }
  lua_setallocf(lua_, pooled_allocate, nullptr);
  if (pool_gone) {
    lua_close(lua_);
  } else {
    state_pool().give(StatePool::Entry{lua_, memory_used, compiled_});
  }
}

lua_State* LuaScripting::state() {
  if (lua_ != nullptr) return lua_;
  StatePool::Entry entry;
  if (!pool_gone && state_pool().take(entry)) {
    lua_ = entry.lua;
    memory_used = entry.bytes;
    compiled_ = entry.compiled;
    lua_setallocf(lua_, allocate, this);
  } else {
    create_state();
  }
  return lua_;
}

void LuaScripting::stop_soon() {
  if (lua_ != nullptr) lua_sethook(lua_, script_hook, LUA_MASKCALL | LUA_MASKCOUNT, 1);
}

std::uint64_t LuaScripting::states_set_up() { return states_set_up_here; }

void LuaScripting::create_state() {
  ++states_set_up_here;
  lua_ = lua_newstate(allocate, this);
  LOCKSIM_ASSERT(lua_ != nullptr);
  lua_State* lua = lua_;
  lua_atpanic(lua, on_panic);
  create_proxy_registry(lua);

  // luaLoadLibraries: base, table, string, math, debug (removed again below).
  load_library(lua, "", luaopen_base);
  lua_pushcfunction(lua, collect_garbage);  // the same function, watched (collect_garbage)
  lua_setglobal(lua, "collectgarbage");
  load_library(lua, LUA_TABLIBNAME, luaopen_table);
  load_library(lua, LUA_STRLIBNAME, luaopen_string);
  lua_getglobal(lua, LUA_STRLIBNAME);
  remember_pattern_functions(lua);
  lua_pop(lua, 1);
  load_library(lua, LUA_MATHLIBNAME, luaopen_math);
  load_library(lua, LUA_DBLIBNAME, luaopen_debug);
  // Not on Redis 7.0.15's allow list (print, dofile, loadfile) or removed by it (getfenv,
  // setfenv, newproxy).
  for (const char* removed : {"print", "dofile", "loadfile", "getfenv", "setfenv", "newproxy"}) {
    lua_pushnil(lua);
    lua_setglobal(lua, removed);
  }
  // Stand-ins that refuse every use, reading and writing alike (rawset too: they count as
  // proxies of an empty table), so no script leaves anything in them.
  for (const char* library : {"cjson", "struct", "cmsgpack", "bit"}) {
    lua_newtable(lua);
    lua_newtable(lua);
    lua_pushstring(lua, library);
    lua_pushcclosure(lua, missing_library, 1);
    lua_pushvalue(lua, -1);
    lua_setfield(lua, -3, "__index");
    lua_setfield(lua, -2, "__newindex");
    lua_pushboolean(lua, 0);
    lua_setfield(lua, -2, "__metatable");
    lua_setmetatable(lua, -2);
    register_stand_in(lua);
    lua_setglobal(lua, library);
  }
  lua_pushcfunction(lua, lua_pcall_compat);
  lua_setglobal(lua, "pcall");

  // luaRegisterRedisAPI and scriptingInit: the redis table.
  lua_newtable(lua);
  set_function(lua, "call", redis_call);
  set_function(lua, "pcall", redis_pcall);
  set_function(lua, "log", redis_log);
  set_number(lua, "LOG_DEBUG", 0);
  set_number(lua, "LOG_VERBOSE", 1);
  set_number(lua, "LOG_NOTICE", 2);
  set_number(lua, "LOG_WARNING", 3);
  set_number(lua, "REDIS_VERSION_NUM", 0x0007000f);
  lua_pushstring(lua, "7.0.15");
  lua_setfield(lua, -2, "REDIS_VERSION");
  set_function(lua, "setresp", redis_setresp);
  set_function(lua, "sha1hex", redis_sha1hex);
  set_function(lua, "error_reply", redis_error_reply);
  set_function(lua, "status_reply", redis_status_reply);
  set_function(lua, "set_repl", redis_set_repl);
  set_number(lua, "REPL_NONE", 0);
  set_number(lua, "REPL_AOF", 1);
  set_number(lua, "REPL_SLAVE", 2);
  set_number(lua, "REPL_REPLICA", 2);
  set_number(lua, "REPL_ALL", 3);
  set_function(lua, "acl_check_cmd", redis_acl_check_cmd);
  set_function(lua, "breakpoint", redis_breakpoint);
  set_function(lua, "debug", redis_debug);
  set_function(lua, "replicate_commands", redis_replicate_commands);
  lua_setglobal(lua, "redis");

  lua_getglobal(lua, "math");
  set_function(lua, "random", math_random);
  set_function(lua, "randomseed", math_randomseed);
  lua_pop(lua, 1);

  // The error handler (it takes `debug` away).
  LOCKSIM_ASSERT(
      luaL_loadbuffer(lua, kErrorHandler, std::strlen(kErrorHandler), "@err_handler_def") == 0);
  LOCKSIM_ASSERT(lua_pcall(lua, 0, 0, 0) == 0);

  install_see_through_functions(lua);

  // Read-only libraries, then read-only globals.
  for (const char* library : {"string", "table", "math", "coroutine", "redis"}) {
    lua_getglobal(lua, library);
    make_proxy(lua, false);
    lua_setglobal(lua, library);
  }
  // The string metatable, which Redis 7 makes read-only like every table a script can reach:
  // strings find their methods through the string library's proxy, and a script that asks for
  // the metatable gets a read-only view of it (without this, a script could change the string
  // library, and the next server to take this state would see it).
  lua_pushliteral(lua, "");
  LOCKSIM_ASSERT(lua_getmetatable(lua, -1) != 0);
  lua_getglobal(lua, "string");
  lua_setfield(lua, -2, "__index");
  lua_pushvalue(lua, -1);
  make_proxy(lua, false);
  lua_setfield(lua, -2, "__metatable");
  lua_pop(lua, 2);
  lua_pushvalue(lua, LUA_GLOBALSINDEX);
  lua_pushvalue(lua, -1);
  set_slot(lua, kGlobalsSlot);  // the real globals, for KEYS and ARGV
  lua_getfield(lua, -1, "__redis__err__handler");
  set_slot(lua, kErrorHandlerSlot);
  make_proxy(lua, true);
  push_slot(lua, kGlobalsSlot);
  lua_pushvalue(lua, -2);
  lua_setfield(lua, -2, "_G");  // _G is the proxy
  lua_pop(lua, 1);
  lua_replace(lua, LUA_GLOBALSINDEX);  // scripts compiled from now on see the proxy
}

namespace {

// known_sha1: sha1_hex(body), remembered for the last few bodies this thread loaded: explore makes
// a new server for every schedule, and each loads the same scripts again.
std::string known_sha1(std::string_view body) {
  struct Known {
    std::string body;
    std::string sha;
  };
  thread_local std::array<Known, 8> known;
  thread_local std::size_t next = 0;
  for (const Known& entry : known) {
    if (!entry.sha.empty() && entry.body == body) return entry.sha;
  }
  std::string sha = sha1_hex(body);
  known[next++ % known.size()] = Known{std::string(body), sha};
  return sha;
}

}  // namespace

bool LuaScripting::load(std::string_view body, std::string& sha, Reply& error) {
  sha = known_sha1(body);
  if (scripts_.contains(sha)) return true;
  const Shebang shebang = parse_shebang(body);
  if (!shebang.error.empty()) {
    error = error_reply("ERR " + shebang.error);
    return false;
  }
  lua_State* lua = state();
  const ScriptName name(sha);
  lua_getfield(lua, LUA_REGISTRYINDEX, name.c_str());
  if (lua_isfunction(lua, -1)) {  // by this state's last owner: the same text, so the same function
    remember(sha, shebang.flags);
    return true;
  }
  lua_pop(lua, 1);
  // The shebang line is skipped but its line feed kept, so line numbers stay the user's.
  const std::string_view code = body.substr(shebang.length);
  if (luaL_loadbuffer(lua, code.data(), code.size(), "@user_script") != 0) {
    std::string message = lua_tostring(lua, -1);
    lua_pop(lua, 1);
    while (!message.empty() && (message.back() == '\r' || message.back() == '\n')) {
      message.pop_back();
    }
    error = error_reply(map_newlines("ERR Error compiling script (new function): " + message));
    return false;
  }
  lua_pushvalue(lua, -1);
  lua_setfield(lua, LUA_REGISTRYINDEX, name.c_str());
  ++compiled_;
  remember(sha, shebang.flags);
  return true;
}

void LuaScripting::remember(const std::string& sha, ScriptFlags flags) {
  // The reference goes with this engine (its destructor releases it): a pooled state keeps only
  // the functions, under their names.
  const int function = luaL_ref(lua_, LUA_REGISTRYINDEX);
  scripts_.emplace(sha, CachedScript{flags, function});
}

const LuaScripting::CachedScript* LuaScripting::cached(std::string_view sha) const {
  if (last_ != nullptr && sha == *last_sha_) return last_;
  const auto it = scripts_.find(ScriptName(sha).sha());
  if (it == scripts_.end()) return nullptr;
  last_sha_ = &it->first;
  last_ = &it->second;
  return last_;
}

bool LuaScripting::exists(std::string_view sha) const { return cached(sha) != nullptr; }

bool LuaScripting::shebang_flags(std::string_view body, ScriptFlags& flags) {
  const Shebang shebang = parse_shebang(body);
  flags = shebang.flags;
  return shebang.error.empty();
}

ScriptFlags LuaScripting::flags(std::string_view sha) const {
  const CachedScript* script = cached(sha);
  return script != nullptr ? script->flags : ScriptFlags{};
}

Reply LuaScripting::run(std::string_view sha, std::span<const std::string_view> keys,
                        std::span<const std::string_view> args, ScriptHost& host) {
  lua_State* lua = state();
  LOCKSIM_ASSERT(host_ == nullptr);  // scripts do not nest: EVAL is not allowed from a script
  const int base = lua_gettop(lua);
  push_slot(lua, kGlobalsSlot);
  push_slot(lua, kErrorHandlerSlot);
  const CachedScript* script = cached(sha);
  LOCKSIM_ASSERT(script != nullptr);
  lua_rawgeti(lua, LUA_REGISTRYINDEX, script->function);
  LOCKSIM_ASSERT(lua_isfunction(lua, -1));
  push_reused_array(lua, kKeysSlot, keys);
  lua_setfield(lua, base + 1, "KEYS");
  push_reused_array(lua, kArgvSlot, args);
  lua_setfield(lua, base + 1, "ARGV");

  host_ = &host;
  hook_calls = 0;
  allocated_bytes = 0;
  over_allocation_budget = false;
  lua_sethook(lua, script_hook, LUA_MASKCALL | LUA_MASKCOUNT, kHookEvery);
  const int status = lua_pcall(lua, 0, 1, base + 2);
  lua_sethook(lua, nullptr, 0, 0);
  host_ = nullptr;

  Reply reply;
  if (over_allocation_budget) {
    // Stopped, or caught its failed allocations and returned before the hook could stop it:
    // either way not what Redis answers.
    char message[200];
    kill_message(*this, message, sizeof(message));
    reply = error_reply(std::string("ERR ") + message);
    lua_pop(lua, 1);
  } else if (status != 0) {
    const std::string name = lower(sha);
    if (!lua_istable(lua, -1)) {
      // Only when the error handler itself failed (e.g. out of memory).
      const char* text = lua_isstring(lua, -1) ? lua_tostring(lua, -1) : "execution failure";
      std::string message =
          "ERR Error running script " + name + ", " + std::string(text).substr(0, 100);
      while (!message.empty() && (message.back() == '\r' || message.back() == '\n')) {
        message.pop_back();
      }
      reply = error_reply(map_newlines(message));
    } else {
      // luaExtractErrorInformation; the reply is "<err> script: <sha>, on <source>:<line>.".
      std::string message;
      std::string source;
      std::string line;
      const bool has_message = raw_string_field(lua, "err", message, true);
      const bool has_source = raw_string_field(lua, "source", source, true);
      const bool has_line = raw_string_field(lua, "line", line, true);
      if (!has_message) {
        // Redis 7.0.15 dereferences a NULL message here and crashes (error({}) kills it).
        message =
            "ERR locksim model: a script raised an error table without an 'err' string "
            "(Redis 7.0.15 crashes on it)";
      }
      message = message.substr(0, message.find('\0'));
      if (has_source && has_line) {
        message += " script: " + name + ", on " + source + ":" + line + ".";
      }
      reply = error_reply(std::move(message));
    }
    lua_pop(lua, 1);
  } else {
    reply = to_reply(lua, 0);
  }
  lua_settop(lua, base);
  check_reused_array(lua, kKeysSlot, keys.size());
  check_reused_array(lua, kArgvSlot, args.size());
  // Redis steps the collector every 50 scripts so that a full cycle never lands on one script.
  if (++runs_since_gc_ == 50) {
    lua_gc(lua, LUA_GCSTEP, 50);
    runs_since_gc_ = 0;
  }
  return reply;
}

}  // namespace locksim::model_detail
