// parse.h: parse_json_text and parse_json_line, the one strict JSON parser of locksim.
//
// Every JSON input (scenario files, --variant-file files, history.jsonl lines) is parsed here, so
// the caps on size and nesting live in one place. The parser is stricter than nlohmann's default:
//   - a key given twice in one object is an error at its JSON path (nlohmann keeps the last one,
//     hiding a typo'd copy-paste);
//   - nesting deeper than JsonLimits::max_depth is an error at its JSON path, raised as the
//     container opens, so memory stays linear in the depth that is accepted;
//   - a text longer than JsonLimits::max_bytes is refused before parsing;
//   - a number too large for a double (1e400) is an error at its line and column, one that
//     underflows to 0 (1e-400) an error at its JSON path;
//   - every other nlohmann exception becomes an InputError too: nothing escapes as an abort.
// Messages: "x.json: line 1, column 10: number 1e400 is out of range",
//           "x.json: $.lock.ttl_ms: duplicate key (each key may appear once in an object)",
//           "history.jsonl:7: column 3: invalid JSON: syntax error ...".
//
//   nlohmann::json document = parse_json_text(text, "x.json", kScenarioFileLimits);
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace locksim::json {

// JsonLimits: the caps of one kind of JSON input.
struct JsonLimits {
  std::size_t max_bytes = 0;  // the whole text
  int max_depth = 0;          // containers nested in each other: {} is 1, {"a": []} is 2
};

// The caps for each input, with room to spare: the largest catalogue scenario is 2 kB, nested 5
// deep; a history line is about 200 bytes, nested 2 deep.
inline constexpr JsonLimits kScenarioFileLimits{1024 * 1024, 64};
inline constexpr JsonLimits kVariantFileLimits{1024 * 1024, 64};
inline constexpr JsonLimits kHistoryLineLimits{1024 * 1024, 16};

// parse_json_text: the document in `text` (a whole file); `file` names it in messages, where
// positions are "line L, column C". Throws InputError.
nlohmann::json parse_json_text(std::string_view text, const std::string& file,
                               const JsonLimits& limits);

// parse_json_line: the document in one line of a JSON Lines file; messages start
// "<file>:<line_number>:" and give positions as "column C". Throws InputError.
nlohmann::json parse_json_line(std::string_view line, const std::string& file,
                               std::size_t line_number, const JsonLimits& limits);

}  // namespace locksim::json
