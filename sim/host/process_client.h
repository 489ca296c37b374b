// process_client.h: ProcessClient, a client run as a `locksim worker`
// process behind the worker protocol (worker_protocol.h): the harness that turns the run's calls
// into the worker's requests and records their outcomes; the pipes to the worker are its
// ProcessTransport (process_transport.h).
//
// A workload that needs nothing of the harness between two calls (no link proxy, no topology,
// one server) runs whole in locksim's own worker (run_own_workload: the "workload" request), which
// hands its history back at the end. Everything else is driven call by call, as follows.
//
// The harness side records every event at its conservative point: the acquire's invoke before
// the request line is written, its ok and the enter when the reply line arrives, the exit before
// the release line is written. The transport's reader thread takes the worker's lines: replies go
// to the call waiting for them, renewal events are recorded in the client's renewal log as they
// arrive (so an extend is stamped no earlier than the worker sent it). A pause is SIGSTOP (the
// renewal thread freezes with the rest of the process) and a crash SIGKILL (the kernel closes the
// worker's connections).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "sim/host/client.h"
#include "sim/host/process_transport.h"

namespace locksim::host {

class ProcessClient final : public DriverClient {
 public:
  ProcessClient(RunContext& run, int index);
  ~ProcessClient() override;

  std::string connect() override;
  AcquireStatus acquire(const std::string& logical_key, std::int64_t timeout_ms,
                        CallFaults* faults = nullptr, Nanos intended_ns = -1) override;
  bool release(bool unsaved_token = false, CallFaults* faults = nullptr) override;
  void extend(CallFaults* faults) override;
  void crash() override;
  void end_renewal() override;
  void resource_read(const std::string& record_id) override;
  void resource_write(const std::string& record_id) override;

  // FaultTarget: SIGSTOP (returns once the kernel reports the worker stopped) and SIGCONT.
  void freeze() override;
  void thaw() override;

  // The workload runs in locksim's own worker (not in an adapter) when nothing of it needs the
  // harness between two calls: no link proxy, no topology, one server.
  bool runs_own_workload() const override;
  void run_own_workload() override;

  pid_t pid() const { return transport_.pid(); }

 private:
  class Release;
  class Extend;
  class Resource;
  using Reply = ProcessTransport::Reply;
  // call: sends `request` and waits for its reply; handles "at" events of checkpoints (a pause
  // waits for its conditions, then the worker is told to continue).
  Reply call(nlohmann::json request, CallFaults* faults);
  // take_event (the transport's reader thread): the worker's events beside the calls (a
  // workload's progress, an acquire that waits for the lock, a renewal's extend); false for any
  // other message, which goes to the call waiting.
  bool take_event(const nlohmann::json& message);
  void on_event(const nlohmann::json& event);

  // workload_scenario: the scenario document the worker runs its workload from (null: the
  // resolved scenario does not give back the run's workload, so the worker cannot run it).
  nlohmann::json workload_scenario() const;
  void take_history(const nlohmann::json& reply);

  bool locksim_worker_ = false;       // the worker is `locksim worker` (it said so in "hello")
  std::string history_path_;          // where a worker that ran its workload left its history
  ClientLog* nemesis_log_ = nullptr;  // the nemesis events of a workload run in the worker
  std::atomic<std::int64_t> cycles_told_{0};  // cycles the worker said were done (reader thread)
  // The topology's primary generation when the worker last heard of it: a request after a
  // restart or a change of primary says "reconnect".
  std::uint64_t primary_generation_ = 0;

  std::mutex renewal_mutex_;  // guards the two below
  std::string renewal_key_;   // the logical key and token the worker renews
  std::string renewal_token_;

  std::optional<RenewalRecord> renewal_record_;  // written only by the reader thread

  // Last: its reader thread calls into the members above (the destructor ends it first).
  ProcessTransport transport_;
};

}  // namespace locksim::host
