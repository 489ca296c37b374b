// lua_pool.cc: where an engine's Lua state comes from: the thread's pool of states set up
// before, or a new one (set_up_state, lua_api.cc), and where it goes when the engine ends.
#include <cstdlib>
#include <lua.hpp>
#include <vector>

#include "sim/core/assert.h"
#include "sim/model/lua_internal.h"
#include "sim/model/lua_scripting.h"

namespace locksim::model_detail {
namespace {

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

// A state handed back holding more than this is collected first; one that still holds more than
// kPoolAtMostBytes is closed rather than pooled.
constexpr std::size_t kCollectAboveBytes = std::size_t{4} << 20;
constexpr std::size_t kPoolAtMostBytes = std::size_t{4} << 20;

}  // namespace

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
  // Garbage a large script left would count against the next owner's memory limit, and Lua 5.1
  // gives up with "not enough memory" before it collects: a state that holds much is collected
  // now, and one that still holds much after that is not pooled (a lock's scripts leave a few
  // kilobytes; setting a state up leaves about 100 KB).
  if (memory_used > kCollectAboveBytes) lua_gc(lua_, LUA_GCCOLLECT, 0);
  lua_setallocf(lua_, pooled_allocate, nullptr);
  if (pool_gone || memory_used > kPoolAtMostBytes) {
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
    lua_setallocf(lua_, engine_allocate, this);
  } else {
    create_state();
  }
  return lua_;
}

std::uint64_t LuaScripting::states_set_up() { return states_set_up_here; }

void LuaScripting::create_state() {
  ++states_set_up_here;
  lua_ = lua_newstate(engine_allocate, this);
  LOCKSIM_ASSERT(lua_ != nullptr);
  set_up_state(lua_);
}

}  // namespace locksim::model_detail
