#include "sim/redis/words.h"

#include <cstdint>
#include <cstring>

#include "sim/core/assert.h"

namespace locksim {
namespace {

// copy_word: `size` bytes from `from` to `to`. A command's words are short (a name, a key, a
// token, a number): up to 32 bytes they are copied with fixed-size moves, two overlapping ones of
// each size, all within the word; a call of memcpy for each cost more than the copy.
void copy_word(char* to, const char* from, std::size_t size) {
  const auto move = [](char* out, const char* in, std::size_t bytes, auto word) {
    decltype(word) first;
    decltype(word) last;
    std::memcpy(&first, in, sizeof first);
    std::memcpy(&last, in + bytes - sizeof last, sizeof last);
    std::memcpy(out, &first, sizeof first);
    std::memcpy(out + bytes - sizeof last, &last, sizeof last);
  };
  if (size >= 16 && size <= 32) {
    move(to, from, 16, std::uint64_t{});
    move(to + size - 16, from + size - 16, 16, std::uint64_t{});
  } else if (size >= 8 && size < 16) {
    move(to, from, size, std::uint64_t{});
  } else if (size >= 4 && size < 8) {
    move(to, from, size, std::uint32_t{});
  } else if (size >= 2 && size < 4) {
    move(to, from, size, std::uint16_t{});
  } else if (size == 1) {
    *to = *from;
  } else if (size > 32) {
    std::memcpy(to, from, size);
  }
}

}  // namespace

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
    copy_word(out + at, word.data(), word.size());
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
