// process_client.cc: ProcessClient, the harness of a client run as a worker process: the run's
// calls as the worker's requests, their outcomes recorded, the worker's events taken.
#include "sim/host/process_client.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <utility>

#include "sim/core/assert.h"
#include "sim/client/release.h"
#include "sim/client/resource_call.h"
#include "sim/host/worker_codec.h"
#include "sim/host/worker_protocol.h"
#include "sim/history/transfer.h"
#include "sim/lock/registry.h"
#include "sim/scenario/loader.h"
#include "sim/topology/topology.h"

namespace locksim::host {
namespace {

nlohmann::json resource_of(const RunContext& run) {
  const ResourceConfig& resource = run.scenario().resource;
  return {{"kind", resource_kind_word(resource.kind)}, {"key", run.full_key(resource.name)}};
}

}  // namespace

ProcessClient::ProcessClient(RunContext& run, int index)
    : DriverClient(run, index),
      transport_(run.clock().base(),
                 {.take = [this](const nlohmann::json& message) { return take_event(message); },
                  .should_stop = [this] { return run_.should_stop(); },
                  .broken =
                      [this](const std::string& description) {
                        run_.fail_worker("client " + name_ + ": " + description);
                      }}) {
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
  transport_.end();
  std::error_code removed;
  if (!history_path_.empty()) std::filesystem::remove(history_path_, removed);
}

std::string ProcessClient::connect() {
  if (const Topology* topology = run_.request().topology; topology != nullptr) {
    primary_generation_ = topology->primary_generation();
  }
  // Its stderr goes to <worker_stderr_dir>/<client>.stderr, if the run names a directory.
  const std::string& stderr_dir = run_.request().worker_stderr_dir;
  const std::string stderr_path = stderr_dir.empty() ? "" : stderr_dir + "/" + name_ + ".stderr";
  if (std::string error = transport_.spawn(run_.request().worker_command, stderr_path);
      !error.empty()) {
    return error;
  }
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
           transport_.stderr_tail();
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
           transport_.stderr_tail();
  }
  nlohmann::json connect = {
      {"op", "connect"},
      {"redis", endpoint_to_json(link_endpoint())},
      {"client", name_},
      {"variant", run_.request().variant.name()},
      {"seed", run_.plan().clients().at(static_cast<std::size_t>(index_)).seed},
      {"lock", lock_to_json(lock)}};
  if (const std::int64_t offset_ms = run_.scenario().clock_offset_ms(name_); offset_ms != 0) {
    connect["clock_offset_ms"] = offset_ms;
  }
  if (const std::int64_t drift = run_.scenario().clock_drift_ms_per_s(name_); drift != 0) {
    connect["clock_drift_ms_per_s"] = drift;
  }
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
  if (const Topology* topology = run_.request().topology;
      topology != nullptr && topology->cluster()) {
    // A library's cluster client (the driver runs only those on a cluster) reads the slot map
    // from these seeds, the lock's primary first, and follows MOVED, ASK and failovers itself.
    connect["cluster"] = nlohmann::json::array();
    const std::size_t primary = topology->primary();
    for (std::size_t i = 0; i < topology->size(); ++i) {
      const std::size_t server = i == 0 ? primary : (i <= primary ? i - 1 : i);
      nlohmann::json entry = endpoint_to_json(topology->endpoint(server));
      entry["name"] = topology->name(server);
      connect["cluster"].push_back(std::move(entry));
    }
  }
  const Reply connected = call(std::move(connect), nullptr);
  if (connected.worker_died) {
    if (const std::string failure = run_.worker_failure(); !failure.empty()) return failure;
    return "the worker exited while connecting" + transport_.stderr_tail();
  }
  if (connected.message.value("result", "") != "ok") {
    return "the worker could not connect to Redis: " +
           connected.message.value("message", connected.message.dump());
  }
  return "";
}

