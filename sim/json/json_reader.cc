#include "sim/json/json_reader.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "sim/core/error.h"

namespace locksim::json {
namespace {

std::string suggestion(std::string_view word, const std::vector<std::string>& candidates) {
  const std::optional<std::string> match = closest_match(word, candidates);
  return match ? " (did you mean \"" + *match + "\"?)" : "";
}

}  // namespace

JsonReader::JsonReader(const nlohmann::json& value, std::string path, const std::string& file)
    : value_(&value), path_(std::move(path)), file_(&file) {}

void JsonReader::fail(std::string_view what) const {
  throw InputError(*file_ + ": " + path_ + ": " + std::string(what));
}

void JsonReader::expect_object(const std::vector<std::string>& allowed) const {
  if (!value_->is_object()) fail("expected an object, got " + describe(*value_));
  for (const auto& [key, child] : value_->items()) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    const std::string hint = suggestion(key, allowed);
    JsonReader(child, member_path(path_, key), *file_)
        .fail("unknown key" + (hint.empty() ? "; allowed keys: " + join(allowed) : hint));
  }
}

std::vector<std::string> JsonReader::keys() const {
  if (!value_->is_object()) fail("expected an object, got " + describe(*value_));
  std::vector<std::string> out;
  for (const auto& item : value_->items()) out.push_back(item.key());
  return out;
}

bool JsonReader::has(std::string_view key) const {
  return value_->is_object() && value_->contains(key);
}

JsonReader JsonReader::member(std::string_view key) const {
  std::optional<JsonReader> child = optional_member(key);
  if (!child) fail("missing required key \"" + std::string(key) + "\"");
  return *child;
}

std::optional<JsonReader> JsonReader::optional_member(std::string_view key) const {
  if (!value_->is_object()) fail("expected an object, got " + describe(*value_));
  const auto found = value_->find(key);
  if (found == value_->end()) return std::nullopt;
  return JsonReader(*found, member_path(path_, key), *file_);
}

std::vector<JsonReader> JsonReader::elements(bool non_empty) const {
  if (!value_->is_array()) fail("expected an array, got " + describe(*value_));
  if (non_empty && value_->empty()) fail("expected a non-empty array, got []");
  std::vector<JsonReader> result;
  result.reserve(value_->size());
  for (std::size_t i = 0; i < value_->size(); ++i) {
    result.emplace_back((*value_)[i], index_path(path_, i), *file_);
  }
  return result;
}

std::string JsonReader::string() const {
  if (!value_->is_string()) fail("expected a string, got " + describe(*value_));
  return value_->get<std::string>();
}

std::string JsonReader::non_empty_string() const {
  std::string result = string();
  if (result.empty()) fail("expected a non-empty string");
  return result;
}

std::string JsonReader::string(std::size_t max_characters) const {
  std::string result = string();
  const std::size_t length = utf8_length(result);
  if (length > max_characters) {
    fail("expected a string of at most " + std::to_string(max_characters) + " characters, got " +
         std::to_string(length) + " characters");
  }
  return result;
}

std::string JsonReader::non_empty_string(std::size_t max_characters) const {
  std::string result = string(max_characters);
  if (result.empty()) fail("expected a non-empty string");
  return result;
}

std::string JsonReader::matching(const std::regex& pattern, std::string_view description) const {
  std::string result = string();
  if (!std::regex_match(result, pattern)) {
    fail("expected " + std::string(description) + ", got " + describe(*value_));
  }
  return result;
}

std::string JsonReader::one_of(const std::vector<std::string>& allowed, std::string_view noun,
                               std::string_view label) const {
  if (!value_->is_string()) {
    fail("expected a " + std::string(noun) + " (a string), got " + describe(*value_));
  }
  std::string word = value_->get<std::string>();
  if (std::find(allowed.begin(), allowed.end(), word) != allowed.end()) return word;
  fail("unknown " + std::string(noun) + " " + describe(*value_) + suggestion(word, allowed) + "; " +
       std::string(label) + ": " + join(allowed));
}

