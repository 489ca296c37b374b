#include "sim/redis/words.h"

#include <cstring>

#include "sim/core/assert.h"

namespace locksim {

Words::Words(std::initializer_list<std::string_view> words) : count_(words.size()) {
  LOCKSIM_ASSERT(count_ <= kMaxWords);
  std::size_t total = 0;
  for (const std::string_view word : words) total += word.size();
  char* out = reinterpret_cast<char*>(inline_.data());
  if (total > kInlineBytes) {
    heap_.resize(total);
    out = heap_.data();
  }
  std::size_t at = 0;
  std::size_t i = 0;
  for (const std::string_view word : words) {
    if (!word.empty()) std::memcpy(out + at, word.data(), word.size());
    at += word.size();
    ends_[i++] = static_cast<std::uint32_t>(at);
  }
}

Words::Views Words::views() const {
  Views views;
  views.count_ = count_;
  const char* all = data();
  std::size_t begin = 0;
  for (std::size_t i = 0; i < count_; ++i) {
    views.views_[i] = std::string_view(all + begin, ends_[i] - begin);
    begin = ends_[i];
  }
  return views;
}

std::vector<std::string> Words::strings() const {
  std::vector<std::string> out;
  out.reserve(count_);
  for (std::size_t i = 0; i < count_; ++i) out.emplace_back((*this)[i]);
  return out;
}

}  // namespace locksim
