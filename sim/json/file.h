// file.h: read_json_file, the one way locksim reads a JSON file given by the user.
//
// Only a regular file (or a symbolic link to one) is read: a FIFO, a character device such as
// /dev/zero, a socket or a directory is refused at once, without blocking in open() and without
// reading. A file larger than the limit is refused before reading, naming its size and the limit.
// The text is then parsed by parse_json_text (duplicate keys, nesting depth, number range).
//
//   nlohmann::json document = read_json_file("x.json", kScenarioFileLimits, "scenario file");
//   // InputError: "x.json: not a regular file (a FIFO); expected a scenario file"
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "sim/json/parse.h"

namespace locksim::json {

// require_regular_file: throws InputError unless `path` is a regular file (or a symbolic link to
// one): "x: not a regular file (a FIFO); expected a <what>", or "x: cannot open (<reason>)". Looks
// with stat() only and never opens, so it cannot block; for callers that open the file themselves.
void require_regular_file(const std::filesystem::path& path, std::string_view what);

// read_regular_file: the bytes of `path`, at most `max_bytes` of them; `what` names the kind of
// file in messages ("scenario file"). Throws InputError for a missing, unreadable, non-regular or
// too large file.
std::string read_regular_file(const std::filesystem::path& path, std::size_t max_bytes,
                              std::string_view what);

// read_json_file: read_regular_file with limits.max_bytes, then parse_json_text with `limits`.
nlohmann::json read_json_file(const std::filesystem::path& path, const JsonLimits& limits,
                              std::string_view what);

}  // namespace locksim::json
