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
//   HiredisConnection conn(server.endpoint(), {});
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/clock.h"
#include "sim/redis/endpoint.h"

namespace locksim {

// Persistence: what a server writes to disk, so what a restart after kill -9 remembers.
enum class Persistence {
  kNone,         // nothing: a restarted server is empty
  kAofAlways,    // appendonly yes, appendfsync always: every write is on disk before the reply
  kAofEverySec,  // appendonly yes, appendfsync everysec: up to about a second of writes is lost
};

struct RedisServerOptions {
  std::string executable = "redis-server";  // looked up on PATH
  // startup_timeout_ms: of `clock`.
  std::int64_t startup_timeout_ms = 10000;
  int port_attempts = 5;  // retries with a new port if the chosen one was taken meanwhile
  Persistence persistence = Persistence::kNone;
  // replica_of: start as a replica of this endpoint (--replicaof).
  std::optional<Endpoint> replica_of;
  // cluster_enabled: start in cluster mode (--cluster-enabled yes, its nodes.conf in the server's
  // own directory): a node of no cluster yet, which answers CLUSTER commands (KEYSLOT, ...).
  bool cluster_enabled = false;
  // cluster_node_timeout_ms: --cluster-node-timeout (how long a node may not answer before the
  // others count it failing); 0: Redis's default (15000).
  std::int64_t cluster_node_timeout_ms = 0;
  // cluster_announce_bus_port: --cluster-announce-bus-port (the bus port the node tells the
  // others, a relay's in front of its own); 0: its own.
  int cluster_announce_bus_port = 0;
  // clock_shift_library: set: the server runs with this LD_PRELOAD library
  // (liblocksim_clockshift.so), which adds the offset in <dir>/clock-shift to its wall clock;
  // shift_clock() sets it. (libfaketime cannot be preloaded into Debian's redis-server: its
  // jemalloc asks the kernel for the time while libfaketime initializes, wolfcw/libfaketime#130.)
  std::string clock_shift_library;
  // freeze_clock: with clock_shift_library, the server's wall clock stands still at the instant
  // set_frozen_clock_ns() last set (at start: the calendar's current second), so that a test
  // knows the server's time exactly (TIME, key expiry); the model's differential test moves it
  // in step with the model's virtual clock. The shift still adds to it.
  bool freeze_clock = false;
  // sentinel: run `redis-server <dir>/sentinel.conf --sentinel` with these lines added to the
  // config (port, bind and dir are written by start()); redis-sentinel needs a writable config.
  std::vector<std::string> sentinel_config;
  // clock: what every wait, deadline and timestamp of the server's management goes through
  // (starting it, pausing it, stopping it, the first frozen wall-clock second); nullptr: the
  // process's real Clock (sim/core/clock.h). A redis-server process lives in real time, so only a
  // real Clock makes sense here; a simulated run never starts one (its servers are ModelServers,
  // sim/model, on the VirtualClock).
  const Clock* clock = nullptr;
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
  // cluster_port: the cluster bus's port (cluster_enabled), or 0.
  int cluster_port() const { return cluster_port_; }
  // version: redis_version from INFO server, e.g. "7.0.15".
  const std::string& version() const { return version_; }

  // stop: SIGTERM, wait up to 2 s, then SIGKILL; removes the temporary directory. Idempotent.
  void stop();

  // Faults. Each is meant for one thread at a time (the run's nemesis).
  // kill: SIGKILL, reaped; the directory (and an append-only file in it) is kept for restart().
  void kill();
  // restart: starts the killed server again on the same port with the same options and
  // directory, and waits until it answers PING (a server with an append-only file has loaded
  // it then). Throws EnvironmentError like start().
  void restart();
  // running: started and not killed.
  bool running() const { return pid_ > 0; }
  // pause / resume: SIGSTOP, returning once the kernel shows the process stopped; SIGCONT.
  // A stopped process answers nothing and runs nothing, as a stalled VM would; keys whose time
  // passed meanwhile expire when it runs again (by its wall clock). CLIENT PAUSE is not used:
  // it is the server choosing to hold clients, and it holds key expiry back too.
  void pause();
  void resume();
  // shift_clock: the server's wall clock runs `offset_ms` ahead of the real one from now on
  // (needs clock_shift_library). Keys expire by the wall clock, so a forward jump expires them
  // early. Returns false if the server has no clock shift.
  bool shift_clock(std::int64_t offset_ms);
  // set_frozen_clock_ns: the frozen wall clock reads `unix_ns` (nanoseconds since 1970) from
  // the server's next clock read on (needs freeze_clock). Returns false if it has none.
  bool set_frozen_clock_ns(std::int64_t unix_ns);
  const RedisServerOptions& options() const { return options_; }

 private:
  // clock: options_.clock, or the real one.
  const Clock& clock() const;
  RedisServer() = default;
  void launch(int port);  // spawns and waits for PING; throws EnvironmentError or PortTaken
  std::vector<std::string> command_line(int port) const;

  Endpoint endpoint_;
  pid_t pid_ = -1;
  int cluster_port_ = 0;
  std::string version_;
  std::filesystem::path directory_;
  RedisServerOptions options_;
};

// info_field: the value of `field` in an INFO reply ("field:value\r\n" lines), or "".
std::string info_field(const std::string& info, std::string_view field);

// clock_shift_library_path: liblocksim_clockshift.so next to the running executable, or "" if it
// is not there.
std::string clock_shift_library_path();

// kill_server_now: async-signal-safe SIGKILL of a server pid (for a second Ctrl-C).
void kill_server_now(pid_t pid);

// server_version: redis_version of any reachable server, or "unknown".
std::string server_version(const Endpoint& endpoint);

}  // namespace locksim
