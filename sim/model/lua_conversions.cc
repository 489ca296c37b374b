// Conversions between Lua values and replies, after Redis 7.0.15's src/script_lua.c
// (redisProtocolToLuaType, luaReplyToRedisReply, luaPushErrorBuff), RESP2 only.
#include <cmath>
#include <lua.hpp>
#include <string>
#include <vector>

#include "sim/model/lua_internal.h"
#include "sim/model/numbers.h"
#include "sim/model/replies.h"

namespace locksim::model_detail {
namespace {

constexpr int kMaxReplyDepth = 3000;

// lua_number_to_integer: (long long)lua_tonumber(...) as x86-64 converts it: NaN and values
// outside int64 become INT64_MIN (what Redis replies for `return 1e20`).
std::int64_t lua_number_to_integer(lua_Number value) {
  if (std::isnan(value) || value >= 9223372036854775808.0 || value < -9223372036854775808.0) {
    return INT64_MIN;
  }
  return static_cast<std::int64_t>(value);
}

// push_error_parts: {err = "<code> <message>"}, the message trimmed of CR and LF at both ends
// (sdstrim(msg, "\r\n")). Views only, and the text joined by Lua: a failed allocation raises
// with nothing C++ to destroy.
void push_error_parts(lua_State* lua, std::string_view code, std::string_view message) {
  const std::size_t first = message.find_first_not_of("\r\n");
  message = first == std::string_view::npos
                ? std::string_view()
                : message.substr(first, message.find_last_not_of("\r\n") - first + 1);
  lua_newtable(lua);
  lua_pushlstring(lua, code.data(), code.size());
  lua_pushliteral(lua, " ");
  lua_pushlstring(lua, message.data(), message.size());
  lua_concat(lua, 3);
  lua_pushliteral(lua, "err");
  lua_insert(lua, -2);
  lua_settable(lua, -3);
}

}  // namespace

// push_coded_error: the error table of "<CODE> <message>" (the buffer after its '-'): a text
// without a space is all message, with the code ERR.
void push_coded_error(lua_State* lua, std::string_view text) {
  text = text.substr(0, text.find('\0'));
  const std::size_t space = text.find(' ');
  if (space == std::string_view::npos) {
    push_error_parts(lua, "ERR", text);
  } else {
    push_error_parts(lua, text.substr(0, space), text.substr(space + 1));
  }
}

// push_error_buffer: luaPushErrorBuff: an error table {err = "<CODE> <message>"}. A buffer
// starting with '-' carries its code as its first word; any other text gets the code ERR.
void push_error_buffer(lua_State* lua, std::string_view buffer) {
  const std::string_view text = buffer.substr(0, buffer.find('\0'));  // sds -> C string
  if (!text.empty() && text[0] == '-') {
    push_coded_error(lua, text.substr(1));
  } else {
    push_error_parts(lua, "ERR", text);
  }
}

void push_error(lua_State* lua, const char* text) { push_error_buffer(lua, text); }

// mark_ignore_stats: the field Redis adds to the error table of a command's error.
void mark_ignore_stats(lua_State* lua) {
  lua_pushstring(lua, "ignore_error_stats_update");
  lua_pushboolean(lua, 1);
  lua_settable(lua, -3);
}

// push_reply: redisProtocolToLuaType (RESP2): nil -> false, status -> {ok=...}, error ->
// {err=...}, integer -> number, bulk -> string, array -> table.
void push_reply(lua_State* lua, const Reply& reply) {
  if (!lua_checkstack(lua, 4))
    luaL_error(lua, "lua stack limit reach when parsing redis.call reply");
  switch (reply.type) {
    case Reply::Type::kNil:
      lua_pushboolean(lua, 0);
      break;
    case Reply::Type::kString:
      lua_pushlstring(lua, reply.str.data(), reply.str.size());
      break;
    case Reply::Type::kStatus:
      lua_newtable(lua);
      lua_pushstring(lua, "ok");
      lua_pushlstring(lua, reply.str.data(), reply.str.size());
      lua_settable(lua, -3);
      break;
    case Reply::Type::kInteger:
      lua_pushnumber(lua, static_cast<lua_Number>(reply.integer));
      break;
    case Reply::Type::kError:
      push_coded_error(lua, reply.str);  // luaPushErrorBuff("-" + the reply's text)
      mark_ignore_stats(lua);
      break;
    case Reply::Type::kArray:
      lua_newtable(lua);
      for (std::size_t i = 0; i < reply.elements.size(); ++i) {
        lua_pushnumber(lua, static_cast<lua_Number>(i + 1));
        push_reply(lua, reply.elements[i]);
        lua_settable(lua, -3);
      }
      break;
  }
}

std::string map_newlines(std::string text) {
  for (char& c : text) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return text;
}

// raw_string_field: t[name] without metamethods, as a string, if it is one (or a number).
bool raw_string_field(lua_State* lua, const char* name, std::string& out, bool numbers_too) {
  lua_pushstring(lua, name);
  lua_rawget(lua, -2);
  const int type = lua_type(lua, -1);
  const bool ok = type == LUA_TSTRING || (numbers_too && type == LUA_TNUMBER);
  if (ok) {
    std::size_t length = 0;
    const char* text = lua_tolstring(lua, -1, &length);
    out.assign(text, length);
  }
  lua_pop(lua, 1);
  return ok;
}

// to_reply: luaReplyToRedisReply (RESP2): converts and pops the value on top of the stack.
Reply to_reply(lua_State* lua, int depth) {
  if (depth > kMaxReplyDepth || !lua_checkstack(lua, 4)) {
    lua_pop(lua, 1);
    return error_reply("ERR reached lua stack limit");
  }
  Reply reply;
  switch (lua_type(lua, -1)) {
    case LUA_TSTRING: {
      std::size_t length = 0;
      const char* text = lua_tolstring(lua, -1, &length);
      reply = bulk_reply(std::string_view(text, length));
      break;
    }
    case LUA_TBOOLEAN:
      reply = lua_toboolean(lua, -1) ? integer_reply(1) : nil_reply();
      break;
    case LUA_TNUMBER:
      reply = integer_reply(lua_number_to_integer(lua_tonumber(lua, -1)));
      break;
    case LUA_TTABLE: {
      std::string text;
      if (raw_string_field(lua, "err", text, false)) {
        // addReplyErrorFormatEx("-%s"): the message up to a NUL, trailing CR/LF trimmed, the
        // others made spaces; the leading '-' means no ERR is added.
        lua_pushstring(lua, "err");
        lua_rawget(lua, -2);
        text = lua_tostring(lua, -1);
        lua_pop(lua, 1);
        while (!text.empty() && (text.back() == '\r' || text.back() == '\n')) text.pop_back();
        reply = error_reply(map_newlines(text));
        break;
      }
      if (raw_string_field(lua, "ok", text, false)) {
        reply = status_reply(map_newlines(text.substr(0, text.find('\0'))));  // sdsnew: a C string
        break;
      }
      lua_pushstring(lua, "double");
      lua_rawget(lua, -2);
      if (lua_type(lua, -1) == LUA_TNUMBER) {
        reply = bulk_reply(format_score(lua_tonumber(lua, -1)));
        lua_pop(lua, 1);
        break;
      }
      lua_pop(lua, 1);
      if (raw_string_field(lua, "big_number", text, false)) {
        reply = bulk_reply(map_newlines(text));
        break;
      }
      lua_pushstring(lua, "verbatim_string");
      lua_rawget(lua, -2);
      if (lua_type(lua, -1) == LUA_TTABLE) {
        std::string format;
        if (raw_string_field(lua, "format", format, false) &&
            raw_string_field(lua, "string", text, false)) {
          lua_pop(lua, 1);
          reply = bulk_reply(text);
          break;
        }
      }
      lua_pop(lua, 1);
      lua_pushstring(lua, "map");
      lua_rawget(lua, -2);
      if (lua_type(lua, -1) == LUA_TTABLE) {
        // RESP2: a flat array of key, value, key, value... in the table's traversal order.
        std::vector<Reply> elements;
        lua_pushnil(lua);
        while (lua_next(lua, -2) != 0) {
          lua_pushvalue(lua, -2);
          elements.push_back(to_reply(lua, depth + 1));  // the key
          elements.push_back(to_reply(lua, depth + 1));  // the value
        }
        lua_pop(lua, 1);
        reply = array_reply(std::move(elements));
        break;
      }
      lua_pop(lua, 1);
      lua_pushstring(lua, "set");
      lua_rawget(lua, -2);
      if (lua_type(lua, -1) == LUA_TTABLE) {
        std::vector<Reply> elements;
        lua_pushnil(lua);
        while (lua_next(lua, -2) != 0) {
          lua_pop(lua, 1);
          lua_pushvalue(lua, -1);
          elements.push_back(to_reply(lua, depth + 1));
        }
        lua_pop(lua, 1);
        reply = array_reply(std::move(elements));
        break;
      }
      lua_pop(lua, 1);
      // An array: t[1], t[2], ... up to the first nil.
      std::vector<Reply> elements;
      for (int index = 1;; ++index) {
        lua_pushnumber(lua, index);
        lua_rawget(lua, -2);
        if (lua_type(lua, -1) == LUA_TNIL) {
          lua_pop(lua, 1);
          break;
        }
        elements.push_back(to_reply(lua, depth + 1));
      }
      reply = array_reply(std::move(elements));
      break;
    }
    default:
      reply = nil_reply();
      break;
  }
  lua_pop(lua, 1);
  return reply;
}

}  // namespace locksim::model_detail
