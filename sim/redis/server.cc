#include "sim/redis/server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <utility>
#include <string_view>
#include <vector>

extern char** environ;

#include "sim/core/assert.h"
#include "sim/core/clock.h"
#include "sim/core/error.h"
#include "sim/redis/connection.h"

namespace locksim {
namespace {

using namespace std::chrono_literals;

constexpr Nanos kPollInterval = ms_to_ns(10);
constexpr Nanos kStopGrace = ms_to_ns(2000);
constexpr int kLogTailLines = 20;

std::string errno_text(int error_number) { return std::strerror(error_number); }

// pick_free_port: asks the kernel for an unused ephemeral port on 127.0.0.1. The port is free
// when this returns but may be taken before redis-server binds it; start() retries for that.
int pick_free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw EnvironmentError("cannot create a TCP socket: " + errno_text(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const int error = errno;
    ::close(fd);
    throw EnvironmentError("cannot find a free port on 127.0.0.1: " + errno_text(error));
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

constexpr const char* kDirectoryPrefix = "locksim-redis-";
// kOwnerFile: in each server directory, "<pid> <start time>" of the process that made it; the
// start time (ticks since boot, /proc/<pid>/stat field 22) tells a reused pid from the owner.
constexpr const char* kOwnerFile = "locksim-owner";
// kStaleScanLimit: at most this many entries of the temporary folder are looked at per process.
constexpr int kStaleScanLimit = 100000;

// start_time_of: field 22 of /proc/<pid>/stat, or "" if there is no such process.
std::string start_time_of(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string content;
  if (!std::getline(stat, content)) return "";
  // The command name (field 2) is in parentheses and may hold spaces: count after the last ')'.
  const std::size_t paren = content.rfind(')');
  if (paren == std::string::npos) return "";
  std::istringstream fields(content.substr(paren + 1));
  std::string field;
  for (int index = 3; index <= 22 && fields >> field; ++index) {
    if (index == 22) return field;
  }
  return "";
}

// owner_gone: whether the owner file in `directory` names a process that no longer runs. A
// directory without a readable owner file (being made right now, or made by an older locksim)
// is left alone.
bool owner_gone(const std::filesystem::path& directory) {
  std::ifstream in(directory / kOwnerFile);
  long long pid = 0;
  std::string start_time;
  if (!(in >> pid >> start_time) || pid <= 0 || pid > INT32_MAX) return false;
  return start_time_of(static_cast<pid_t>(pid)) != start_time;
}

// remove_stale_directories: server directories in `base` whose owner is gone (a locksim killed
// with kill -9: its servers died with it, by PR_SET_PDEATHSIG, but their directories stayed).
// Once per process, bounded; what cannot be removed is left.
void remove_stale_directories(const std::filesystem::path& base) {
  std::error_code error;
  std::filesystem::directory_iterator it(base, error);
  int seen = 0;
  for (; !error && it != std::filesystem::directory_iterator() && seen < kStaleScanLimit;
       it.increment(error), ++seen) {
    const std::filesystem::path path = it->path();
    if (!path.filename().string().starts_with(kDirectoryPrefix)) continue;
    std::error_code ignored;
    if (!it->is_directory(ignored) || it->is_symlink(ignored)) continue;
    if (owner_gone(path)) std::filesystem::remove_all(path, ignored);
  }
}

std::filesystem::path make_directory() {
  std::error_code error;
  std::filesystem::path base = std::filesystem::temp_directory_path(error);  // $TMPDIR or /tmp
  if (error) base = "/tmp";
  static std::once_flag cleaned;
  std::call_once(cleaned, [&base] { remove_stale_directories(base); });
  std::string pattern = (base / (std::string(kDirectoryPrefix) + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw EnvironmentError("cannot create a temporary directory " + pattern + ": " +
                           errno_text(errno));
  }
  // The owner, so that a later locksim can remove the directory once this process is gone.
  std::ofstream owner(std::filesystem::path(pattern) / kOwnerFile);
  owner << ::getpid() << " " << start_time_of(::getpid()) << "\n";
  return pattern;
}

std::string log_tail(const std::filesystem::path& log) {
  std::ifstream in(log);
  if (!in) return "(" + log.string() + " was not written)";
  std::deque<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(std::move(line));
    if (lines.size() > kLogTailLines) lines.pop_front();
  }
  std::string tail = "last lines of " + log.string() + ":";
  for (const std::string& line : lines) tail += "\n  " + line;
  return tail;
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "stopped";
}

// spawn: fork + exec of argv. Returns the child's pid; throws EnvironmentError if exec failed,
// which the child reports through a close-on-exec pipe (a successful exec closes it unwritten).
pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env) {
  // Everything the child needs is prepared before fork: after fork, only async-signal-safe calls.
  std::vector<char*> c_argv;
  c_argv.reserve(argv.size() + 1);
  for (const std::string& arg : argv) c_argv.push_back(const_cast<char*>(arg.c_str()));
  c_argv.push_back(nullptr);
  std::vector<char*> c_env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    bool replaced = false;
    for (const std::string& extra : extra_env) {
      const std::size_t eq = extra.find('=');
      if (entry.size() > eq && entry.substr(0, eq + 1) == std::string_view(extra).substr(0, eq + 1)) {
        replaced = true;
      }
    }
    if (!replaced) c_env.push_back(*e);
  }
  for (const std::string& extra : extra_env) c_env.push_back(const_cast<char*>(extra.c_str()));
  c_env.push_back(nullptr);
  const char* const dev_null = "/dev/null";

  int exec_pipe[2];
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0) {
    throw EnvironmentError("cannot create a pipe: " + errno_text(errno));
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(exec_pipe[0]);
    ::close(exec_pipe[1]);
    throw EnvironmentError("cannot fork redis-server: " + errno_text(error));
  }
  if (pid == 0) {
    ::close(exec_pipe[0]);
    // Die with the thread that started us; and if the parent already died before prctl took
    // effect, give up rather than become an orphan.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    // Own process group: a terminal Ctrl-C reaches locksim, which then stops us in order.
    ::setpgid(0, 0);
    // locksim blocks SIGINT, SIGTERM and SIGHUP in every thread (sim/app/signals.h), and a blocked
    // signal stays blocked across exec: the server would ignore the SIGTERM that stop() sends it
    // and be killed only after stop()'s 2 s grace.
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    const int input = ::open(dev_null, O_RDONLY);
    if (input >= 0 && input != STDIN_FILENO) {
      ::dup2(input, STDIN_FILENO);
      ::close(input);
    }
    ::execvpe(c_argv[0], c_argv.data(), c_env.data());
    const int error = errno;
    [[maybe_unused]] const ssize_t written = ::write(exec_pipe[1], &error, sizeof(error));
    ::_exit(127);
  }
  ::close(exec_pipe[1]);
  int exec_errno = 0;
  ssize_t got = 0;
  do {
    got = ::read(exec_pipe[0], &exec_errno, sizeof(exec_errno));
  } while (got < 0 && errno == EINTR);
  ::close(exec_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof(exec_errno))) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (exec_errno == ENOENT) {
      throw EnvironmentError(argv[0] +
                             " not found on PATH; install it with: apt-get install redis-server");
    }
    throw EnvironmentError("cannot run " + argv[0] + ": " + errno_text(exec_errno));
  }
  return pid;
}

