// json_reader.h: JsonReader, a JSON value that knows its file and path, for strict validation.
//
// Every accessor either returns a value of the requested type and range or throws
// InputError("<file>: <path>: <what was wrong and what was expected>"), so the parsers of
// scenario files and variant files read like a description of their format:
//
//   JsonReader lock = root.member("lock");
//   lock.expect_object({"key", "ttl_ms", "acquire_timeout_ms", "wait"});
//   config.ttl_ms = lock.member("ttl_ms").duration_ms(1, 3600000);
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/clock.h"
#include "sim/json/messages.h"

namespace locksim::json {

// kMaxDurationMs: the upper bound of every duration in a scenario (one hour).
inline constexpr std::int64_t kMaxDurationMs = 3600000;

// JsonReader: a view of one JSON value at `path` in `file`. Holds references: the document and
// file name must outlive it.
class JsonReader {
 public:
  JsonReader(const nlohmann::json& value, std::string path, const std::string& file);

  const nlohmann::json& value() const { return *value_; }
  const std::string& path() const { return path_; }
  const std::string& file() const { return *file_; }

  // fail: throws InputError "<file>: <path>: <what>".
  [[noreturn]] void fail(std::string_view what) const;

  // expect_object: requires an object whose keys are all in `allowed`; an unknown key fails at
  // its own path with a did-you-mean, or with the list of allowed keys.
  void expect_object(const std::vector<std::string>& allowed) const;
  bool has(std::string_view key) const;
  // keys: the keys of an object (fails unless it is one), in document order.
  std::vector<std::string> keys() const;
  // member: the value at `key`; fails if the key is missing ("missing required key").
  JsonReader member(std::string_view key) const;
  // optional_member: the value at `key`, or nullopt if the key is absent.
  std::optional<JsonReader> optional_member(std::string_view key) const;

  // elements: requires an array (non-empty if `non_empty`) and returns its elements.
  std::vector<JsonReader> elements(bool non_empty) const;

  std::string string() const;
  std::string non_empty_string() const;
  // string: a string of at most `max_characters` characters (UTF-8 code points); a longer one
  // fails with its length, so a 50 MB description is refused rather than copied into reports.
  std::string string(std::size_t max_characters) const;
  std::string non_empty_string(std::size_t max_characters) const;
  // matching: a string matching `pattern`; `description` says in words what matches.
  std::string matching(const std::regex& pattern, std::string_view description) const;
  // one_of: a string from `allowed`; otherwise `unknown <noun> "x" (did you mean "y"?); <label>:
  // a, b`.
  std::string one_of(const std::vector<std::string>& allowed, std::string_view noun,
                     std::string_view label) const;

  // duration_ms: an integer number of milliseconds in [min_ms, max_ms].
  std::int64_t duration_ms(std::int64_t min_ms, std::int64_t max_ms) const;
  // duration_range_ms: either a fixed duration (5) or an inclusive range ({"min": 1, "max": 5}),
  // each bound in [min_ms, max_ms] and min not above max.
  RangeMs duration_range_ms(std::int64_t min_ms, std::int64_t max_ms) const;
  // count: a unitless integer in [min, max]; `what` names it in the range message.
  std::int64_t count(std::int64_t min, std::int64_t max, std::string_view what) const;
  // at_least: an integer from min to the int64 maximum; `what` names it in the message.
  std::int64_t at_least(std::int64_t min, std::string_view what) const;
  // probability: a number in [0, 1].
  double probability() const;
  // number: any JSON number (integer or not); `what` names it in the type message.
  double number(std::string_view what) const;
  // boolean: true or false.
  bool boolean() const;

 private:
  // integer: the value as int64 if it is a JSON integer that fits, else fails with `type_error`.
  std::int64_t integer(std::string_view type_error) const;

  const nlohmann::json* value_;
  std::string path_;
  const std::string* file_;
};

// range_json: `range` in the form duration_range_ms reads back: {"min": ms, "max": ms}.
nlohmann::json range_json(const RangeMs& range);

}  // namespace locksim::json
