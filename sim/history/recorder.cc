#include "sim/history/recorder.h"

#include <sys/mman.h>

#include <memory>
#include <new>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/core/assert.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

namespace locksim {

namespace {

// addressable: tells AddressSanitizer that a chunk's memory, fresh from mmap or from the pool, is
// all ours. mmap can hand back the range of a thread stack that has ended, whose shadow still
// holds that stack's red zones, and ASan (which does not see mmap) would then report the first
// event written there ("unknown-crash").
void addressable([[maybe_unused]] void* memory, [[maybe_unused]] std::size_t bytes) {
#if defined(__SANITIZE_ADDRESS__)
  ASAN_UNPOISON_MEMORY_REGION(memory, bytes);
#endif
}

// ChunkPool: this thread's freed chunks, kept for its next ones (at most kPooled).
constexpr std::size_t kPooled = 16;
struct ChunkPool {
  std::vector<std::pair<void*, std::size_t>> free;
  ~ChunkPool() {
    for (const auto& [memory, bytes] : free) ::munmap(memory, bytes);
  }
};
thread_local ChunkPool chunk_pool;

}  // namespace

EventChunk::EventChunk(std::size_t capacity) : capacity_(capacity) {
  mapped_ = capacity * sizeof(Event);
  for (auto it = chunk_pool.free.begin(); it != chunk_pool.free.end(); ++it) {
    if (it->second != mapped_) continue;
    data_ = static_cast<Event*>(it->first);
    chunk_pool.free.erase(it);
    addressable(data_, mapped_);
    return;
  }
  void* memory = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) throw std::bad_alloc();
  addressable(memory, mapped_);
  data_ = static_cast<Event*>(memory);
}

EventChunk::~EventChunk() {
  std::destroy_n(data_, size_);
  if (chunk_pool.free.size() < kPooled) {
    chunk_pool.free.emplace_back(data_, mapped_);
  } else {
    ::munmap(data_, mapped_);
  }
}

Event& EventChunk::push(const Event& event) {
  LOCKSIM_ASSERT(size_ < capacity_);
  Event* slot = new (data_ + size_) Event(event);
  ++size_;
  return *slot;
}

ClientLog::ClientLog(const RunClock& clock, std::int32_t client) : clock_(clock), client_(client) {
  keys_.reserve(2);  // "no key" and the lock's key, in one allocation: most clients use one key
  keys_.emplace_back();
}

KeyId ClientLog::key_id(std::string_view key) {
  if (key.empty()) return 0;
  if (keys_[last_key_] == key) return last_key_;
  for (std::size_t i = 1; i < keys_.size(); ++i) {
    if (keys_[i] == key) return last_key_ = static_cast<KeyId>(i);
  }
  keys_.emplace_back(key);
  return last_key_ = static_cast<KeyId>(keys_.size() - 1);
}

Event& ClientLog::record(EventType type, Op f, std::string_view key) {
  if (chunks_.empty() || chunks_.back()->full()) {
    chunks_.push_back(std::make_unique<EventChunk>(kChunkEvents));
  }
  Event& event = chunks_.back()->push(Event::make(type, f));
  event.time_ns = clock_.now_ns();
  event.client = client_;
  event.key = key_id(key);
  ++size_;
  if (type == EventType::kInvoke && on_invoke_) std::exchange(on_invoke_, {})();
  return event;
}

Event& ClientLog::append(const History& from, const Event& event) {
  LOCKSIM_ASSERT(size_ == 0 || event.time_ns >= last().time_ns);
  if (chunks_.empty() || chunks_.back()->full()) {
    chunks_.push_back(std::make_unique<EventChunk>(kChunkEvents));
  }
  Event& copy = chunks_.back()->push(event);
  copy.client = client_;
  copy.key = key_id(from.keys.at(event.key));
  for_each_string(copy, [&](StringId& id) { id = intern(from.str(id)); });
  ++size_;
  if (copy.type == EventType::kInvoke && on_invoke_) std::exchange(on_invoke_, {})();
  return copy;
}

StringId ClientLog::intern(std::string_view text) {
  if (text.empty()) return 0;
  if (last_string_ != 0 && strings_.get(last_string_) == text) return last_string_;
  return last_string_ = strings_.add(text);
}

Event& ClientLog::last() {
  LOCKSIM_ASSERT(size_ > 0);
  return chunks_.back()->back();
}

void ClientLog::clear() {
  chunks_.clear();
  size_ = 0;
  strings_ = StringTable();
  last_string_ = 0;
}

