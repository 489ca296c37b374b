// utf8.h: keeping a history's strings valid UTF-8.
//
// A lock's reply or a server's error text is bytes: a Lua script can return '\255\254'. Every
// output that carries such a string (history.jsonl, results.json, the reports, JUnit) is JSON or
// XML text, which must be UTF-8; one stray byte made the results writer abort after the history
// was written. So a string enters a history with each byte that is not part of a valid UTF-8
// sequence written as the four characters \xNN (StringTable::add does it), and says what it was.
//
//   std::string shown = escape_invalid_utf8("\xff\xfe ok");  // "\\xFF\\xFE ok"
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace locksim {

// utf8_sequence_length: the length of the valid UTF-8 sequence (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF) at the start of `text`; 0 if there is none.
std::size_t utf8_sequence_length(std::string_view text);

// is_utf8: whether all of `text` is valid UTF-8.
bool is_utf8(std::string_view text);

// escape_invalid_utf8: `text` with every byte outside a valid UTF-8 sequence as "\xNN"
// (uppercase hex); valid text is returned as it is.
std::string escape_invalid_utf8(std::string_view text);

}  // namespace locksim
