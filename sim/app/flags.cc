#include "sim/app/flags.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <limits>
#include <system_error>

#include "sim/core/atomic_file.h"
#include "sim/core/error.h"

namespace locksim {
namespace {

// shown: a flag value as given, quoted, cut after 200 characters.
std::string shown(std::string_view text) {
  if (text.size() > 200) return "\"" + std::string(text.substr(0, 200)) + "...\"";
  return "\"" + std::string(text) + "\"";
}

}  // namespace

std::uint64_t parse_seed_flag(std::string_view text) {
  std::uint64_t seed = 0;
  const bool digits_only = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return c >= '0' && c <= '9';
  });
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seed);
  if (!digits_only || error != std::errc() || end != text.data() + text.size()) {
    throw InputError("--seed: expected an integer from 0 to " +
                     std::to_string(std::numeric_limits<std::uint64_t>::max()) + ", got " +
                     shown(text));
  }
  return seed;
}

void check_out_flag(const std::string& path) {
  if (path.empty()) {
    throw InputError("--out: expected a report directory, got \"\" (an empty path)");
  }
  // The nearest part of the path that exists must be a directory, or the reports cannot go there
  // (--out results.json/x): say so now rather than after Redis has started.
  std::filesystem::path existing = path;
  std::error_code error;
  std::filesystem::file_status status = std::filesystem::status(existing, error);
  while (!std::filesystem::exists(status) && existing.has_relative_path() &&
         existing.has_parent_path() && existing.parent_path() != existing) {
    existing = existing.parent_path();
    status = std::filesystem::status(existing, error);
  }
  if (std::filesystem::exists(status) && !std::filesystem::is_directory(status)) {
    if (existing == std::filesystem::path(path)) {
      throw InputError("--out: " + shown(path) + " exists and is not a directory");
    }
    throw InputError("--out: " + shown(path) + ": " + shown(existing.string()) +
                     " is not a directory");
  }
  // A directory that exists but takes no new entry (/proc, a read-only mount) fails only when the
  // first report is written, after the work: try now.
  if (const std::string problem = output_directory_problem(path); !problem.empty()) {
    throw InputError("--out: " + problem);
  }
}

void check_output_file_flag(std::string_view flag, const std::string& path) {
  if (const std::string problem = output_file_problem(path); !problem.empty()) {
    throw InputError(std::string(flag) + ": " + problem);
  }
}

void check_redis_flag(const std::string& url) {
  if (url.empty()) {
    throw InputError(
        "--redis: expected a URL redis://[:password@]host:port[/db], got \"\" (leave out --redis "
        "to start a private server)");
  }
}

std::int64_t parse_duration_flag(std::string_view flag, std::string_view text) {
  const auto bad = [&] {
    return InputError(std::string(flag) +
                      ": expected a duration such as 500ms, 10s, 2m or 1h, got \"" +
                      std::string(text) + "\"");
  };
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 9) throw bad();
  const std::int64_t number = std::stoll(std::string(text.substr(0, digits)));
  const std::string_view unit = text.substr(digits);
  std::int64_t ms = 0;
  if (unit == "ms") {
    ms = number;
  } else if (unit == "s") {
    ms = number * 1000;
  } else if (unit == "m") {
    ms = number * 60'000;
  } else if (unit == "h") {
    ms = number * 3'600'000;
  } else {
    throw bad();
  }
  if (ms <= 0 || ms > 24 * 3'600'000LL) {
    throw InputError(std::string(flag) + ": " + std::string(text) +
                     " is out of range (1ms to 24h)");
  }
  return ms;
}

}  // namespace locksim