enum class Probe { kReady, kNotYet, kNotOurs };

}  // namespace

// PortTaken: redis-server exited while starting, most likely because its port was taken.
struct PortTaken {
  std::string what;
};

namespace {

// probe: whether the server on `port` answers PING and is our child `pid` (not another program
// that grabbed the port between pick_free_port() and redis-server's bind).
Probe probe(int port, pid_t pid, std::string& version) {
  Endpoint endpoint;
  endpoint.host = "127.0.0.1";
  endpoint.port = port;
  HiredisConnection connection(endpoint, ConnectionOptions{100ms, 1000ms});
  if (connection.broken()) return Probe::kNotYet;
  const RedisResult ping = connection.command({"PING"});
  if (!ping.ok() || !ping.reply.is_status("PONG")) return Probe::kNotYet;
  const RedisResult info = connection.command({"INFO", "server"});
  if (!info.ok()) return Probe::kNotYet;
  if (info_field(info.reply.str, "process_id") != std::to_string(pid)) return Probe::kNotOurs;
  version = info_field(info.reply.str, "redis_version");
  return Probe::kReady;
}

}  // namespace

RedisServer RedisServer::start(const RedisServerOptions& options) {
  RedisServer server;  // its destructor cleans up whatever exists if we throw
  server.options_ = options;
  server.directory_ = make_directory();
  if (!options.clock_shift_library.empty()) {
    const std::int64_t zero = 0;
    std::ofstream out(server.directory_ / "clock-shift", std::ios::binary);
    out.write(reinterpret_cast<const char*>(&zero), sizeof(zero));
    if (!out) throw EnvironmentError("cannot write " + (server.directory_ / "clock-shift").string());
  }
  if (!options.clock_shift_library.empty() && options.freeze_clock) {
    const std::int64_t now_ns = server.clock().unix_seconds() * 1'000'000'000;
    std::ofstream out(server.directory_ / "clock-freeze", std::ios::binary);
    out.write(reinterpret_cast<const char*>(&now_ns), sizeof(now_ns));
    if (!out) {
      throw EnvironmentError("cannot write " + (server.directory_ / "clock-freeze").string());
    }
  }
  std::string last_failure = "no attempt was made (port_attempts < 1)";
  for (int attempt = 1; attempt <= options.port_attempts; ++attempt) {
    const int port = pick_free_port();
    // The cluster bus listens on a port of its own (by default the port + 10000, which for an
    // ephemeral port may be taken or past 65535); a restart keeps both.
    if (options.cluster_enabled) server.cluster_port_ = pick_free_port();
    try {
      server.launch(port);
      return server;
    } catch (const PortTaken& taken) {
      last_failure = taken.what + " (attempt " + std::to_string(attempt) + " of " +
                     std::to_string(options.port_attempts) + ")";
    }
  }
  throw EnvironmentError("could not start redis-server: " + last_failure);
}