ProcessClient::Reply ProcessClient::call(nlohmann::json request, CallFaults* faults) {
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
  // A drifting clock counts from the run's time 0, which is set once every client is connected:
  // each later request tells the worker where it is on the monotonic clock they share.
  if (op != "hello" && op != "connect" && run_.scenario().clock_drift_ms_per_s(name_) != 0) {
    request["clock_origin_ns"] = run_.clock().at(0);
  }
  Nanos patience = ms_to_ns(kWorkerPatienceMs);
  if (op == "acquire") patience += ms_to_ns(request.value("timeout_ms", std::int64_t{0}));
  const bool workload = op == "workload";
  if (workload) patience += ms_to_ns(run_.scenario().time_limit_ms);
  // A worker running its workload is asked to stop when the run is over (it hands over what it
  // recorded); any other call is ended.
  return transport_.call(std::move(request), patience, workload,
                         [this, faults](const nlohmann::json& event) {
                           if (faults == nullptr) return;
                           faults->reached = true;
                           if (event.value("then", "") != "crash") pause_inside_call(*faults);
                         });
}

bool ProcessClient::take_event(const nlohmann::json& message) {
  const std::string event = message.value("event", "");
  if (event == "cycles") {
    const std::int64_t done = message.value("done", std::int64_t{0});
    run_.cycles_done += done - cycles_told_.exchange(done);
  } else if (event == "busy") {
    set_waiting(true);
  } else if (event == "extend") {
    on_event(message);
  } else {
    return false;
  }
  return true;
}