std::size_t ClientLog::bytes() const {
  std::size_t total = strings_.bytes();
  for (const auto& chunk : chunks_) total += chunk ? chunk->bytes() : 0;
  return total;
}

Recorder::Recorder(const RunClock& clock, std::vector<std::string> client_names)
    : clock_(clock), client_names_(std::move(client_names)) {
  for (std::size_t i = 0; i < client_names_.size(); ++i) {
    logs_.push_back(std::make_unique<ClientLog>(clock_, static_cast<std::int32_t>(i)));
  }
}

ClientLog& Recorder::add_log(std::size_t client) {
  LOCKSIM_ASSERT(client < client_names_.size());
  logs_.push_back(std::make_unique<ClientLog>(clock_, static_cast<std::int32_t>(client)));
  return *logs_.back();
}

std::size_t Recorder::events() const {
  std::size_t total = 0;
  for (const auto& log : logs_) total += log->size();
  return total;
}

History Recorder::merge() && {
  History history;
  history.clients = std::move(client_names_);
  history.events.reserve(events());

  // Per log: where its local key and string ids land in the History's tables, in two tables
  // shared by the logs (one allocation each, not two per log). Strings are copied lazily, the
  // first time an event refers to them, so only what the history uses is kept.
  struct Cursor {
    ClientLog* log;
    std::size_t chunk = 0;
    std::size_t offset = 0;
    std::size_t keys = 0;     // where its key ids start in key_map
    std::size_t strings = 0;  // where its string ids start in string_map
  };
  std::vector<Cursor> cursors;
  cursors.reserve(logs_.size());
  std::size_t key_count = 0;
  std::size_t string_count = 0;
  for (const auto& log : logs_) {
    cursors.push_back(Cursor{log.get(), 0, 0, key_count, string_count});
    key_count += log->keys_.size();
    string_count += log->strings_.size();
  }
  std::vector<KeyId> key_map;
  key_map.reserve(key_count);
  std::vector<StringId> string_map(string_count, 0);  // 0: not copied yet
  std::unordered_map<std::string, KeyId> key_ids;
  for (const auto& log : logs_) {
    for (const std::string& key : log->keys_) {
      if (key.empty()) {
        key_map.push_back(0);
        continue;
      }
      const auto [it, inserted] = key_ids.try_emplace(key, static_cast<KeyId>(history.keys.size()));
      if (inserted) history.keys.push_back(key);
      key_map.push_back(it->second);
    }
  }
  auto move_string = [&history, &string_map](const Cursor& cursor, StringId& id) {
    if (id == 0) return;
    StringId& global = string_map[cursor.strings + id];
    if (global == 0) global = history.strings.add(cursor.log->strings_.get(id));
    id = global;
  };

  // Each log's next event's time, while it has one: the next event of all is the earliest, ties
  // going to the lower log, and a log's own events keep their order, as a stable sort of the
  // concatenated logs would. A run has a handful of logs, so the earliest is found by a scan (a
  // heap's push and pop cost more).
  std::vector<Nanos> heads(cursors.size(), 0);
  std::vector<char> live(cursors.size(), 0);
  auto set_head = [&](std::size_t i) {
    const Cursor& cursor = cursors[i];
    live[i] = cursor.chunk < cursor.log->chunks_.size() ? 1 : 0;
    if (live[i] != 0) heads[i] = (*cursor.log->chunks_[cursor.chunk])[cursor.offset].time_ns;
  };
  for (std::size_t i = 0; i < cursors.size(); ++i) set_head(i);
  while (true) {
    std::size_t i = cursors.size();
    for (std::size_t j = 0; j < cursors.size(); ++j) {
      if (live[j] != 0 && (i == cursors.size() || heads[j] < heads[i])) i = j;
    }
    if (i == cursors.size()) break;
    Cursor& cursor = cursors[i];
    EventChunk& chunk = *cursor.log->chunks_[cursor.chunk];
    Event& event = history.events.emplace_back(std::move(chunk[cursor.offset]));
    event.key = key_map[cursor.keys + event.key];
    for_each_string(event, [&](StringId& id) { move_string(cursor, id); });
    if (++cursor.offset == chunk.size()) {
      cursor.log->chunks_[cursor.chunk].reset();  // read: give its memory back now
      ++cursor.chunk;
      cursor.offset = 0;
    }
    set_head(i);
  }
  for (auto& log : logs_) log->strings_ = StringTable();
  return history;
}

}  // namespace locksim