std::vector<std::string> RedisServer::command_line(int port) const {
  const std::filesystem::path log = directory_ / "redis.log";
  const RedisServerOptions& options = options_;
  if (!options.sentinel_config.empty()) {
    const std::filesystem::path config = directory_ / "sentinel.conf";
    std::ofstream out(config);
    out << "port " << port << "\nbind 127.0.0.1\ndir " << directory_.string() << "\nlogfile "
        << log.string() << "\n";
    for (const std::string& line : options.sentinel_config) out << line << "\n";
    if (!out) throw EnvironmentError("cannot write " + config.string());
    return {options.executable, config.string(), "--sentinel"};
  }
  std::vector<std::string> argv = {
      options.executable, "--bind", "127.0.0.1", "--port", std::to_string(port), "--save", "",
      "--dir", directory_.string(), "--logfile", log.string(), "--daemonize", "no",
      "--protected-mode", "yes", "--enable-debug-command", "local",
      // A Lua script running longer than this is answered BUSY to others and may be killed
      // (SCRIPT KILL): a user lock whose script loops is found within a second, not five.
      "--busy-reply-threshold", "1000",
      // A replica syncs at once, not after the 5 s Redis waits for more replicas to share a
      // diskless transfer.
      "--repl-diskless-sync-delay", "0"};
  switch (options.persistence) {
    case Persistence::kNone:
      argv.insert(argv.end(), {"--appendonly", "no"});
      break;
    case Persistence::kAofAlways:
      argv.insert(argv.end(), {"--appendonly", "yes", "--appendfsync", "always"});
      break;
    case Persistence::kAofEverySec:
      argv.insert(argv.end(), {"--appendonly", "yes", "--appendfsync", "everysec"});
      break;
  }
  if (options.cluster_enabled) {
    argv.insert(argv.end(), {"--cluster-enabled", "yes", "--cluster-config-file",
                             (directory_ / "nodes.conf").string(), "--cluster-port",
                             std::to_string(cluster_port_)});
    if (options.cluster_announce_bus_port > 0) {
      argv.insert(argv.end(), {"--cluster-announce-bus-port",
                               std::to_string(options.cluster_announce_bus_port)});
    }
    if (options.cluster_node_timeout_ms > 0) {
      argv.insert(argv.end(),
                  {"--cluster-node-timeout", std::to_string(options.cluster_node_timeout_ms)});
    }
  }
  if (options.replica_of) {
    argv.insert(argv.end(), {"--replicaof", options.replica_of->host,
                             std::to_string(options.replica_of->port)});
  }
  return argv;
}

