#include "sim/app/console.h"

#include <unistd.h>

#include <cstdio>
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

ProgressLine::ProgressLine(bool enabled) : enabled_(enabled && isatty(STDERR_FILENO)) {}

void ProgressLine::show(const std::string& text) {
  if (!enabled_) return;
  std::fprintf(stderr, "\r\033[K%s", text.c_str());
  std::fflush(stderr);
}

void ProgressLine::clear() {
  if (enabled_) std::fprintf(stderr, "\r\033[K");
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