void ProcessClient::on_event(const nlohmann::json& event) {
  if (!renewal_record_) return;
  std::string key;
  std::string token;
  {
    std::lock_guard<std::mutex> lock(renewal_mutex_);
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
  const LockVariant& variant = run_.request().variant;
  LOCKSIM_ASSERT((!holding() || variant.reentrant() || variant.read_write()) && !crashed());
  const bool nested = holding();
  const std::int64_t ttl_ms = run_.scenario().lock.ttl_ms;
  const Nanos invoke_ns = record_.invoke_acquire(logical_key, intended_ns);
  nlohmann::json request = {{"op", "acquire"},
                            {"key", run_.full_key(logical_key)},
                            {"ttl_ms", ttl_ms},
                            {"timeout_ms", timeout_ms}};
  add_faults(request, faults, true);
  if (record_.acquire_mode() == LockMode::kRead) request["mode"] = "read";
  if (variant.renews()) {
    std::lock_guard<std::mutex> lock(renewal_mutex_);
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
  if (status != AcquireStatus::kAcquired || nested) return status;
  if (variant.renews()) {
    std::lock_guard<std::mutex> lock(renewal_mutex_);
    renewal_token_ = record_.held_token();
  }
  set_state(true, false);
  return AcquireStatus::kAcquired;
}

// ProcessClient::Release: the release's host in the harness: the worker process carries the
// release out (and stops its own renewal); a worker that died during it ends the client.
class ProcessClient::Release final : public ReleaseHost {
 public:
  Release(ProcessClient& client, CallFaults* faults) : client_(client), faults_(faults) {}

  void outside() override { client_.set_state(false, false); }
  Task<std::optional<ReleaseOutcome>> release_with(std::string token) override {
    nlohmann::json request = {{"op", "release"},
                              {"key", client_.run_.full_key(client_.record_.held_key())},
                              {"token", std::move(token)}};
    add_faults(request, faults_, true);
    const Reply reply = client_.call(std::move(request), faults_);
    if (reply.worker_died) {
      client_.crash();
      crash_point_ = reply.crash_point;
      co_return std::nullopt;
    }
    co_return release_from_json(reply.message);
  }
  // crash_point: the worker died at the crash point a step asked for.
  bool crash_point() const { return crash_point_; }

 private:
  ProcessClient& client_;
  CallFaults* faults_;
  bool crash_point_ = false;
};

bool ProcessClient::release(bool unsaved_token, CallFaults* faults) {
  LOCKSIM_ASSERT((holding() || release_pending() || record_.unheld_release()) && !crashed());
  Release host(*this, faults);
  // A worker that died of itself (not at the step's crash point) ended the release as far as the
  // step is concerned.
  return run_inline(release_call(host, record_, unsaved_token)) || !host.crash_point();
}

// ProcessClient::Extend: an extend step's host in the harness: the worker extends.
class ProcessClient::Extend final : public ExtendHost {
 public:
  Extend(ProcessClient& client, CallFaults* faults) : client_(client), faults_(faults) {}
  Task<std::optional<ExtendOutcome>> extend_with(std::string key, std::string token) override {
    nlohmann::json request = {{"op", "extend"},
                              {"key", client_.run_.full_key(key)},
                              {"token", std::move(token)},
                              {"ttl_ms", client_.run_.scenario().lock.ttl_ms}};
    add_faults(request, faults_, false);
    const Reply reply = client_.call(std::move(request), faults_);
    if (reply.worker_died) {
      client_.crash();
      co_return std::nullopt;
    }
    co_return extend_from_json(reply.message);
  }

 private:
  ProcessClient& client_;
  CallFaults* faults_;
};

void ProcessClient::extend(CallFaults* faults) {
  LOCKSIM_ASSERT(holding() && !crashed());
  Extend host(*this, faults);
  run_inline(extend_call(host, record_));
}

void ProcessClient::crash() {
  LOCKSIM_ASSERT(!crashed());
  transport_.kill();
  close_observer();
  record_.crash();
  set_state(false, true);
}

bool ProcessClient::runs_own_workload() const {
  const RunRequest& request = run_.request();
  return locksim_worker_ && transport_.pid() > 0 && !run_.scenario().scripted() &&
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
  history_path_ = (std::filesystem::temp_directory_path() /
                   ("locksim-" + std::to_string(::getpid()) + "-" +
                    std::to_string(transport_.pid()) + "-" + name_ + ".history"))
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
    transport_.broken("could not run its workload: " +
                      reply.message.value("message", reply.message.dump().substr(0, 300)));
    transport_.kill();
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
    transport_.broken(std::string("left a history that cannot be read: ") + error.what());
    transport_.kill();
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
    transport_.kill();
    record_.crashed_elsewhere();
    set_state(false, true);
  }
}

void ProcessClient::freeze() { transport_.freeze(); }

void ProcessClient::thaw() { transport_.thaw(); }

void ProcessClient::end_renewal() { (void)call({{"op", "stop_renewal"}}, nullptr); }

// ProcessClient::Resource: the resource's host in the harness: the worker process reads and
// writes, and its reply is decoded (worker_codec.h).
class ProcessClient::Resource final : public ResourceHost {
 public:
  Resource(ProcessClient& client, const ClientRecord::ResourceTerms& terms)
      : client_(client), terms_(terms) {}
  Task<ResourceReadOutcome> read_resource(const std::string& record_id) override {
    nlohmann::json request = {{"op", "read"}, {"resource", resource_of(client_.run_)}};
    if (!terms_.counts) request["record"] = record_id;
    const Reply reply = client_.call(std::move(request), nullptr);
    co_return read_from_json(reply.worker_died ? nlohmann::json() : reply.message);
  }
  Task<ResourceWriteOutcome> write_resource(const std::string& record_id, std::int64_t value,
                                            std::int64_t fencing) override {
    nlohmann::json request = {{"op", "write"}, {"resource", resource_of(client_.run_)},
                              {"value", value}};
    if (!terms_.counts) request["record"] = record_id;
    if (terms_.fenced) request["fencing"] = fencing;  // the number of the grant held (-1: none)
    const Reply reply = client_.call(std::move(request), nullptr);
    co_return write_from_json(reply.worker_died ? nlohmann::json() : reply.message);
  }

 private:
  ProcessClient& client_;
  const ClientRecord::ResourceTerms& terms_;
};

void ProcessClient::resource_read(const std::string& record_id) {
  const ClientRecord::ResourceTerms terms = resource_terms(run_);
  Resource host(*this, terms);
  run_inline(resource_read_call(host, record_, terms, record_id));
}

void ProcessClient::resource_write(const std::string& record_id) {
  const ClientRecord::ResourceTerms terms = resource_terms(run_);
  Resource host(*this, terms);
  run_inline(resource_write_call(host, record_, terms, record_id));
}

}  // namespace locksim::host
