// outcome.h: how the built-in variants turn Redis replies into lock outcomes. Internal to lock/.
//
// Every variant maps replies the same way, so the driver sees identical outcome semantics no
// matter which commands a variant uses:
//   acquire: status OK -> kAcquired, nil -> kBusy, any error (or an unexpected reply) -> kError;
//   acquire by SETNX or a script: integer 1 -> kAcquired, 0 -> kBusy, anything else -> kError;
//   release: integer n -> kReleased if n >= 1 else kNotHeld, any error -> kError; a negative
//   integer (or one past 2^31 - 1) is no count of keys deleted: an unexpected reply -> kError.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "sim/lock/variant.h"
#include "sim/redis/script.h"

namespace locksim::lock_detail {

// acquire_outcome: the outcome of a `SET key value NX ...` reply; `token` is the value that was
// set. `command` names the command in the message of an unexpected reply.
AcquireAttempt acquire_outcome(RedisResult&& result, std::string_view token,
                               std::string_view command);

// flag_acquire_outcome: the outcome of an acquire whose reply is integer 1 (set) or 0 (busy), as
// SETNX and the acquire scripts return.
AcquireAttempt flag_acquire_outcome(RedisResult&& result, std::string_view token,
                                    std::string_view command);

// is_deleted_count: whether `reply` is a count of keys deleted, as a release may answer: an
// integer from 0 (refused, or already gone) to 2^31 - 1.
bool is_deleted_count(const Reply& reply);

// release_outcome: the outcome of a release whose reply is the number of keys deleted.
ReleaseResult release_outcome(RedisResult&& result, std::string_view command);

// unexpected_reply: `result` turned into a kUnexpectedReply error (indeterminate: the lock
// answered outside its contract) for a reply of a type `command` never returns: we cannot tell
// what the server did.
RedisResult unexpected_reply(RedisResult result, std::string_view command);

// acquire_with_fresh_token: `SET key <fresh 32-hex token> NX PX ttl_ms`, the owner-token acquire
// shared by lua_owner (and lua_owner_renew) and get_then_del.
AcquireAttempt acquire_with_fresh_token(const LockContext& context, const std::string& key,
                                        std::int64_t ttl_ms);

// compare_and_delete_script: the owner-checked release of lua_owner (KEYS[1] = key, ARGV[1] =
// token; returns the number of keys deleted), shared by every variant that releases that way.
const Script& compare_and_delete_script();

// OneCommandVariant: a variant whose acquire attempt and release are one command each. It
// describes them once (acquire_command/read_acquire, release_command/read_release) and the
// blocking calls are built from those, so both client modes send and read the same thing.
class OneCommandVariant : public LockVariant {
 public:
  // (The command is read where acquire_command made it: its words are a buffer of a hundred
  // bytes, moved out of the optional at every attempt before.)
  // (An attempt after the first reuses the acquire's room, LockContext::attempt_command, where
  // the variant can redraw its token; otherwise the command is read where acquire_command made
  // it.)
  AcquireAttempt try_acquire(const LockContext& context, const std::string& key,
                             std::int64_t ttl_ms) const final {
    if (std::optional<OneCommand>* kept = context.attempt_command) {
      if (!kept->has_value()) {
        *kept = acquire_command(key, ttl_ms, context.rng);
        return read_acquire(run_one(context.connection, **kept), (*kept)->token());
      }
      if (redraw_token(**kept, context.rng)) {
        return read_acquire(run_one(context.connection, **kept), (*kept)->token());
      }
    }
    const std::optional<OneCommand> command = acquire_command(key, ttl_ms, context.rng);
    return read_acquire(run_one(context.connection, *command), command->token());
  }
  ReleaseResult release(const LockContext& context, const std::string& key,
                        const std::string& token) const final {
    const std::optional<OneCommand> command = release_command(key, token);
    return read_release(run_one(context.connection, *command));
  }

 protected:
  // redraw_token: turns `command`, this variant's acquire_command for the key and TTL of the
  // attempt at hand, into the next attempt's by drawing its token afresh from `rng`, exactly as
  // acquire_command draws it (the same draws, so a schedule does not change); false if the
  // variant's attempts differ in more than that (each is then made anew).
  virtual bool redraw_token(OneCommand& /*command*/, Rng& /*rng*/) const { return false; }
};

// UnconditionalDelVariant: a one-command variant released by a plain `DEL key`, whoever holds it
// (Doc E's naive and auto-release locks).
class UnconditionalDelVariant : public OneCommandVariant {
 public:
  std::optional<OneCommand> release_command(const std::string& key,
                                            const std::string& /*token*/) const final {
    return OneCommand{nullptr, OneCommand::words({"DEL", key})};
  }
  ReleaseResult read_release(RedisResult result) const final {
    return release_outcome(std::move(result), "DEL");
  }
};

// The built-in variants, one per file; registry.cc lists them.
const LockVariant& naive_variant();
const LockVariant& set_nx_ex_variant();
const LockVariant& lua_owner_variant();
const LockVariant& setnx_then_expire_variant();
const LockVariant& lua_setnx_expire_variant();
const LockVariant& get_then_del_variant();
const LockVariant& lua_acquire_owner_variant();
const LockVariant& lua_owner_renew_variant();
const LockVariant& no_lock_variant();
const LockVariant& lua_fair_queue_variant();
const LockVariant& lua_owner_fenced_variant();
const LockVariant& redlock_variant();
const LockVariant& lua_owner_wait_variant();
const LockVariant& zset_semaphore_variant();
const LockVariant& zset_semaphore_server_variant();
const LockVariant& fair_semaphore_variant();
const LockVariant& hash_reentrant_variant();
const LockVariant& reentrant_counter_variant();
const LockVariant& rw_lock_variant();
const LockVariant& rw_lock_fair_variant();

}  // namespace locksim::lock_detail
