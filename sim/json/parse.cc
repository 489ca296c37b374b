#include "sim/json/parse.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>
#include <vector>

#include "sim/core/error.h"
#include "sim/json/messages.h"

namespace locksim::json {
namespace {

using Json = nlohmann::json;

// Problem: what was wrong with a text, located either at a byte (a syntax error, found by the
// lexer) or at a JSON path (a duplicate key, too deep a nesting, found while building values).
struct Problem {
  std::optional<std::size_t> byte;  // 0-based offset of the character concerned
  std::string path;                 // "$.lock.ttl_ms", or empty
  std::string what;
};

// ProblemFound: thrown out of the SAX handler to stop nlohmann's parser at the first problem.
struct ProblemFound {
  Problem problem;
};

// Tokens and parser messages quoted in errors are cut to these many bytes.
constexpr std::size_t kMaxQuotedTokenBytes = 40;
constexpr std::size_t kMaxDetailBytes = 240;

// printable: `text` with every byte outside printable ASCII written as \xNN (invalid UTF-8 and
// control characters stay out of the terminal), cut to `max_bytes`.
std::string printable(std::string_view text, std::size_t max_bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string result;
  for (const char c : text) {
    if (result.size() >= max_bytes) {
      result += "...";
      break;
    }
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) {
      result += c;
    } else {
      result += "\\x";
      result += kHex[byte >> 4];
      result += kHex[byte & 0xf];
    }
  }
  return result;
}

// quoted_token: a number as written, cut when long ("1111...1111 (500 characters)").
std::string quoted_token(std::string_view token) {
  if (token.size() <= kMaxQuotedTokenBytes) return printable(token, kMaxQuotedTokenBytes);
  return printable(token.substr(0, 16), 16) + "..." + printable(token.substr(token.size() - 8), 8) +
         " (" + std::to_string(token.size()) + " characters)";
}

// underflows: true when the number written as `text` is not zero but was read as 0.
bool underflows(double value, std::string_view text) {
  if (value != 0.0) return false;
  const std::size_t exponent = text.find_first_of("eE");
  const std::string_view mantissa = text.substr(0, exponent);
  return std::any_of(mantissa.begin(), mantissa.end(), [](char c) { return c >= '1' && c <= '9'; });
}

// StrictDomBuilder: nlohmann's SAX interface, building the document like nlohmann's own DOM
// parser, plus the checks it lacks. The stack holds one frame per open container (a pointer and
// the current key), and paths are built only for an error, so memory is linear in the depth.
class StrictDomBuilder {
 public:
  StrictDomBuilder(Json& root, int max_depth) : root_(root), max_depth_(max_depth) {}

  bool null() { return add(Json(nullptr)); }
  bool boolean(bool value) { return add(Json(value)); }
  bool number_integer(Json::number_integer_t value) { return add(Json(value)); }
  bool number_unsigned(Json::number_unsigned_t value) { return add(Json(value)); }
  bool number_float(Json::number_float_t value, const Json::string_t& text) {
    if (underflows(value, text)) {
      fail_at_pending("number " + quoted_token(text) +
                      " is too small to represent (it would read as 0)");
    }
    return add(Json(value));
  }
  bool string(Json::string_t& value) { return add(Json(std::move(value))); }
  bool binary(Json::binary_t& value) { return add(Json::binary(std::move(value))); }

  bool start_object(std::size_t /*elements*/) { return open(Json::object()); }
  bool key(Json::string_t& key) {
    Frame& frame = frames_.back();
    frame.key = std::move(key);
    if (frame.container->contains(frame.key)) {
      fail_at_pending("duplicate key (each key may appear once in an object)");
    }
    return true;
  }
  bool end_object() { return close(); }
  bool start_array(std::size_t /*elements*/) { return open(Json::array()); }
  bool end_array() { return close(); }

  bool parse_error(std::size_t position, const std::string& last_token,
                   const Json::exception& error) {
    if (error.id == 406) {  // out_of_range: a number beyond a double, e.g. 1e400
      throw ProblemFound{Problem{position - std::min(position, last_token.size()), "",
                                 "number " + quoted_token(last_token) +
                                     " is out of range (a number must lie within +-1.7e308)"}};
    }
    // nlohmann's message starts "[json.exception.parse_error.101] parse error at line 1, column
    // 2: "; keep only the explanation after it, the position is given in our own format.
    std::string detail = error.what();
    const std::size_t colon = detail.find(": ");
    if (colon != std::string::npos) detail = detail.substr(colon + 2);
    throw ProblemFound{Problem{position == 0 ? 0 : position - 1, "",
                               "invalid JSON: " + printable(detail, kMaxDetailBytes)}};
  }

 private:
  struct Frame {
    Json* container;
    std::string key;  // objects: the key of the value being read
  };

  bool add(Json value) {
    place(std::move(value));
    return true;
  }

