// variant.h: LockVariant, one way of taking and releasing a Redis lock.
//
// A variant makes *one* acquire attempt or one release on the connection it is given. It never
// waits between attempts (the driver's WaitStrategy does), never writes history and never knows
// about faults (the driver wraps every call and records it). Variants are stateless and shared by
// all client threads: all per-client state lives in LockContext.
//
// A variant that issues several commands per operation calls `context.at("name")` between
// them; the driver uses these points to inject faults such as a crash between SETNX and EXPIRE
// (checkpoint may throw ClientCrashed, which the variant must let through). A variant whose busy
// answer leaves state behind (a queued waiter) calls `context.after_busy("name")` after it: a
// crash there is a client that dies while waiting, holding nothing.
//
//   const LockVariant& v = variant_by_name("lua_owner");
//   AcquireAttempt a = v.try_acquire(context, "locksim:run:lock", 200);
//   if (a.outcome == AcquireAttempt::Outcome::kAcquired) v.release(context, key, a.token);
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/clock.h"
#include "sim/core/random.h"
#include "sim/redis/connection.h"
#include "sim/redis/words.h"

namespace locksim {

class Script;

// CallState: where a variant's call stands when it reaches a checkpoint.
enum class CallState {
  kOpen,  // between two commands: what the call did so far is unknown to the driver (it may
          // already hold the key)
  kBusy,  // after an acquire attempt was answered busy: this client holds nothing
};

// LockContext: what a variant may use for one call: this client's connection, random stream and
// clock, a checkpoint callback (may be empty), and the client's identity for variants that keep
// per-waiter state on the server.
struct OneCommand;

struct LockContext {
  Connection& connection;
  Rng& rng;
  // clock: what a variant that measures time (Redlock's validity) reads: the run's clock, which
  // on the simulator is virtual. No default: a host that forgot it would measure real time.
  const Clock& clock;
  std::function<void(std::string_view point, CallState state)> checkpoint = {};
  // waiter_id: stable for the client across its calls and unique among the clients of a run (the
  // client's name); lua_fair_queue queues it. Must outlive the call.
  std::string_view waiter_id = {};
  // queue_timeout_ms: how long a queued waiter keeps its place without trying again
  // (lock.queue_timeout_ms); lua_fair_queue needs it > 0, other variants ignore it.
  std::int64_t queue_timeout_ms = 0;
  // nodes: for a variant over several independent servers (LockVariant::multi_server, Redlock),
  // one connection per server of the run's topology, in the topology's order, each with a short
  // command timeout (a node that does not answer in time counts as not granting); empty for
  // the others, which use `connection` (the topology's primary).
  std::span<Connection* const> nodes = {};
  // permits: how many holders a semaphore admits at once (lock.permits); a mutex ignores it.
  std::int64_t permits = 1;
  // clock_offset_ms: how far this client's own clock runs ahead of the run's (negative: behind),
  // for a variant that times permits with the client's clock (zset_semaphore): the scenario's
  // client_clocks. The run's clock itself is never moved.
  std::int64_t clock_offset_ms = 0;
  // clock_drift_ms_per_s: how many ms this client's own clock gains each second of `clock` since
  // clock_drift_origin_ns (negative: loses), the scenario's client_clocks; and that origin, the
  // instant of `clock` at which the drift is still 0 (the run's time 0).
  std::int64_t clock_drift_ms_per_s = 0;
  Nanos clock_drift_origin_ns = 0;
  // client_now_ms: the time this client's clock shows, in milliseconds of the run's clock: the
  // run's time, plus its offset, plus its drift times the seconds since the origin.
  std::int64_t client_now_ms() const {
    const Nanos now_ns = clock.now_ns();
    const Nanos since_ns = std::max<Nanos>(0, now_ns - clock_drift_origin_ns);
    return now_ns / 1000000 + clock_offset_ms + clock_drift_ms_per_s * since_ns / 1000000000;
  }
  // ttl_ms: the lock's lease (lock.ttl_ms), for a release that resets the lease while holds
  // remain (a reentrant lock's inner release); 0 where no host set it.
  std::int64_t ttl_ms = 0;
  // read: a read-write lock's acquire asks for a read hold (false: a write hold); others ignore it.
  bool read = false;
  // attempt_command: room, kept by the host for one acquire, for a one-command variant's attempt
  // (OneCommandVariant::try_acquire): the next attempt reuses its words, with a fresh token drawn
  // into them, rather than making them again at every poll. Null: each attempt is made afresh.
  std::optional<OneCommand>* attempt_command = nullptr;
  // acquisition_token: room, kept by the host for one acquire call, for the token of its first
  // attempt, which a user lock's later attempts of the same call send again ({token} is one per
  // acquire call, as a client library draws its token once and retries with it: a lock that
  // grants an idempotent retry, or that keys a waiting writer's intent by its token, needs it).
  // Null: each attempt's token is its own. The built-ins' attempts draw their own (no built-in
  // tells one from the other: a retry of SET NX is refused whatever its token).
  std::string* acquisition_token = nullptr;

