// numbers.h: Redis 7.0's number parsing and formatting, byte for byte, for the model's commands
// and its Lua conversions (src/util.c string2ll and string2d, t_zset.c zslParseRange,
// networking.c addReplyDouble).
//
//   std::int64_t n = 0;
//   if (!parse_integer("42", n)) return not_an_integer();
//   format_score(0.5) == "0.5"
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace locksim::model_detail {

// parse_integer: string2ll: optional '-', no leading zeros or '+', no spaces, fits int64, at
// most 20 bytes. What every "value is not an integer or out of range" of Redis comes from.
bool parse_integer(std::string_view text, std::int64_t& value);

// parse_double: string2d: strtod over all of `text`, no leading space, no NaN, no overflow to
// infinity by a finite literal ("1e999" fails; "inf" parses). ZADD scores, INCRBYFLOAT.
bool parse_double(std::string_view text, double& value);

// parse_timeout_seconds: getTimeoutFromObjectOrReply in seconds (BLPOP): string2ld, then
// milliseconds truncated toward zero; 0 is "for ever". kNotAFloat: "ERR timeout is not a float or
// out of range"; kNegative: "ERR timeout is negative" (so is a value whose milliseconds overflow,
// inf and 1e300 among them, as on Redis 7.0.15).
enum class TimeoutParse { kOk, kNotAFloat, kNegative };
TimeoutParse parse_timeout_seconds(std::string_view text, std::int64_t& ms);

// ScoreBound: one end of a ZRANGEBYSCORE range.
struct ScoreBound {
  double value = 0;
  bool exclusive = false;
};
// parse_score_bound: zslParseRange's one end: "(" for exclusive, then strtod that must consume
// up to the first NUL byte and not be NaN ("" is 0, as in Redis).
bool parse_score_bound(std::string_view text, ScoreBound& bound);

// format_score: addReplyDouble in RESP2: "%.17g", "inf", "-inf".
std::string format_score(double value);

// format_lua_number: how redis.call passes a Lua number: "%.17g".
std::string format_lua_number(double value);

}  // namespace locksim::model_detail