void RedisServer::launch(int port) {
  const std::filesystem::path log = directory_ / "redis.log";
  const std::vector<std::string> argv = command_line(port);
  std::vector<std::string> env;
  if (!options_.clock_shift_library.empty()) {
    env.push_back("LD_PRELOAD=" + options_.clock_shift_library);
    env.push_back("LOCKSIM_CLOCK_SHIFT_FILE=" + (directory_ / "clock-shift").string());
    if (options_.freeze_clock) {
      env.push_back("LOCKSIM_CLOCK_FREEZE_FILE=" + (directory_ / "clock-freeze").string());
    }
  }
  std::error_code ignored;
  std::filesystem::remove(log, ignored);
  pid_ = spawn(argv, env);
  const Clock& clock = this->clock();
  const Nanos deadline = clock.now_ns() + ms_to_ns(options_.startup_timeout_ms);
  while (true) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      // Most likely the port was taken meanwhile: start() tries another one.
      throw PortTaken{"redis-server on port " + std::to_string(port) + " " +
                      describe_status(status) + "; " + log_tail(log)};
    }
    std::string version;
    if (probe(port, pid_, version) == Probe::kReady) {
      endpoint_.host = "127.0.0.1";
      endpoint_.port = port;
      version_ = version.empty() ? "unknown" : version;
      return;
    }
    if (clock.now_ns() >= deadline) {
      const std::string message =
          "redis-server (pid " + std::to_string(pid_) + ") did not answer PING on " +
          "127.0.0.1:" + std::to_string(port) + " within " +
          std::to_string(options_.startup_timeout_ms) + " ms; " + log_tail(log);
      kill();
      throw EnvironmentError(message);
    }
    clock.sleep_for(kPollInterval);
  }
}

void RedisServer::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGCONT);  // a paused server dies as well, but reaping needs it not stopped
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

void RedisServer::restart() {
  LOCKSIM_ASSERT(pid_ <= 0 && !directory_.empty() && endpoint_.port > 0);
  // The port was ours a moment ago; another program taking it meanwhile is an environment
  // failure, retried briefly (redis-server binds with SO_REUSEADDR, so TIME_WAIT is no obstacle).
  std::string last_failure;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    try {
      launch(endpoint_.port);
      return;
    } catch (const PortTaken& taken) {
      last_failure = taken.what;
      clock().sleep_for(ms_to_ns(100));
    }
  }
  throw EnvironmentError("could not restart redis-server on port " +
                         std::to_string(endpoint_.port) + ": " + last_failure);
}

void RedisServer::pause() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGSTOP);
  // Returns once /proc shows it stopped, so that "paused" is true when the nemesis records it.
  const Clock& clock = this->clock();
  const Nanos deadline = clock.now_ns() + ms_to_ns(2000);
  while (clock.now_ns() < deadline) {
    std::ifstream stat("/proc/" + std::to_string(pid_) + "/stat");
    std::string content;
    std::getline(stat, content);
    const std::size_t paren = content.rfind(')');
    if (paren == std::string::npos || paren + 2 >= content.size()) return;  // no /proc: go on
    const char state = content[paren + 2];
    if (state == 'T' || state == 't') return;
    clock.sleep_for(ms_to_ns(1));
  }
}

void RedisServer::resume() {
  if (pid_ > 0) ::kill(pid_, SIGCONT);
}