  // at: a checkpoint between two commands of one call.
  void at(std::string_view point) const {
    if (checkpoint) checkpoint(point, CallState::kOpen);
  }
  // after_busy: a checkpoint after an acquire attempt was answered busy and left state behind
  // (a queued waiter): a crash here is a client that dies while waiting for the lock.
  void after_busy(std::string_view point) const {
    if (checkpoint) checkpoint(point, CallState::kBusy);
  }
};

// AcquireAttempt: the result of one attempt.
struct AcquireAttempt {
  enum class Outcome {
    kAcquired,  // the lock is ours; `token` identifies this acquisition
    kBusy,      // not granted: someone else holds it or, for a queue, it is not this
                // client's turn; the lock key is unchanged (a queue may have queued the waiter)
    kError,     // the attempt failed; see `error`
  };
  Outcome outcome = Outcome::kBusy;
  std::string token;  // kAcquired: the value stored in the key ("1" for variants without owner)
  RedisResult error;  // kError: what failed; error.indeterminate() means "may have acquired"
  // kAcquired: the fencing number the grant carried, greater than that of every earlier grant of
  // the key (lua_owner_fenced); -1: the variant hands out none.
  std::int64_t fencing = -1;
  // kAcquired: the lease the lock promises when it is shorter than ttl_ms, counted from when the
  // attempt's reply was read (Redlock's validity time: ttl - elapsed - drift); -1: ttl_ms.
  std::int64_t validity_ms = -1;
  // A multi-server variant: the indexes (into LockContext::nodes) of the servers that granted
  // the key in this attempt, whatever the outcome (a minority that was then released included).
  std::vector<int> granted_on = {};
};

// ReleaseResult: the result of one release.
struct ReleaseResult {
  enum class Outcome {
    kReleased,  // the variant deleted the key (deleted >= 1)
    kNotHeld,   // nothing was deleted: not the owner (refused) or the key was already gone
    kError,     // see `error`; error.indeterminate() means "may have deleted"
  };
  Outcome outcome = Outcome::kNotHeld;
  std::int64_t deleted = 0;  // keys deleted as the server reported
  RedisResult error;
};

// ExtendResult: the result of one lease extension (renewal).
struct ExtendResult {
  enum class Outcome {
    kExtended,  // the lease now ends ttl_ms from the server's receipt of the command
    kNotHeld,   // the key is gone or someone else's: nothing changed
    kError,     // see `error`
  };
  Outcome outcome = Outcome::kNotHeld;
  RedisResult error;
};

// OneCommand: an acquire attempt or a release that is exactly one command: the form the
// event-loop client mode sends on an asynchronous connection (LockVariant::acquire_command).
struct OneCommand {
  const Script* script = nullptr;  // set: EVALSHA script, the first `keys` of argv as KEYS
  Words argv;                      // the command itself, or the script's KEYS then ARGV
  std::size_t keys = 0;
  // token_word: an acquire's: which word of argv is the value it stores (kNoToken: none).
  static constexpr std::size_t kNoToken = static_cast<std::size_t>(-1);
  std::size_t token_word = kNoToken;

  std::string_view token() const { return token_word < argv.size() ? argv[token_word] : ""; }

  // words: argv from views, each word copied once into one buffer (an acquire attempt is built
  // at every poll).
  static Words words(std::initializer_list<std::string_view> words) { return Words(words); }
};

// run_one: sends `command` on `connection` (a script through Script::run) and returns the reply.
RedisResult run_one(Connection& connection, const OneCommand& command);

class LockVariant {
 public:
  virtual ~LockVariant() = default;

  // name: the registry name used in scenarios and on the command line ("lua_owner").
  virtual std::string_view name() const = 0;
  // summary: one line for `locksim list`, naming the commands and the source document.
  virtual std::string_view summary() const = 0;
  // uses_ttl: whether the key expires by itself (ttl_ms is honoured).
  virtual bool uses_ttl() const = 0;

  // try_acquire: one attempt to take `key` for `ttl_ms` (ignored without TTL).
  virtual AcquireAttempt try_acquire(const LockContext& context, const std::string& key,
                                     std::int64_t ttl_ms) const = 0;
  // release: give up `key`, acquired with `token`.
  virtual ReleaseResult release(const LockContext& context, const std::string& key,
                                const std::string& token) const = 0;

