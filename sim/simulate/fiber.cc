#include "sim/simulate/fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <exception>
#include <new>
#include <utility>
#include <vector>

#include "sim/core/assert.h"

#if defined(__SANITIZE_ADDRESS__)
#define LOCKSIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LOCKSIM_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define LOCKSIM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LOCKSIM_TSAN 1
#endif
#endif

#ifdef LOCKSIM_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef LOCKSIM_TSAN
#include <sanitizer/tsan_interface.h>
#endif

// The C++ runtime keeps one exception state a thread (__cxa_get_globals: the exceptions being
// handled, innermost first, and the count thrown and not yet caught); a fiber needs its own, or
// a fiber suspended inside a catch block or a destructor run by an exception would mix its
// exceptions with those of the stack it switches to (ending a catch block pops the thread's
// innermost exception, whichever stack caught it). libstdc++'s layout (unwind-cxx.h) is known;
// elsewhere the state stays the thread's.
#if defined(__GLIBCXX__) && !defined(__ARM_EABI_UNWINDER__)
#include <cxxabi.h>
#define LOCKSIM_FIBER_EH_STATE 1
#endif

#if defined(__x86_64__)
// locksim_switch_stack(save, load): saves the callee-saved registers and the SSE and x87 control
// words on the current stack, stores the stack pointer in *save, and resumes the stack `load`
// where it was saved (or, for a new fiber, at locksim_fiber_start). No system call: swapcontext
// saves and restores the signal mask with one, twice per switch.
extern "C" void locksim_switch_stack(void** save, void* load);
extern "C" void locksim_fiber_start();
asm(R"(
  .text
  .globl locksim_switch_stack
  .type locksim_switch_stack, @function
locksim_switch_stack:
  .cfi_startproc
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .cfi_endproc
  .size locksim_switch_stack, .-locksim_switch_stack

  .globl locksim_fiber_start
  .type locksim_fiber_start, @function
locksim_fiber_start:
  .cfi_startproc
  .cfi_undefined rip
  movq %rbx, %rdi
  andq $-16, %rsp
  call *%r12
  ud2
  .cfi_endproc
  .size locksim_fiber_start, .-locksim_fiber_start
)");
#endif

namespace locksim::simulate_internal {
namespace {

thread_local Fiber* current_fiber = nullptr;

#ifdef LOCKSIM_FIBER_EH_STATE
// EhState: libstdc++'s __cxa_eh_globals.
struct EhState {
  void* caught;
  unsigned int uncaught;
};
EhState& thread_eh_state() { return *reinterpret_cast<EhState*>(abi::__cxa_get_globals()); }
#endif

#if defined(LOCKSIM_ASAN) || defined(LOCKSIM_TSAN)
constexpr std::size_t kDefaultStack = std::size_t{1} << 20;  // sanitizers' frames are larger
#else
constexpr std::size_t kDefaultStack = std::size_t{256} << 10;
#endif

// StackPool: stacks of the default size are kept for the next fiber of this thread (a schedule
// starts several fibers; mapping and unmapping each would serialize the workers on the
// process's memory map). At most kPooled are kept.
constexpr std::size_t kPooled = 64;
struct Mapping {
  void* address = nullptr;
  std::size_t bytes = 0;
};
struct StackPool {
  std::vector<Mapping> free;
  ~StackPool() {
    for (const Mapping& m : free) munmap(m.address, m.bytes);
  }
};
thread_local StackPool stack_pool;

}  // namespace

Fiber* Fiber::current() { return current_fiber; }

Fiber::Fiber(std::function<void()> body, std::size_t stack_bytes) : body_(std::move(body)) {
  // Asked once: a schedule starts a few fibers, and the answer never changes.
  static const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  stack_bytes_ = ((stack_bytes == 0 ? kDefaultStack : stack_bytes) + page - 1) / page * page;
  mapping_bytes_ = stack_bytes_ + page;
  if (stack_bytes_ == kDefaultStack && !stack_pool.free.empty()) {
    mapping_ = stack_pool.free.back().address;
    stack_pool.free.pop_back();
  } else {
    mapping_ = mmap(nullptr, mapping_bytes_, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mapping_ == MAP_FAILED) throw std::bad_alloc();
    mprotect(mapping_, page, PROT_NONE);  // the guard page: stacks grow down into it
  }
  stack_ = static_cast<char*>(mapping_) + page;
#ifdef LOCKSIM_ASAN
  // A pooled stack still carries the poisoned redzones of its last fiber's frames.
  __asan_unpoison_memory_region(stack_, stack_bytes_);
#endif
#if defined(__x86_64__)
  // The first switch to this stack "returns" into locksim_fiber_start, which calls entry(this)
  // (rbx holds `this`, r12 the function), from the saved control words and registers below.
  auto* top = reinterpret_cast<std::uint64_t*>(
      (reinterpret_cast<std::uintptr_t>(stack_) + stack_bytes_) & ~std::uintptr_t{15});
  *--top = 0;                                                      // alignment
  *--top = reinterpret_cast<std::uint64_t>(&locksim_fiber_start);  // ret
  *--top = 0;                                                      // rbp
  *--top = reinterpret_cast<std::uint64_t>(this);                  // rbx
  *--top = reinterpret_cast<std::uint64_t>(&Fiber::start);         // r12
  *--top = 0;                                                      // r13
  *--top = 0;                                                      // r14
  *--top = 0;                                                      // r15
  std::uint32_t mxcsr = 0;
  std::uint16_t fpu = 0;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(fpu));
  *--top = static_cast<std::uint64_t>(mxcsr) | (static_cast<std::uint64_t>(fpu) << 32);
  stack_pointer_ = top;
#else
  LOCKSIM_ASSERT(getcontext(&context_) == 0);
  context_.uc_stack.ss_sp = stack_;
  context_.uc_stack.ss_size = stack_bytes_;
  context_.uc_link = nullptr;
  const auto self = reinterpret_cast<std::uintptr_t>(this);
  makecontext(&context_, reinterpret_cast<void (*)()>(&Fiber::entry), 2,
              static_cast<unsigned>(self >> 32), static_cast<unsigned>(self & 0xffffffffU));
#endif
#ifdef LOCKSIM_TSAN
  tsan_fiber_ = __tsan_create_fiber(0);
#endif
}