bool RedisServer::shift_clock(std::int64_t offset_ms) {
  if (options_.clock_shift_library.empty() || directory_.empty()) return false;
  const std::string path = (directory_ / "clock-shift").string();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  // One aligned 8-byte write: the server's mapping sees the old or the new offset, never half.
  const ssize_t written = ::pwrite(fd, &offset_ms, sizeof(offset_ms), 0);
  ::close(fd);
  return written == static_cast<ssize_t>(sizeof(offset_ms));
}

bool RedisServer::set_frozen_clock_ns(std::int64_t unix_ns) {
  if (options_.clock_shift_library.empty() || !options_.freeze_clock || directory_.empty()) {
    return false;
  }
  const std::string path = (directory_ / "clock-freeze").string();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  // One aligned 8-byte write, as shift_clock's.
  const ssize_t written = ::pwrite(fd, &unix_ns, sizeof(unix_ns), 0);
  ::close(fd);
  return written == static_cast<ssize_t>(sizeof(unix_ns));
}

RedisServer::RedisServer(RedisServer&& other) noexcept
    : endpoint_(std::move(other.endpoint_)),
      pid_(std::exchange(other.pid_, -1)),
      cluster_port_(other.cluster_port_),
      version_(std::move(other.version_)),
      directory_(std::exchange(other.directory_, {})),
      options_(std::move(other.options_)) {}

RedisServer& RedisServer::operator=(RedisServer&& other) noexcept {
  if (this != &other) {
    stop();
    endpoint_ = std::move(other.endpoint_);
    pid_ = std::exchange(other.pid_, -1);
    cluster_port_ = other.cluster_port_;
    version_ = std::move(other.version_);
    directory_ = std::exchange(other.directory_, {});
    options_ = std::move(other.options_);
  }
  return *this;
}

const Clock& RedisServer::clock() const {
  return options_.clock != nullptr ? *options_.clock : real_clock();
}

RedisServer::~RedisServer() { stop(); }

void RedisServer::stop() {
  if (pid_ > 0) {
    ::kill(pid_, SIGCONT);  // a paused server cannot act on SIGTERM
    ::kill(pid_, SIGTERM);
    const Clock& clock = this->clock();
    const Nanos deadline = clock.now_ns() + kStopGrace;
    bool reaped = false;
    while (!reaped) {
      int status = 0;
      const pid_t waited = ::waitpid(pid_, &status, WNOHANG);
      if (waited == pid_ || (waited < 0 && errno != EINTR)) {
        reaped = true;
      } else if (clock.now_ns() >= deadline) {
        break;
      } else {
        clock.sleep_for(kPollInterval);
      }
    }
    if (!reaped) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    }
    pid_ = -1;
  }
  if (!directory_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(directory_, ignored);
    directory_.clear();
  }
}

std::string info_field(const std::string& info, std::string_view field) {
  std::istringstream in(info);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.size() > field.size() && line.starts_with(field) && line[field.size()] == ':') {
      return line.substr(field.size() + 1);
    }
  }
  return "";
}

std::string clock_shift_library_path() {
  std::error_code error;
  if (const char* given = std::getenv("LOCKSIM_CLOCK_SHIFT_LIBRARY"); given != nullptr) {
    return std::filesystem::exists(given, error) ? std::string(given) : "";
  }
  // Beside the executable: build/locksim; test binaries sit a level or two further down.
  std::filesystem::path dir = std::filesystem::read_symlink("/proc/self/exe", error).parent_path();
  if (error) return "";
  for (int up = 0; up < 3 && !dir.empty(); ++up, dir = dir.parent_path()) {
    const std::filesystem::path library = dir / "liblocksim_clockshift.so";
    if (std::filesystem::exists(library, error)) return library.string();
  }
  return "";
}

void kill_server_now(pid_t pid) {
  if (pid > 0) ::kill(pid, SIGKILL);
}

std::string server_version(const Endpoint& endpoint) {
  HiredisConnection connection(endpoint, ConnectionOptions{1000ms, 1000ms});
  const RedisResult info = connection.command({"INFO", "server"});
  if (!info.ok() || info.reply.type != Reply::Type::kString) return "unknown";
  const std::string version = info_field(info.reply.str, "redis_version");
  return version.empty() ? "unknown" : version;
}

}  // namespace locksim
