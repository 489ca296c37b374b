#include "sim/model/numbers.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace locksim::model_detail {

bool parse_integer(std::string_view text, std::int64_t& value) {
  // LONG_STR_SIZE (21) bytes or more cannot be a valid number.
  if (text.empty() || text.size() >= 21) return false;
  if (text.size() == 1 && text[0] == '0') {
    value = 0;
    return true;
  }
  std::size_t at = 0;
  bool negative = false;
  if (text[0] == '-') {
    negative = true;
    at = 1;
    if (at == text.size()) return false;
  }
  if (text[at] < '1' || text[at] > '9') return false;
  std::uint64_t magnitude = static_cast<std::uint64_t>(text[at] - '0');
  ++at;
  for (; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at) {
    const auto digit = static_cast<std::uint64_t>(text[at] - '0');
    if (magnitude > UINT64_MAX / 10) return false;
    magnitude *= 10;
    if (magnitude > UINT64_MAX - digit) return false;
    magnitude += digit;
  }
  if (at < text.size()) return false;
  if (negative) {
    if (magnitude > static_cast<std::uint64_t>(INT64_MAX) + 1) return false;
    value = static_cast<std::int64_t>(0 - magnitude);
  } else {
    if (magnitude > static_cast<std::uint64_t>(INT64_MAX)) return false;
    value = static_cast<std::int64_t>(magnitude);
  }
  return true;
}

bool parse_double(std::string_view text, double& value) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return false;
  const std::string terminated(text);  // strtod needs a NUL; an inner NUL ends the parse early
  char* end = nullptr;
  errno = 0;
  const double parsed = std::strtod(terminated.c_str(), &end);
  if (static_cast<std::size_t>(end - terminated.c_str()) != terminated.size()) return false;
  if (errno == ERANGE &&
      (parsed == HUGE_VAL || parsed == -HUGE_VAL || std::fpclassify(parsed) == FP_ZERO)) {
    return false;
  }
  if (std::isnan(parsed)) return false;
  value = parsed;
  return true;
}

TimeoutParse parse_timeout_seconds(std::string_view text, std::int64_t& ms) {
  // string2ld: strtold over all of `text` (hexadecimal too), no leading space, no NaN, no
  // overflow to infinity by a finite literal, at most 5119 bytes.
  if (text.empty() || text.size() >= 5 * 1024 ||
      std::isspace(static_cast<unsigned char>(text[0]))) {
    return TimeoutParse::kNotAFloat;
  }
  const std::string terminated(text);
  char* end = nullptr;
  errno = 0;
  const long double parsed = std::strtold(terminated.c_str(), &end);
  if (static_cast<std::size_t>(end - terminated.c_str()) != terminated.size() ||
      (errno == ERANGE &&
       (parsed == HUGE_VALL || parsed == -HUGE_VALL || std::fpclassify(parsed) == FP_ZERO)) ||
      std::isnan(parsed)) {
    return TimeoutParse::kNotAFloat;
  }
  // (long long)(value * 1000): out of range (an infinity, 1e300) is LLONG_MIN on x86-64.
  const long double scaled = parsed * 1000.0L;
  if (!(scaled > -9.2233720368547758e18L && scaled < 9.2233720368547758e18L)) {
    return TimeoutParse::kNegative;
  }
  ms = static_cast<std::int64_t>(scaled);
  return ms < 0 ? TimeoutParse::kNegative : TimeoutParse::kOk;
}

bool parse_score_bound(std::string_view text, ScoreBound& bound) {
  // Redis reads the argument as a C string: it ends at the first NUL byte.
  const std::string terminated(text);
  const char* start = terminated.c_str();
  bound.exclusive = false;
  if (start[0] == '(') {
    bound.exclusive = true;
    ++start;
  }
  char* end = nullptr;
  const double parsed = std::strtod(start, &end);
  if (end[0] != '\0' || std::isnan(parsed)) return false;
  bound.value = parsed;
  return true;
}

std::string format_score(double value) {
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.17g", value);
  return buffer;
}

std::string format_lua_number(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.17g", value);
  return buffer;
}

}  // namespace locksim::model_detail
