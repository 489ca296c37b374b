#include "sim/core/assert.h"

#include <cstdio>
#include <cstdlib>

namespace locksim::detail {

void assertion_failed(const char* expression, const char* file, int line) {
  std::fprintf(stderr, "locksim: assertion failed: %s (%s:%d)\n", expression, file, line);
  std::fflush(stderr);
  std::abort();
}

}  // namespace locksim::detail
