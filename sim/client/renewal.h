// renewal.h: the renewal of a held lock (Docs B and D), written once for every host: while the
// host lets it go on, extend the lease; each extension falls due a renewal period after the
// previous one returned (the first: a period after the start). The due instant is taken before
// anything is recorded and is a deadline: a stall of the client does not move it, and one that
// fell due meanwhile is sent as soon as the stall ends.
//
// It does no I/O and reads no clock of its own. The Watchdog (watchdog.h) runs it on a thread
// of its own for the client threads and `locksim worker`, answering at once; the event loop runs
// it on the loop, answering when its timer fires or the extension's reply arrives.
//
//   co_await renewal_loop(host, period_ns);   // returns once host.until() said stop
#pragma once

#include "sim/core/clock.h"
#include "sim/core/task.h"
#include "sim/lock/variant.h"

namespace locksim {

// RenewalHost: what the renewal asks of the host that runs it.
class RenewalHost {
 public:
  virtual ~RenewalHost() = default;
  // now: the host's clock (the due instants are on it).
  virtual Nanos now() = 0;
  // until: done at `due_ns`, or earlier if the renewal is stopped: true to extend now, false to
  // end the renewal (stopped, the run's stop, a dead client). A frozen client is held here until
  // it thaws.
  virtual Ask<bool> until(Nanos due_ns) = 0;
  // invoked: the extension is about to be sent (recorded as invoked).
  virtual void invoked() = 0;
  // extend: the lock's extension, sent now; done when it returned.
  virtual Task<ExtendResult> extend() = 0;
  // completed: the extension returned `result`.
  virtual void completed(const ExtendResult& result) = 0;
};

// renewal_loop: extends a period after each return until the host says stop.
Task<void> renewal_loop(RenewalHost& host, Nanos period_ns);

}  // namespace locksim
