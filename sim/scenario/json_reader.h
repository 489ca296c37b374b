// json_reader.h: JsonReader, a JSON value that knows its file and path, for strict validation.
//
// Internal to the scenario module. Every accessor either returns a value of the requested type
// and range or throws InputError("<file>: <path>: <what was wrong and what was expected>"), so
// the parsers read like a description of the format:
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

namespace locksim::scenario_internal {

// kMaxDurationMs: the upper bound of every duration in a scenario (one hour).
inline constexpr std::int64_t kMaxDurationMs = 3600000;

// member_path: "$.lock" + "ttl_ms" -> "$.lock.ttl_ms"; keys that are not identifiers are quoted
// ($["a b"]) so the path stays unambiguous.
std::string member_path(const std::string& parent, std::string_view key);
// index_path: "$.steps" + 2 -> "$.steps[2]".
std::string index_path(const std::string& parent, std::size_t index);

// closest_match: the candidate the user most likely meant by `word`: a case-insensitive match,
// else the nearest by edit distance (transpositions count once) if at most 2 and shorter than
// the longer of the two words. nullopt when nothing is close.
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);
// join: "a, b, c".
std::string join(const std::vector<std::string>& words);
// describe: a short rendering of a JSON value for "got ..." in messages.
std::string describe(const nlohmann::json& value);
// shortest_number: `value` the way a person writes it, the shortest decimal (no exponent) that
// reads back as the same double: 0.5 -> "0.5", 2.0 -> "2", 30 -> "30".
std::string shortest_number(double value);

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
  // member: the value at `key`; fails if the key is missing ("missing required key").
  JsonReader member(std::string_view key) const;
  // optional_member: the value at `key`, or nullopt if the key is absent.
  std::optional<JsonReader> optional_member(std::string_view key) const;

  // elements: requires an array (non-empty if `non_empty`) and returns its elements.
  std::vector<JsonReader> elements(bool non_empty) const;

  std::string string() const;
  std::string non_empty_string() const;
  // matching: a string matching `pattern`; `description` says in words what matches.
  std::string matching(const std::regex& pattern, std::string_view description) const;
  // one_of: a string from `allowed`; otherwise `unknown <noun> "x" (did you mean "y"?); <label>:
  // a, b`.
  std::string one_of(const std::vector<std::string>& allowed, std::string_view noun,
                     std::string_view label) const;

  // duration_ms: an integer number of milliseconds in [min_ms, max_ms].
  std::int64_t duration_ms(std::int64_t min_ms, std::int64_t max_ms) const;
  // count: a unitless integer in [min, max]; `what` names it in the range message.
  std::int64_t count(std::int64_t min, std::int64_t max, std::string_view what) const;
  // at_least: an integer >= min, without an upper bound; `what` names it in the message.
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

}  // namespace locksim::scenario_internal
