// words_test: Words keeps a command's words in one buffer (inline when short, on the heap when
// long), and every word reads back the same after a copy, a move or an assignment; OneCommand
// names its token by position.
#include "sim/redis/words.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "sim/lock/variant.h"

namespace locksim {
namespace {

std::vector<std::string> read(const Words& words) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < words.size(); ++i) out.emplace_back(words[i]);
  return out;
}

std::vector<std::string> viewed(const Words& words) {
  const Words::Views views = words.views();
  const std::span<const std::string_view> span = views;
  return {span.begin(), span.end()};
}

TEST(Words, ShortAndLongWordsReadBackThroughEveryCopy) {
  const std::string long_key(300, 'k');  // beyond the inline buffer: on the heap
  for (const std::vector<std::string>& expected :
       {std::vector<std::string>{"SET", "lock", "0123456789abcdef0123456789abcdef", "NX", "PX",
                                 "100"},
        std::vector<std::string>{"SET", long_key, "", "NX"}, std::vector<std::string>{}}) {
    Words words;
    if (expected.size() == 6) {
      words = Words({expected[0], expected[1], expected[2], expected[3], expected[4], expected[5]});
    } else if (expected.size() == 4) {
      words = Words({expected[0], expected[1], expected[2], expected[3]});
    }
    EXPECT_EQ(read(words), expected);
    EXPECT_EQ(viewed(words), expected);
    EXPECT_EQ(words.strings(), expected);
    EXPECT_EQ(words.empty(), expected.empty());

    const Words copied(words);  // NOLINT(performance-unnecessary-copy-initialization)
    EXPECT_EQ(read(copied), expected);
    Words assigned;
    assigned = copied;
    EXPECT_EQ(read(assigned), expected);
    Words moved(std::move(assigned));
    EXPECT_EQ(read(moved), expected);
    Words move_assigned({"GET", "x"});
    move_assigned = std::move(moved);
    EXPECT_EQ(viewed(move_assigned), expected);
    EXPECT_EQ(read(words), expected) << "the original is untouched by its copies";
  }
}

TEST(Words, ATokenIsNamedByItsPosition) {
  const OneCommand acquire{nullptr, OneCommand::words({"SET", "k", "tok", "NX"}), 0, 2};
  EXPECT_EQ(acquire.token(), "tok");
  OneCommand moved = acquire;
  EXPECT_EQ(moved.token(), "tok");
  const OneCommand release{nullptr, OneCommand::words({"DEL", "k"})};
  EXPECT_EQ(release.token(), "");
}

}  // namespace
}  // namespace locksim
