// pointer.h: resolve_pointer, JSON Pointers (RFC 6901) into a document the user gave, with the
// JSON path of what they name, for messages.
//
//   const PointerTarget target = resolve_pointer(document, "/steps/3/pause_ms");
//   if (!target.error.empty()) reader.fail(target.error);  // "$.steps has 3 elements, ..."
//   target.path;    // "$.steps[3].pause_ms"
//   *target.value;  // the value it names
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace locksim::json {

// PointerTarget: what a JSON Pointer names in one document.
struct PointerTarget {
  // The reference tokens, unescaped ("~1" is '/', "~0" is '~'); empty for "", the whole document.
  std::vector<std::string> tokens;
  // The JSON path of the value named ("$.steps[3].pause_ms"), or, when `error` is set, of the
  // deepest value the pointer reached.
  std::string path = "$";
  // The value named; nullptr when `error` is set.
  const nlohmann::json* value = nullptr;
  // Why the pointer names nothing in the document, in words that follow "<pointer>: ", e.g.
  // "$.steps has 3 elements; expected an index from 0 to 2, got 7"; "" when it names a value.
  std::string error;
};

// resolve_pointer: the value `pointer` names in `document`. Never throws: a malformed pointer (not
// empty and not starting with '/', a '~' not followed by 0 or 1) or one that names nothing (a
// missing key, an array index with a leading zero, "-", out of range, or a step into a number or a
// string) sets `error`. Linear in the pointer's length.
PointerTarget resolve_pointer(const nlohmann::json& document, std::string_view pointer);

// pointed_value: the value that `tokens`, taken from resolve_pointer on a document of the same
// shape, name in `document`. Asserts that they name one (a programmer error otherwise).
nlohmann::json& pointed_value(nlohmann::json& document, const std::vector<std::string>& tokens);

}  // namespace locksim::json
