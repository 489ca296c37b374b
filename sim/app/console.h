// console.h: what the commands that run things share: the progress line, the loader's notes,
// padding, the UTC clock, the `latest` link, and the Redis a command runs on (a private server or
// --redis).
#pragma once

#include <filesystem>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/redis/endpoint.h"
#include "sim/redis/server.h"
#include "sim/scenario/scenario.h"

namespace locksim {

// utc_now: the current UTC time in strftime `format`.
std::string utc_now(const char* format);

// ProgressLine: one self-overwriting status line on stderr, only when stderr is a terminal.
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled);
  void show(const std::string& text);
  void clear();

 private:
  bool enabled_;
};

// print_notes: each distinct note of `scenarios` (Scenario::notes: a deprecated spelling) once on
// stderr, prefixed "locksim: ".
void print_notes(const std::vector<Scenario>& scenarios);

// pad: `text` padded with spaces to `width` (a longer text gets one space).
std::string pad(const std::string& text, std::size_t width);

// point_latest: makes <dir>/latest a symbolic link to <dir>/<run_id>, replacing it atomically.
void point_latest(const std::filesystem::path& dir, const std::string& run_id);

// RedisTarget: where a command's clients go. open_redis starts a private redis-server (stopped
// when the target is destroyed, and on a second signal) or, for a non-empty `url`, checks that
// the server answers PING. Throws InputError for a bad URL, EnvironmentError otherwise.
struct RedisTarget {
  std::optional<RedisServer> server;
  Endpoint endpoint;
  std::string label;    // "private redis-server on 127.0.0.1:6379" or the redacted URL
  std::string version;  // "7.0.15"
  bool external() const { return !server.has_value(); }
};
RedisTarget open_redis(const std::string& url);

// start_session: what run and contend do once their input is valid: print the seed (given, or
// random) and open the Redis (open_redis). On an EnvironmentError prints it and returns nullopt
// (exit 3); `seed` is set either way.
std::optional<RedisTarget> start_session(const std::string& url,
                                         std::optional<std::uint64_t> given_seed,
                                         std::uint64_t& seed);

}  // namespace locksim
