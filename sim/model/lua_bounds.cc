// Bounds on the work a script does inside Lua's C functions, where the instruction count hook
// never fires. Two kinds of C work can run for ever: allocation-heavy calls in a loop
// (string.rep, table.concat, gsub: bounded by the engine's allocation budget, lua_engine.cc)
// and backtracking pattern matching, which allocates nothing and runs no Lua instruction
// (string.find(string.rep('a', 40), '(.-)(.-)(.-)(.-)(.-)(.-)(.-)(.-)b') runs for hours).
// Lua's matcher cannot be interrupted, so a guard in the string library's place looks at the
// pattern before the matcher starts: one whose worst case on this subject exceeds
// kPatternStepsMax steps is refused with a gap error (noted on the server, so the run could not
// run) instead of hanging the simulator. The functions themselves are Lua's, untouched (their
// error texts included): a guard calls them as they are, in its own activation, so an error names
// the function as the script called it. (A call hook did this check before; it ran at every call
// a script made, redis.call included, and a lua_getinfo each time.)
#include <lua.hpp>

#include <cstddef>
#include <cstdio>
#include <cstring>

#include "sim/model/lua_internal.h"

namespace locksim::model_detail {
namespace {

// kPatternStepsMax: a few seconds of Lua's matcher at worst; a lock's patterns (a few items, on
// short keys and tokens) are far below it.
constexpr double kPatternStepsMax = 1e9;

// class_end: the index just past the single pattern item at `p` (lstrlib.c classEnd), or the
// pattern's size if it is malformed (the real function then raises the error).
std::size_t class_end(const char* pattern, std::size_t size, std::size_t p) {
  if (p >= size) return size;
  const char c = pattern[p++];
  if (c == '%') return p < size ? p + 1 : size;
  if (c != '[') return p;
  if (p < size && pattern[p] == '^') ++p;
  do {  // look for the ']' that closes the set; the first character may be ']'
    if (p >= size) return size;
    const char in = pattern[p++];
    if (in == '%' && p < size) ++p;
  } while (p >= size || pattern[p] != ']');
  return p + 1;
}

// worst_case_steps: an upper bound on the steps Lua's matcher may take for `pattern` on a
// subject of `length` bytes: every start position (one if anchored) times the ways its k
// variable-length items ('*', '+', '-', '?') can share the subject, at most C(length + k, k),
// times `length` + 1 for each %b and back-reference (each scans up to the subject's end).
double worst_case_steps(const char* pattern, std::size_t size, std::size_t length,
                        bool may_anchor) {
  const double n = static_cast<double>(length);
  std::size_t p = 0;
  double steps = n + 1;
  if (may_anchor && size > 0 && pattern[0] == '^') {
    steps = 1;
    p = 1;
  }
  double variable_items = 0;
  while (p < size && steps <= kPatternStepsMax) {
    const char c = pattern[p];
    if (c == '(' || c == ')') {
      ++p;
      continue;
    }
    if (c == '%' && p + 1 < size && pattern[p + 1] == 'b') {  // %bxy: a scan to the match
      steps *= n + 1;
      p += 4;
      continue;
    }
    if (c == '%' && p + 1 < size && pattern[p + 1] == 'f') {  // %f[set]: one test
      p = class_end(pattern, size, p + 2);
      continue;
    }
    if (c == '%' && p + 1 < size && pattern[p + 1] >= '0' && pattern[p + 1] <= '9') {
      steps *= n + 1;  // a back-reference compares up to the capture's length
      p += 2;
      continue;
    }
    p = class_end(pattern, size, p);
    if (p < size && (pattern[p] == '*' || pattern[p] == '+' || pattern[p] == '-' ||
                     pattern[p] == '?')) {
      ++variable_items;
      steps *= (n + variable_items) / variable_items;  // C(n + k, k), one factor an item
      ++p;
    }
  }
  return steps;
}

// The C functions of string.find, match, gmatch and gsub, as the string library registered them
// (the same in every state; a state is used only on the thread that made it).
struct PatternFunction {
  lua_CFunction function = nullptr;
  const char* name = "";
  bool anchors = true;  // Lua 5.1's gmatch reads '^' as a plain character
};
thread_local PatternFunction pattern_functions[4];

// pattern_call_too_long: whether the call of `called` on the stack's arguments (from index 1) may
// backtrack past the model's bound on its subject; then the gap error's text is in `message`.
bool pattern_call_too_long(lua_State* lua, const PatternFunction& called, char* message,
                           std::size_t size) {
  const auto text = [lua](int index, std::size_t& length) -> const char* {
    const int type = lua_type(lua, index);
    return type == LUA_TSTRING || type == LUA_TNUMBER ? lua_tolstring(lua, index, &length)
                                                      : nullptr;
  };
  std::size_t length = 0;
  std::size_t pattern_size = 0;
  const char* subject = text(1, length);
  const char* pattern = text(2, pattern_size);
  if (subject == nullptr || pattern == nullptr) return false;  // the function raises its error
  // string.find(s, p, init, true) matches plainly, in linear time.
  if (&called == &pattern_functions[0] && lua_toboolean(lua, 4) != 0) return false;
  if (worst_case_steps(pattern, pattern_size, length, called.anchors) <= kPatternStepsMax) {
    return false;
  }
  std::snprintf(message, size,
                "locksim model: string.%s with a pattern that may backtrack more than 10^9 steps "
                "on a %zu-byte string is not modelled (Lua's matcher cannot be stopped)",
                called.name, length);
  return true;
}

// guarded: string.<name> in the library's place: refuses a call whose pattern may backtrack for
// ever (the error is raised at the script's call, as the function's own errors are), and
// otherwise runs the library's function in this activation, on the same arguments.
template <std::size_t kIndex>
int guarded(lua_State* lua) {
  const PatternFunction& called = pattern_functions[kIndex];
  char refused[200];
  if (pattern_call_too_long(lua, called, refused, sizeof(refused))) {
    note_script_gap(lua, refused);
    return luaL_error(lua, "%s", refused);
  }
  return called.function(lua);
}

}  // namespace

void guard_pattern_functions(lua_State* lua) {
  static constexpr const char* kNames[] = {"find", "match", "gmatch", "gsub"};
  static constexpr lua_CFunction kGuards[] = {guarded<0>, guarded<1>, guarded<2>, guarded<3>};
  for (std::size_t i = 0; i < 4; ++i) {
    lua_getfield(lua, -1, kNames[i]);
    pattern_functions[i] = {lua_tocfunction(lua, -1), kNames[i], i != 2};
    lua_pop(lua, 1);
    lua_pushcfunction(lua, kGuards[i]);
    lua_setfield(lua, -2, kNames[i]);
  }
}

}  // namespace locksim::model_detail
