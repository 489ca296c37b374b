// flags.h: strict parsing of the `locksim run` flags whose values CLI11 would accept too loosely.
//
// CLI11 converts "-1" and "18446744073709551616" for a std::uint64_t to 18446744073709551615 and
// an empty string to "not given"; an empty --out would write reports relative to "/". These
// functions refuse such values with a message naming the flag, before anything runs (exit 2).
//
//   run.seed = parse_seed_flag(seed_text);  // InputError: "--seed: expected an integer ..."
//   check_out_flag(run.out_dir);
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace locksim {

// parse_seed_flag: the decimal digits of `text` as a seed, 0..18446744073709551615. Anything else
// (a sign, spaces, hex, a fraction, an empty string, a larger number) is an InputError:
// `--seed: expected an integer from 0 to 18446744073709551615, got "-1"`.
std::uint64_t parse_seed_flag(std::string_view text);

// parse_duration_flag: "500ms", "10s", "2m", "1h" (a whole number and a unit; up to 24 h) as
// milliseconds. Anything else is an InputError naming `flag`.
std::int64_t parse_duration_flag(std::string_view flag, std::string_view text);

// check_out_flag: `path` may be a report directory: not empty, not an existing file that is not
// a directory, and its nearest existing part takes a new directory. InputError otherwise.
void check_out_flag(const std::string& path);

// check_output_file_flag: `path` may take an output file (--json, --junit, export --out): not
// empty, not a directory, in a directory that exists and takes a new file; a character device or
// FIFO is written into (sim/core/atomic_file.h). InputError naming `flag` otherwise, so the flag
// is refused before any work rather than after it.
void check_output_file_flag(std::string_view flag, const std::string& path);

// check_redis_flag: a given --redis value must not be empty (empty would silently mean "start a
// private server"). InputError otherwise.
void check_redis_flag(const std::string& url);

}  // namespace locksim
