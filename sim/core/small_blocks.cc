#include "sim/core/small_blocks.h"

#include <malloc.h>

#include <cstdlib>
#include <new>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LOCKSIM_KEEP_SMALL_BLOCKS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define LOCKSIM_KEEP_SMALL_BLOCKS 0
#endif
#endif
#ifndef LOCKSIM_KEEP_SMALL_BLOCKS
#define LOCKSIM_KEEP_SMALL_BLOCKS 1
#endif

#if LOCKSIM_KEEP_SMALL_BLOCKS

namespace {

// A block of class k holds at least 16 k + 8 bytes: the sizes glibc's chunks give (24, 40, 56, ...
// usable bytes), so asking malloc for a class's size takes the chunk a request of any size of the
// class would have taken, and a block's class is read back from its usable size.
constexpr std::size_t kLargestClass = 64;  // 1032 bytes

constexpr std::size_t block_bytes(std::size_t size_class) { return 16 * size_class + 8; }

constexpr std::size_t class_of_request(std::size_t size) {
  const std::size_t size_class = (size + 7) / 16;
  return size_class == 0 ? 1 : size_class;
}

struct FreeBlock {
  FreeBlock* next;
};

// Trivially destructible and zero-initialized, so a delete after the thread's destructors ran
// (or before keep_small_blocks) finds it off and frees.
struct SmallBlockLists {
  bool on;
  std::size_t bytes;  // held in the lists
  FreeBlock* heads[kLargestClass + 1];
};

thread_local SmallBlockLists small_block_lists;

void give_back_small_blocks() noexcept {
  SmallBlockLists& lists = small_block_lists;
  lists.on = false;
  for (FreeBlock*& head : lists.heads) {
    while (head != nullptr) {
      FreeBlock* next = head->next;
      std::free(head);
      head = next;
    }
  }
  lists.bytes = 0;
}

struct SmallBlockKeeper {
  SmallBlockKeeper() { small_block_lists.on = true; }
  ~SmallBlockKeeper() { give_back_small_blocks(); }
  SmallBlockKeeper(const SmallBlockKeeper&) = delete;
  SmallBlockKeeper& operator=(const SmallBlockKeeper&) = delete;
};

void keep_or_free(void* block, std::size_t size_class) noexcept {
  SmallBlockLists& lists = small_block_lists;
  if (lists.on && size_class >= 1 && size_class <= kLargestClass &&
      lists.bytes + block_bytes(size_class) <= locksim::kSmallBlockBytes) {
    auto* free_block = static_cast<FreeBlock*>(block);
    free_block->next = lists.heads[size_class];
    lists.heads[size_class] = free_block;
    lists.bytes += block_bytes(size_class);
    return;
  }
  std::free(block);
}

}  // namespace

void* operator new(std::size_t size) {
  if (size <= block_bytes(kLargestClass)) {
    const std::size_t size_class = class_of_request(size);
    // A list holds blocks only while the thread keeps them (give_back_small_blocks empties them).
    SmallBlockLists& lists = small_block_lists;
    if (FreeBlock* block = lists.heads[size_class]; block != nullptr) {
      lists.heads[size_class] = block->next;
      lists.bytes -= block_bytes(size_class);
      return block;
    }
    size = block_bytes(size_class);
  }
  if (void* block = std::malloc(size)) return block;
  throw std::bad_alloc();
}

void operator delete(void* block) noexcept {
  if (block == nullptr) return;
  if (!small_block_lists.on) {
    std::free(block);
    return;
  }
  const std::size_t usable = malloc_usable_size(block);
  keep_or_free(block, usable < 24 ? 0 : (usable - 8) / 16);
}

void operator delete(void* block, std::size_t size) noexcept {
  if (block == nullptr) return;
  keep_or_free(block, size <= block_bytes(kLargestClass) ? class_of_request(size) : 0);
}

namespace locksim {

void keep_small_blocks() noexcept { thread_local SmallBlockKeeper keeper; }

bool keeps_small_blocks() noexcept { return small_block_lists.on; }

}  // namespace locksim

#else

namespace locksim {

void keep_small_blocks() noexcept {}

bool keeps_small_blocks() noexcept { return false; }

}  // namespace locksim

#endif