Fiber::~Fiber() {
  if (started_ && !done_ && current_fiber == nullptr) unwind();
#ifdef LOCKSIM_TSAN
  if (tsan_fiber_ != nullptr) __tsan_destroy_fiber(tsan_fiber_);
#endif
  if (mapping_ == nullptr) return;
  if (stack_bytes_ == kDefaultStack && stack_pool.free.size() < kPooled) {
    stack_pool.free.push_back(Mapping{mapping_, mapping_bytes_});
  } else {
    munmap(mapping_, mapping_bytes_);
  }
}

void Fiber::entry(unsigned high, unsigned low) {
  start(reinterpret_cast<Fiber*>((static_cast<std::uintptr_t>(high) << 32) |
                                 static_cast<std::uintptr_t>(low)));
}

void Fiber::start(Fiber* self) {
#ifdef LOCKSIM_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &self->caller_bottom_, &self->caller_size_);
#endif
  self->run_body();
  self->done_ = true;
  // Back to the caller for good: this stack is never resumed again.
#ifdef LOCKSIM_ASAN
  __sanitizer_start_switch_fiber(nullptr, self->caller_bottom_, self->caller_size_);
#endif
#ifdef LOCKSIM_TSAN
  __tsan_switch_to_fiber(self->tsan_caller_, 0);
#endif
#if defined(__x86_64__)
  void* discard = nullptr;
  locksim_switch_stack(&discard, self->caller_pointer_);
#else
  setcontext(&self->caller_);
#endif
  LOCKSIM_ASSERT(!"a fiber that ended was resumed");
}

void Fiber::run_body() {
  try {
    body_();
  } catch (const FiberUnwind&) {
    // Unwound (unwind()): the destructors on its stack ran; it ends as if the body returned.
  } catch (...) {
    error_ = std::current_exception();
  }
  body_ = nullptr;  // what it captured is released on its own stack
}

void Fiber::unwind() {
  if (done_) return;
  unwinding_ = true;
  if (!started_) {
    done_ = true;
    body_ = nullptr;
    return;
  }
  LOCKSIM_ASSERT(current_fiber == nullptr);
  resume();
  LOCKSIM_ASSERT(done_);  // an unwound fiber never suspends again: its body ended
}

void Fiber::resume() {
  LOCKSIM_ASSERT(current_fiber == nullptr && !done_);
  current_fiber = this;
  started_ = true;
#ifdef LOCKSIM_FIBER_EH_STATE
  // All switches pass through here (to the fiber and back), so the swap is done on this side.
  EhState& eh = thread_eh_state();
  const EhState caller_eh = eh;
  eh = EhState{eh_caught_, eh_uncaught_};
#endif
#ifdef LOCKSIM_ASAN
  __sanitizer_start_switch_fiber(&caller_fake_stack_, stack_, stack_bytes_);
#endif
#ifdef LOCKSIM_TSAN
  tsan_caller_ = __tsan_get_current_fiber();
  __tsan_switch_to_fiber(tsan_fiber_, 0);
#endif
#if defined(__x86_64__)
  locksim_switch_stack(&caller_pointer_, stack_pointer_);
#else
  LOCKSIM_ASSERT(swapcontext(&caller_, &context_) == 0);
#endif
#ifdef LOCKSIM_ASAN
  __sanitizer_finish_switch_fiber(caller_fake_stack_, nullptr, nullptr);
#endif
#ifdef LOCKSIM_FIBER_EH_STATE
  eh_caught_ = eh.caught;
  eh_uncaught_ = eh.uncaught;
  eh = caller_eh;
#endif
  current_fiber = nullptr;
}

void Fiber::suspend(bool may_throw) {
  LOCKSIM_ASSERT(current_fiber == this);
  if (!unwinding_) switch_to_caller();
  // Resumed to be unwound, or asked to wait while it is: it never waits again. A wait inside a
  // destructor (an exception on its way up, or a caller that cannot throw) returns instead.
  if (unwinding_ && may_throw && std::uncaught_exceptions() == 0) throw FiberUnwind();
}

void Fiber::switch_to_caller() {
#ifdef LOCKSIM_ASAN
  __sanitizer_start_switch_fiber(&fake_stack_, caller_bottom_, caller_size_);
#endif
#ifdef LOCKSIM_TSAN
  __tsan_switch_to_fiber(tsan_caller_, 0);
#endif
#if defined(__x86_64__)
  locksim_switch_stack(&stack_pointer_, caller_pointer_);
#else
  LOCKSIM_ASSERT(swapcontext(&context_, &caller_) == 0);
#endif
#ifdef LOCKSIM_ASAN
  __sanitizer_finish_switch_fiber(fake_stack_, &caller_bottom_, &caller_size_);
#endif
}

}  // namespace locksim::simulate_internal
