// task.cc: the recycling of coroutine frames (task.h).
#include "sim/core/task.h"

#include <array>
#include <new>
#include <vector>

namespace locksim::task_detail {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kRecycle = false;  // a sanitizer must see each frame allocated and freed
#else
constexpr bool kRecycle = true;
#endif

// Frames are rounded up to kGranule bytes; sizes up to kClasses * kGranule are recycled, at
// most kKeep of each per thread (a client's frames: the acquire loop, an attempt, a wait).
constexpr std::size_t kGranule = 64;
constexpr std::size_t kClasses = 32;
constexpr std::size_t kKeep = 16;

std::size_t class_of(std::size_t size) { return (size + kGranule - 1) / kGranule - 1; }

// pool_gone: this thread's pool was destroyed (its thread is ending); a frame freed after that
// (by another thread_local's destructor) is deleted at once. Trivially destructible, so it can
// be read to the thread's very end.
thread_local bool pool_gone = false;

struct FramePool {
  std::array<std::vector<void*>, kClasses> free;
  FramePool() {
    for (std::vector<void*>& list : free) list.reserve(kKeep);  // free_frame never allocates
  }
  ~FramePool() {
    pool_gone = true;
    for (std::vector<void*>& list : free) {
      for (void* frame : list) ::operator delete(frame);
    }
  }
};

FramePool& pool() {
  thread_local FramePool frames;
  return frames;
}

}  // namespace

void* allocate_frame(std::size_t size) {
  const std::size_t size_class = class_of(size);
  if (!kRecycle || size_class >= kClasses || pool_gone) return ::operator new(size);
  std::vector<void*>& list = pool().free[size_class];
  if (list.empty()) return ::operator new((size_class + 1) * kGranule);
  void* frame = list.back();
  list.pop_back();
  return frame;
}

void free_frame(void* frame, std::size_t size) noexcept {
  const std::size_t size_class = class_of(size);
  if (kRecycle && size_class < kClasses && !pool_gone) {
    std::vector<void*>& list = pool().free[size_class];
    if (list.size() < kKeep) {
      list.push_back(frame);
      return;
    }
  }
  ::operator delete(frame);
}

}  // namespace locksim::task_detail
