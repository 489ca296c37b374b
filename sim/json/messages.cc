#include "sim/json/messages.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <system_error>

namespace locksim::json {
namespace {

// Keys and strings quoted in messages are cut after this many bytes.
constexpr std::size_t kMaxQuotedKeyBytes = 100;
constexpr std::size_t kMaxQuotedStringCharacters = 60;

bool is_identifier(std::string_view key) {
  if (key.empty() || std::isdigit(static_cast<unsigned char>(key.front()))) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

std::string lowercase(std::string_view word) {
  std::string result(word);
  for (char& c : result) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return result;
}

// as_json_string: `text` as a JSON string; bytes that are not UTF-8 become U+FFFD instead of
// throwing.
std::string as_json_string(std::string_view text) {
  return nlohmann::json(std::string(text))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// utf8_prefix: the first `characters` code points of `text`.
std::string_view utf8_prefix(std::string_view text, std::size_t characters) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 && seen++ == characters) {
      return text.substr(0, i);
    }
  }
  return text;
}

// edit_distance: optimal string alignment distance, so the common typo of two swapped letters
// ("tll_ms") costs 1 like a single wrong letter.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::string member_path(const std::string& parent, std::string_view key) {
  if (is_identifier(key) && key.size() <= kMaxQuotedKeyBytes) {
    return parent + "." + std::string(key);
  }
  if (key.size() > kMaxQuotedKeyBytes) {
    std::string shown = as_json_string(utf8_prefix(key, kMaxQuotedKeyBytes / 2));
    shown.insert(shown.size() - 1, "...");
    return parent + "[" + shown + "]";
  }
  return parent + "[" + as_json_string(key) + "]";
}

std::string index_path(const std::string& parent, std::size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates) {
  const std::string lower_word = lowercase(word);
  for (const std::string& candidate : candidates) {
    if (lowercase(candidate) == lower_word) return candidate;
  }
  std::optional<std::string> best;
  std::size_t best_distance = 3;
  for (const std::string& candidate : candidates) {
    // The distance is at least the difference in length: skip the quadratic table when that
    // alone is too far (a hostile 1 MB key against short names).
    const std::size_t length_difference = word.size() > candidate.size()
                                              ? word.size() - candidate.size()
                                              : candidate.size() - word.size();
    if (length_difference >= best_distance) continue;
    const std::size_t distance = edit_distance(word, candidate);
    // A distance as long as both words means nothing of it was right ("x" vs "id").
    if (distance < best_distance && distance < std::max(word.size(), candidate.size())) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

std::string join(const std::vector<std::string>& words) {
  std::string result;
  for (const std::string& word : words) {
    if (!result.empty()) result += ", ";
    result += word;
  }
  return result;
}

std::string describe(const nlohmann::json& value) {
  if (value.is_object()) return "an object";
  if (value.is_array()) return "an array";
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    const std::size_t length = utf8_length(text);
    if (length > kMaxQuotedStringCharacters) {
      std::string shown = as_json_string(utf8_prefix(text, kMaxQuotedStringCharacters - 20));
      shown.insert(shown.size() - 1, "...");
      return shown + " (a string of " + std::to_string(length) + " characters)";
    }
    return as_json_string(text);
  }
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string shortest_number(double value) {
  // Fixed notation keeps the digits a person wrote (0.00001, not 1e-05); the range of the values
  // formatted here (sweep points, at most 1000) keeps it short.
  std::array<char, 400> buffer{};
  const auto [end, error] =
      std::to_chars(buffer.data(), buffer.data() + buffer.size(), value, std::chars_format::fixed);
  if (error != std::errc()) return nlohmann::json(value).dump();
  return std::string(buffer.data(), end);
}

std::size_t utf8_length(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

}  // namespace locksim::json
