// lua_internal.h: what the files of the model's script engine share: lua_engine.cc, the engine
// (script cache, running a script, its budgets); lua_api.cc, Redis's Lua API (the `redis`
// table) and the setting up of a state; lua_pool.cc, the thread's pool of states;
// lua_conversions.cc, Lua values <-> replies; lua_sandbox.cc, the read-only tables;
// lua_bounds.cc, the bound on pattern matching.
// Internal to sim/model. Every function here may raise a Lua error (longjmp): call them with
// no C++ object alive that needs its destructor, or inside a protected call.
//
// The rule: no C++ object owning memory (std::string, std::vector, Reply...) may be alive across
// a Lua call that can raise. Lua 5.1 raises with longjmp, which skips destructors: the object
// leaks. Inside a script nearly every call that pushes can raise, if only because the allocator
// refuses growth past the memory limit or the script's allocation budget. So a C function or
// hook does its C++ work in an inner block that ends before it calls Lua, pushes text from views
// (lua_pushlstring) or fixed buffers, and keeps what must outlive a Lua call where a longjmp
// cannot lose it (LuaScripting::call_reply).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "sim/redis/connection.h"

struct lua_State;
struct lua_Debug;

namespace locksim::model_detail {

class LuaScripting;

// The engine and its state (lua_engine.cc).

// engine_allocate: the allocator of a state an engine owns (its argument: the engine), which
// keeps the memory limit and the running script's allocation budget.
void* engine_allocate(void* user, void* block, std::size_t old_size, std::size_t new_size);
// engine_of: the engine whose state this is (the argument of engine_allocate).
LuaScripting& engine_of(lua_State* lua);
// kGlobalsSlot, kErrorHandlerSlot: the registry slots of the real globals and of the error
// handler, keyed by their addresses; set_up_state fills them, every script run reads them.
extern const char kGlobalsSlot;
extern const char kErrorHandlerSlot;
// push_slot: the registry's value at `slot`, pushed.
void push_slot(lua_State* lua, const char& slot);
// set_slot: the value on top of the stack into `slot` (popped).
void set_slot(lua_State* lua, const char& slot);

// set_up_state: makes a new state what Redis's own is before its first script (scriptingInit):
// its libraries, the `redis` table, the error handler and read-only globals (lua_api.cc).
void set_up_state(lua_State* lua);

// Lua values and replies (lua_conversions.cc).

// push_error_buffer: luaPushErrorBuff: pushes an error table {err = "<CODE> <message>"}. A
// buffer starting with '-' carries its code as its first word; any other text gets ERR.
void push_error_buffer(lua_State* lua, std::string_view buffer);
// push_coded_error: push_error_buffer of '-' followed by `text` (a reply's error text, whose
// first word is its code), without building that buffer.
void push_coded_error(lua_State* lua, std::string_view text);
// push_error: luaPushError: push_error_buffer of a plain message.
void push_error(lua_State* lua, const char* text);
// mark_ignore_stats: adds the field Redis adds to the error table of a command's error.
void mark_ignore_stats(lua_State* lua);
// push_reply: redisProtocolToLuaType (RESP2): nil -> false, status -> {ok=...}, error ->
// {err=...} (marked), integer -> number, bulk -> string, array -> table.
void push_reply(lua_State* lua, const Reply& reply);
// to_reply: luaReplyToRedisReply (RESP2): converts and pops the value on top of the stack.
Reply to_reply(lua_State* lua, int depth);
// raw_string_field: t[name] of the table on top, without metamethods, if it is a string (or,
// with numbers_too, a number).
bool raw_string_field(lua_State* lua, const char* name, std::string& out, bool numbers_too);
// map_newlines: CR and LF made spaces, as Redis does to an error or status text.
std::string map_newlines(std::string text);

// note_script_gap: tells the running script's server that the model lacks what the script used
// (`message` holds kModelGap), even if the script then catches the error (lua_api.cc).
void note_script_gap(lua_State* lua, const char* message);

// guard_pattern_functions: string.find, match, gmatch and gsub of the string library on top of
// the stack replaced by guards that refuse, with a gap error, a call whose pattern may backtrack
// past the model's bound on its subject (Lua's matcher runs no instruction and allocates nothing,
// so nothing else would stop it), and otherwise run the library's own function (lua_bounds.cc;
// once per state, before the library is proxied).
void guard_pattern_functions(lua_State* lua);

// create_proxy_registry: the registry table proxy -> real table; first thing in a new state.
void create_proxy_registry(lua_State* lua);
// install_see_through_functions: the globals next, pairs, rawget and rawset, made to see
// through proxies (rawset refuses to write through one).
void install_see_through_functions(lua_State* lua);
// register_stand_in: the table on top of the stack counts as a proxy of an empty table (rawset
// refuses it, rawget and next see nothing in it): the stand-ins of libraries not modelled.
void register_stand_in(lua_State* lua);
// make_proxy: replaces the table on top of the stack by a read-only proxy of it; `globals`: a
// missing name is an error ("Script attempted to access nonexistent global variable").
void make_proxy(lua_State* lua, bool globals);

}  // namespace locksim::model_detail
