// List commands, after Redis 7.0.15's src/t_list.c. An emptied list is no key.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "sim/model/command.h"
#include "sim/model/numbers.h"

namespace locksim::model_detail {
namespace {

ListValue* find_list(CommandContext& ctx, std::string_view key, bool& wrong) {
  Entry* entry = ctx.find(key);
  wrong = entry != nullptr && !std::holds_alternative<ListValue>(entry->value);
  return entry == nullptr || wrong ? nullptr : &std::get<ListValue>(entry->value);
}

Reply push(CommandContext& ctx, bool head) {
  bool wrong = false;
  ListValue* list = find_list(ctx, ctx.argv[1], wrong);
  if (wrong) return wrong_type();
  if (list == nullptr) {
    list = &std::get<ListValue>(ctx.keys().put(ctx.argv[1], ListValue{}, kNoExpiry).value);
  }
  for (std::size_t j = 2; j < ctx.argv.size(); ++j) {
    if (head) {
      list->emplace_front(ctx.argv[j]);
    } else {
      list->emplace_back(ctx.argv[j]);
    }
  }
  ctx.propagate_as_sent();
  return integer_reply(static_cast<std::int64_t>(list->size()));
}

// pop: popGenericCommand: one element as a bulk string, or with a count an array.
Reply pop(CommandContext& ctx, bool head) {
  if (ctx.argv.size() > 3) return arity_error(head ? "lpop" : "rpop");
  const bool has_count = ctx.argv.size() == 3;
  std::int64_t count = 0;
  if (has_count) {
    // getPositiveLongFromObjectOrReply: one message for "not a number" and "negative".
    if (!parse_integer(ctx.argv[2], count) || count < 0) {
      return error_reply("ERR value is out of range, must be positive");
    }
  }
  bool wrong = false;
  ListValue* list = find_list(ctx, ctx.argv[1], wrong);
  if (list == nullptr) return wrong ? wrong_type() : nil_reply();
  if (has_count && count == 0) return empty_array();
  Reply reply;
  if (!has_count) {
    reply = bulk_reply(head ? list->front() : list->back());
    if (head) {
      list->pop_front();
    } else {
      list->pop_back();
    }
  } else {
    std::vector<Reply> elements;
    for (std::int64_t i = 0; i < count && !list->empty(); ++i) {
      elements.push_back(bulk_reply(head ? list->front() : list->back()));
      if (head) {
        list->pop_front();
      } else {
        list->pop_back();
      }
    }
    reply = array_reply(std::move(elements));
  }
  if (list->empty()) ctx.keys().erase(ctx.argv[1]);
  ctx.propagate_as_sent();
  return reply;
}

}  // namespace

Reply cmd_lpush(CommandContext& ctx) { return push(ctx, true); }
Reply cmd_rpush(CommandContext& ctx) { return push(ctx, false); }
Reply cmd_lpop(CommandContext& ctx) { return pop(ctx, true); }
Reply cmd_rpop(CommandContext& ctx) { return pop(ctx, false); }

Reply cmd_lrem(CommandContext& ctx) {
  std::int64_t to_remove = 0;
  if (!parse_integer(ctx.argv[2], to_remove)) return not_an_integer();
  bool wrong = false;
  ListValue* list = find_list(ctx, ctx.argv[1], wrong);
  if (list == nullptr) return wrong ? wrong_type() : integer_reply(0);
  const std::string_view element = ctx.argv[3];
  std::int64_t removed = 0;
  if (to_remove < 0) {
    // From the tail towards the head.
    const std::int64_t limit = to_remove == INT64_MIN ? INT64_MAX : -to_remove;
    for (std::size_t i = list->size(); i-- > 0;) {
      if ((*list)[i] == element) {
        list->erase(list->begin() + static_cast<std::ptrdiff_t>(i));
        if (++removed == limit) break;
      }
    }
  } else {
    for (std::size_t i = 0; i < list->size();) {
      if ((*list)[i] == element) {
        list->erase(list->begin() + static_cast<std::ptrdiff_t>(i));
        if (++removed == to_remove) break;
      } else {
        ++i;
      }
    }
  }
  if (list->empty()) ctx.keys().erase(ctx.argv[1]);
  if (removed > 0) ctx.propagate_as_sent();
  return integer_reply(removed);
}

namespace {

// index_range: LRANGE's and LTRIM's arithmetic: `start` and `end` (negative: from the tail)
// made the inclusive indexes of a list of `length`, or nothing when the range is empty (start
// and end are at most 20 digits: no overflow here).
std::optional<std::pair<std::int64_t, std::int64_t>> index_range(std::int64_t start,
                                                                 std::int64_t end,
                                                                 std::int64_t length) {
  if (start < 0) start += length;
  if (end < 0) end += length;
  if (start < 0) start = 0;
  if (start > end || start >= length) return std::nullopt;
  return std::pair{start, std::min(end, length - 1)};
}

}  // namespace

Reply cmd_ltrim(CommandContext& ctx) {
  std::int64_t start = 0;
  std::int64_t end = 0;
  if (!parse_integer(ctx.argv[2], start) || !parse_integer(ctx.argv[3], end)) {
    return not_an_integer();
  }
  bool wrong = false;
  ListValue* list = find_list(ctx, ctx.argv[1], wrong);
  if (list == nullptr) return wrong ? wrong_type() : ok_reply();
  const auto length = static_cast<std::int64_t>(list->size());
  std::int64_t from_head = length;  // an empty range empties the list
  std::int64_t from_tail = 0;
  if (const auto kept = index_range(start, end, length)) {
    from_head = kept->first;
    from_tail = length - kept->second - 1;
  }
  list->erase(list->begin(), list->begin() + static_cast<std::ptrdiff_t>(from_head));
  list->erase(list->end() - static_cast<std::ptrdiff_t>(from_tail), list->end());
  if (list->empty()) ctx.keys().erase(ctx.argv[1]);
  if (from_head + from_tail > 0) ctx.propagate_as_sent();
  return ok_reply();
}

// BLPOP key [key ...] timeout: the first non-empty list's head, as [key, element]; nil when
// every list is empty. The model never blocks: it answers nil at once, and the simulator's
// connection asks again until the timeout (sim_connection.cc), as it does for WAIT.
Reply cmd_blpop(CommandContext& ctx) {
  std::int64_t timeout_ms = 0;
  switch (parse_timeout_seconds(ctx.argv.back(), timeout_ms)) {
    case TimeoutParse::kNotAFloat:
      return error_reply("ERR timeout is not a float or out of range");
    case TimeoutParse::kNegative:
      return error_reply("ERR timeout is negative");
    case TimeoutParse::kOk:
      break;
  }
  for (std::size_t j = 1; j + 1 < ctx.argv.size(); ++j) {
    bool wrong = false;
    ListValue* list = find_list(ctx, ctx.argv[j], wrong);
    if (wrong) return wrong_type();
    if (list == nullptr) continue;
    std::vector<Reply> pair;
    pair.push_back(bulk_reply(ctx.argv[j]));
    pair.push_back(bulk_reply(list->front()));
    list->pop_front();
    const std::string key(ctx.argv[j]);
    if (list->empty()) ctx.keys().erase(key);
    ctx.propagate({"LPOP", key});  // as Redis rewrites a served BLPOP
    return array_reply(std::move(pair));
  }
  return nil_reply();
}

Reply cmd_lrange(CommandContext& ctx) {
  std::int64_t start = 0;
  std::int64_t end = 0;
  if (!parse_integer(ctx.argv[2], start) || !parse_integer(ctx.argv[3], end)) {
    return not_an_integer();
  }
  bool wrong = false;
  const ListValue* list = find_list(ctx, ctx.argv[1], wrong);
  if (list == nullptr) return wrong ? wrong_type() : empty_array();
  const auto range = index_range(start, end, static_cast<std::int64_t>(list->size()));
  if (!range) return empty_array();
  std::vector<Reply> elements;
  for (std::int64_t i = range->first; i <= range->second; ++i) {
    elements.push_back(bulk_reply((*list)[static_cast<std::size_t>(i)]));
  }
  return array_reply(std::move(elements));
}

Reply cmd_lindex(CommandContext& ctx) {
  bool wrong = false;
  const ListValue* list = find_list(ctx, ctx.argv[1], wrong);
  if (list == nullptr) return wrong ? wrong_type() : nil_reply();
  std::int64_t index = 0;
  if (!parse_integer(ctx.argv[2], index)) return not_an_integer();
  const auto length = static_cast<std::int64_t>(list->size());
  if (index < 0) index += length;
  if (index < 0 || index >= length) return nil_reply();
  return bulk_reply((*list)[static_cast<std::size_t>(index)]);
}

Reply cmd_llen(CommandContext& ctx) {
  bool wrong = false;
  const ListValue* list = find_list(ctx, ctx.argv[1], wrong);
  if (wrong) return wrong_type();
  return integer_reply(list == nullptr ? 0 : static_cast<std::int64_t>(list->size()));
}

}  // namespace locksim::model_detail
