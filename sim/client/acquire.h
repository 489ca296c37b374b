// acquire.h: the acquire loop, written once for every host: attempt, and after a busy answer
// wait as the lock's wait strategy says, until the lock is granted, an attempt fails, the
// deadline passes or the run stops. A server that refuses the connection (down, or restarting) is
// tried again after the same wait, until the deadline, as a client library's connection retry
// does: nothing was sent, so nothing is in doubt.
//
// It does no I/O and reads no clock of its own: each attempt, wait and instant is asked of its
// AcquireHost. A blocking host (a client thread, `locksim worker`) answers at once and runs the
// loop with run_inline(); the event-loop host answers when a reply or a timer arrives. What the
// host records (or sends to its harness) it derives from the AcquireEnd.
//
//   AcquireEnd end = run_inline(acquire_loop(host, deadline_ns));
//   if (end.kind == AcquireEnd::Kind::kAcquired) { ... end.attempt.token ... end.sent_ns ... }
#pragma once

#include "sim/core/clock.h"
#include "sim/core/task.h"
#include "sim/lock/variant.h"

namespace locksim {

// AcquireHost: what the acquire loop asks of the host that runs it.
class AcquireHost {
 public:
  virtual ~AcquireHost() = default;
  // prepare: before each attempt (and before its send time is taken): follow a failover,
  // reconnect what broke.
  virtual void prepare() {}
  // unreachable: after prepare(), the error of the connection the next attempt needs if it could
  // not be made because the server refused it (a killed server, one still restarting): the
  // attempt is not sent, and the loop waits and tries again. Null when the attempt can be sent,
  // and for a lock over several servers (Redlock), which counts a refused node as not granting.
  virtual const RedisResult* unreachable() { return nullptr; }
  // attempt: one attempt by the lock variant, sent now; done when its reply was read, which is
  // then in `out` (the loop's own, assigned afresh each attempt: an attempt handed back through
  // the task was moved twice, its three strings each time, at every poll of a busy lock).
  virtual Task<void> attempt(AcquireAttempt& out) = 0;
  // wait: the pause after `failed_attempts` (>= 1) busy answers, never longer than `max_ns`;
  // true if it ran its course, false if the run's stop cut it short.
  virtual Ask<bool> wait(int failed_attempts, Nanos max_ns) = 0;
  // now: the host's clock (the deadline is on it).
  virtual Nanos now() = 0;
  // stopping: the run is stopping (Ctrl-C, time limit, a lost server).
  virtual bool stopping() = 0;
  // busy: called once, after the first busy answer or refused connection of this acquire (the
  // client now waits).
  virtual void busy() {}
};

// AcquireEnd: how an acquire ended.
struct AcquireEnd {
  enum class Kind {
    kAcquired,  // granted: `attempt` is the granting one
    kError,     // an attempt failed: `attempt.error` (indeterminate: may have acquired), or
                // the server refused the connection until the deadline (error kRefused)
    kGaveUp,    // busy until the deadline
    kStopped,   // the run stopped while the lock was busy
  };
  Kind kind = Kind::kGaveUp;
  AcquireAttempt attempt;  // kAcquired, kError: the last attempt
  int attempts = 0;        // attempts made
  Nanos sent_ns = -1;      // kAcquired: when the granting attempt was sent (host clock)
  // busy_ns: when the first busy answer was read (host clock): from then on the client certainly
  // waited (a lock with a queue has queued it); -1: never answered busy.
  Nanos busy_ns = -1;
};

// acquire_loop: attempts until granted, an error, `deadline_ns` (host clock) or the run's stop
// (seen after an attempt, or when it cuts a wait short). A refused connection (unreachable())
// counts as an attempt and is waited out like a busy answer; still refused at the deadline, the
// acquire ends kError with that error (it did not run).
Task<AcquireEnd> acquire_loop(AcquireHost& host, Nanos deadline_ns);

}  // namespace locksim
