// process_transport.cc: the pipes to a worker process: spawning it, writing requests, reading its
// lines, waiting for a reply within a time limit, and telling when the worker broke.
#include "sim/host/process_transport.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <utility>

#include "sim/host/worker_protocol.h"

namespace locksim::host {
namespace {

// write_all: the whole line, or false if the worker's end is closed.
bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// stopped: whether the kernel reports `pid` stopped (state T in /proc/<pid>/stat).
bool stopped(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const std::size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() &&
         (text[paren + 2] == 'T' || text[paren + 2] == 't');
}

// well_typed: every field of a worker's message that the driver reads has the JSON type it is
// read as. A number sent as a string or null (a library's reply mismatched after a lost one)
// would otherwise throw from json::value() on whichever thread reads it and end locksim; as it is,
// the line is a protocol violation like any other that is not JSON, and the run fails (exit 3).
bool well_typed(const nlohmann::json& message) {
  static constexpr const char* kIntegers[] = {
      "id",      "done",        "monotonic_ns", "extended", "attempts", "sent_after_ns",
      "fencing", "validity_ms", "cycles_done",  "protocol"};
  static constexpr const char* kStrings[] = {"event", "result", "token", "message", "error",
                                             "state", "then",   "phase", "worker"};
  for (const char* field : kIntegers) {
    const auto found = message.find(field);
    if (found != message.end() && !found->is_number_integer()) return false;
  }
  for (const char* field : kStrings) {
    const auto found = message.find(field);
    if (found != message.end() && !found->is_string()) return false;
  }
  const auto stopped = message.find("stopped_early");
  return stopped == message.end() || stopped->is_boolean();
}

}  // namespace

ProcessTransport::ProcessTransport(const Clock& clock, Host host)
    : clock_(clock), host_(std::move(host)) {}

ProcessTransport::~ProcessTransport() {
  end();
  // A worker that said nothing on stderr leaves no file.
  std::error_code error;
  if (!stderr_path_.empty() && std::filesystem::file_size(stderr_path_, error) == 0 && !error) {
    std::filesystem::remove(stderr_path_, error);
  }
}

void ProcessTransport::end() {
  kill();
  if (to_worker_ >= 0) ::close(to_worker_);
  to_worker_ = -1;
  if (reader_.joinable()) reader_.join();
  if (from_worker_ >= 0) ::close(from_worker_);
  from_worker_ = -1;
}

std::string ProcessTransport::stderr_tail() const {
  if (stderr_path_.empty()) return "";
  std::ifstream in(stderr_path_, std::ios::binary);
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size <= 0) return "; it wrote nothing on stderr";
  constexpr std::streamoff kTail = 600;
  in.seekg(std::max<std::streamoff>(0, size - kTail));
  std::string tail(static_cast<std::size_t>(std::min(size, kTail)), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
  return "; its stderr (" + stderr_path_ + ") ends: " + (size > kTail ? "..." : "") + tail;
}

void ProcessTransport::broken(const std::string& what) {
  host_.broken("the worker " + command_.front() + " " + what + stderr_tail());
}

std::string ProcessTransport::spawn(const std::vector<std::string>& command,
                                    const std::string& stderr_path) {
  if (command.empty()) return "no worker command to run clients as processes";
  command_ = command;
  int to_child[2];
  int from_child[2];
  if (::pipe2(to_child, O_CLOEXEC) != 0) return std::string("pipe: ") + std::strerror(errno);
  if (::pipe2(from_child, O_CLOEXEC) != 0) {
    ::close(to_child[0]);
    ::close(to_child[1]);
    return std::string("pipe: ") + std::strerror(errno);
  }
  std::vector<char*> argv;
  for (const std::string& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  int stderr_fd = -1;
  if (!stderr_path.empty()) {
    stderr_path_ = stderr_path;
    stderr_fd = ::open(stderr_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (stderr_fd < 0) stderr_path_.clear();
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Only async-signal-safe calls until exec. A process group of its own: Ctrl-C on the
    // terminal reaches locksim, which stops the run; the worker dies with locksim.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    ::dup2(to_child[0], STDIN_FILENO);
    ::dup2(from_child[1], STDOUT_FILENO);
    if (stderr_fd >= 0) ::dup2(stderr_fd, STDERR_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(to_child[0]);
  ::close(from_child[1]);
  if (stderr_fd >= 0) ::close(stderr_fd);
  if (pid < 0) {
    ::close(to_child[1]);
    ::close(from_child[0]);
    return std::string("fork: ") + std::strerror(errno);
  }
  pid_ = pid;
  to_worker_ = to_child[1];
  from_worker_ = from_child[0];
  reader_ = std::thread([this] { read_lines(); });
  return "";
}

void ProcessTransport::send(nlohmann::json request) {
  request["v"] = kWorkerProtocol;
  // A worker that died is noticed by the caller through end of input, not here.
  (void)write_all(to_worker_, request.dump() + "\n");
}

ProcessTransport::Reply ProcessTransport::call(
    nlohmann::json request, Nanos patience_ns, bool stop_gently,
    const std::function<void(const nlohmann::json& event)>& at) {
  const std::int64_t id = next_id_++;
  request["id"] = id;
  const std::string op = request.value("op", "");
  Nanos patience = patience_ns;
  bool stop_sent = false;
  send(std::move(request));
  Reply reply;
  Nanos last = clock_.now_ns();
  Nanos silent = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (!garbage_.empty()) {
      const std::string line = garbage_;
      lock.unlock();
      broken(
          "printed a line that is not a JSON object of the worker protocol (not JSON, or a field "
          "of the wrong type): \"" +
          line + "\"");
      kill();
      reply.worker_died = true;
      return reply;
    }
    if (!inbox_.empty()) {
      nlohmann::json message = std::move(inbox_.front());
      inbox_.pop_front();
      if (message.value("event", "") == "at") {
        const bool crash = message.value("then", "") == "crash";
        if (crash) {
          reply.crash_point = true;
          reply.crashed_waiting = message.value("state", "") == "busy";
        }
        lock.unlock();
        if (at) at(message);
        if (!crash) send({{"op", "continue"}});
        lock.lock();
        continue;  // after a crash, end of input follows: the worker killed itself
      }
      if (message.value("id", std::int64_t{0}) == id) {
        reply.message = std::move(message);
        return reply;
      }
      continue;  // a reply to an earlier call given up on
    }
    if (eof_) {
      reply.worker_died = true;
      if (!killed_ && !reply.crash_point) {
        lock.unlock();
        int status = 0;
        std::string how = "exited";
        if (pid_ > 0 && ::waitpid(pid_, &status, 0) == pid_) {
          pid_ = -1;
          how = WIFEXITED(status)     ? "exited with status " + std::to_string(WEXITSTATUS(status))
                : WIFSIGNALED(status) ? "was killed by signal " + std::to_string(WTERMSIG(status))
                                      : "exited";
        }
        broken(how + " in the middle of " + (op.empty() ? "a request" : "\"" + op + "\""));
        lock.lock();
      }
      return reply;
    }
    if (stop_gently && host_.should_stop() && !stop_sent) {
      // A worker running its workload stops at its next cycle and hands over what it recorded.
      send({{"op", "stop"}});
      stop_sent = true;
      // It stops within a cycle; a long time limit no longer stretches its patience.
      patience = std::min(patience, silent + ms_to_ns(kWorkerPatienceMs));
    } else if (!stop_gently && host_.should_stop()) {
      // The run is over; a worker still busy (or stopped) is ended, and the call never completed.
      lock.unlock();
      kill();
      lock.lock();
      clock_.wait_for(changed_, lock, ms_to_ns(100), [this] { return eof_; });
      reply.worker_died = true;
      return reply;
    }
    clock_.pause(changed_, lock, ms_to_ns(50));
    const Nanos now = clock_.now_ns();
    if (!frozen_.load()) silent += now - last;
    last = now;
    if (silent > patience) {
      lock.unlock();
      broken("did not answer \"" + op + "\" within " + std::to_string(patience / kNanosPerMilli) +
             " ms");
      kill();
      reply.worker_died = true;
      return reply;
    }
  }
}

void ProcessTransport::read_lines() {
  std::string buffer;
  char chunk[4096];
  for (;;) {
    const ssize_t n = ::read(from_worker_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buffer.append(chunk, static_cast<std::size_t>(n));
    for (std::size_t newline; (newline = buffer.find('\n')) != std::string::npos;) {
      const std::string line = buffer.substr(0, newline);
      nlohmann::json message = nlohmann::json::parse(line, nullptr, false);
      buffer.erase(0, newline + 1);
      if (!message.is_object() || !well_typed(message)) {
        {
          std::lock_guard<std::mutex> lock(mutex_);
          if (garbage_.empty()) garbage_ = line.substr(0, 200);
        }
        changed_.notify_all();
        continue;
      }
      if (!host_.take(message)) {
        {
          std::lock_guard<std::mutex> lock(mutex_);
          inbox_.push_back(std::move(message));
        }
        changed_.notify_all();
      }
    }
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    eof_ = true;
  }
  changed_.notify_all();
}

void ProcessTransport::kill() {
  if (pid_ <= 0) return;
  killed_ = true;
  ::kill(pid_, SIGKILL);  // works on a stopped process too
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

void ProcessTransport::freeze() {
  if (pid_ <= 0) return;
  frozen_ = true;
  ::kill(pid_, SIGSTOP);
  // The pause has begun only once the kernel has stopped every thread of the worker.
  for (int i = 0; i < 2000 && !stopped(pid_); ++i) clock_.sleep_for(ms_to_ns(1));
}

void ProcessTransport::thaw() {
  if (pid_ > 0) ::kill(pid_, SIGCONT);
  frozen_ = false;
}

}  // namespace locksim::host
