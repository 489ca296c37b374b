#include "sim/driver/process_client.h"

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

#include "sim/core/assert.h"
#include "sim/driver/conditions.h"
#include "sim/client/resource.h"
#include "sim/driver/worker_codec.h"
#include "sim/driver/worker_protocol.h"
#include "sim/fault/fault.h"
#include "sim/history/transfer.h"
#include "sim/lock/registry.h"
#include "sim/scenario/loader.h"
#include "sim/topology/topology.h"

namespace locksim::driver_internal {
namespace {

// kWorkerPatienceMs: how long a worker may stay silent on one request (plus an acquire's own
// timeout) before it counts as hung. A library's own retries (redlock: about 2 s) and a command
// timeout (2 s) fit well inside.
constexpr std::int64_t kWorkerPatienceMs = 15000;

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

nlohmann::json resource_of(const RunContext& run) {
  const ResourceConfig& resource = run.scenario().resource;
  return {{"kind", resource_kind_word(resource.kind)}, {"key", run.full_key(resource.name)}};
}

}  // namespace

ProcessClient::ProcessClient(RunContext& run, int index) : DriverClient(run, index) {
  if (run.request().variant.renews()) {
    renewal_record_.emplace(run.recorder().add_log(static_cast<std::size_t>(index)),
                            run.scenario().lock.ttl_ms);
  }
  if (!run.scenario().scripted()) {
    // A workload run in the worker pauses its holder there; the nemesis's events come back.
    nemesis_log_ = &run.recorder().add_log(run.plan().clients().size() + 1);
  }
}

ProcessClient::~ProcessClient() {
  kill_worker();
  if (to_worker_ >= 0) ::close(to_worker_);
  if (reader_.joinable()) reader_.join();
  if (from_worker_ >= 0) ::close(from_worker_);
  std::error_code removed;
  if (!history_path_.empty()) std::filesystem::remove(history_path_, removed);
  // A worker that said nothing on stderr leaves no file.
  std::error_code error;
  if (!stderr_path_.empty() && std::filesystem::file_size(stderr_path_, error) == 0 && !error) {
    std::filesystem::remove(stderr_path_, error);
  }
}

std::string ProcessClient::stderr_tail() const {
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

void ProcessClient::broken(const std::string& what) {
  run_.fail_worker("client " + name_ + ": the worker " + run_.request().worker_command.front() +
                   " " + what + stderr_tail());
}

std::string ProcessClient::spawn() {
  const std::vector<std::string>& command = run_.request().worker_command;
  if (command.empty()) return "no worker command to run clients as processes";
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
  if (!run_.request().worker_stderr_dir.empty()) {
    stderr_path_ = run_.request().worker_stderr_dir + "/" + name_ + ".stderr";
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

std::string ProcessClient::connect() {
  if (const Topology* topology = run_.request().topology; topology != nullptr) {
    primary_generation_ = topology->primary_generation();
  }
  if (std::string error = spawn(); !error.empty()) return error;
  const LockConfig& lock = run_.scenario().lock;
  const Reply hello = call({{"op", "hello"}}, nullptr);
  locksim_worker_ = hello.message.is_object() && hello.message.value("worker", "") == "locksim";
  if (hello.worker_died || !hello.message.is_object() ||
      hello.message.value("protocol", 0) != kWorkerProtocol) {
    if (const std::string failure = run_.worker_failure(); !failure.empty()) return failure;
    const std::string answer = hello.message.dump();
    return "the worker " + run_.request().worker_command.front() +
           " did not answer the worker protocol " + std::to_string(kWorkerProtocol) +
           (hello.worker_died ? " (it exited)"
                              : ": it answered " + answer.substr(0, 300) +
                                    " (a worker of another protocol version?)") +
           stderr_tail();
  }
  // A scenario that cancels calls runs only libraries that say they cancel (the run checked
  // libraries.json); the adapter itself must offer it too.
  const std::vector<Step>& steps = run_.scenario().steps;
  const bool cancels = std::any_of(steps.begin(), steps.end(),
                                   [](const Step& step) { return step.cancel_after_ms >= 0; });
  if (cancels && !hello.message.contains("cancel")) {
    return "the worker " + run_.request().worker_command.front() +
           " offers no cancellation (its hello has no \"cancel\"), which this scenario asks of it "
           "(cancel_after_ms)" +
           stderr_tail();
  }
  nlohmann::json connect = {{"op", "connect"},
                            {"redis", endpoint_to_json(link_endpoint())},
                            {"client", name_},
                            {"variant", run_.request().variant.name()},
                            {"seed", run_.plan().clients().at(static_cast<std::size_t>(index_)).seed},
                            {"lock", lock_to_json(lock)}};
  if (run_.request().variant.multi_server() && run_.request().topology != nullptr) {
    // A quorum over every server of the topology, each through the client's link to it.
    connect["servers"] = nlohmann::json::array();
    for (std::size_t server = 0; server < run_.server_count(); ++server) {
      nlohmann::json entry =
          endpoint_to_json(run_.link_endpoint(static_cast<std::size_t>(index_), server));
      entry["name"] = run_.request().topology->name(server);
      connect["servers"].push_back(std::move(entry));
    }
  }
  const Reply connected = call(std::move(connect), nullptr);
  if (connected.worker_died) {
    if (const std::string failure = run_.worker_failure(); !failure.empty()) return failure;
    return "the worker exited while connecting" + stderr_tail();
  }
  if (connected.message.value("result", "") != "ok") {
    return "the worker could not connect to Redis: " +
           connected.message.value("message", connected.message.dump());
  }
  return "";
}

void ProcessClient::send(nlohmann::json request) {
  request["v"] = kWorkerProtocol;
  // A worker that died is noticed by the caller through end of input, not here.
  (void)write_all(to_worker_, request.dump() + "\n");
}

ProcessClient::Reply ProcessClient::call(nlohmann::json request, CallFaults* faults) {
  const std::int64_t id = next_id_++;
  request["id"] = id;
  if (const Topology* topology = run_.request().topology; topology != nullptr) {
    const std::uint64_t generation = topology->primary_generation();
    if (generation != primary_generation_) {
      // A server the worker uses was killed, restarted or replaced since its last request.
      request["reconnect"] = true;
      primary_generation_ = generation;
    }
  }
  // A worker that stays silent this long (not counting while the nemesis has it stopped, nor an
  // acquire's own wait for the lock) has hung: a broken worker, not a lock that blocks.
  const std::string op = request.value("op", "");
  Nanos patience = ms_to_ns(kWorkerPatienceMs);
  if (op == "acquire") patience += ms_to_ns(request.value("timeout_ms", std::int64_t{0}));
  const bool workload = op == "workload";
  if (workload) patience += ms_to_ns(run_.scenario().time_limit_ms);
  bool stop_sent = false;
  send(std::move(request));
  Reply reply;
  const Clock& clock = run_.clock().base();
  Nanos last = clock.now_ns();
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
      kill_worker();
      reply.worker_died = true;
      return reply;
    }
    if (!inbox_.empty()) {
      nlohmann::json message = std::move(inbox_.front());
      inbox_.pop_front();
      if (message.value("event", "") == "at") {
        if (faults != nullptr) faults->reached = true;
        if (message.value("then", "") == "crash") {
          reply.crash_point = true;
          reply.crashed_waiting = message.value("state", "") == "busy";
          continue;  // end of input follows: the worker killed itself
        }
        lock.unlock();
        if (faults != nullptr) pause_inside_call(*faults);
        send({{"op", "continue"}});
        lock.lock();
        continue;
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
    if (workload && run_.should_stop() && !stop_sent) {
      // A worker running its workload stops at its next cycle and hands over what it recorded.
      send({{"op", "stop"}});
      stop_sent = true;
      // It stops within a cycle; a long time limit no longer stretches its patience.
      patience = std::min(patience, silent + ms_to_ns(kWorkerPatienceMs));
    } else if (!workload && run_.should_stop()) {
      // The run is over; a worker still busy (or stopped) is ended, and the call never completed.
      lock.unlock();
      kill_worker();
      lock.lock();
      clock.wait_for(changed_, lock, ms_to_ns(100), [this] { return eof_; });
      reply.worker_died = true;
      return reply;
    }
    clock.pause(changed_, lock, ms_to_ns(50));
    const Nanos now = clock.now_ns();
    if (!frozen_.load()) silent += now - last;
    last = now;
    if (silent > patience) {
      lock.unlock();
      broken("did not answer \"" + op + "\" within " + std::to_string(patience / kNanosPerMilli) +
             " ms");
      kill_worker();
      reply.worker_died = true;
      return reply;
    }
  }
}

namespace {

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

void ProcessClient::read_lines() {
  std::string buffer;
  char chunk[4096];
  std::string renewal_token;
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
      const std::string event = message.value("event", "");
      if (event == "cycles") {
        const std::int64_t done = message.value("done", std::int64_t{0});
        run_.cycles_done += done - cycles_told_.exchange(done);
      } else if (event == "busy") {
        set_waiting(true);
      } else if (event == "extend") {
        on_event(message);
      } else {
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

void ProcessClient::on_event(const nlohmann::json& event) {
  if (!renewal_record_) return;
  std::string key;
  std::string token;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    key = renewal_key_;
    token = renewal_token_;
  }
  if (event.value("phase", "") == "invoke") {
    // locksim's own worker says when it sent the extend on the monotonic clock the run's clock
    // counts on; the line can arrive milliseconds later on a loaded machine, and a late invoke
    // would put the lease's earliest end past the truth.
    const Nanos sent = locksim_worker_ && event.contains("monotonic_ns")
                           ? event.value("monotonic_ns", Nanos{0}) - run_.clock().at(0)
                           : -1;
    renewal_record_->invoke(key, token, sent);
    return;
  }
  renewal_record_->end(key, extend_from_json(event));
  {
    std::lock_guard<std::mutex> state(run_.mutex);
    ++run_.renewals[static_cast<std::size_t>(index_)];
  }
  run_.notify_changed();
}

namespace {

// add_faults: a call's checkpoint faults and cancellation, as the request carries them.
void add_faults(nlohmann::json& request, const CallFaults* faults, bool checkpoints) {
  if (faults == nullptr) return;
  if (checkpoints && !faults->crash_at.empty()) request["crash_at"] = faults->crash_at;
  if (checkpoints && !faults->pause_at.empty()) request["pause_at"] = faults->pause_at;
  if (faults->cancel_after_ms >= 0) request["cancel_after_ms"] = faults->cancel_after_ms;
}

}  // namespace

AcquireStatus ProcessClient::acquire(const std::string& logical_key, std::int64_t timeout_ms,
                                     CallFaults* faults, Nanos intended_ns) {
  LOCKSIM_ASSERT(!holding() && !crashed());
  const LockVariant& variant = run_.request().variant;
  const std::int64_t ttl_ms = run_.scenario().lock.ttl_ms;
  const Nanos invoke_ns = record_.invoke_acquire(logical_key, intended_ns);
  nlohmann::json request = {{"op", "acquire"},
                            {"key", run_.full_key(logical_key)},
                            {"ttl_ms", ttl_ms},
                            {"timeout_ms", timeout_ms}};
  add_faults(request, faults, true);
  if (variant.renews()) {
    std::lock_guard<std::mutex> lock(mutex_);
    renewal_key_ = logical_key;
  }
  const Reply reply = call(std::move(request), faults);
  set_waiting(false);
  if (reply.worker_died) {
    record_.crashed_in_acquire(reply.crashed_waiting);
    const bool stopping = !reply.crash_point && run_.should_stop();
    crash();
    return stopping ? AcquireStatus::kStopped : AcquireStatus::kCrashed;
  }
  const Topology* topology = run_.request().topology;
  const AcquireStatus status = record_.end_acquire(
      acquire_from_json(reply.message, invoke_ns, topology != nullptr ? topology->size() : 0));
  if (status != AcquireStatus::kAcquired) return status;
  if (variant.renews()) {
    std::lock_guard<std::mutex> lock(mutex_);
    renewal_token_ = record_.held_token();
  }
  set_state(true, false);
  return AcquireStatus::kAcquired;
}

bool ProcessClient::release(bool unsaved_token, CallFaults* faults) {
  LOCKSIM_ASSERT((holding() || release_pending()) && !crashed());
  // exit before the release request is sent (the conservative point); a retry of a cancelled
  // release has left already.
  if (holding()) {
    record_.exit();
    set_state(false, false);
  }
  const std::string token = record_.invoke_release(unsaved_token);
  nlohmann::json request = {
      {"op", "release"}, {"key", run_.full_key(record_.held_key())}, {"token", token}};
  add_faults(request, faults, true);
  const Reply reply = call(std::move(request), faults);
  if (reply.worker_died) {
    crash();
    return !reply.crash_point;
  }
  record_.end_release(release_from_json(reply.message));
  return true;
}

void ProcessClient::extend(CallFaults* faults) {
  LOCKSIM_ASSERT(holding() && !crashed());
  record_.invoke_extend();
  nlohmann::json request = {{"op", "extend"},
                            {"key", run_.full_key(record_.held_key())},
                            {"token", record_.held_token()},
                            {"ttl_ms", run_.scenario().lock.ttl_ms}};
  add_faults(request, faults, false);
  const Reply reply = call(std::move(request), faults);
  if (reply.worker_died) {
    crash();
    return;
  }
  record_.end_extend(extend_from_json(reply.message));
}

void ProcessClient::kill_worker() {
  if (pid_ <= 0) return;
  killed_ = true;
  ::kill(pid_, SIGKILL);  // works on a stopped process too
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

void ProcessClient::crash() {
  LOCKSIM_ASSERT(!crashed());
  kill_worker();
  close_observer();
  record_.crash();
  set_state(false, true);
}

bool ProcessClient::runs_own_workload() const {
  const RunRequest& request = run_.request();
  return locksim_worker_ && pid_ > 0 && !run_.scenario().scripted() &&
         !run_.plan().proxied_links() && request.topology == nullptr &&
         !request.variant.multi_server() && !workload_scenario().is_null();
}

nlohmann::json ProcessClient::workload_scenario() const {
  const Scenario& scenario = run_.scenario();
  if (!scenario.resolved.is_object() || !scenario.workload) return nullptr;
  // The worker knows its own variant (and no library's): the document names only that one.
  nlohmann::json document = scenario.resolved;
  const std::string variant(run_.request().variant.name());
  document["variants"] = {variant};
  document["expect"] = {{variant, {{"verdict", "any"}}}};
  // What the worker will run must be what this run is: the same clients, lock, resource,
  // workload and time limit.
  try {
    const Scenario back = parse_scenario(document, scenario.name, variant_names());
    if (workload_shape(back) == workload_shape(scenario)) return document;
  } catch (const std::exception&) {
  }
  return nullptr;
}

void ProcessClient::run_own_workload() {
  history_path_ =
      (std::filesystem::temp_directory_path() / ("locksim-" + std::to_string(::getpid()) + "-" +
                                                 std::to_string(pid_) + "-" + name_ + ".history"))
          .string();
  const Reply reply = call({{"op", "workload"},
                            {"scenario", workload_scenario()},
                            {"client", index_},
                            {"seed", run_.request().seed},
                            {"key_prefix", run_.request().key_prefix},
                            {"origin_ns", run_.clock().at(0)},
                            {"history", history_path_}},
                           nullptr);
  if (reply.worker_died) return;  // named as a broken worker (or the run was stopped)
  if (reply.message.value("result", "") != "ok") {
    broken("could not run its workload: " +
           reply.message.value("message", reply.message.dump().substr(0, 300)));
    kill_worker();
    return;
  }
  take_history(reply.message);
}

void ProcessClient::take_history(const nlohmann::json& reply) {
  try {
    const History history = read_history_transfer(history_path_);
    const auto self = static_cast<std::int32_t>(index_);
    const auto nemesis = static_cast<std::int32_t>(run_.plan().clients().size() + 1);
    for (const Event& event : history.events) {
      if (event.client == self) {
        log_.append(history, event);
      } else if (event.client == nemesis && nemesis_log_ != nullptr) {
        nemesis_log_->append(history, event);
      }
    }
  } catch (const std::exception& error) {
    broken(std::string("left a history that cannot be read: ") + error.what());
    kill_worker();
    return;
  }
  std::error_code removed;
  std::filesystem::remove(history_path_, removed);
  history_path_.clear();
  const std::int64_t cycles = reply.value("cycles_done", std::int64_t{0});
  run_.cycles_done += cycles - cycles_told_.exchange(cycles);
  if (reply.value("stopped_early", false)) run_.stopped_early = true;
  for (const nlohmann::json& note : reply.value("notes", nlohmann::json::array())) {
    if (note.is_string()) run_.add_note(note.get<std::string>());
  }
  if (reply.value("crashed", false)) {
    // It crashed inside its critical section (its connections closed then): the process dies.
    kill_worker();
    record_.crashed_elsewhere();
    set_state(false, true);
  }
}

void ProcessClient::freeze() {
  if (pid_ <= 0) return;
  frozen_ = true;
  ::kill(pid_, SIGSTOP);
  // The pause has begun only once the kernel has stopped every thread of the worker.
  const Clock& clock = run_.clock().base();
  for (int i = 0; i < 2000 && !stopped(pid_); ++i) clock.sleep_for(ms_to_ns(1));
}

void ProcessClient::thaw() {
  if (pid_ > 0) ::kill(pid_, SIGCONT);
  frozen_ = false;
}

void ProcessClient::lose_lock() {
  (void)call({{"op", "stop_renewal"}}, nullptr);
  record_.lose_lock();
}

void ProcessClient::resource_read(const std::string& record_id) {
  const ClientRecord::ResourceTerms terms = resource_terms(run_);
  nlohmann::json request = {{"op", "read"}, {"resource", resource_of(run_)}};
  if (!terms.counts) request["record"] = record_id;
  const Reply reply = call(std::move(request), nullptr);
  const bool ok = !reply.worker_died && reply.message.value("result", "") == "ok";
  // Recorded when the reply arrived, as every completion is.
  const CallFailure failure = failure_from_json(reply.message);
  record_.end_read(terms, record_id, ok ? nullptr : &failure,
                   ok ? reply.message.value("value", std::int64_t{0}) : -1);
}

void ProcessClient::resource_write(const std::string& record_id) {
  const ClientRecord::ResourceTerms terms = resource_terms(run_);
  const std::optional<std::int64_t> value = record_.write_value(terms);
  if (!value) return;
  nlohmann::json request = {{"op", "write"}, {"resource", resource_of(run_)}, {"value", *value}};
  if (!terms.counts) request["record"] = record_id;
  // The number of the grant held (-1: none).
  if (terms.fenced) request["fencing"] = record_.held_fencing();
  const Reply reply = call(std::move(request), nullptr);
  const bool ok = !reply.worker_died && reply.message.value("result", "") == "ok";
  const CallFailure failure = failure_from_json(reply.message);
  record_.end_write(terms, record_id, *value, ok ? nullptr : &failure, nullptr);
}

}  // namespace locksim::driver_internal
