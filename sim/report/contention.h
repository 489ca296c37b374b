// contention.h: the contention report of `locksim contend`: contention.json (versioned, with the
// context block) and contention.md (a table per study and variant: strategy x clients).
//
//   ContentionReport report = ...;  // filled by the contend command
//   write_file_atomically(dir / "contention.json", contention_json(report).dump(1));
//   write_file_atomically(dir / "contention.md", contention_markdown(report));
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/scenario/executor.h"
#include "sim/stats/contention.h"
#include "sim/stats/histogram.h"

namespace locksim {

inline constexpr int kContentionSchemaVersion = 1;

// ContentionLimit: what the round trip allows, measured in the same run.
struct ContentionLimit {
  LogHistogram ping_ns;  // PING round trips
  LogHistogram set_ns;   // SET key v NX PX round trips
  // Per variant, measured over a few hundred uncontended acquire + release cycles on one
  // connection: the round trips the client makes, and the commands the server runs (INFO
  // commandstats; a script's own redis.call()s count).
  std::vector<std::pair<std::string, double>> round_trips_per_cycle;
  std::vector<std::pair<std::string, double>> commands_per_cycle;
  // SET NX PX per second the server serves to 50 clients (redis-benchmark); 0: not measured.
  double server_ops_per_s = 0;
  double round_trips_for(const std::string& variant) const;
};

struct ContentionPoint {
  std::string variant;
  std::string strategy;
  int clients = 0;
  int keys = 0;
  int permits = 1;  // a semaphore's lock.permits at this point; 1 for a mutex
  double read_share = 0;  // a read-write lock's share of read holds at this point
  int repetition = 1;
  double arrival_per_s = 0;  // open loop: per client; 0 closed loop
  double mean_work_ms = 0;
  double mean_rest_ms = 0;
  ContentionMetrics metrics;
  std::string verdict;      // the checker's verdict word
  std::string observed;     // "mutex_violation (lease_expired)", "ok"
  bool decided = true;      // not interrupted, server not lost, not timed out
  std::int64_t run_acquisitions = 0;   // over the whole run (warm-up included)
  double commands_per_acquisition = -1;  // INFO commandstats delta / run_acquisitions
  double cpu_us_per_acquisition = -1;    // INFO cpu (user + sys) delta / run_acquisitions
  // The limit: the most acquisitions per second the round trip allows at this point, and the
  // floor of one acquire's latency (one round trip).
  double limit_per_s = 0;
  double latency_floor_ns = 0;
  // keys_per_primary: on a Redis Cluster, by primary (p1..pN, in order, zeros included), how many
  // of the keys the point's clients acquired (its history's) the primary serves; empty elsewhere.
  std::vector<std::pair<std::string, int>> keys_per_primary;
};

struct ContentionStudyReport {
  std::string name;
  std::string description;
  std::string file;
  nlohmann::json resolved;
  Executor executor = Executor::kThreads;  // what ran the clients ("clients_run_as")
  std::vector<ContentionPoint> points;
  // A study on a Redis Cluster (resolved["topology"]): its own limit, measured on the cluster
  // (round trips to the primary serving the key's slot, redis-benchmark --cluster), and the
  // servers whose INFO the commands and CPU per acquisition are summed over (its primaries).
  // Unset: the study ran on the one server, against ContentionReport::limit.
  std::optional<ContentionLimit> limit;
  std::vector<std::string> counted_servers;
};

struct ContentionReport {
  nlohmann::json context;  // run_id, seed, commit, redis_version, machine, started_at
  // limit: the one server's; not measured (no samples) when every study ran on a cluster.
  ContentionLimit limit;
  std::vector<ContentionStudyReport> studies;
};

// limit_per_s: acquisitions per second the round trip allows: each client needs at least
// `round_trips` round trips plus its work and rest per cycle (or its arrival rate, open loop), and
// each key at least the work plus a handoff of two round trips (release, then acquire; a wake-up
// at best free), once per permit (a semaphore's `permits` holders hand over side by side); and,
// when `server_ops_per_s` > 0, the server at most server_ops_per_s / round_trips cycles per
// second.
double limit_per_s(double rtt_ns, double round_trips, int clients, int keys, double work_ms,
                   double rest_ms, double arrival_per_s, double server_ops_per_s = 0,
                   int permits = 1, double read_share = 0);

// median_repetition: of the points with the same variant, strategy, permits and clients, the index
// of the one whose throughput is the median (the lower middle for an even count).
std::vector<std::size_t> median_repetitions(const std::vector<ContentionPoint>& points);

nlohmann::json contention_json(const ContentionReport& report);
std::string contention_markdown(const ContentionReport& report);

}  // namespace locksim
