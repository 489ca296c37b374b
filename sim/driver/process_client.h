// process_client.h (internal to driver/): ProcessClient, a client run as a `locksim worker`
// process behind the worker protocol (worker_protocol.h).
//
// A workload that needs nothing of the harness between two calls (no link proxy, no topology,
// one server) runs whole in locksim's own worker (run_own_workload: the "workload" request), which
// hands its history back at the end. Everything else is driven call by call, as follows.
//
// The harness side records every event at its conservative point: the acquire's invoke before
// the request line is written, its ok and the enter when the reply line arrives, the exit before
// the release line is written. A reader thread takes the worker's lines: replies go to the call
// waiting for them, renewal events are recorded in the client's renewal log as they arrive (so
// an extend is stamped no earlier than the worker sent it). A pause is SIGSTOP (the renewal
// thread freezes with the rest of the process) and a crash SIGKILL (the kernel closes the
// worker's connections). Workers cannot outlive locksim: each dies with it (PR_SET_PDEATHSIG), is
// in a process group of its own (Ctrl-C reaches only locksim, which then stops them), and is
// killed and reaped when its client is destroyed.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "sim/driver/client.h"

namespace locksim::driver_internal {

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
  void lose_lock() override;
  void resource_read(const std::string& record_id) override;
  void resource_write(const std::string& record_id) override;

  // FaultTarget: SIGSTOP (returns once the kernel reports the worker stopped) and SIGCONT.
  void freeze() override;
  void thaw() override;

  // The workload runs in locksim's own worker (not in an adapter) when nothing of it needs the
  // harness between two calls: no link proxy, no topology, one server.
  bool runs_own_workload() const override;
  void run_own_workload() override;

  pid_t pid() const { return pid_; }

 private:
  // Reply: the worker's answer to one request, or how the wait for it ended.
  struct Reply {
    nlohmann::json message;      // the reply line; null if none came
    bool worker_died = false;    // the worker exited (or was killed) first
    bool crashed_waiting = false;  // it killed itself at a crash_at point of state "busy"
    bool crash_point = false;      // it killed itself at a crash_at point
  };
  std::string spawn();
  void send(nlohmann::json request);
  // call: sends `request` and waits for its reply; handles "at" events of checkpoints (a pause
  // waits for its conditions, then the worker is told to continue).
  Reply call(nlohmann::json request, CallFaults* faults);
  void read_lines();
  void on_event(const nlohmann::json& event);
  void kill_worker();
  // broken: reports the worker as broken (RunContext::fail_worker) with `what` happened, its
  // command, and the end of its stderr.
  void broken(const std::string& what);
  std::string stderr_tail() const;

  // workload_scenario: the scenario document the worker runs its workload from (null: the
  // resolved scenario does not give back the run's workload, so the worker cannot run it).
  nlohmann::json workload_scenario() const;
  void take_history(const nlohmann::json& reply);

  pid_t pid_ = -1;
  bool locksim_worker_ = false;       // the worker is `locksim worker` (it said so in "hello")
  std::string history_path_;          // where a worker that ran its workload left its history
  ClientLog* nemesis_log_ = nullptr;  // the nemesis events of a workload run in the worker
  std::atomic<std::int64_t> cycles_told_{0};  // cycles the worker said were done (reader thread)
  bool killed_ = false;          // locksim killed the worker (a crash, the end of the run)
  std::atomic<bool> frozen_{false};  // stopped by the nemesis: its silence is not a hang
  std::string stderr_path_;      // "": inherited
  int to_worker_ = -1;
  int from_worker_ = -1;
  std::thread reader_;
  std::int64_t next_id_ = 1;
  // The topology's primary generation when the worker last heard of it: a request after a
  // restart or a change of primary says "reconnect".
  std::uint64_t primary_generation_ = 0;

  std::mutex mutex_;  // guards everything below
  std::condition_variable changed_;
  std::deque<nlohmann::json> inbox_;  // replies and "at" events, in arrival order
  bool eof_ = false;
  std::string garbage_;  // the first line that was not a JSON object
  std::string renewal_key_;    // the logical key and token the worker renews
  std::string renewal_token_;

  std::optional<RenewalRecord> renewal_record_;  // written only by the reader thread
};

}  // namespace locksim::driver_internal
