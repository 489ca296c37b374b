#include "sim/simulate/fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <new>

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
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef LOCKSIM_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace locksim::simulate_internal {
namespace {

thread_local Fiber* current_fiber = nullptr;

#if defined(LOCKSIM_ASAN) || defined(LOCKSIM_TSAN)
constexpr std::size_t kDefaultStack = std::size_t{1} << 20;  // sanitizers' frames are larger
#else
constexpr std::size_t kDefaultStack = std::size_t{256} << 10;
#endif

}  // namespace

Fiber* Fiber::current() { return current_fiber; }

Fiber::Fiber(std::function<void()> body, std::size_t stack_bytes) : body_(std::move(body)) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  stack_bytes_ = ((stack_bytes == 0 ? kDefaultStack : stack_bytes) + page - 1) / page * page;
  mapping_bytes_ = stack_bytes_ + page;
  mapping_ = mmap(nullptr, mapping_bytes_, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapping_ == MAP_FAILED) throw std::bad_alloc();
  mprotect(mapping_, page, PROT_NONE);  // the guard page: stacks grow down into it
  stack_ = static_cast<char*>(mapping_) + page;
  LOCKSIM_ASSERT(getcontext(&context_) == 0);
  context_.uc_stack.ss_sp = stack_;
  context_.uc_stack.ss_size = stack_bytes_;
  context_.uc_link = nullptr;
  const auto self = reinterpret_cast<std::uintptr_t>(this);
  makecontext(&context_, reinterpret_cast<void (*)()>(&Fiber::entry), 2,
              static_cast<unsigned>(self >> 32), static_cast<unsigned>(self & 0xffffffffU));
#ifdef LOCKSIM_TSAN
  tsan_fiber_ = __tsan_create_fiber(0);
#endif
}

Fiber::~Fiber() {
#ifdef LOCKSIM_TSAN
  if (tsan_fiber_ != nullptr) __tsan_destroy_fiber(tsan_fiber_);
#endif
  if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
}

void Fiber::entry(unsigned high, unsigned low) {
  auto* self = reinterpret_cast<Fiber*>((static_cast<std::uintptr_t>(high) << 32) |
                                        static_cast<std::uintptr_t>(low));
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
  setcontext(&self->caller_);
}

void Fiber::run_body() {
  try {
    body_();
  } catch (...) {
    error_ = std::current_exception();
  }
  body_ = nullptr;  // what it captured is released on its own stack
}

void Fiber::resume() {
  LOCKSIM_ASSERT(current_fiber == nullptr && !done_);
  current_fiber = this;
  started_ = true;
#ifdef LOCKSIM_ASAN
  __sanitizer_start_switch_fiber(&caller_fake_stack_, stack_, stack_bytes_);
#endif
#ifdef LOCKSIM_TSAN
  tsan_caller_ = __tsan_get_current_fiber();
  __tsan_switch_to_fiber(tsan_fiber_, 0);
#endif
  LOCKSIM_ASSERT(swapcontext(&caller_, &context_) == 0);
#ifdef LOCKSIM_ASAN
  __sanitizer_finish_switch_fiber(caller_fake_stack_, nullptr, nullptr);
#endif
  current_fiber = nullptr;
}

void Fiber::suspend() {
  LOCKSIM_ASSERT(current_fiber == this);
#ifdef LOCKSIM_ASAN
  __sanitizer_start_switch_fiber(&fake_stack_, caller_bottom_, caller_size_);
#endif
#ifdef LOCKSIM_TSAN
  __tsan_switch_to_fiber(tsan_caller_, 0);
#endif
  LOCKSIM_ASSERT(swapcontext(&context_, &caller_) == 0);
#ifdef LOCKSIM_ASAN
  __sanitizer_finish_switch_fiber(fake_stack_, &caller_bottom_, &caller_size_);
#endif
}

}  // namespace locksim::simulate_internal
