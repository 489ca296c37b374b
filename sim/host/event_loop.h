// event_loop.h: the event-loop client mode of workloads.
//
// With "clients_run_as": "event_loop" every client of a workload is the one coroutine client
// (workload_client, acquire_loop) on its own asynchronous hiredis connection, and one libevent
// loop on one thread drives them all, the way redis-benchmark drives its clients. On 2 cores, 50 threads blocking on 50 sockets spend their
// time switching; one loop does not. A client means exactly what it means on threads: its own
// connection, its own seeded random stream, its own log, and the same events at the same
// conservative points (invoke before the command is sent, ok/enter after its reply was read, exit
// before the release is sent), so the checker and the contention metrics cannot tell the modes
// apart. What the mode cannot express is refused up front (event_loop_refusal).
//
//   EventLoopWorkload loop(run);
//   if (std::string error = loop.connect(); !error.empty()) { ... }  // before the run starts
//   std::thread thread([&] { loop.run(); });                            // until every client ends
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/run/run_context.h"

struct event_base;
struct event;

namespace locksim::host {

// event_loop_refusal: why `request` cannot run in the event-loop client mode, or "" if it can
// (the variant must send one command per acquire attempt and per release).
std::string event_loop_refusal(const RunRequest& request);

class LoopClient;

class EventLoopWorkload {
 public:
  explicit EventLoopWorkload(RunContext& run);
  ~EventLoopWorkload();
  EventLoopWorkload(const EventLoopWorkload&) = delete;
  EventLoopWorkload& operator=(const EventLoopWorkload&) = delete;

  // connect: opens every client's connection (AUTH, SELECT, the variant's scripts loaded);
  // returns "" or what failed. Call once, before run().
  std::string connect();
  // run: drives the clients until each has finished its cycles (or its time window), or the run
  // stops (Ctrl-C, time limit, server lost). Call from one thread.
  void run();

 private:
  friend class LoopClient;
  void client_done();
  void connected_or_failed();
  static void on_tick(int fd, short what, void* self);

  RunContext& run_;
  event_base* base_ = nullptr;
  event* tick_ = nullptr;  // checks should_stop() while the loop runs
  std::vector<std::unique_ptr<LoopClient>> clients_;
  std::size_t active_ = 0;      // clients that have not finished
  std::size_t connecting_ = 0;  // clients whose set-up has not been answered
  Nanos stop_seen_ns_ = -1;  // when the loop first saw should_stop()
};

}  // namespace locksim::host
