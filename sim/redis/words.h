// words.h: Words, a command's words kept in one buffer, inline up to kInlineBytes: no allocation
// for a lock's command (a heap buffer beyond that), where a std::vector<std::string> costs one for
// the vector and one for each long word. A lock's acquire attempt is built at every poll, and the
// simulator sends tens of thousands a second.
//
//   Words set({"SET", key, token, "NX", "PX", "100"});
//   connection.command(set.views());  // the views live until the end of the statement
//   set[2];                           // the token, a view into the buffer
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace locksim {

class Words {
 public:
  // kMaxWords: a lock's one command has a handful; more is a programming error (asserted).
  static constexpr std::size_t kMaxWords = 8;
  // kInlineBytes: "SET <key> <32-digit token> NX PX <ttl>" with a key of up to 40 bytes.
  static constexpr std::size_t kInlineBytes = 96;

  // Views: the words as views into a Words (which must outlive it), for a call that takes a span.
  class Views {
   public:
    operator std::span<const std::string_view>() const {  // NOLINT(google-explicit-constructor)
      return {views_, count_};
    }
    std::span<const std::string_view> span() const { return *this; }

   private:
    friend class Words;
    Views() {}  // NOLINT: views_ is left unset; Words::views() sets the first count_
    // Unset beyond count_: zeroing 128 bytes at every command cost more than filling them.
    union {
      std::string_view views_[kMaxWords];
    };
    std::size_t count_ = 0;
  };

  Words() = default;
  Words(std::initializer_list<std::string_view> words);

  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  std::string_view operator[](std::size_t i) const {
    const std::size_t begin = i == 0 ? 0 : ends_[i - 1];
    return {data() + begin, ends_[i] - begin};
  }
  Views views() const;
  // word_bytes: word i's bytes, to be rewritten in place (its length stays as it is).
  std::span<char> word_bytes(std::size_t i) {
    const std::size_t begin = i == 0 ? 0 : ends_[i - 1];
    char* all = total() <= kInlineBytes ? reinterpret_cast<char*>(inline_.data()) : heap_.data();
    return {all + begin, ends_[i] - begin};
  }
  // strings: each word as a std::string (for an API that takes those).
  std::vector<std::string> strings() const;

 private:
  // The words end to end, in inline_ if they fit, else in heap_; and where each ends (offsets
  // stay right when the words are copied or moved).
  const char* data() const {
    return total() <= kInlineBytes ? reinterpret_cast<const char*>(inline_.data()) : heap_.data();
  }
  std::size_t total() const { return count_ == 0 ? 0 : ends_[count_ - 1]; }

  // Unset beyond total() (not zeroed at every command); unsigned char, which may be copied unset.
  std::array<unsigned char, kInlineBytes> inline_;
  std::string heap_;
  std::array<std::uint32_t, kMaxWords> ends_{};
  std::size_t count_ = 0;
};

}  // namespace locksim
