// lua_engine.cc: LuaScripting's engine, after Redis 7.0.15's src/eval.c: the script cache that
// EVAL, EVALSHA and SCRIPT LOAD share (a script's SHA1, its shebang flags, its compiled
// function), running a cached script with KEYS and ARGV, and the budgets that stop a script
// Redis would keep running (answering BUSY until SCRIPT KILL): instructions, counted by the
// hook, and memory and bytes allocated, kept by the state's allocator. The `redis` table a
// script calls is lua_api.cc; where the engine's state comes from, lua_pool.cc.
//
// Lua 5.1 raises errors with longjmp, which skips C++ destructors: nothing C++ is alive across
// a call that may raise.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <lua.hpp>
#include <span>
#include <string>
#include <vector>

#include "sim/core/assert.h"
#include "sim/core/clock.h"
#include "sim/core/sha1.h"
#include "sim/model/command.h"
#include "sim/model/lua_internal.h"
#include "sim/model/lua_scripting.h"
#include "sim/model/replies.h"

namespace locksim::model_detail {

// Registry slots that every script run reads, keyed by the address of a tag rather than by a
// name (a name is hashed and interned at each lookup): the real globals, the error handler (both
// filled by set_up_state), and the KEYS and ARGV tables (push_reused_array).
const char kGlobalsSlot = 0;
const char kErrorHandlerSlot = 0;

namespace {

// kHookEvery: instructions between two count-hook calls (Redis's is 100,000): the budgets and the
// real-time limit are checked there, and a loop around a slow C function (string.rep of 100 kB)
// runs few instructions a second: every 100,000 was once in 5 s. A lock's script runs a few
// hundred and never reaches it.
constexpr int kHookEvery = 1000;

const char kKeysSlot = 0;
const char kArgvSlot = 0;

}  // namespace

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

// engine_of: the engine whose state this is: its allocator's argument (no lookup: redis.call
// asks at every call).
LuaScripting& engine_of(lua_State* lua) {
  void* engine = nullptr;
  const lua_Alloc allocator = lua_getallocf(lua, &engine);
  LOCKSIM_ASSERT(allocator == engine_allocate && engine != nullptr);
  return *static_cast<LuaScripting*>(engine);
}

// engine_allocate: the state's allocator, with the memory limit (Lua reports "not enough memory").
// The limit holds while a script runs: outside a script (setting up, compiling, converting a
// result) an allocation failure would be an error nothing protects.
void* engine_allocate(void* user, void* block, std::size_t old_size, std::size_t new_size) {
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

namespace {

// kill_message: the error of a script the model stopped (its budget of instructions, or of
// bytes its C functions allocated, is spent).
void kill_message(const LuaScripting& engine, char* message, std::size_t size) {
  if (engine.over_time) {
    std::snprintf(message, size,
                  "locksim model: script killed after it ran %lld ms of real time (Redis would "
                  "keep running it, answering BUSY, until SCRIPT KILL)",
                  static_cast<long long>(engine.time_limit_ms()));
  } else if (engine.over_allocation_budget) {
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
// budget it fires on every line, so a pcall cannot swallow the error for good. (It watches no
// call: the string library's pattern functions guard themselves, guard_pattern_functions.)
void script_hook(lua_State* lua, lua_Debug* event) {
  LuaScripting& engine = engine_of(lua);
  if (event->event == LUA_HOOKCOUNT) ++engine.hook_calls;
  const bool over_instructions = engine.instruction_budget() > 0 &&
                                 engine.hook_calls * kHookEvery > engine.instruction_budget();
  if (engine.time_limit_ms() > 0 &&
      real_clock().now_ns() - engine.started_ns > ms_to_ns(engine.time_limit_ms())) {
    engine.over_time = true;
  }
  if (!over_instructions && !engine.over_allocation_budget && !engine.over_time) return;
  lua_sethook(lua, script_hook, LUA_MASKLINE, 0);
  char message[200];
  kill_message(engine, message, sizeof(message));
  note_script_gap(lua, message);
  push_error(lua, message);
  lua_error(lua);
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
// push_reused_array: the registry's table at `slot` (made if missing) holding `values` as 1..n;
// true if it was made now.
bool push_reused_array(lua_State* lua, const char& slot, std::span<const std::string_view> values) {
  push_slot(lua, slot);
  if (!lua_istable(lua, -1)) {
    lua_pop(lua, 1);
    push_array(lua, values);
    lua_pushvalue(lua, -1);
    set_slot(lua, slot);
    return true;
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
  return false;
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
      } else if (flag == "no-cluster") {
        shebang.flags.no_cluster = true;
      } else if (flag == "allow-cross-slot-keys") {
        shebang.flags.allow_cross_slot = true;
      } else if (flag != "allow-stale") {
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

LuaScripting::LuaScripting(ScriptLimits limits, Lrand48& random)
    : limits_(limits), random_(&random) {}

void LuaScripting::stop_soon() {
  if (lua_ != nullptr) lua_sethook(lua_, script_hook, LUA_MASKCOUNT, 1);
}

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
  // The real globals hold the tables the last script had, unless one was dropped and made anew
  // (nothing else writes the real globals: scripts see a read-only proxy of them): only a new
  // table is set there.
  if (push_reused_array(lua, kKeysSlot, keys)) {
    lua_setfield(lua, base + 1, "KEYS");
  } else {
    lua_pop(lua, 1);
  }
  if (push_reused_array(lua, kArgvSlot, args)) {
    lua_setfield(lua, base + 1, "ARGV");
  } else {
    lua_pop(lua, 1);
  }

  host_ = &host;
  hook_calls = 0;
  allocated_bytes = 0;
  over_allocation_budget = false;
  over_time = false;
  if (time_limit_ms() > 0) started_ns = real_clock().now_ns();
  lua_sethook(lua, script_hook, LUA_MASKCOUNT, kHookEvery);
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
