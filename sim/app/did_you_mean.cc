#include "sim/app/did_you_mean.h"

#include <algorithm>
#include <cctype>

namespace locksim {
namespace {

std::string lowercase(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

// Levenshtein distance, one row at a time.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  auto hint = [](const std::string& name) { return " (did you mean \"" + name + "\"?)"; };
  const std::string lower_word = lowercase(word);
  for (const std::string& candidate : candidates) {
    if (lowercase(candidate) == lower_word) return hint(candidate);
  }
  const std::string* best = nullptr;
  std::size_t best_distance = 3;
  for (const std::string& candidate : candidates) {
    const std::size_t distance = edit_distance(word, candidate);
    // A distance as long as both words means nothing of it was right ("x" vs "id").
    if (distance < best_distance && distance < std::max(word.size(), candidate.size())) {
      best_distance = distance;
      best = &candidate;
    }
  }
  return best ? hint(*best) : "";
}

}  // namespace locksim
