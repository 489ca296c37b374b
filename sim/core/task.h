// task.h: Task<T>, the coroutine type of locksim's client, and Ask<T>, what it awaits from its
// host.
//
// The client (the acquire loop, the workload loop) is written once as coroutines that do no I/O
// of their own: each command, attempt or timer is an Ask the host completes. A blocking host (a
// client thread, `locksim worker`) completes every Ask on the spot, so a task runs to its end
// inside run_inline() with no suspension at all; an event-loop host completes an Ask later (a
// reply read, a timer fired) and the task resumes from the loop. Same code, same decisions, same
// events on every host.
//
//   Task<int> twice(Ask<int> read) { co_return 2 * co_await read; }
//   int n = run_inline(twice(Ask<int>(21)));                         // 42, at once
//
//   auto later = Ask<int>::later([&](Slot<int>& slot) { pending = &slot; });  // the host keeps it
//   Task<int> t = twice(std::move(later));
//   t.start();            // runs until it awaits the Ask
//   pending->complete(21); // resumes it; t.done() and t.result() == 42
//
// Tasks start lazily (at start() or when awaited) and resume their awaiter when they end
// (symmetric transfer: a long chain of synchronous awaits does not grow the stack). An exception
// thrown inside a task is rethrown where its result is read. Not thread-safe: a task and its
// Asks belong to one thread at a time.
#pragma once

#include <coroutine>
#include <cstddef>
#include <exception>
#include <functional>
#include <optional>
#include <utility>

#include "sim/core/assert.h"

namespace locksim {

template <class T>
class Task;

namespace task_detail {

// allocate_frame, free_frame: coroutine frames, recycled per thread by size (a client's acquire
// loop makes a frame at every attempt). Plain new and delete under a sanitizer, which must see
// every frame's life.
void* allocate_frame(std::size_t size);
void free_frame(void* frame, std::size_t size) noexcept;

struct PromiseBase {
  static void* operator new(std::size_t size) { return allocate_frame(size); }
  static void operator delete(void* frame, std::size_t size) noexcept { free_frame(frame, size); }

  std::coroutine_handle<> continuation = std::noop_coroutine();
  std::exception_ptr error;
  // awaited_inline: the awaiter is inside Task::await_suspend, resuming this task on its own
  // stack; if the task ends before it suspends, the awaiter simply goes on (no transfer back).
  bool awaited_inline = false;

  std::suspend_always initial_suspend() noexcept { return {}; }
  struct FinalAwaiter {
    bool await_ready() noexcept { return false; }
    template <class Promise>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<Promise> self) noexcept {
      if (self.promise().awaited_inline) return std::noop_coroutine();
      return self.promise().continuation;
    }
    void await_resume() noexcept {}
  };
  FinalAwaiter final_suspend() noexcept { return {}; }
  void unhandled_exception() { error = std::current_exception(); }
  void rethrow_if_failed() const {
    if (error) std::rethrow_exception(error);
  }
};

template <class T>
struct Promise : PromiseBase {
  std::optional<T> value;
  Task<T> get_return_object();
  // return_value: the result built in place from what co_return names (a braced list makes a T),
  // one move fewer than taking it by value: an acquire attempt's result comes back at every poll.
  template <class U = T>
  void return_value(U&& v) {
    value.emplace(std::forward<U>(v));
  }
  T take() {
    rethrow_if_failed();
    LOCKSIM_ASSERT(value.has_value());
    return std::move(*value);
  }
};

template <>
struct Promise<void> : PromiseBase {
  Task<void> get_return_object();
  void return_void() {}
  void take() { rethrow_if_failed(); }
};

}  // namespace task_detail

template <class T>
class [[nodiscard]] Task {
 public:
  using promise_type = task_detail::Promise<T>;
  using Handle = std::coroutine_handle<promise_type>;

  Task() = default;
  explicit Task(Handle handle) : handle_(handle) {}
  Task(Task&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
  Task& operator=(Task&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { reset(); }

  // Awaiting a task runs it; the awaiter resumes when it ends. A task that ends without
  // suspending (every ask answered at once) returns here and the awaiter goes on without
  // suspending either, so a blocking host's stack does not grow with each await, whatever the
  // compiler makes of symmetric transfer (which needs a tail call: not at -O0, not with TSan).
  bool await_ready() const noexcept { return false; }
  bool await_suspend(std::coroutine_handle<> awaiter) {
    promise_type& promise = handle_.promise();
    promise.continuation = awaiter;
    promise.awaited_inline = true;
    handle_.resume();
    if (handle_.done()) return false;
    promise.awaited_inline = false;  // it waits for its host: it resumes the awaiter when it ends
    return true;
  }
  T await_resume() { return handle_.promise().take(); }

  // start: runs a top-level task (a host's) until it first waits for an Ask, or to its end.
  void start() {
    LOCKSIM_ASSERT(handle_ && !handle_.done());
    handle_.resume();
  }
  bool valid() const { return static_cast<bool>(handle_); }
  bool done() const { return handle_ && handle_.done(); }
  // result: a finished task's value (rethrows what it threw).
  T result() {
    LOCKSIM_ASSERT(done());
    return handle_.promise().take();
  }

 private:
  void reset() {
    if (handle_) handle_.destroy();
    handle_ = {};
  }

  Handle handle_;
};

namespace task_detail {
template <class T>
Task<T> Promise<T>::get_return_object() {
  return Task<T>(std::coroutine_handle<Promise<T>>::from_promise(*this));
}
inline Task<void> Promise<void>::get_return_object() {
  return Task<void>(std::coroutine_handle<Promise<void>>::from_promise(*this));
}
}  // namespace task_detail

// Slot: where a host puts the value of an Ask it completes later; complete() resumes the task
// that awaits it (from the host's loop, never from inside the Ask's start function).
template <class T>
class Slot {
 public:
  void complete(T value) {
    LOCKSIM_ASSERT(waiter_);  // completed once, and only while a task waits on it
    value_ = std::move(value);
    std::exchange(waiter_, {}).resume();
  }
  bool waiting() const { return static_cast<bool>(waiter_); }

 private:
  template <class>
  friend class Ask;
  std::optional<T> value_;
  std::coroutine_handle<> waiter_;
};

// Ask: one thing a task asks its host for: either done already (a blocking host's answer), or
// started when the task suspends on it, with a Slot the host completes later.
template <class T>
class [[nodiscard]] Ask {
 public:
  using Start = std::function<void(Slot<T>&)>;

  // Ask(value): answered already. Ask::later(start): `start` runs when the task suspends on it
  // and hands the host the Slot to complete.
  explicit Ask(T done) { slot_.value_ = std::move(done); }
  static Ask later(Start start) {
    Ask ask;
    ask.start_ = std::move(start);
    return ask;
  }

  bool await_ready() const noexcept { return slot_.value_.has_value(); }
  void await_suspend(std::coroutine_handle<> task) {
    slot_.waiter_ = task;
    start_(slot_);
  }
  T await_resume() { return std::move(*slot_.value_); }

 private:
  Ask() = default;
  Slot<T> slot_;
  Start start_;
};

// run_inline: runs `task` to its end on the spot and returns its value; every Ask it awaits must
// be done already (a blocking host's).
template <class T>
T run_inline(Task<T> task) {
  task.start();
  LOCKSIM_ASSERT(task.done());
  return task.result();
}

}  // namespace locksim
