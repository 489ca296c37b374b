// worker_protocol.h: the worker protocol, how locksim drives a client that runs as its own process.
//
// A worker (`locksim worker`, or an adapter around a third-party lock library) reads requests on
// stdin and writes replies and events on stdout, one JSON object per line. The worker needs no
// trusted clock: the harness records every event at the conservative point on its own side
// (enter when the acquire's reply line arrives, exit before the release line is sent). The one
// exception is `workload`, which only locksim's own worker is sent: it records on the machine's
// monotonic clock, as a thread client does.
//
// Requests carry "v" (the protocol version, kWorkerProtocol), an "id" the reply repeats and an
// "op":
//   hello                                  -> {"protocol":1,"worker":"locksim","version":"..."}
//   connect  {redis, client, variant, seed, lock:{ttl_ms, renew_period_ms, queue_timeout_ms,
//             [permits,] wait:{strategy, interval_ms, initial_ms, factor, max_ms, jitter,
//             fallback_ms}}[, clock_offset_ms][, clock_drift_ms_per_s][, servers][, cluster]}
//        servers: [{host, port, ..., name}], every server of the topology, for a library that
//        takes its lock over several (Redlock); cluster: the same for every node of a Redis
//        Cluster topology, the lock's primary first (its slot map's seeds), sent only to a
//        library whose adapter builds a cluster client ("cluster": true in libraries.json)
//   acquire  {key, ttl_ms, timeout_ms[, crash_at][, pause_at]}
//                                          -> ok {token, attempts[, fencing][, sent_after_ns]}
//   release  {key, token[, crash_at][, pause_at]}   -> ok {deleted}
//   extend   {key, token, ttl_ms}          -> ok {extended: 0|1}
//   stop_renewal                           -> ok   (Doc D's lost iteration: renew no more)
//   read     {resource:{kind, key}[, record]}        -> ok {value}
//   write    {resource:{kind, key}, value[, record][, fencing]} -> ok
//   continue                               (no reply: resumes a worker held at a pause_at point)
//   workload {scenario, client, seed, key_prefix, origin_ns, history}
//                                          -> ok {cycles_done, stopped_early, crashed, notes}
//        locksim's own worker only: runs the client's whole workload itself with the code a
//        thread client runs, on the run's clock (time 0 = origin_ns on the monotonic clock), and
//        leaves its history in the file `history` (sim/history/transfer.h)
//   stop                                   (no reply: ends a running workload at its next cycle)
// A client whose own clock drifts (connect's clock_drift_ms_per_s) gets "clock_origin_ns" on every
// request after connect: the run's time 0 on the monotonic clock, from which its clock drifts (time
// 0 is set only once every client is connected).
// Every reply has "id" and "result": "ok", "fail" (it did not happen: "error" and "message") or
// "info" (it may or may not have happened: a timeout, a closed connection). "error" is one of the
// history's error words (gave_up, timeout, closed, refused, protocol, reply_error,
// unexpected_reply, ...), and "attempts" comes with every acquire reply. "sent_after_ns" (optional)
// is how long after the request arrived the successful attempt was sent, by the worker's
// monotonic clock: the harness adds it to its invoke time to bound the lease start from below
// (a lease that began later than the harness thinks only ends later), which a long wait for
// the lock would otherwise push back to the invoke.
//
// Events (no "id") tell the harness what happens inside a call or beside it:
//   {"event":"busy"}                          the acquire found the lock held and waits for it
//   {"event":"at","point":"after_setnx","state":"open"|"busy","then":"pause"|"crash"}
//        a checkpoint of the variant was reached; "pause": the worker waits for "continue";
//        "crash": it kills itself (SIGKILL) right after this line
//   {"event":"extend","phase":"invoke"[,"monotonic_ns":T]}   the renewal thread sends an extend
//        (T: when, by CLOCK_MONOTONIC; the harness believes it from locksim's own worker only)
//   {"event":"extend","result":"ok","extended":1}   ...and its outcome (or fail/info + error)
//   {"event":"cycles","done":N}               a workload's progress, about every 200 ms
// A variant that renews starts renewing when an acquire succeeds and stops at the release.
// End of input (stdin closed) ends the worker; so does the harness's death (PR_SET_PDEATHSIG).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "sim/redis/endpoint.h"
#include "sim/scenario/scenario.h"

namespace locksim {

inline constexpr int kWorkerProtocol = 1;

// The parts of messages both sides read and write.
nlohmann::json endpoint_to_json(const Endpoint& endpoint);
Endpoint endpoint_from_json(const nlohmann::json& j);
nlohmann::json lock_to_json(const LockConfig& lock);
LockConfig lock_from_json(const nlohmann::json& j);

// run_worker: the `locksim worker` loop on stdin and stdout; returns the exit code.
int run_worker();

}  // namespace locksim
