// contention.h: contention_metrics, what a lock cost over a measured window of one run, computed
// from the history alone (a pure function: the same history always gives the same numbers).
//
// Definitions (the window is [begin_ns, end_ns); an event counts when its time is inside):
//   acquisitions       acquire `ok` events; throughput = acquisitions / window seconds.
//   latency            per acquire `ok`: its time minus the acquire's start, which is the
//                      intended start when the invoke carries one (open loop: a client that fell
//                      behind its schedule is charged for the queue it built) else the invoke.
//   handoff gap        per `enter` that follows another holder's (or the same client's) `exit` on
//                      the same key while at least one other client had an acquire pending at
//                      that exit: enter - exit, the time the lock sat free while wanted.
//   barging            a contended handoff (as above) won by the client that just released.
//   utilisation        per key, the share of the window some client was inside; averaged over
//                      the keys used in the window.
//   holders            per key, how many clients were inside at once: the most at any instant of
//                      the window (most_holders) and the mean over the window (mean_holders: the
//                      time inside summed over clients, over the window), the mean averaged over
//                      the keys used. A mutex's are at most 1 (more only in a violation); a
//                      semaphore's rise with its permits while clients wait for one.
//   fairness           acquisitions per client (every client that invoked an acquire): Jain's
//                      index (sum x)^2 / (n sum x^2), 1 = perfectly even; max/min share;
//                      starved clients (none in the window while others got some); longest wait
//                      (the longest acquire, finished or still pending at the window's end).
//   wasted attempts    per acquisition: busy answers before each success plus every attempt of
//                      the acquires that gave up.
//
//   ContentionMetrics m = contention_metrics(history, warmup_ns, warmup_ns + duration_ns);
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/clock.h"
#include "sim/history/event.h"
#include "sim/stats/histogram.h"

namespace locksim {

struct ContentionMetrics {
  double seconds = 0;
  std::int64_t acquisitions = 0;
  double throughput_per_s = 0;
  std::int64_t acquires_failed = 0;  // gave up (acquire_timeout_ms) or failed in the window
  LogHistogram latency_ns;
  // A read-write lock's (History::read_write): the acquisitions of the write hold and their
  // latency; a reader's are the rest (acquisitions - write_acquisitions).
  std::int64_t write_acquisitions = 0;
  LogHistogram write_latency_ns;
  LogHistogram handoff_gap_ns;
  std::int64_t contended_handoffs = 0;
  std::int64_t barges = 0;
  double barging_rate = 0;  // barges / contended_handoffs; 0 when there were none
  double utilisation = 0;   // 0..1
  int most_holders = 0;     // the most clients inside one key at once in the window
  double mean_holders = 0;  // clients inside a key on average over the window
  std::vector<std::int64_t> acquisitions_per_client;  // clients that invoked an acquire
  double jain = 0;           // 0 when nobody acquired
  double max_min_share = 0;  // max / min acquisitions per client; 0 when a client starved
  int starved_clients = 0;
  Nanos longest_wait_ns = 0;
  double wasted_attempts_per_acquisition = 0;
};

ContentionMetrics contention_metrics(const History& history, Nanos begin_ns, Nanos end_ns);

// jain_index: (sum x)^2 / (n sum x^2) over `counts`; 0 for no counts or all zero.
double jain_index(const std::vector<std::int64_t>& counts);

}  // namespace locksim
