// fiber.h (internal to simulate/): Fiber, a stack of its own that runs a body until it
// suspends, and is resumed later on the same thread: the simulator's threads.
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

namespace locksim::simulate_internal {

class Fiber {
 public:
  // stack_bytes: rounded up to pages; a guard page below it turns an overflow into a fault.
  explicit Fiber(std::function<void()> body, std::size_t stack_bytes = 0);
  ~Fiber();  // a fiber that has not ended is dropped with its stack (its destructors never run)
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // resume: from outside any fiber: runs this one until it suspends or its body ends.
  void resume();
  // suspend: from inside this fiber: back to whoever resumed it.
  void suspend();
  bool done() const { return done_; }
  // error: what the body threw (it ended the fiber); null if nothing.
  std::exception_ptr error() const { return error_; }

  // current: the fiber running now; null outside every fiber.
  static Fiber* current();

 private:
  static void entry(unsigned high, unsigned low);  // ucontext's entry
  static void start(Fiber* self);                  // runs the body, then leaves for good
  void run_body();

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
  std::exception_ptr error_;
  // Sanitizer bookkeeping.
  void* fake_stack_ = nullptr;         // ASan: this fiber's fake stack while suspended
  void* caller_fake_stack_ = nullptr;  // ASan: the caller's while this fiber runs
  const void* caller_bottom_ = nullptr;
  std::size_t caller_size_ = 0;
  void* tsan_fiber_ = nullptr;
  void* tsan_caller_ = nullptr;
};

}  // namespace locksim::simulate_internal
