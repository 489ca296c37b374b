// reply_text.h: a Reply as redis-cli would print it, compactly, for the model's tests and their
// failure messages: +OK, :1, "v", (nil), -ERR ..., [..].
//
//   EXPECT_EQ(test_support::show(server.execute({"GET", "k"}, 0)), "\"v\"");
#pragma once

#include <string>

#include "sim/redis/connection.h"

namespace locksim::test_support {

inline std::string show(const Reply& reply) {
  switch (reply.type) {
    case Reply::Type::kNil:
      return "(nil)";
    case Reply::Type::kStatus:
      return "+" + reply.str;
    case Reply::Type::kError:
      return "-" + reply.str;
    case Reply::Type::kInteger:
      return ":" + std::to_string(reply.integer);
    case Reply::Type::kString:
      return "\"" + reply.str + "\"";
    case Reply::Type::kArray: {
      std::string out = "[";
      for (std::size_t i = 0; i < reply.elements.size(); ++i) {
        out += (i > 0 ? ", " : "") + show(reply.elements[i]);
      }
      return out + "]";
    }
  }
  return "?";
}

}  // namespace locksim::test_support
