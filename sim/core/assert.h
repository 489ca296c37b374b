// assert.h: LOCKSIM_ASSERT, an assertion that stays on in release builds.
//
// Assertions are for programmer errors only (a broken invariant inside locksim). Bad user input
// is an InputError (error.h); Redis failures are data, recorded in the history.
//
//   LOCKSIM_ASSERT(events_.size() < capacity_);
#pragma once

namespace locksim::detail {
[[noreturn]] void assertion_failed(const char* expression, const char* file, int line);
}  // namespace locksim::detail

#define LOCKSIM_ASSERT(expression)                                          \
  do {                                                                      \
    if (!(expression)) {                                                    \
      ::locksim::detail::assertion_failed(#expression, __FILE__, __LINE__); \
    }                                                                       \
  } while (false)
