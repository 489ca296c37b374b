// console.h: what the commands that run things share: the progress line, the loader's notes,
// padding, the UTC clock, the `latest` link, and the Redis a command runs on (a private server or
// --redis).
#pragma once

#include <filesystem>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/app/commands.h"
#include "sim/redis/endpoint.h"
#include "sim/redis/server.h"
#include "sim/scenario/scenario.h"

namespace locksim {

// utc_now: the current UTC time in strftime `format`.
std::string utc_now(const char* format);

// progress_mode: the mode of a command's --no-progress (`shown` false) and --progress flags.
ProgressMode progress_mode(bool shown, bool forced);

// ProgressLine: the progress of a command on stderr. On a terminal one line overwrites itself at
// every show; elsewhere (ProgressMode::kAlways) each show prints a line "progress: TEXT", at
// most one a second unless `milestone` (something was started or finished), and never the same
// text twice in a row. Not thread-safe: its callers serialize.
//
//   ProgressLine progress(options.progress);
//   progress.show("3/12 points, " + time_left.text(3, 12), /*milestone=*/true);
//   progress.clear();
class ProgressLine {
 public:
  explicit ProgressLine(ProgressMode mode);
  void show(const std::string& text, bool milestone = false);
  void clear();

 private:
  bool terminal_ = false;  // overwrite one line
  bool lines_ = false;     // print a line per change
  std::string last_;       // the last line printed (lines_)
  std::int64_t last_ns_ = 0;
};

// TimeLeft: an estimate of the time a command still needs, from the share of its work done so
// far and the time that took (the rest is assumed to go at the same pace).
//
//   TimeLeft left;                 // starts now
//   left.text(3.5, 12)             // "about 1m 20s left"; "" while nothing is done
class TimeLeft {
 public:
  TimeLeft();
  // seconds: seconds since construction.
  double seconds() const;
  // text: "about <duration> left" for `done` of `total` units (fractions allowed); "" when
  // nothing is done yet or `total` is not above `done`'s lower bound.
  std::string text(double done, double total) const;

 private:
  std::int64_t started_ns_;
};

// duration_text: seconds as a person reads them: "0s", "45s", "3m 05s", "2h 10m".
std::string duration_text(double seconds);

// styled_stdout: whether stdout may carry ANSI bold: a terminal, and NO_COLOR unset or empty
// (https://no-color.org).
bool styled_stdout();

// terminal_text: Markdown's **bold** of `markdown` as ANSI bold when `styled`, else as plain
// text (the asterisks dropped); everything else as it is.
std::string terminal_text(const std::string& markdown, bool styled);

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
