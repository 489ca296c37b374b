// outcome.h: how the built-in variants turn Redis replies into lock outcomes. Internal to lock/.
//
// Every variant maps replies the same way, so the driver sees identical outcome semantics no
// matter which commands a variant uses:
//   acquire: status OK -> kAcquired, nil -> kBusy, any error (or an unexpected reply) -> kError;
//   release: integer n -> kReleased if n >= 1 else kNotHeld, any error -> kError.
#pragma once

#include <string>
#include <string_view>

#include "sim/lock/variant.h"

namespace locksim::lock_detail {

// acquire_outcome: the outcome of a `SET key value NX ...` reply; `token` is the value that was
// set. `command` names the command in the message of an unexpected reply.
AcquireAttempt acquire_outcome(RedisResult result, std::string token, std::string_view command);

// release_outcome: the outcome of a release whose reply is the number of keys deleted.
ReleaseResult release_outcome(RedisResult result, std::string_view command);

// The built-in variants, one per file; registry.cc lists them.
const LockVariant& naive_variant();
const LockVariant& set_nx_ex_variant();
const LockVariant& lua_owner_variant();

}  // namespace locksim::lock_detail
