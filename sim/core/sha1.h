// sha1.h: sha1_hex, the SHA-1 digest Redis names scripts by (EVALSHA, SCRIPT LOAD,
// redis.sha1hex), as 40 lowercase hexadecimal digits.
//
//   sha1_hex("") == "da39a3ee5e6b4b0d3255bfef95601890afd80709"
#pragma once

#include <string>
#include <string_view>

namespace locksim {

// sha1_hex: the SHA-1 of `data` (any bytes), lowercase hex. Pure.
std::string sha1_hex(std::string_view data);

}  // namespace locksim
