// recorder.h: Recorder and ClientLog, the cheap, contention-free way events are recorded.
//
// Each client thread owns one ClientLog (chunks of events only that thread appends to, with its
// own key and string tables), so recording never takes a lock and never makes clients wait on
// each other. Chunks never move, so a log grows without the copy and the double-size peak of a
// growing vector. After every client thread has been joined, Recorder::merge k-way merges the logs
// by time into one History, freeing each chunk as soon as it has been read, so the merge needs
// little memory beyond the merged history itself.
//
//   Recorder recorder(clock, {"A", "B"});
//   ClientLog& log = recorder.log(0);               // only client A's thread uses this
//   Event& e = log.record(EventType::kOk, Op::kAcquire, "lock");
//   e.token = log.intern(token);
//   History history = std::move(recorder).merge();  // after joining the threads
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/clock.h"
#include "sim/history/event.h"

namespace locksim {

// EventChunk: room for a fixed number of events in pages of their own (mmap), so a chunk's memory
// goes back to the system when it is freed, whichever thread's malloc arena would otherwise have
// kept it, and untouched room costs no resident memory. Each thread keeps up to 16 freed chunks
// of its own for its next runs (a simulated run lasts a millisecond: mapping, faulting in and
// unmapping a chunk per log made the simulator's workers wait on the process's memory map).
class EventChunk {
 public:
  explicit EventChunk(std::size_t capacity);
  ~EventChunk();
  EventChunk(const EventChunk&) = delete;
  EventChunk& operator=(const EventChunk&) = delete;

  std::size_t size() const { return size_; }
  bool full() const { return size_ == capacity_; }
  Event& push(const Event& event);  // requires !full()
  Event& operator[](std::size_t i) { return data_[i]; }
  Event& back() { return data_[size_ - 1]; }
  std::size_t bytes() const { return mapped_; }

 private:
  Event* data_ = nullptr;
  std::size_t capacity_ = 0;
  std::size_t size_ = 0;
  std::size_t mapped_ = 0;
};

// ClientLog: one writer's append-only event buffer. Not thread-safe by design: one writer.
class ClientLog {
 public:
  ClientLog(const RunClock& clock, std::int32_t client);

  // record: appends an event of `f` stamped now, with its facts in their default state, and
  // returns it to be filled in (valid until the next record). `key` may be empty.
  Event& record(EventType type, Op f, std::string_view key);
  // append: a copy of `event` of history `from`, recorded as this log's client at the time it
  // carries (a client process's own record of what it did); events are appended in time order.
  Event& append(const History& from, const Event& event);
  // intern: the id of `text` in this log's string table. The last string interned is reused, so
  // a token recorded on acquire, release and extend is stored once.
  StringId intern(std::string_view text);
  // last: the most recently recorded event; requires a non-empty log.
  Event& last();
  // on_next_invoke: `hook` runs once, right after the next invoke event is recorded or appended
  // (the driver marks a scripted call's step started there: sim/driver/scripted.cc); an empty
  // hook removes one not yet run. Called on the log's own thread only.
  void on_next_invoke(std::function<void()> hook) { on_invoke_ = std::move(hook); }

  std::size_t size() const { return size_; }
  // clear: drops every event and string (for benchmarks that record more than fits).
  void clear();
  // bytes: memory held by this log (events, chunks and tables).
  std::size_t bytes() const;

 private:
  friend class Recorder;
  // 72 KB: small enough that the merge, which frees a chunk once read, never holds much more
  // than the merged history.
  static constexpr std::size_t kChunkEvents = 1024;
  KeyId key_id(std::string_view key);

  const RunClock& clock_;
  std::int32_t client_;
  std::vector<std::unique_ptr<EventChunk>> chunks_;
  std::size_t size_ = 0;
  std::vector<std::string> keys_;  // local KeyIds; 0 is "no key" (the constructor puts it in)
  KeyId last_key_ = 0;
  StringTable strings_;
  StringId last_string_ = 0;
  std::function<void()> on_invoke_;
};

// Recorder: the logs of one run. Construct before starting client threads; merge after joining.
class Recorder {
 public:
  Recorder(const RunClock& clock, std::vector<std::string> client_names);

  ClientLog& log(std::size_t client) { return *logs_.at(client); }
  std::size_t client_count() const { return client_names_.size(); }
  // add_log: another log recording as `client`, for a second thread acting for that client (a
  // renewal thread). Call before the threads start; each log still has exactly one writer.
  ClientLog& add_log(std::size_t client);
  const RunClock& clock() const { return clock_; }
  // events: how many events all logs hold (only while no thread records).
  std::size_t events() const;

  // merge: all events sorted by time (ties: lower log first, then each log's own order), with
  // every key and string id rewritten into the History's tables.
  History merge() &&;

 private:
  const RunClock& clock_;
  std::vector<std::string> client_names_;
  std::vector<std::unique_ptr<ClientLog>> logs_;
};

// kEventMemoryBytes: the memory one recorded event costs a run at its peak, from recording to the
// reports (the event, its share of tokens and messages, the checker's per-hold state, the report
// text), for estimates made before a run starts. tests/cli/memory_test.sh measures it on a real
// run and fails if a run needs more.
inline constexpr std::size_t kEventMemoryBytes = 150;

}  // namespace locksim
