// process_transport.h (internal to the hosts): ProcessTransport, the pipes to one worker process
// (worker_protocol.h): it spawns the worker, writes its requests, reads its lines on a reader
// thread, waits for a reply within a time limit, and tells when the worker broke (it exited in
// the middle of a request, stayed silent too long, or printed a line that is not a message of
// the protocol). It records no history and knows no lock: what a message means is its host's
// (ProcessClient, process_client.h).
//
// Workers cannot outlive locksim: each dies with it (PR_SET_PDEATHSIG), is in a process group of
// its own (Ctrl-C reaches only locksim, which then stops them), and is killed and reaped when its
// transport ends.
//
//   ProcessTransport transport(clock, {.take = ..., .should_stop = ..., .broken = ...});
//   if (std::string error = transport.spawn(command, ""); !error.empty()) return error;
//   ProcessTransport::Reply hello = transport.call({{"op", "hello"}}, patience, false, {});
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "sim/core/clock.h"

namespace locksim::host {

// kWorkerPatienceMs: how long a worker may stay silent on one request (plus an acquire's own
// timeout) before it counts as hung. A library's own retries (redlock: about 2 s) and a command
// timeout (2 s) fit well inside.
inline constexpr std::int64_t kWorkerPatienceMs = 15000;

class ProcessTransport {
 public:
  // Host: what the transport asks of its owner.
  struct Host {
    // take: on the reader thread, every message of the worker (a JSON object whose fields have
    // the protocol's types) before it is queued for the call waiting; true: the host took it (an
    // event beside the calls), so it is not queued.
    std::function<bool(const nlohmann::json& message)> take;
    // should_stop: whether the run is over (a waiting call then ends, see call).
    std::function<bool()> should_stop;
    // broken: the worker broke; `description` names its command, what happened and the end of
    // its stderr.
    std::function<void(const std::string& description)> broken;
  };

  // Reply: the worker's answer to one request, or how the wait for it ended.
  struct Reply {
    nlohmann::json message;        // the reply line; null if none came
    bool worker_died = false;      // the worker exited (or was killed) first
    bool crashed_waiting = false;  // it killed itself at a crash_at point of state "busy"
    bool crash_point = false;      // it killed itself at a crash_at point
  };

  // `clock`: what the waits wait on (the run's base clock); `host`: see Host.
  ProcessTransport(const Clock& clock, Host host);
  // Ends the worker (end) and removes its stderr file if it wrote nothing there.
  ~ProcessTransport();
  ProcessTransport(const ProcessTransport&) = delete;
  ProcessTransport& operator=(const ProcessTransport&) = delete;

  // spawn: starts `command` with its stdin and stdout on pipes and its stderr appended to
  // `stderr_path` ("": inherited), and the reader thread; an error description or "".
  std::string spawn(const std::vector<std::string>& command, const std::string& stderr_path);
  // send: writes `request` as one line, with the protocol version.
  void send(nlohmann::json request);
  // call: sends `request` with the next id and waits for the reply with that id. A checkpoint
  // event ("at") on the way is handed to `at` (may be empty) without the transport's lock held;
  // after a "pause" the worker is told to continue once `at` returns, after a "crash" the worker's
  // end of input is expected. The worker is broken (Host::broken, then killed) if it stays silent
  // longer than `patience_ns` (not counting while frozen), prints a line that is not a message of
  // the protocol, or exits on its own. When Host::should_stop turns true, a `stop_gently` call
  // sends "stop" once and waits at most kWorkerPatienceMs more for its reply; any other is ended
  // by killing the worker, and never completes.
  Reply call(nlohmann::json request, Nanos patience_ns, bool stop_gently,
             const std::function<void(const nlohmann::json& event)>& at);
  // broken: reports the worker as broken (Host::broken) with `what` happened, its command, and
  // the end of its stderr.
  void broken(const std::string& what);
  // stderr_tail: "; its stderr (<path>) ends: ..." (or that it wrote nothing), "" if inherited.
  std::string stderr_tail() const;

  // kill: SIGKILL (a stopped worker too) and reaped; nothing if there is no worker.
  void kill();
  // end: kills the worker, closes the pipes and joins the reader thread (which calls Host::take).
  void end();
  // freeze: SIGSTOP, returning once the kernel reports the worker stopped; thaw: SIGCONT. While
  // frozen, the worker's silence is not a hang.
  void freeze();
  void thaw();

  pid_t pid() const { return pid_; }

 private:
  void read_lines();

  const Clock& clock_;
  Host host_;
  std::vector<std::string> command_;
  pid_t pid_ = -1;
  bool killed_ = false;              // locksim killed the worker (a crash, the end of the run)
  std::atomic<bool> frozen_{false};  // stopped by the nemesis: its silence is not a hang
  std::string stderr_path_;          // "": inherited
  int to_worker_ = -1;
  int from_worker_ = -1;
  std::thread reader_;
  std::int64_t next_id_ = 1;

  std::mutex mutex_;  // guards everything below
  std::condition_variable changed_;
  std::deque<nlohmann::json> inbox_;  // replies and "at" events, in arrival order
  bool eof_ = false;
  std::string garbage_;  // the first line that was not a JSON object
};

}  // namespace locksim::host
