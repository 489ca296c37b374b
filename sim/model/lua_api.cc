// lua_api.cc: Redis's Lua API as the model's scripts see it, after Redis 7.0.15's src/script_lua.c
// and src/eval.c function by function (the comments name the Redis function each part stands
// for): the `redis` table (call, pcall, error_reply, status_reply, sha1hex, log, setresp,
// set_repl...), math.random over Redis's generator, the global pcall, collectgarbage, the
// stand-ins of the libraries not modelled, and set_up_state, which builds a new state the way
// Redis builds its own. Lua values <-> replies are lua_conversions.cc; the read-only tables
// lua_sandbox.cc; running a script and its budgets lua_engine.cc.
//
// Lua 5.1 raises errors with longjmp, which skips C++ destructors: every C function registered
// here keeps its C++ objects in an inner block that calls nothing of Lua that can raise and ends
// before anything is pushed, and nothing C++ that owns memory is alive across a call that may
// raise (lua_internal.h's rule; redis.call's reply is the engine's while it is pushed).
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
#include "sim/model/lua_scripting.h"
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
  {
    // The arguments are read in place: a Lua string stays alive while it is on the stack, and
    // they are popped only after the command ran. Few commands take more than 16 arguments.
    // Nothing in this block calls Lua in a way that can raise (a number is formatted here, not
    // by lua_tolstring, which would allocate): its vectors are freed before anything is pushed.
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
      if (lua_type(lua, index) != LUA_TSTRING) {
        bad_argument = true;
        break;
      }
      std::size_t length = 0;
      const char* text = lua_tolstring(lua, index, &length);  // a string: no conversion
      views[at] = std::string_view(text, length);
    }
    if (!bad_argument) {
      // The reply is the engine's (call_reply), so that converting it below may raise.
      try {
        engine.call_reply = host->call(views);
      } catch (const std::exception& failure) {
        engine.call_reply = error_reply(std::string("ERR locksim model: ") + failure.what());
        host->note_gap(engine.call_reply.str);
      }
    }
  }
  lua_pop(lua, argc);
  if (bad_argument) {
    push_error(lua, "Lua redis lib command arguments must be strings or integers");
    return raise_error ? lua_error(lua) : 1;
  }
  const bool error_reply_seen = is_error(engine.call_reply);
  push_reply(lua, engine.call_reply);
  engine.call_reply = Reply{};
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
    push_coded_error(lua, text);  // luaPushErrorBuff("-" + text), without a C++ string
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

}  // namespace

void set_up_state(lua_State* lua) {
  lua_atpanic(lua, on_panic);
  create_proxy_registry(lua);

  // luaLoadLibraries: base, table, string, math, debug (removed again below).
  load_library(lua, "", luaopen_base);
  lua_pushcfunction(lua, collect_garbage);  // the same function, watched (collect_garbage)
  lua_setglobal(lua, "collectgarbage");
  load_library(lua, LUA_TABLIBNAME, luaopen_table);
  load_library(lua, LUA_STRLIBNAME, luaopen_string);
  lua_getglobal(lua, LUA_STRLIBNAME);
  guard_pattern_functions(lua);
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

}  // namespace locksim::model_detail
