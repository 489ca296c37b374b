// messages.h: the words of a validation message: JSON paths, "did you mean", and short renderings
// of values, shared by every reader of a JSON input (scenarios, variant files, histories).
//
//   member_path("$.lock", "ttl_ms")           // "$.lock.ttl_ms"
//   closest_match("ttll_ms", {"ttl_ms", "key"})  // "ttl_ms"
//   describe(json(-5))                         // "-5"
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace locksim::json {

// member_path: "$.lock" + "ttl_ms" -> "$.lock.ttl_ms"; keys that are not identifiers are quoted
// ($["a b"]) so the path stays unambiguous. A key longer than 100 bytes is shortened with "..."
// so that a hostile key cannot make a message megabytes long.
std::string member_path(const std::string& parent, std::string_view key);
// index_path: "$.steps" + 2 -> "$.steps[2]".
std::string index_path(const std::string& parent, std::size_t index);

// closest_match: the candidate the user most likely meant by `word`: a case-insensitive match,
// else the nearest by edit distance (transpositions count once) if at most 2 and shorter than
// the longer of the two words. nullopt when nothing is close. Linear in |word| for candidates
// whose length differs by more than 2.
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);
// join: "a, b, c".
std::string join(const std::vector<std::string>& words);
// describe: a short rendering of a JSON value for "got ..." in messages: objects and arrays by
// kind, scalars as JSON, strings longer than 60 characters cut with their length given.
std::string describe(const nlohmann::json& value);
// shortest_number: `value` the way a person writes it, the shortest decimal (no exponent) that
// reads back as the same double: 0.5 -> "0.5", 2.0 -> "2", 30 -> "30".
std::string shortest_number(double value);
// utf8_length: the number of characters (code points) in UTF-8 `text`.
std::size_t utf8_length(std::string_view text);

}  // namespace locksim::json
