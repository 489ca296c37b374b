#include "sim/client/renewal.h"

namespace locksim {

Task<void> renewal_loop(RenewalHost& host, Nanos period_ns) {
  Nanos due = host.now() + period_ns;
  while (co_await host.until(due)) {
    host.invoked();
    const ExtendResult result = co_await host.extend();
    due = host.now() + period_ns;
    host.completed(result);
  }
}

}  // namespace locksim
