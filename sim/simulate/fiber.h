// fiber.h (internal to simulate/): Fiber, a stack of its own that runs a body until it
// suspends, and is resumed later on the same thread: the simulator's threads.
//
// A fiber that will not be resumed again is unwound (unwind()): resumed one last time, the
// suspend() it waits in throws FiberUnwind (fiber_unwind.h), the destructors on its stack run, and
// its entry catches it. Each fiber keeps its own C++ exception state (the exceptions being
// handled, the count of those on their way up), swapped at every switch, so that a fiber
// suspended inside a catch block or a destructor never mixes its exceptions with another stack's.
//
// On x86-64 a switch is a few instructions of our own (the callee-saved registers and the SSE and
// x87 control words, no system call); elsewhere ucontext (makecontext, swapcontext). Stacks are
// mmap'd with a guard page and kept in a per-thread pool for the next fiber. Annotated for
// AddressSanitizer and ThreadSanitizer so that both follow the switches. Not thread-safe: a
// fiber is resumed and suspends on the thread that created it.
//
//   Fiber fiber([&] { step1(); Fiber::current()->suspend(); step2(); });
//   fiber.resume();  // runs step1, returns at suspend()
//   fiber.resume();  // runs step2, returns when the body ends: fiber.done()
#pragma once

#include <ucontext.h>

#include <cstddef>
#include <exception>
#include <functional>

#include "sim/simulate/fiber_unwind.h"

namespace locksim::simulate_internal {

class Fiber {
 public:
  // stack_bytes: rounded up to pages; a guard page below it turns an overflow into a fault.
  explicit Fiber(std::function<void()> body, std::size_t stack_bytes = 0);
  // A fiber that suspended and has not ended is unwound first (unwind()) if no fiber runs now;
  // from inside a fiber it is dropped with its stack (the destructors there never run).
  ~Fiber();
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // resume: from outside any fiber: runs this one until it suspends or its body ends.
  void resume();
  // suspend: from inside this fiber: back to whoever resumed it. Once the fiber is unwound it
  // never suspends again: suspend() throws FiberUnwind, or returns at once if `may_throw` is
  // false or an exception is already on its way up this fiber's stack (a wait in a destructor,
  // which must not throw).
  void suspend(bool may_throw = true);
  // unwind: from outside any fiber: ends a fiber that has not ended. One that suspended is
  // resumed and its suspend() throws FiberUnwind, which the body must let through: the
  // destructors on its stack run and the fiber ends as if its body had returned (error() stays
  // null). One that never started ends without running (its body is released here).
  void unwind();
  // unwinding: unwind() was called (the fiber's waits no longer suspend).
  bool unwinding() const { return unwinding_; }
  bool done() const { return done_; }
  // error: what the body threw (it ended the fiber); null if nothing.
  std::exception_ptr error() const { return error_; }

  // current: the fiber running now; null outside every fiber.
  static Fiber* current();

 private:
  static void entry(unsigned high, unsigned low);  // ucontext's entry
  static void start(Fiber* self);                  // runs the body, then leaves for good
  void run_body();
  void switch_to_caller();  // suspend()'s switch: back to the resumer until resumed

  std::function<void()> body_;
  void* mapping_ = nullptr;  // guard page + stack
  std::size_t mapping_bytes_ = 0;
  void* stack_ = nullptr;
  std::size_t stack_bytes_ = 0;
  ucontext_t context_{};
  ucontext_t caller_{};
  void* stack_pointer_ = nullptr;   // x86-64: this fiber's saved stack pointer
  void* caller_pointer_ = nullptr;  // x86-64: its resumer's
  bool done_ = false;
  bool started_ = false;
  bool unwinding_ = false;
  std::exception_ptr error_;
  // The C++ runtime's exception state of this fiber while it is suspended (see fiber.cc).
  void* eh_caught_ = nullptr;
  unsigned int eh_uncaught_ = 0;
  // Sanitizer bookkeeping.
  void* fake_stack_ = nullptr;         // ASan: this fiber's fake stack while suspended
  void* caller_fake_stack_ = nullptr;  // ASan: the caller's while this fiber runs
  const void* caller_bottom_ = nullptr;
  std::size_t caller_size_ = 0;
  void* tsan_fiber_ = nullptr;
  void* tsan_caller_ = nullptr;
};

}  // namespace locksim::simulate_internal
