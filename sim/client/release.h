// release.h: a release, written once for every host, in two layers; and a scenario's extend step,
// recorded the same way (extend_call).
//
// release_call is the release a client records: it stops renewing, leaves the critical section
// (exit, before anything is sent: the conservative point), invokes the release with the token
// (or one never saved), has its host carry it out, and records how it ended. The thread client,
// the event loop and the process harness run it; the harness's host carries the release out in
// the worker process.
//
// carry_out_release is what a client sends for it, recorded by nobody: the variant's release, a
// new connection after an I/O error (never reuse one), and after a release that freed the key
// the wait strategy's signal to its waiters (notify, pubsub). The thread client, the event loop
// and `locksim worker` run it over their ReleaseIo; a blocking host answers at once (run_inline),
// the event loop when the reply arrives.
//
//   co_await release_call(host, record, unsaved_token);   // host.release_with() calls:
//   ReleaseResult r = co_await carry_out_release(io, full_key, token);
#pragma once

#include <optional>
#include <string>

#include "sim/client/record.h"
#include "sim/core/task.h"
#include "sim/lock/variant.h"

namespace locksim {

// ReleaseHost: what release_call asks of the host of a recorded client.
class ReleaseHost {
 public:
  virtual ~ReleaseHost() = default;
  // end_renewal: done once the client renews no more (an extension under way ended first). A
  // client whose renewal runs elsewhere (a worker process stops its own) has nothing to do.
  virtual Task<void> end_renewal() { co_return; }
  // outside: the client has left the critical section (its exit is recorded, its release not
  // yet sent); a scripted run's conditions read it.
  virtual void outside() {}
  // release_with: the release with `token`, sent now; its outcome once it ended, or nullopt if
  // the client crashed during it (the host has recorded the crash).
  virtual Task<std::optional<ReleaseOutcome>> release_with(std::string token) = 0;
};

// release_call: the recorded release of the lock `record` holds (or of a release left pending
// by a cancelled one, which has left already); true once its end is recorded, false if the
// client crashed during it.
Task<bool> release_call(ReleaseHost& host, ClientRecord& record, bool unsaved_token);

// ExtendHost: what a recorded extension (a scenario's extend step) asks of its host.
class ExtendHost {
 public:
  virtual ~ExtendHost() = default;
  // extend_with: the extension of the lease held (its key and token), sent now; its outcome once
  // it ended, or nullopt if the client crashed during it (the host has recorded the crash).
  virtual Task<std::optional<ExtendOutcome>> extend_with(std::string key, std::string token) = 0;
};

// extend_call: one recorded extension of the lease `record` holds.
Task<void> extend_call(ExtendHost& host, ClientRecord& record);

// ReleaseIo: what carry_out_release asks of the host that talks to the server.
class ReleaseIo {
 public:
  virtual ~ReleaseIo() = default;
  // send_release: the variant's release of `key` with `token`, sent now; done when answered.
  virtual Task<ReleaseResult> send_release(const std::string& key, const std::string& token) = 0;
  // reconnect: after a release's I/O error.
  virtual void reconnect() = 0;
  // signal_release: after a release that freed `key`: the wait strategy's signal, if it has one
  // (release_signal, sim/client/wait.h); its reply means nothing.
  virtual Task<void> signal_release(const std::string& key) = 0;
};

// needs_reconnect: after an I/O error (a timeout, a closed connection, a protocol error) a
// client never reuses its connection.
bool needs_reconnect(const RedisResult& result);

// carry_out_release: the release of `key` with `token` as the client sends it.
Task<ReleaseResult> carry_out_release(ReleaseIo& io, std::string key, std::string token);

}  // namespace locksim
