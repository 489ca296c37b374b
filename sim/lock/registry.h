// registry.h: the lock variants by name.
//
//   const LockVariant* v = find_variant("set_nx_ex");  // nullptr if unknown
//   for (const LockVariant* v : all_variants()) std::cout << v->name() << '\n';
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/lock/variant.h"

namespace locksim {

// all_variants: every built-in variant, in a stable order. The objects live for the program.
const std::vector<const LockVariant*>& all_variants();
// find_variant: the variant named `name`, or nullptr.
const LockVariant* find_variant(std::string_view name);
// variant_names: the names of all_variants(), for validating scenarios.
std::vector<std::string> variant_names();
// register_variant: adds a variant (a user's Lua lock from --variant-file) after the built-ins.
// Not thread-safe: call it before any client thread starts. The name must be new.
void register_variant(std::unique_ptr<const LockVariant> variant);

// reference_of: the correct built-in of the same kind as `variant`, against which a finding is
// judged the lock's own or a limit every lock of that kind has: zset_semaphore_server for a
// semaphore, hash_reentrant for a reentrant lock, rw_lock_fair for a read-write lock, redlock for a
// multi-server lock, lua_fair_queue for one that keeps a queue of waiters, lua_owner_renew for a
// renewing one, and lua_owner for a plain lease lock (docs/simulator.md, "Own findings and
// limits").
std::string reference_of(const LockVariant& variant);

}  // namespace locksim
