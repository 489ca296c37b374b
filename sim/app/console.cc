#include "sim/app/console.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <set>

#include "sim/app/signals.h"
#include "sim/core/clock.h"
#include "sim/core/error.h"
#include "sim/core/random.h"
#include "sim/redis/connection.h"

namespace locksim {
namespace fs = std::filesystem;

std::string utc_now(const char* format) {
  const auto now = static_cast<std::time_t>(real_clock().unix_seconds());
  std::tm parts{};
  gmtime_r(&now, &parts);
  char buffer[64];
  std::strftime(buffer, sizeof buffer, format, &parts);
  return buffer;
}

ProgressMode progress_mode(bool shown, bool forced) {
  if (!shown) return ProgressMode::kOff;
  return forced ? ProgressMode::kAlways : ProgressMode::kTerminal;
}

ProgressLine::ProgressLine(ProgressMode mode) {
  const bool terminal = isatty(STDERR_FILENO) != 0;
  terminal_ = mode != ProgressMode::kOff && terminal;
  lines_ = mode == ProgressMode::kAlways && !terminal;
}

void ProgressLine::show(const std::string& text, bool milestone) {
  if (terminal_) {
    std::fprintf(stderr, "\r\033[K%s", text.c_str());
    std::fflush(stderr);
    return;
  }
  if (!lines_ || text == last_) return;
  // In a log, a line a second is enough between milestones.
  const std::int64_t now_ns = real_clock().now_ns();
  if (!milestone && !last_.empty() && now_ns - last_ns_ < 1'000'000'000) return;
  std::fprintf(stderr, "progress: %s\n", text.c_str());
  std::fflush(stderr);
  last_ = text;
  last_ns_ = now_ns;
}

void ProgressLine::clear() {
  if (terminal_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
}

TimeLeft::TimeLeft() : started_ns_(real_clock().now_ns()) {}

double TimeLeft::seconds() const {
  return static_cast<double>(real_clock().now_ns() - started_ns_) / 1e9;
}

std::string TimeLeft::text(double done, double total) const {
  if (done <= 0 || total <= done) return "";
  const double left = seconds() * (total - done) / done;
  return "about " + duration_text(left) + " left";
}

std::string duration_text(double seconds) {
  const auto whole = static_cast<long long>(std::llround(std::max(0.0, seconds)));
  char text[48];
  if (whole < 60) {
    std::snprintf(text, sizeof text, "%llds", whole);
  } else if (whole < 3600) {
    std::snprintf(text, sizeof text, "%lldm %02llds", whole / 60, whole % 60);
  } else {
    std::snprintf(text, sizeof text, "%lldh %02lldm", whole / 3600, whole / 60 % 60);
  }
  return text;
}

bool styled_stdout() {
  const char* no_color = std::getenv("NO_COLOR");
  return isatty(STDOUT_FILENO) != 0 && (no_color == nullptr || *no_color == '\0');
}

std::string terminal_text(const std::string& markdown, bool styled) {
  std::string text;
  bool bold = false;
  for (std::size_t i = 0; i < markdown.size(); ++i) {
    if (markdown.compare(i, 2, "**") == 0) {
      if (styled) text += bold ? "\033[0m" : "\033[1m";
      bold = !bold;
      ++i;
      continue;
    }
    text += markdown[i];
  }
  if (bold && styled) text += "\033[0m";
  return text;
}

void print_notes(const std::vector<Scenario>& scenarios) {
  std::set<std::string> printed;
  for (const Scenario& scenario : scenarios) {
    for (const std::string& note : scenario.notes) {
      if (printed.insert(note).second) std::cerr << "locksim: " << note << "\n";
    }
  }
}

std::string pad(const std::string& text, std::size_t width) {
  return text.size() >= width ? text + " " : text + std::string(width - text.size(), ' ');
}

void point_latest(const fs::path& dir, const std::string& run_id) {
  const fs::path link = dir / "latest";
  const fs::path temporary = dir / ".latest.tmp";
  std::error_code error;
  fs::remove(temporary, error);
  fs::create_directory_symlink(run_id, temporary, error);
  if (!error) fs::rename(temporary, link, error);
}

RedisTarget open_redis(const std::string& url) {
  RedisTarget target;
  if (!url.empty()) {
    try {
      target.endpoint = parse_redis_url(url);
    } catch (const InputError& e) {
      throw InputError(std::string("--redis: ") + e.what());
    }
    target.label = target.endpoint.redacted();
    HiredisConnection probe(target.endpoint, ConnectionOptions{});
    const RedisResult ping = probe.command({"PING"});
    if (!ping.ok()) {
      throw EnvironmentError("Redis at " + target.label + " is unreachable: " + ping.describe());
    }
    target.version = server_version(target.endpoint);
    return target;
  }
  target.server.emplace(RedisServer::start(RedisServerOptions{}));
  set_server_pid_for_signals(target.server->pid());
  target.endpoint = target.server->endpoint();
  target.label = "private redis-server on 127.0.0.1:" + std::to_string(target.endpoint.port);
  target.version = target.server->version();
  return target;
}

std::optional<RedisTarget> start_session(const std::string& url,
                                         std::optional<std::uint64_t> given_seed,
                                         std::uint64_t& seed) {
  seed = given_seed.value_or(random_seed());
  std::cout << "locksim: seed " << seed << " (repeat this run with --seed " << seed << ")"
            << std::endl;
  try {
    return open_redis(url);
  } catch (const EnvironmentError& e) {
    std::cerr << "locksim: " << e.what() << "\n";
    return std::nullopt;
  }
}

}  // namespace locksim
