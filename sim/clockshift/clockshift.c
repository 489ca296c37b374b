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
 * A second, optional file freezes the wall clock instead: with LOCKSIM_CLOCK_FREEZE_FILE naming an
 * 8-byte file that holds a unix time in nanoseconds (a native int64), every read of the wall clock
 * returns that instant (plus the shift, if any) until the file changes; 0 in the file means "not
 * frozen". The model's differential test (tests/integration/model_differential_test.cc) sets it
 * before each command, so the server's TIME and key expiry run exactly on the model's virtual
 * clock. Without that variable the library behaves as described above.
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
static _Atomic(const volatile int64_t*) frozen_ns;
static atomic_int state; /* 0: not looked up, 1: being looked up, 2: done */

/* map_int64: the 8-byte file named by environment variable `name`, mapped shared, or NULL. */
static const volatile int64_t* map_int64(const char* name) {
  const char* path = getenv(name);
  if (path == NULL) return NULL;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  void* mapped = mmap(NULL, sizeof(int64_t), PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  return mapped == MAP_FAILED ? NULL : (const volatile int64_t*)mapped;
}

static void look_up_files(void) {
  if (atomic_load_explicit(&state, memory_order_acquire) == 2) return;
  int expected = 0;
  if (!atomic_compare_exchange_strong(&state, &expected, 1)) return; /* another thread is at it */
  atomic_store(&shift_ms, map_int64("LOCKSIM_CLOCK_SHIFT_FILE"));
  atomic_store(&frozen_ns, map_int64("LOCKSIM_CLOCK_FREEZE_FILE"));
  atomic_store_explicit(&state, 2, memory_order_release);
}

static int64_t offset_ns(void) {
  look_up_files();
  const volatile int64_t* shift = atomic_load(&shift_ms);
  return shift == NULL ? 0 : *shift * 1000000;
}

/* frozen_instant: the frozen unix time in ns, or 0 if the clock is not frozen. */
static int64_t frozen_instant(void) {
  look_up_files();
  const volatile int64_t* frozen = atomic_load(&frozen_ns);
  return frozen == NULL ? 0 : *frozen;
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

/* wall_clock: CLOCK_REALTIME as this process sees it: frozen or real, then shifted. */
static int wall_clock(clockid_t id, struct timespec* ts) {
  const int64_t frozen = frozen_instant();
  if (frozen > 0) {
    ts->tv_sec = (time_t)(frozen / 1000000000);
    ts->tv_nsec = (long)(frozen % 1000000000);
  } else if (syscall(SYS_clock_gettime, id, ts) != 0) {
    return -1;
  }
  add_ns(ts, offset_ns());
  return 0;
}

int clock_gettime(clockid_t id, struct timespec* ts) {
  if (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE) return wall_clock(id, ts);
  return (int)syscall(SYS_clock_gettime, id, ts);
}

int gettimeofday(struct timeval* restrict tv, void* restrict tz) {
  (void)tz; /* obsolete; Redis passes NULL */
  struct timespec ts;
  if (wall_clock(CLOCK_REALTIME, &ts) != 0) return -1;
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
  if (wall_clock(CLOCK_REALTIME, &ts) != 0) return (time_t)-1;
  if (out != NULL) *out = ts.tv_sec;
  return ts.tv_sec;
}
