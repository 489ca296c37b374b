/* clockshift.c: liblocksim_clockshift.so, an LD_PRELOAD library that moves one process's wall
 * clock ahead by an offset another process can change while it runs.
 *
 * locksim preloads it into a redis-server it starts for a clock-jump fault, with
 * LOCKSIM_CLOCK_SHIFT_FILE naming an 8-byte file that holds the offset in milliseconds (a native
 * int64). The file is mapped shared, so a write to it (RedisServer::shift_clock) takes effect on
 * the next clock read. Only the wall clock moves (CLOCK_REALTIME and its coarse form,
 * gettimeofday, time): Redis expires keys by it. The monotonic clock, which Redis uses for
 * timeouts, is left alone, as a real clock step (NTP, an operator) would leave it.
 *
 * Why not libfaketime: Debian's redis-server links jemalloc, which calls clock_gettime while
 * libfaketime is still resolving the real function with dlsym (which allocates), and libfaketime
 * gives up (wolfcw/libfaketime#130). This library resolves nothing: it asks the kernel directly
 * (syscall), and it allocates nothing, so it can be entered from inside malloc. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static _Atomic(const volatile int64_t*) shift_ms;
static atomic_int state; /* 0: not looked up, 1: being looked up, 2: done */

static int64_t offset_ns(void) {
  if (atomic_load_explicit(&state, memory_order_acquire) != 2) {
    int expected = 0;
    if (!atomic_compare_exchange_strong(&state, &expected, 1)) return 0; /* another thread is at it */
    const char* path = getenv("LOCKSIM_CLOCK_SHIFT_FILE");
    if (path != NULL) {
      const int fd = open(path, O_RDONLY | O_CLOEXEC);
      if (fd >= 0) {
        void* mapped = mmap(NULL, sizeof(int64_t), PROT_READ, MAP_SHARED, fd, 0);
        close(fd);
        if (mapped != MAP_FAILED) atomic_store(&shift_ms, (const volatile int64_t*)mapped);
      }
    }
    atomic_store_explicit(&state, 2, memory_order_release);
  }
  const volatile int64_t* shift = atomic_load(&shift_ms);
  return shift == NULL ? 0 : *shift * 1000000;
}

static void add_ns(struct timespec* ts, int64_t ns) {
  int64_t total = (int64_t)ts->tv_nsec + ns % 1000000000;
  ts->tv_sec += (time_t)(ns / 1000000000);
  if (total >= 1000000000) {
    total -= 1000000000;
    ts->tv_sec += 1;
  } else if (total < 0) {
    total += 1000000000;
    ts->tv_sec -= 1;
  }
  ts->tv_nsec = (long)total;
}

int clock_gettime(clockid_t id, struct timespec* ts) {
  const long result = syscall(SYS_clock_gettime, id, ts);
  if (result == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) {
    add_ns(ts, offset_ns());
  }
  return (int)result;
}

int gettimeofday(struct timeval* restrict tv, void* restrict tz) {
  (void)tz; /* obsolete; Redis passes NULL */
  struct timespec ts;
  if (syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts) != 0) return -1;
  add_ns(&ts, offset_ns());
  /* glibc declares tv nonnull; a caller that passes NULL anyway gets no crash. */
  struct timeval* volatile out = tv;
  if (out != NULL) {
    out->tv_sec = ts.tv_sec;
    out->tv_usec = (suseconds_t)(ts.tv_nsec / 1000);
  }
  return 0;
}

time_t time(time_t* out) {
  struct timespec ts;
  if (syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts) != 0) return (time_t)-1;
  add_ns(&ts, offset_ns());
  if (out != NULL) *out = ts.tv_sec;
  return ts.tv_sec;
}
