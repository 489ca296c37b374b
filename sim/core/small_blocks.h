#pragma once

// Keeping small freed blocks on the thread that freed them, for the simulator.
//
//   keep_small_blocks();  // this thread, from now on: its small frees feed its next allocations
//
// A simulated schedule allocates and frees about 300 small blocks (tokens and keys of 33 bytes,
// events, replies, flights), most of them freed together when the schedule ends. glibc's
// per-thread cache keeps 7 blocks of a size; the rest go to its shared bins and come back through
// its slow path (8-18% of explore's CPU time). This file replaces the global `operator new` and
// `operator delete` so that a thread that asked for it keeps up to kSmallBlockBytes of freed
// blocks of up to 1 KiB in lists of its own, one per 16-byte size, and serves its allocations
// from them. Every other thread (a real run's clients, the proxy, the report) allocates as before:
// one thread-local test per call. Blocks still come from and go back to malloc, so memory
// allocated on one thread and freed on another is fine. Not compiled under AddressSanitizer or
// ThreadSanitizer, which must see every allocation.

#include <cstddef>

namespace locksim {

// kSmallBlockBytes: the most a thread keeps in freed small blocks (the rest go back to malloc).
inline constexpr std::size_t kSmallBlockBytes = 256 * 1024;

// keep_small_blocks: this thread keeps the small blocks it frees from now on (see above), and
// gives them back to malloc when it exits. Idempotent; thread-safe (it concerns the caller only).
void keep_small_blocks() noexcept;

// keeps_small_blocks: whether this thread keeps them (after keep_small_blocks, and never under a
// sanitizer).
bool keeps_small_blocks() noexcept;

}  // namespace locksim
