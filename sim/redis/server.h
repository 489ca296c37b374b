// server.h: RedisServer, a private redis-server owned by locksim.
//
// start() launches `redis-server` on 127.0.0.1 with a free ephemeral port, no persistence, in its
// own temporary directory, with a 1 s busy-reply-threshold (a looping Lua script is answered BUSY
// and can be killed after 1 s, not 5), and waits until it answers PING. The server is stopped on
// every exit path: by the destructor (normal end, exceptions), by app/'s signal handling (Ctrl-C,
// SIGTERM, which calls kill_now), and, if locksim itself dies, by the kernel (PR_SET_PDEATHSIG), so
// no server is ever orphaned.
//
// PR_SET_PDEATHSIG fires when the *thread* that called start() exits, not only when the process
// does: call start() from the main thread (or a thread that outlives the server), or the server
// is killed as soon as that thread ends.
//
//   RedisServer server = RedisServer::start({});  // throws EnvironmentError
//   Connection conn(server.endpoint(), {});
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "sim/redis/endpoint.h"

namespace locksim {

struct RedisServerOptions {
  std::string executable = "redis-server";  // looked up on PATH
  std::chrono::milliseconds startup_timeout{10000};
  int port_attempts = 5;  // retries with a new port if the chosen one was taken meanwhile
};

class RedisServer {
 public:
  // start: throws EnvironmentError if redis-server is missing or does not answer in time (the
  // message includes the tail of its log).
  static RedisServer start(const RedisServerOptions& options);

  RedisServer(RedisServer&&) noexcept;
  RedisServer& operator=(RedisServer&&) noexcept;
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;
  ~RedisServer();  // stop()

  const Endpoint& endpoint() const { return endpoint_; }
  pid_t pid() const { return pid_; }
  // version: redis_version from INFO server, e.g. "7.0.15".
  const std::string& version() const { return version_; }

  // stop: SIGTERM, wait up to 2 s, then SIGKILL; removes the temporary directory. Idempotent.
  void stop();

 private:
  RedisServer() = default;

  Endpoint endpoint_;
  pid_t pid_ = -1;
  std::string version_;
  std::filesystem::path directory_;
};

// kill_server_now: async-signal-safe SIGKILL of a server pid (for a second Ctrl-C).
void kill_server_now(pid_t pid);

// server_version: redis_version of any reachable server, or "unknown".
std::string server_version(const Endpoint& endpoint);

}  // namespace locksim
