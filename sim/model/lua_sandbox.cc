// Read-only tables for the model's scripts. Redis 7 marks the globals and every table reachable
// from them read-only inside its own Lua; stock Lua 5.1 cannot, so each such table is replaced
// by an empty proxy whose metatable reads through to the real table and refuses writes, and the
// functions that bypass metatables (next, pairs, rawget, rawset) see through proxies.
#include <lua.hpp>

#include "sim/model/lua_internal.h"

namespace locksim::model_detail {
namespace {

// kProxiesKey: registry table proxy -> real table.
constexpr const char* kProxiesKey = "locksim.proxies";

// push_real: the real table behind the proxy at `index`, pushed; or the value itself if it is not
// a proxy.
void push_real(lua_State* lua, int index) {
  index = index < 0 ? lua_gettop(lua) + index + 1 : index;
  lua_getfield(lua, LUA_REGISTRYINDEX, kProxiesKey);
  lua_pushvalue(lua, index);
  lua_rawget(lua, -2);
  lua_remove(lua, -2);
  if (lua_isnil(lua, -1)) {
    lua_pop(lua, 1);
    lua_pushvalue(lua, index);
  }
}

// missing_global: the real globals' __index (reached through the proxy's, which is the real table
// itself: a name that exists is read without a call): a name they lack is an error, as in Redis.
int missing_global(lua_State* lua) {  // (real globals, key)
  if (!lua_isstring(lua, 2)) {
    return luaL_error(lua, "Second argument to luaProtectedTableError must be a string or number");
  }
  return luaL_error(lua, "Script attempted to access nonexistent global variable '%s'",
                    lua_tostring(lua, 2));
}

int proxy_index_library(lua_State* lua) {
  lua_pushvalue(lua, 2);
  lua_rawget(lua, lua_upvalueindex(1));
  return 1;
}

int proxy_newindex(lua_State* lua) { return luaL_error(lua, "Attempt to modify a readonly table"); }

int proxy_length(lua_State* lua) {
  lua_pushinteger(lua, static_cast<lua_Integer>(lua_objlen(lua, lua_upvalueindex(1))));
  return 1;
}

int see_through_next(lua_State* lua) {
  luaL_checktype(lua, 1, LUA_TTABLE);
  lua_settop(lua, 2);
  push_real(lua, 1);
  lua_replace(lua, 1);
  if (lua_next(lua, 1) != 0) return 2;
  lua_pushnil(lua);
  return 1;
}

int see_through_pairs(lua_State* lua) {
  luaL_checktype(lua, 1, LUA_TTABLE);
  lua_pushvalue(lua, lua_upvalueindex(1));  // see_through_next
  lua_pushvalue(lua, 1);
  lua_pushnil(lua);
  return 3;
}

int see_through_rawget(lua_State* lua) {
  luaL_checktype(lua, 1, LUA_TTABLE);
  luaL_checkany(lua, 2);
  lua_settop(lua, 2);
  push_real(lua, 1);
  lua_pushvalue(lua, 2);
  lua_rawget(lua, -2);
  return 1;
}

int see_through_rawset(lua_State* lua) {
  luaL_checktype(lua, 1, LUA_TTABLE);
  luaL_checkany(lua, 2);
  luaL_checkany(lua, 3);
  push_real(lua, 1);
  const bool proxy = !lua_rawequal(lua, -1, 1);
  lua_pop(lua, 1);
  if (proxy) {
    // As Redis raises it from inside rawset: no position prefix.
    lua_pushstring(lua, "Attempt to modify a readonly table");
    return lua_error(lua);
  }
  lua_settop(lua, 3);
  lua_rawset(lua, 1);
  return 1;
}

}  // namespace

void create_proxy_registry(lua_State* lua) {
  lua_newtable(lua);
  lua_setfield(lua, LUA_REGISTRYINDEX, kProxiesKey);
}

void install_see_through_functions(lua_State* lua) {
  lua_pushcfunction(lua, see_through_next);
  lua_pushvalue(lua, -1);
  lua_setglobal(lua, "next");
  lua_pushcclosure(lua, see_through_pairs, 1);
  lua_setglobal(lua, "pairs");
  lua_pushcfunction(lua, see_through_rawget);
  lua_setglobal(lua, "rawget");
  lua_pushcfunction(lua, see_through_rawset);
  lua_setglobal(lua, "rawset");
}

// register_stand_in: the table on top of the stack counts as a proxy of an empty table (rawset
// refuses it, rawget and next see nothing in it).
void register_stand_in(lua_State* lua) {
  lua_getfield(lua, LUA_REGISTRYINDEX, kProxiesKey);
  lua_pushvalue(lua, -2);
  lua_newtable(lua);
  lua_rawset(lua, -3);
  lua_pop(lua, 1);
}

// make_proxy: replaces the table on top of the stack by a read-only proxy of it.
void make_proxy(lua_State* lua, bool globals) {
  const int real = lua_gettop(lua);
  lua_newtable(lua);  // the proxy
  const int proxy = lua_gettop(lua);
  lua_newtable(lua);  // its metatable
  // Reads: the real table as __index, so that the VM reads through it without calling anything
  // (a script reads redis, redis.call, KEYS and ARGV a few times each). It must have no metatable
  // of its own to be read raw; the globals get one whose __index refuses a name they lack.
  if (globals) {
    lua_newtable(lua);
    lua_pushcfunction(lua, missing_global);
    lua_setfield(lua, -2, "__index");
    lua_setmetatable(lua, real);
    lua_pushvalue(lua, real);
  } else if (lua_getmetatable(lua, real) == 0) {
    lua_pushvalue(lua, real);
  } else {
    lua_pop(lua, 1);  // a table with a metatable of its own: read raw through a function
    lua_pushvalue(lua, real);
    lua_pushcclosure(lua, proxy_index_library, 1);
  }
  lua_setfield(lua, -2, "__index");
  lua_pushcfunction(lua, proxy_newindex);
  lua_setfield(lua, -2, "__newindex");
  lua_pushvalue(lua, real);
  lua_pushcclosure(lua, proxy_length, 1);
  lua_setfield(lua, -2, "__len");
  lua_pushboolean(lua, 0);
  lua_setfield(lua, -2, "__metatable");  // a script cannot take the protection off
  lua_setmetatable(lua, proxy);
  lua_getfield(lua, LUA_REGISTRYINDEX, kProxiesKey);
  lua_pushvalue(lua, proxy);
  lua_pushvalue(lua, real);
  lua_rawset(lua, -3);
  lua_pop(lua, 1);
  lua_replace(lua, real);  // the proxy where the real table was
}

}  // namespace locksim::model_detail
