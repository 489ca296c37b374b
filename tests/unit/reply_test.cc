// reply_test: an array reply's elements (ReplyArray) read like a vector, are copied deeply, and
// leave nothing behind when moved; an empty one reads as empty everywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/redis/connection.h"

namespace locksim {
namespace {

Reply bulk(std::string text) { return Reply{Reply::Type::kString, std::move(text), 0, {}}; }

std::vector<std::string> texts(const Reply& reply) {
  std::vector<std::string> out;
  for (const Reply& element : reply.elements) out.push_back(element.str);
  return out;
}

TEST(ReplyArray, AnEmptyArrayReadsAsEmpty) {
  const Reply nil;
  EXPECT_TRUE(nil.elements.empty());
  EXPECT_EQ(nil.elements.size(), 0u);
  EXPECT_EQ(nil.elements.begin(), nil.elements.end());
  EXPECT_THROW((void)nil.elements.at(0), std::out_of_range);
  const Reply from_empty{Reply::Type::kArray, {}, 0, std::vector<Reply>{}};
  EXPECT_TRUE(from_empty.elements.empty());
}

TEST(ReplyArray, ElementsReadBackInOrderAndNest) {
  Reply inner{Reply::Type::kArray, {}, 0, std::vector<Reply>{bulk("x"), bulk("y")}};
  Reply reply{Reply::Type::kArray, {}, 0, std::vector<Reply>{bulk("a"), bulk("b")}};
  reply.elements.push_back(std::move(inner));
  ASSERT_EQ(reply.elements.size(), 3u);
  EXPECT_EQ(reply.elements[0].str, "a");
  EXPECT_EQ(reply.elements.at(1).str, "b");
  EXPECT_EQ(reply.elements.back().elements.size(), 2u);
  EXPECT_EQ(texts(reply.elements[2]), (std::vector<std::string>{"x", "y"}));
  EXPECT_THROW((void)reply.elements.at(3), std::out_of_range);
  // Sorted in place through its iterators (the differential test sorts KEYS replies).
  Reply keys{Reply::Type::kArray, {}, 0, std::vector<Reply>{bulk("c"), bulk("a"), bulk("b")}};
  std::sort(keys.elements.begin(), keys.elements.end(),
            [](const Reply& l, const Reply& r) { return l.str < r.str; });
  EXPECT_EQ(texts(keys), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(ReplyArray, ACopyIsDeepAndAMoveLeavesItEmpty) {
  Reply original{Reply::Type::kArray, {}, 0, std::vector<Reply>{bulk("a"), bulk("b")}};
  Reply copy = original;
  copy.elements[0].str = "changed";
  copy.elements.push_back(bulk("c"));
  EXPECT_EQ(texts(original), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(texts(copy), (std::vector<std::string>{"changed", "b", "c"}));
  copy = original;  // assignment copies too
  EXPECT_EQ(texts(copy), (std::vector<std::string>{"a", "b"}));
  copy = copy;  // NOLINT: self-assignment keeps the elements
  EXPECT_EQ(texts(copy), (std::vector<std::string>{"a", "b"}));

  Reply moved = std::move(original);
  EXPECT_EQ(texts(moved), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(original.elements.empty());  // NOLINT: a moved-from array is empty
  copy = std::move(moved);                 // a move assignment leaves its source empty too
  EXPECT_EQ(texts(copy), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(moved.elements.empty());  // NOLINT: moved from
  original.elements.reserve(4);
  original.elements.push_back(bulk("again"));
  EXPECT_EQ(texts(original), (std::vector<std::string>{"again"}));
}

}  // namespace
}  // namespace locksim