std::int64_t JsonReader::integer(std::string_view type_error) const {
  if (!value_->is_number_integer()) {
    std::string what = "expected " + std::string(type_error) + ", got " + describe(*value_);
    // A quoted number is a common slip when a file is generated; say how to fix it.
    if (value_->is_string()) {
      const std::string text = value_->get<std::string>();
      if (!text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c)) || c == '-';
          })) {
        what += " (write the number without quotes)";
      }
    }
    fail(what);
  }
  if (value_->is_number_unsigned() &&
      value_->get<std::uint64_t>() >
          static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return std::numeric_limits<std::int64_t>::max();  // out of every range; the caller says so
  }
  return value_->get<std::int64_t>();
}

std::int64_t JsonReader::duration_ms(std::int64_t min_ms, std::int64_t max_ms) const {
  const std::int64_t result = integer("an integer number of milliseconds");
  if (result < min_ms || result > max_ms) {
    fail("expected a duration in ms between " + std::to_string(min_ms) + " and " +
         std::to_string(max_ms) + ", got " + describe(*value_));
  }
  return result;
}

RangeMs JsonReader::duration_range_ms(std::int64_t min_ms, std::int64_t max_ms) const {
  if (!value_->is_object()) {
    if (!value_->is_number_integer()) {
      fail("expected an integer number of milliseconds or {\"min\": ms, \"max\": ms}, got " +
           describe(*value_));
    }
    const std::int64_t fixed_ms = duration_ms(min_ms, max_ms);
    return RangeMs{fixed_ms, fixed_ms};
  }
  expect_object({"min", "max"});
  RangeMs range;
  range.min_ms = member("min").duration_ms(min_ms, max_ms);
  range.max_ms = member("max").duration_ms(min_ms, max_ms);
  if (range.min_ms > range.max_ms) {
    fail("\"min\" (" + std::to_string(range.min_ms) + ") must not exceed \"max\" (" +
         std::to_string(range.max_ms) + ")");
  }
  return range;
}

std::int64_t JsonReader::count(std::int64_t min, std::int64_t max, std::string_view what) const {
  const std::int64_t result = integer("an integer");
  if (result < min || result > max) {
    fail("expected " + std::string(what) + " between " + std::to_string(min) + " and " +
         std::to_string(max) + ", got " + describe(*value_));
  }
  return result;
}

std::int64_t JsonReader::at_least(std::int64_t min, std::string_view what) const {
  const std::int64_t result = integer("an integer");
  // integer() clamps what lies beyond int64 to its maximum; without an upper bound of its own,
  // this reader must refuse it here rather than take 2^64 - 1 as 2^63 - 1.
  const bool beyond_int64 =
      value_->is_number_unsigned() &&
      value_->get<std::uint64_t>() >
          static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (result < min) {
    fail("expected " + std::string(what) + " (an integer >= " + std::to_string(min) + "), got " +
         describe(*value_));
  }
  if (beyond_int64) {
    fail("expected " + std::string(what) + " (an integer >= " + std::to_string(min) +
         " and at most " + std::to_string(std::numeric_limits<std::int64_t>::max()) + "), got " +
         describe(*value_));
  }
  return result;
}

double JsonReader::probability() const {
  if (!value_->is_number()) fail("expected a probability (a number), got " + describe(*value_));
  const double result = value_->get<double>();
  if (!(result >= 0.0 && result <= 1.0)) {
    fail("expected a probability between 0 and 1, got " + describe(*value_));
  }
  return result;
}

double JsonReader::number(std::string_view what) const {
  if (!value_->is_number()) {
    fail("expected " + std::string(what) + " (a number), got " + describe(*value_));
  }
  return value_->get<double>();
}

bool JsonReader::boolean() const {
  if (!value_->is_boolean()) fail("expected true or false, got " + describe(*value_));
  return value_->get<bool>();
}

nlohmann::json range_json(const RangeMs& range) {
  return {{"min", range.min_ms}, {"max", range.max_ms}};
}

}  // namespace locksim::json
