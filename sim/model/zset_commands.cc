// Sorted-set commands, after Redis 7.0.15's src/t_zset.c. Members are ordered by score, then
// by their bytes; scores are answered as "%.17g" (addReplyDouble).
#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <variant>
#include <vector>

#include "sim/model/command.h"
#include "sim/model/numbers.h"

namespace locksim::model_detail {
namespace {

SortedSetValue* find_zset(CommandContext& ctx, std::string_view key, bool& wrong) {
  Entry* entry = ctx.find(key);
  wrong = entry != nullptr && !std::holds_alternative<SortedSetValue>(entry->value);
  return entry == nullptr || wrong ? nullptr : &std::get<SortedSetValue>(entry->value);
}

struct ScoreRange {
  ScoreBound min;
  ScoreBound max;
  bool above_min(double score) const {
    return min.exclusive ? score > min.value : score >= min.value;
  }
  bool below_max(double score) const {
    return max.exclusive ? score < max.value : score <= max.value;
  }
  bool contains(double score) const { return above_min(score) && below_max(score); }
};

bool parse_range(std::string_view min, std::string_view max, ScoreRange& range) {
  return parse_score_bound(min, range.min) && parse_score_bound(max, range.max);
}

void member_reply(const std::pair<double, std::string>& element, bool with_scores,
                  std::vector<Reply>& out) {
  out.push_back(bulk_reply(element.second));
  if (with_scores) out.push_back(bulk_reply(format_score(element.first)));
}

enum class RangeType { kAuto, kRank, kScore, kLex };

// zrange_generic: zrangeGenericCommand for ZRANGE (type kAuto, any direction) and
// ZRANGEBYSCORE (type kScore, forward only).
Reply zrange_generic(CommandContext& ctx, RangeType type, bool allow_rev) {
  bool with_scores = false;
  bool reverse = false;
  std::int64_t offset = 0;
  std::int64_t limit = -1;
  const std::size_t argc = ctx.argv.size();
  for (std::size_t j = 4; j < argc; ++j) {
    const std::string_view option = ctx.argv[j].substr(0, ctx.argv[j].find('\0'));
    const std::size_t left = argc - j - 1;
    if (equals_ignoring_case(option, "withscores")) {
      with_scores = true;
    } else if (equals_ignoring_case(option, "limit") && left >= 2) {
      if (!parse_integer(ctx.argv[j + 1], offset) || !parse_integer(ctx.argv[j + 2], limit)) {
        return not_an_integer();
      }
      j += 2;
    } else if (allow_rev && !reverse && equals_ignoring_case(option, "rev")) {
      reverse = true;
    } else if (type == RangeType::kAuto && equals_ignoring_case(option, "bylex")) {
      type = RangeType::kLex;
    } else if (type == RangeType::kAuto && equals_ignoring_case(option, "byscore")) {
      type = RangeType::kScore;
    } else {
      return syntax_error();
    }
  }
  if (type == RangeType::kAuto) type = RangeType::kRank;
  if (limit != -1 && type == RangeType::kRank) {
    return error_reply(
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
  }
  if (with_scores && type == RangeType::kLex) {
    return error_reply("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
  }
  if (type == RangeType::kLex) return not_modelled("zrange ... BYLEX");
  std::string_view min = ctx.argv[2];
  std::string_view max = ctx.argv[3];
  if (reverse && type == RangeType::kScore) std::swap(min, max);  // given as max, min
  std::int64_t start = 0;
  std::int64_t end = 0;
  ScoreRange range;
  if (type == RangeType::kRank) {
    if (!parse_integer(min, start) || !parse_integer(max, end)) return not_an_integer();
  } else if (!parse_range(min, max, range)) {
    return error_reply("ERR min or max is not a float");
  }
  bool wrong = false;
  const SortedSetValue* zset = find_zset(ctx, ctx.argv[1], wrong);
  if (zset == nullptr) return wrong ? wrong_type() : empty_array();

  std::vector<Reply> elements;
  if (type == RangeType::kRank) {
    const auto length = static_cast<std::int64_t>(zset->size());
    if (start < 0) start += length;
    if (end < 0) end += length;
    if (start < 0) start = 0;
    if (start > end || start >= length) return empty_array();
    if (end >= length) end = length - 1;
    std::int64_t rank = 0;
    const auto visit = [&](const auto& element) {
      if (rank >= start && rank <= end) member_reply(element, with_scores, elements);
      ++rank;
    };
    if (reverse) {
      for (auto it = zset->order.rbegin(); it != zset->order.rend() && rank <= end; ++it)
        visit(*it);
    } else {
      for (auto it = zset->order.begin(); it != zset->order.end() && rank <= end; ++it) visit(*it);
    }
    return array_reply(std::move(elements));
  }
  // By score: a positive offset past the end is empty; a negative offset skips everything; a
  // negative limit is no limit.
  if (offset > 0 && offset >= static_cast<std::int64_t>(zset->size())) return empty_array();
  if (offset < 0) return empty_array();
  const auto take = [&](const auto& element) {
    if (offset > 0) {
      --offset;
      return true;
    }
    if (limit == 0) return false;
    if (limit > 0) --limit;
    member_reply(element, with_scores, elements);
    return true;
  };
  if (reverse) {
    for (auto it = zset->order.rbegin(); it != zset->order.rend(); ++it) {
      if (!range.below_max(it->first)) continue;
      if (!range.above_min(it->first)) break;
      if (!take(*it)) break;
    }
  } else {
    for (auto it = zset->order.begin(); it != zset->order.end(); ++it) {
      if (!range.above_min(it->first)) continue;
      if (!range.below_max(it->first)) break;
      if (!take(*it)) break;
    }
  }
  return array_reply(std::move(elements));
}

enum ZaddFlag : unsigned { kZNx = 1, kZXx = 2, kZGt = 4, kZLt = 8, kZIncr = 16 };

}  // namespace

Reply cmd_zadd(CommandContext& ctx) {
  unsigned flags = 0;
  bool changed_count = false;
  std::size_t score_index = 2;
  for (; score_index < ctx.argv.size(); ++score_index) {
    const std::string_view option =
        ctx.argv[score_index].substr(0, ctx.argv[score_index].find('\0'));
    if (equals_ignoring_case(option, "nx")) {
      flags |= kZNx;
    } else if (equals_ignoring_case(option, "xx")) {
      flags |= kZXx;
    } else if (equals_ignoring_case(option, "ch")) {
      changed_count = true;
    } else if (equals_ignoring_case(option, "incr")) {
      flags |= kZIncr;
    } else if (equals_ignoring_case(option, "gt")) {
      flags |= kZGt;
    } else if (equals_ignoring_case(option, "lt")) {
      flags |= kZLt;
    } else {
      break;
    }
  }
  const std::size_t rest = ctx.argv.size() - score_index;
  if (rest % 2 != 0 || rest == 0) return syntax_error();
  const std::size_t pairs = rest / 2;
  const bool nx = flags & kZNx, xx = flags & kZXx, gt = flags & kZGt, lt = flags & kZLt;
  const bool incr = flags & kZIncr;
  if (nx && xx) return error_reply("ERR XX and NX options at the same time are not compatible");
  if ((gt && nx) || (lt && nx) || (gt && lt)) {
    return error_reply("ERR GT, LT, and/or NX options at the same time are not compatible");
  }
  if (incr && pairs > 1) {
    return error_reply("ERR INCR option supports a single increment-element pair");
  }
  std::vector<double> scores(pairs);
  for (std::size_t j = 0; j < pairs; ++j) {
    if (!parse_double(ctx.argv[score_index + 2 * j], scores[j])) return not_a_float();
  }
  bool wrong = false;
  SortedSetValue* zset = find_zset(ctx, ctx.argv[1], wrong);
  if (wrong) return wrong_type();
  std::int64_t added = 0;
  std::int64_t updated = 0;
  std::int64_t processed = 0;
  double score = 0;
  if (zset == nullptr && !xx) {
    zset =
        &std::get<SortedSetValue>(ctx.keys().put(ctx.argv[1], SortedSetValue{}, kNoExpiry).value);
  }
  for (std::size_t j = 0; zset != nullptr && j < pairs; ++j) {
    score = scores[j];
    const std::string_view member = ctx.argv[score_index + 2 * j + 1];
    // zsetAdd.
    if (const double* current = zset->score(member); current != nullptr) {
      if (nx) continue;
      const double old_score = *current;
      if (incr) {
        score += old_score;
        if (std::isnan(score)) {
          if (added + updated > 0) ctx.propagate_as_sent();
          return error_reply("ERR resulting score is not a number (NaN)");
        }
      }
      if ((lt && score >= old_score) || (gt && score <= old_score)) continue;
      if (score != old_score) {
        zset->set(member, score);
        ++updated;
      }
      ++processed;
    } else if (!xx) {
      zset->set(member, score);
      ++added;
      ++processed;
    }
  }
  if (added + updated > 0) ctx.propagate_as_sent();
  if (incr) return processed > 0 ? bulk_reply(format_score(score)) : nil_reply();
  return integer_reply(changed_count ? added + updated : added);
}

Reply cmd_zrem(CommandContext& ctx) {
  bool wrong = false;
  SortedSetValue* zset = find_zset(ctx, ctx.argv[1], wrong);
  if (zset == nullptr) return wrong ? wrong_type() : integer_reply(0);
  std::int64_t deleted = 0;
  for (std::size_t j = 2; j < ctx.argv.size(); ++j) {
    if (zset->erase(ctx.argv[j])) {
      ++deleted;
      if (zset->size() == 0) {
        ctx.keys().erase(ctx.argv[1]);
        break;
      }
    }
  }
  if (deleted > 0) ctx.propagate_as_sent();
  return integer_reply(deleted);
}

Reply cmd_zscore(CommandContext& ctx) {
  bool wrong = false;
  const SortedSetValue* zset = find_zset(ctx, ctx.argv[1], wrong);
  if (zset == nullptr) return wrong ? wrong_type() : nil_reply();
  const double* score = zset->score(ctx.argv[2]);
  return score == nullptr ? nil_reply() : bulk_reply(format_score(*score));
}

Reply cmd_zcard(CommandContext& ctx) {
  bool wrong = false;
  const SortedSetValue* zset = find_zset(ctx, ctx.argv[1], wrong);
  if (wrong) return wrong_type();
  return integer_reply(zset == nullptr ? 0 : static_cast<std::int64_t>(zset->size()));
}

Reply cmd_zcount(CommandContext& ctx) {
  ScoreRange range;
  if (!parse_range(ctx.argv[2], ctx.argv[3], range)) {
    return error_reply("ERR min or max is not a float");
  }
  bool wrong = false;
  const SortedSetValue* zset = find_zset(ctx, ctx.argv[1], wrong);
  if (zset == nullptr) return wrong ? wrong_type() : integer_reply(0);
  std::int64_t count = 0;
  for (const auto& element : zset->order) {
    if (range.contains(element.first)) ++count;
  }
  return integer_reply(count);
}

// cmd_zrank: the member's 0-based rank in (score, member) order, nil for no member or no key
// (Redis 7.0: no WITHSCORE, so three arguments exactly).
Reply cmd_zrank(CommandContext& ctx) {
  bool wrong = false;
  const SortedSetValue* zset = find_zset(ctx, ctx.argv[1], wrong);
  if (zset == nullptr) return wrong ? wrong_type() : nil_reply();
  const double* score = zset->score(ctx.argv[2]);
  if (score == nullptr) return nil_reply();
  const auto at = zset->order.find(std::make_pair(*score, std::string(ctx.argv[2])));
  return integer_reply(static_cast<std::int64_t>(std::distance(zset->order.begin(), at)));
}

Reply cmd_zrange(CommandContext& ctx) { return zrange_generic(ctx, RangeType::kAuto, true); }

Reply cmd_zrangebyscore(CommandContext& ctx) {
  return zrange_generic(ctx, RangeType::kScore, false);
}

Reply cmd_zremrangebyscore(CommandContext& ctx) {
  ScoreRange range;
  if (!parse_range(ctx.argv[2], ctx.argv[3], range)) {
    return error_reply("ERR min or max is not a float");
  }
  bool wrong = false;
  SortedSetValue* zset = find_zset(ctx, ctx.argv[1], wrong);
  if (zset == nullptr) return wrong ? wrong_type() : integer_reply(0);
  std::vector<std::string> doomed;
  for (const auto& element : zset->order) {
    if (range.contains(element.first)) doomed.push_back(element.second);
  }
  for (const std::string& member : doomed) zset->erase(member);
  if (zset->size() == 0) ctx.keys().erase(ctx.argv[1]);
  if (!doomed.empty()) ctx.propagate_as_sent();
  return integer_reply(static_cast<std::int64_t>(doomed.size()));
}

}  // namespace locksim::model_detail

namespace locksim::model_detail {
namespace {

// InterSource: one input of ZINTERSTORE (zsetopsrc): the live sorted set, or none, and its
// weight.
struct InterSource {
  const SortedSetValue* zset = nullptr;
  double weight = 1.0;
  std::size_t size() const { return zset == nullptr ? 0 : zset->size(); }
};

// aggregate_into: zunionInterAggregate. A sum that is NaN (inf + -inf) is 0.
void aggregate_into(double& target, double value, std::string_view aggregate) {
  if (aggregate == "sum") {
    target += value;
    if (std::isnan(target)) target = 0.0;
  } else if (aggregate == "min") {
    target = value < target ? value : target;
  } else {
    target = value > target ? value : target;
  }
}

}  // namespace

// cmd_zinterstore: zunionInterDiffGenericCommand for SET_OP_INTER with a destination. The model
// has no sets, so every input that is not a sorted set is of the wrong type. The inputs are
// ordered by size (glibc's qsort is a stable merge sort) and the smallest is walked, as Redis
// does: the order decides which product of a weight and a score comes first, and so what a NaN
// (0 x inf) becomes.
Reply cmd_zinterstore(CommandContext& ctx) {
  const std::size_t argc = ctx.argv.size();
  std::int64_t count = 0;
  if (!parse_integer(ctx.argv[2], count)) return not_an_integer();
  if (count < 1) {
    return error_reply("ERR at least 1 input key is needed for 'zinterstore' command");
  }
  if (count > static_cast<std::int64_t>(argc - 3)) return syntax_error();
  const auto inputs = static_cast<std::size_t>(count);
  std::vector<InterSource> sources(inputs);
  for (std::size_t i = 0; i < inputs; ++i) {
    bool wrong = false;
    sources[i].zset = find_zset(ctx, ctx.argv[3 + i], wrong);
    if (wrong) return wrong_type();
  }
  std::string aggregate = "sum";
  for (std::size_t j = 3 + inputs; j < argc;) {
    const std::string_view option = ctx.argv[j].substr(0, ctx.argv[j].find('\0'));
    const std::size_t remaining = argc - j;
    if (remaining >= inputs + 1 && equals_ignoring_case(option, "weights")) {
      ++j;
      for (std::size_t i = 0; i < inputs; ++i, ++j) {
        if (!parse_double(ctx.argv[j], sources[i].weight)) {
          return error_reply("ERR weight value is not a float");
        }
      }
    } else if (remaining >= 2 && equals_ignoring_case(option, "aggregate")) {
      const std::string_view how = ctx.argv[j + 1].substr(0, ctx.argv[j + 1].find('\0'));
      if (equals_ignoring_case(how, "sum")) {
        aggregate = "sum";
      } else if (equals_ignoring_case(how, "min")) {
        aggregate = "min";
      } else if (equals_ignoring_case(how, "max")) {
        aggregate = "max";
      } else {
        return syntax_error();
      }
      j += 2;
    } else {
      return syntax_error();
    }
  }
  std::stable_sort(sources.begin(), sources.end(),
                   [](const InterSource& a, const InterSource& b) { return a.size() < b.size(); });
  SortedSetValue result;
  if (sources[0].size() > 0) {
    for (const auto& [member_score, member] : sources[0].zset->order) {
      double score = sources[0].weight * member_score;
      if (std::isnan(score)) score = 0;
      std::size_t j = 1;
      for (; j < inputs; ++j) {
        if (sources[j].zset == sources[0].zset) {
          aggregate_into(score, member_score * sources[j].weight, aggregate);
        } else if (const double* found =
                       sources[j].zset == nullptr ? nullptr : sources[j].zset->score(member);
                   found != nullptr) {
          aggregate_into(score, *found * sources[j].weight, aggregate);
        } else {
          break;
        }
      }
      if (j == inputs) result.set(member, score);
    }
  }
  const std::string_view destination = ctx.argv[1];
  if (result.size() > 0) {
    const auto size = static_cast<std::int64_t>(result.size());
    ctx.keys().put(destination, std::move(result), kNoExpiry);
    ctx.propagate_as_sent();
    return integer_reply(size);
  }
  if (ctx.find(destination) != nullptr) {
    ctx.keys().erase(destination);
    ctx.propagate_as_sent();
  }
  return integer_reply(0);
}

}  // namespace locksim::model_detail