  // place: puts `value` where the parser is (the root, the next array element, or the current
  // key of an object) and returns where it now lives. An element's address stays valid while it
  // is open, because its parent only grows again after it has closed.
  Json* place(Json value) {
    if (frames_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Frame& top = frames_.back();
    if (top.container->is_array()) {
      top.container->push_back(std::move(value));
      return &top.container->back();
    }
    Json& slot = (*top.container)[top.key];
    slot = std::move(value);
    return &slot;
  }

  bool open(Json empty) {
    if (frames_.size() >= static_cast<std::size_t>(max_depth_)) {
      fail_at_pending("nested more than " + std::to_string(max_depth_) +
                      " levels deep (objects and arrays inside each other); the limit is " +
                      std::to_string(max_depth_));
    }
    Json* container = place(std::move(empty));
    frames_.push_back(Frame{container, {}});
    return true;
  }

  bool close() {
    frames_.pop_back();
    return true;
  }

  // pending_path: the JSON path of the value the parser is at (the one being added or opened).
  std::string pending_path() const {
    std::string path = "$";
    for (std::size_t i = 0; i < frames_.size(); ++i) {
      const Frame& frame = frames_[i];
      if (frame.container->is_array()) {
        // An outer array already holds its open child as last element; the innermost frame's
        // pending value is not added yet.
        const std::size_t size = frame.container->size();
        path = index_path(path, i + 1 < frames_.size() ? size - 1 : size);
      } else {
        path = member_path(path, frame.key);
      }
    }
    return path;
  }

  [[noreturn]] void fail_at_pending(std::string what) const {
    throw ProblemFound{Problem{std::nullopt, pending_path(), std::move(what)}};
  }

  Json& root_;
  int max_depth_;
  std::vector<Frame> frames_;
};

bool only_whitespace(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; });
}

// parse_strict: the document in `text`, or the first problem in it.
Json parse_strict(std::string_view text, const JsonLimits& limits, std::string_view size_noun) {
  if (text.size() > limits.max_bytes) {
    throw ProblemFound{Problem{std::nullopt, "",
                               std::string(size_noun) + " of " + std::to_string(text.size()) +
                                   " bytes is larger than the limit of " +
                                   std::to_string(limits.max_bytes) + " bytes"}};
  }
  // A UTF-16 text (Windows editors save one) has NUL in every other byte: name the encoding.
  if (text.starts_with("\xff\xfe") || text.starts_with("\xfe\xff")) {
    throw ProblemFound{Problem{0, "",
                               "invalid JSON: the text is UTF-16 (it starts with a UTF-16 byte "
                               "order mark); save it as UTF-8"}};
  }
  // nlohmann's lexer takes a NUL byte for the end of the input, so a binary file would be
  // reported as "unexpected end of input" at its first NUL: name the byte instead.
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    throw ProblemFound{Problem{nul, "",
                               "invalid JSON: a NUL byte (\\x00), which a JSON text never "
                               "contains (is this a binary file?)"}};
  }
  if (only_whitespace(text)) {
    throw ProblemFound{
        Problem{text.size(), "", "invalid JSON: no value (the input is empty or only whitespace)"}};
  }
  Json root;
  StrictDomBuilder builder(root, limits.max_depth);
  try {
    const bool complete = Json::sax_parse(text.begin(), text.end(), &builder,
                                          Json::input_format_t::json, /*strict=*/true,
                                          /*ignore_comments=*/false);
    // The builder never answers false: it throws on every problem.
    if (!complete) throw ProblemFound{Problem{std::nullopt, "", "invalid JSON"}};
  } catch (const Json::exception& error) {
    // Nothing else is expected from nlohmann here, but no exception of it may escape as an abort.
    throw ProblemFound{
        Problem{std::nullopt, "", "invalid JSON: " + printable(error.what(), kMaxDetailBytes)}};
  }
  return root;
}

// line_and_column: "line L, column C" (1-based, columns in bytes) of byte `offset` in `text`.
std::string line_and_column(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  const std::size_t line =
      1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + offset, '\n'));
  const std::size_t newline = offset == 0 ? std::string_view::npos : text.rfind('\n', offset - 1);
  const std::size_t line_start = newline == std::string_view::npos ? 0 : newline + 1;
  return "line " + std::to_string(line) + ", column " + std::to_string(offset - line_start + 1);
}

}  // namespace

nlohmann::json parse_json_text(std::string_view text, const std::string& file,
                               const JsonLimits& limits) {
  try {
    return parse_strict(text, limits, "a text");
  } catch (const ProblemFound& found) {
    const Problem& problem = found.problem;
    std::string where;
    if (problem.byte) where = line_and_column(text, *problem.byte) + ": ";
    if (!problem.path.empty()) where = problem.path + ": ";
    throw InputError(file + ": " + where + problem.what);
  }
}

nlohmann::json parse_json_line(std::string_view line, const std::string& file,
                               std::size_t line_number, const JsonLimits& limits) {
  try {
    return parse_strict(line, limits, "a line");
  } catch (const ProblemFound& found) {
    const Problem& problem = found.problem;
    std::string where;
    if (problem.byte) {
      where = "column " + std::to_string(std::min(*problem.byte, line.size()) + 1) + ": ";
    }
    if (!problem.path.empty()) where = problem.path + ": ";
    throw InputError(file + ":" + std::to_string(line_number) + ": " + where + problem.what);
  }
}

}  // namespace locksim::json
