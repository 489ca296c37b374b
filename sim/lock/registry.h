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

}  // namespace locksim