  // in_process: whether locksim can call this variant itself (threads, `locksim worker`); false
  // for a third-party library, whose clients run only as its adapter's processes.
  virtual bool in_process() const { return true; }
  // multi_server: whether the variant takes the lock on every server of the topology itself
  // (LockContext::nodes) rather than on one primary.
  virtual bool multi_server() const { return false; }
  // queues: whether the variant keeps a queue of waiters and promises them their turn (a fair
  // lock): barging past a waiter is then its own bug, and its reference is lua_fair_queue.
  virtual bool queues() const { return false; }
  // semaphore: whether the variant is a counting semaphore of lock.permits permits
  // (LockContext::permits): up to that many clients hold the key at once, each with a lease of
  // its own; the checker then counts holders against the permits. Its reference is
  // zset_semaphore_server.
  virtual bool semaphore() const { return false; }
  // reads_client_clock: whether the lock reads its client's own clock (LockContext::
  // client_now_ms), so that a client's clock run off the others' (the scenario's client_clocks)
  // can break it: the checker then names such a clock as the cause of a holder too many
  // ("client_clock"); a lock that reads no client's clock is not excused by one.
  virtual bool reads_client_clock() const { return false; }
  // reentrant: whether the lock is reentrant: its owner is the client (LockContext::waiter_id),
  // not one acquire's token; an acquire by the client that holds it succeeds at once and adds a
  // hold, each release takes one away, and the lock is freed when the last is gone, and only
  // then. Its release may answer 0 for an inner release (a hold undone, the lock still held).
  // Its reference is hash_reentrant.
  virtual bool reentrant() const { return false; }
  // read_write: whether the lock is a read-write lock: an acquire asks for a read hold
  // (LockContext::read) or a write hold; read holds share the lock, a write hold excludes
  // everyone. Its reference is rw_lock_fair.
  virtual bool read_write() const { return false; }
  // needs_replica: whether the variant's grant waits for a replica's acknowledgement (WAIT), so
  // that it can only be taken on a primary with a replica; on a lone server every acquire is
  // refused by design.
  virtual bool needs_replica() const { return false; }
  // stored_key: the Redis key the lock of `key` is kept at (a library may prefix it, or add to
  // its end: "mutex:<key>", "<key>:lock").
  virtual std::string stored_key(const std::string& key) const { return key; }
  // stored_prefix: what the stored key of every key that starts with `prefix` starts with (for
  // an ACL key pattern and a cleanup SCAN: stored_key(prefix) would put a suffix in the middle).
  virtual std::string stored_prefix(const std::string& prefix) const { return prefix; }

  // CheckpointSite: a named checkpoint of the variant and the call it is in.
  struct CheckpointSite {
    std::string_view point;
    bool in_acquire = true;  // false: in the release
  };
  // checkpoints: every checkpoint the variant's calls reach (context.at, context.after_busy), so
  // that `locksim explore` can crash or pause a client at each; none for a one-command variant.
  virtual std::vector<CheckpointSite> checkpoints() const { return {}; }

  // renews: whether the driver should keep extending the lease (extend()) on a renewal thread
  // while the lock is held (a watchdog, Docs B and D).
  virtual bool renews() const { return false; }
  // extend: sets the lease of `key` to ttl_ms if it is still held with `token`. Variants that
  // do not renew answer kNotHeld without touching the server.
  virtual ExtendResult extend(const LockContext& /*context*/, const std::string& /*key*/,
                              const std::string& /*token*/, std::int64_t /*ttl_ms*/) const {
    return {};
  }

  // The one-command form. A variant whose acquire attempt and release are each one command (no
  // checkpoint between commands) describes them here, so that the event-loop client
  // mode can send them without a thread per client, and reads their replies with read_acquire
  // and read_release. Its try_acquire and release are built from the same pieces, so a reply
  // means the same in both modes. Other variants answer nullopt (and are run on threads).
  virtual std::optional<OneCommand> acquire_command(const std::string& /*key*/,
                                                    std::int64_t /*ttl_ms*/, Rng& /*rng*/) const {
    return std::nullopt;
  }
  virtual AcquireAttempt read_acquire(RedisResult result, std::string_view token) const;
  virtual std::optional<OneCommand> release_command(const std::string& /*key*/,
                                                    const std::string& /*token*/) const {
    return std::nullopt;
  }
  virtual ReleaseResult read_release(RedisResult result) const;
  // one_command: whether both forms exist.
  bool one_command() const;
  // extend_command / read_extend: a renewing variant's extension as one command, and what its
  // reply means (the event-loop host sends it from its renewal timer); its extend() is built from
  // the same pieces. Other variants answer nullopt.
  virtual std::optional<OneCommand> extend_command(const std::string& /*key*/,
                                                   const std::string& /*token*/,
                                                   std::int64_t /*ttl_ms*/) const {
    return std::nullopt;
  }
  virtual ExtendResult read_extend(RedisResult result) const;
};

}  // namespace locksim
