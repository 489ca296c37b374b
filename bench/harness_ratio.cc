// harness_ratio: is the driver the bottleneck it measures? Side by side on one private
// redis-server, each round runs redis-benchmark -c 50 (SET NX PX on random keys: what the server
// serves to 50 clients) and then the 50-client / 50-key uncontended point through the real driver
// for set_nx_ex (SET NX PX, DEL: as cheap for the server as the benchmark's command) and lua_owner
// (SET NX PX, EVALSHA: the release runs a script, which costs the server more), once in each
// client mode. The point's limit is the benchmark's rate divided by the commands a cycle sends
// (2); the ratio is the point's acquisitions per second over that limit. Prints every round and
// the medians.
//
//   build/bench/harness_ratio [--rounds 5] [--duration-ms 2000] [--clients 50]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "sim/checker/check.h"
#include "sim/core/error.h"
#include "sim/core/stop.h"
#include "sim/driver/driver.h"
#include "sim/lock/registry.h"
#include "sim/redis/benchmark.h"
#include "sim/redis/server.h"
#include "sim/scenario/loader.h"
#include "sim/stats/contention.h"

namespace {

using namespace locksim;

struct Options {
  int rounds = 5;
  std::int64_t duration_ms = 2000;
  int clients = 50;
};

int usage(const char* message) {
  std::cerr << "harness_ratio: " << message
            << "\nusage: harness_ratio [--rounds 1..50] [--duration-ms 200..60000] "
               "[--clients 1..256]\n";
  return 2;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

Scenario point(const Options& options, const std::string& variant, const std::string& mode) {
  const nlohmann::json document = {
      {"name", "harness-ratio-" + std::string(mode == "event_loop" ? "event-loop" : "threads")},
      {"source", {{"doc", "none"}, {"claim", "the harness keeps up with the server"}}},
      {"variants", {variant}},
      {"lock",
       {{"ttl_ms", 10000},
        {"acquire_timeout_ms", 10000},
        {"wait", {{"strategy", "poll"}, {"interval_ms", 1}}}}},
      {"workload",
       {{"clients", options.clients},
        {"keys", options.clients},
        {"work_ms", 0},
        {"rest_ms", 0},
        {"warmup_ms", 300},
        {"duration_ms", options.duration_ms}}},
      {"clients_run_as", mode},
      {"expect", {{variant, {{"verdict", "ok"}}}}},
      {"time_limit_ms", options.duration_ms + 60000}};
  return parse_scenario(document, "harness_ratio", variant_names());
}

// run_point: acquisitions per second over the measured window; throws if the run was not ok.
double run_point(const Scenario& scenario, const Endpoint& endpoint, int round, StopSignal& stop) {
  const LockVariant& variant = *find_variant(scenario.variants.front());
  const RunRequest request{scenario, variant, static_cast<std::uint64_t>(round + 1), endpoint,
                           "locksim:bench" + std::to_string(round) + ":", stop, {}, true, {}};
  const RunOutcome outcome = run_scenario(request);
  if (!outcome.harness_error.empty()) throw EnvironmentError(outcome.harness_error);
  CheckOptions check;
  const CheckResult result = check_history(outcome.history, check);
  if (result.verdict != Verdict::kOk || outcome.timed_out || outcome.server_lost) {
    throw EnvironmentError(scenario.name + ": the run was not ok (" +
                           std::string(to_string(result.verdict)) + ")");
  }
  const Workload& w = *scenario.workload;
  const ContentionMetrics metrics = contention_metrics(
      outcome.history, ms_to_ns(w.warmup_ms), ms_to_ns(w.warmup_ms + w.duration_ms));
  return metrics.throughput_per_s;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::cout << "harness_ratio: the 50-client / 50-key uncontended set_nx_ex and lua_owner "
                   "points in each client mode, as a ratio to redis-benchmark -c 50 SET NX PX / 2 commands per "
                   "cycle, measured side by side on a private redis-server.\n"
                   "usage: harness_ratio [--rounds N (5)] [--duration-ms MS (2000)] "
                   "[--clients N (50)]\n";
      return 0;
    }
    if (i + 1 >= argc) return usage(("missing a value after " + flag).c_str());
    char* end = nullptr;
    const long value = std::strtol(argv[++i], &end, 10);
    if (end == nullptr || *end != '\0') return usage(("expected a number after " + flag).c_str());
    if (flag == "--rounds" && value >= 1 && value <= 50) {
      options.rounds = static_cast<int>(value);
    } else if (flag == "--duration-ms" && value >= 200 && value <= 60000) {
      options.duration_ms = value;
    } else if (flag == "--clients" && value >= 1 && value <= 256) {
      options.clients = static_cast<int>(value);
    } else {
      return usage(("unknown flag or value out of range: " + flag).c_str());
    }
  }
  try {
    RedisServer server = RedisServer::start({});
    StopSignal stop;
    const double commands_per_cycle = 2;  // SET NX PX; EVALSHA lua_owner.release
    std::map<std::string, std::vector<double>> ratios;
    std::vector<double> capacities;
    std::printf("redis-server on 127.0.0.1:%d; %d clients on %d keys, work 0, rest 0, %lld ms "
                "measured per point\n",
                server.endpoint().port, options.clients, options.clients,
                static_cast<long long>(options.duration_ms));
    for (int round = 0; round < options.rounds; ++round) {
      const double capacity = server_capacity(server.endpoint(), "locksim:bench:",
                                              options.clients, 200000);
      if (capacity <= 0) throw EnvironmentError("redis-benchmark did not run (redis-tools?)");
      capacities.push_back(capacity);
      const double limit = capacity / commands_per_cycle;
      std::printf("round %d: redis-benchmark -c %d SET NX PX %.0f ops/s -> limit %.0f cycles/s:",
                  round + 1, options.clients, capacity, limit);
      for (const std::string variant : {"set_nx_ex", "lua_owner"}) {
        for (const std::string mode : {"event_loop", "threads"}) {
          const double rate =
              run_point(point(options, variant, mode), server.endpoint(), round, stop);
          ratios[variant + " " + mode].push_back(rate / limit);
          std::printf("\n  %s %s %.0f acq/s (%.2f)", variant.c_str(), mode.c_str(), rate,
                      rate / limit);
        }
      }
      std::printf("\n");
      std::fflush(stdout);
    }
    std::printf("median of %d rounds: redis-benchmark %.0f ops/s; ratio to the limit:",
                options.rounds, median(capacities));
    for (const auto& [point_name, values] : ratios) {
      std::printf(" %s %.2f;", point_name.c_str(), median(values));
    }
    std::printf("\n");
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "harness_ratio: " << error.what() << "\n";
    return 3;
  }
}
