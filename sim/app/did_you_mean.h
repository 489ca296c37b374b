// did_you_mean.h: did_you_mean, the " (did you mean "x"?)" hint of a command-line error.
//
// A small local copy of the scenario loader's rule (case-insensitive equality first, then the
// nearest name within two edits, never one that shares nothing with the word), so that app/ does
// not depend on the loader's internals.
//
//   did_you_mean("lua_ownr", variant_names())  // " (did you mean \"lua_owner\"?)"
//   did_you_mean("zzz", variant_names())       // ""
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace locksim {

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace locksim
