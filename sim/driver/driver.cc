#include "sim/driver/driver.h"

#include <chrono>
#include <latch>
#include <memory>
#include <thread>

#include "sim/driver/client.h"
#include "sim/driver/runners.h"

namespace locksim {
namespace {

using driver_internal::DriverClient;
using driver_internal::RunContext;

// delete_run_keys: removes every key under the run's prefix (and nothing else). Bounded by the
// number of SCAN rounds so a huge foreign keyspace cannot keep it busy forever.
void delete_run_keys(const RunRequest& request, std::vector<std::string>& notes) {
  Connection connection(request.endpoint, ConnectionOptions{});
  if (connection.broken()) {
    notes.push_back("cleanup: could not connect to delete the run's keys: " +
                    connection.last_error().describe());
    return;
  }
  std::string cursor = "0";
  for (int round = 0; round < 100000; ++round) {
    const RedisResult scan =
        connection.command({"SCAN", cursor, "MATCH", request.key_prefix + "*", "COUNT", "1000"});
    if (!scan.ok() || scan.reply.elements.size() != 2) {
      notes.push_back("cleanup: SCAN failed: " + scan.describe());
      return;
    }
    for (const Reply& key : scan.reply.elements[1].elements) connection.command({"DEL", key.str});
    cursor = scan.reply.elements[0].str;
    if (cursor == "0") return;
  }
}

double progress_fraction(RunContext& run) {
  const Scenario& scenario = run.scenario();
  if (scenario.workload) {
    const auto total = static_cast<double>(scenario.workload->clients) *
                       static_cast<double>(scenario.workload->cycles);
    return static_cast<double>(run.cycles_done.load()) / total;
  }
  std::lock_guard<std::mutex> lock(run.mutex);
  return static_cast<double>(run.steps_started) / static_cast<double>(scenario.steps.size());
}

}  // namespace

RunOutcome run_scenario(const RunRequest& request) {
  const Scenario& scenario = request.scenario;
  RunOutcome outcome;
  RunContext run(request, scenario.clients);

  std::vector<std::unique_ptr<DriverClient>> clients;
  for (std::size_t i = 0; i < scenario.clients.size(); ++i) {
    clients.push_back(std::make_unique<DriverClient>(run, static_cast<int>(i), request.seed));
    const std::string error = clients.back()->connect();
    if (!error.empty()) {
      outcome.harness_error =
          "cannot connect to Redis at " + request.endpoint.redacted() + ": " + error;
      return outcome;
    }
  }

  // The protected resource starts in a known state (a counter at its initial stock).
  if (scenario.resource.kind == ResourceConfig::Kind::kCounter) {
    Connection setup(request.endpoint, ConnectionOptions{});
    const RedisResult result = setup.command({"SET", request.key_prefix + scenario.resource.name,
                                              std::to_string(scenario.resource.initial)});
    if (!result.ok()) {
      outcome.harness_error = "cannot initialise the resource: " + result.describe();
      return outcome;
    }
  }

  // All connections are open before any client starts, so set-up is not part of the run.
  std::latch start(static_cast<std::ptrdiff_t>(clients.size()) + 1);
  std::atomic<std::size_t> finished{0};
  std::vector<std::thread> threads;
  threads.reserve(clients.size());
  for (auto& client : clients) {
    threads.emplace_back([&run, &start, &finished, &scenario, client = client.get()] {
      start.arrive_and_wait();
      if (scenario.scripted()) {
        driver_internal::run_scripted_client(run, *client);
      } else {
        driver_internal::run_workload_client(run, *client);
      }
      finished += 1;
      run.changed.notify_all();
    });
  }
  start.arrive_and_wait();
  while (finished.load() < threads.size()) {
    {
      std::unique_lock<std::mutex> lock(run.mutex);
      run.changed.wait_for(lock, std::chrono::milliseconds(200));
    }
    if (request.progress) request.progress(progress_fraction(run));
  }
  for (auto& thread : threads) thread.join();

  outcome.interrupted = request.stop.requested();
  outcome.timed_out = !outcome.interrupted && run.stopped_early.load();
  if (outcome.timed_out) {
    run.note("the run reached its time limit of " + std::to_string(scenario.time_limit_ms) +
             " ms and was stopped");
  }
  outcome.notes = run.take_notes();
  delete_run_keys(request, outcome.notes);
  clients.clear();
  outcome.history = std::move(run.recorder()).merge();
  return outcome;
}

}  // namespace locksim
