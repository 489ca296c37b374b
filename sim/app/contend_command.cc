// `locksim contend`: contention studies. Every point (variant x wait strategy x clients, each
// repetition) runs as a time-bounded workload on the private redis-server (or --redis), is judged
// by the checker like any run (a violation is a verdict, never dropped), and is measured over its
// window by contention_metrics. Before the points, the run measures what the machine allows: the
// round trip (PING, SET NX PX) and the commands one uncontended cycle of each variant sends.
// A study with a "topology" (a Redis Cluster) runs on a cluster started for it, which it measures
// the same way when it starts (capacity by redis-benchmark --cluster), its points' keys placed
// over the primaries and the INFO counters summed over them (ClusterServers, below).
// Writes <out>/contention/<run-id>/contention.json and contention.md, then draws the plots.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "sim/app/commands.h"
#include "sim/app/console.h"
#include "sim/app/run_id.h"
#include "sim/checker/check.h"
#include "sim/core/error.h"
#include "sim/core/random.h"
#include "sim/driver/driver.h"
#include "sim/lock/registry.h"
#include "sim/plan/plan.h"
#include "sim/redis/acl_user.h"
#include "sim/redis/benchmark.h"
#include "sim/redis/cluster_connection.h"
#include "sim/redis/connection.h"
#include "sim/redis/key_slot.h"
#include "sim/report/contention.h"
#include "sim/report/files.h"
#include "sim/report/junit.h"
#include "sim/report/run_record.h"
#include "sim/scenario/study.h"
#include "sim/stats/contention.h"
#include "sim/topology/topology.h"

namespace locksim {
namespace fs = std::filesystem;
namespace {

Nanos elapsed_ns(Nanos since) { return real_clock().now_ns() - since; }

// require_kind: every variant of `study` is of the kind `is` says; else bad input naming the
// field, the first other variant and the variants of the kind ("$.permits: expected only
// semaphore variants when permits are swept, but "lua_owner" is a mutex (semaphores: ...)").
void require_kind(const Study& study, bool (LockVariant::*is)() const, const char* field,
                  const char* expected, const char* other_words, const char* kind_words) {
  for (const std::string& v : study.variants) {
    if ((find_variant(v)->*is)()) continue;
    std::string of_kind;
    for (const LockVariant* each : all_variants()) {
      if ((each->*is)()) of_kind += (of_kind.empty() ? "" : ", ") + std::string(each->name());
    }
    throw InputError(study.file + ": " + field + ": expected only " + expected + ", but \"" + v +
                     "\" " + other_words + " (" + kind_words + ": " + of_kind + ")");
  }
}

// share_text: a read share as a point's label shows it ("0.90").
std::string share_text(double share) {
  char text[16];
  std::snprintf(text, sizeof text, "%.2f", share);
  return text;
}

// ServerCounters: what INFO says the server has done so far.
struct ServerCounters {
  double calls = 0;        // commands, without the harness's INFO/PING/ACL/CLIENT/SCRIPT/...
  double cpu_seconds = 0;  // used_cpu_user + used_cpu_sys
  bool ok = false;
};

ServerCounters read_counters(Connection& admin) {
  // "cluster": a cluster client's CLUSTER SLOTS when it connects (and the harness's own looks).
  static const std::set<std::string> kHarness = {"info",   "ping",   "acl",    "client", "hello",
                                                 "auth",   "script", "config", "scan",   "select",
                                                 "dbsize", "unlink", "cluster"};
  ServerCounters counters;
  const RedisResult stats = admin.command({"INFO", "commandstats"});
  const RedisResult cpu = admin.command({"INFO", "cpu"});
  if (!stats.ok() || !cpu.ok()) return counters;
  std::istringstream lines(stats.reply.str);
  std::string line;
  while (std::getline(lines, line)) {
    // cmdstat_set:calls=12,usec=...; subcommands: cmdstat_acl|setuser:calls=...
    if (line.rfind("cmdstat_", 0) != 0) continue;
    const std::size_t colon = line.find(':');
    std::string name = line.substr(8, colon - 8);
    const std::size_t bar = name.find('|');
    if (bar != std::string::npos) name = name.substr(0, bar);
    if (kHarness.count(name) != 0) continue;
    const std::size_t calls = line.find("calls=", colon);
    if (calls != std::string::npos) counters.calls += std::atof(line.c_str() + calls + 6);
  }
  std::istringstream cpu_lines(cpu.reply.str);
  while (std::getline(cpu_lines, line)) {
    if (line.rfind("used_cpu_sys:", 0) == 0) counters.cpu_seconds += std::atof(line.c_str() + 13);
    if (line.rfind("used_cpu_user:", 0) == 0) counters.cpu_seconds += std::atof(line.c_str() + 14);
  }
  counters.ok = true;
  return counters;
}

// CountedServers: the servers whose INFO a study's commands and CPU per acquisition are summed
// over: the one server, or a cluster's primaries (a replica runs its primary's writes again:
// counting it would count a command twice, so replicas are left out).
class CountedServers {
 public:
  void add(std::string name, const Endpoint& endpoint) {
    names_.push_back(std::move(name));
    connections_.push_back(std::make_unique<HiredisConnection>(endpoint, ConnectionOptions{}));
  }
  const std::vector<std::string>& names() const { return names_; }
  // read: the sum over the servers; not ok if any of them did not answer.
  ServerCounters read() const {
    ServerCounters sum;
    sum.ok = !connections_.empty();
    for (const auto& connection : connections_) {
      const ServerCounters one = read_counters(*connection);
      sum.calls += one.calls;
      sum.cpu_seconds += one.cpu_seconds;
      sum.ok = sum.ok && one.ok;
    }
    return sum;
  }

 private:
  std::vector<std::string> names_;
  std::vector<std::unique_ptr<HiredisConnection>> connections_;
};

// measure_round_trips: `samples` PINGs and SET NX PX of one key, one at a time. On a cluster
// connection the first DEL routes the PINGs (which have no key) to the primary of the key's slot.
void measure_round_trips(Connection& admin, const std::string& key, int samples,
                         ContentionLimit& limit) {
  admin.command({"DEL", key});
  for (int i = 0; i < samples; ++i) {
    const Nanos start = real_clock().now_ns();
    if (!admin.command({"PING"}).ok()) throw EnvironmentError("PING failed while measuring");
    limit.ping_ns.record(elapsed_ns(start));
  }
  for (int i = 0; i < samples; ++i) {
    const Nanos start = real_clock().now_ns();
    if (!admin.command({"SET", key, "1", "NX", "PX", "60000"}).ok()) {
      throw EnvironmentError("SET NX PX failed while measuring");
    }
    limit.set_ns.record(elapsed_ns(start));
  }
  admin.command({"DEL", key});
}

// CycleCost: what one uncontended acquire + release of a variant costs.
struct CycleCost {
  double round_trips = 2;  // commands the client sends (each waits for its reply)
  double commands = 2;     // commands the server runs, those inside scripts included
};

// measure_cycle: `cycles` uncontended acquire + release calls of `variant` on `connection` (a
// new one, to the server or the cluster), counted by the connection and by INFO commandstats of
// the counted servers.
CycleCost measure_cycle(Connection& connection, const CountedServers& counted,
                        const LockVariant& variant, const std::string& key, int cycles) {
  Rng rng(1);
  // One waiter that never finds the lock taken: a queueing variant grants it at once.
  const LockContext context{connection, rng, real_clock(), {}, "contend-cycle", 60000};
  // One cycle first, uncounted: it loads the variant's scripts (NOSCRIPT, then SCRIPT LOAD).
  const AcquireAttempt first = variant.try_acquire(context, key, 60000);
  if (first.outcome == AcquireAttempt::Outcome::kAcquired) variant.release(context, key, first.token);
  if (first.outcome == AcquireAttempt::Outcome::kError) {
    std::cerr << "locksim: calibrating " << variant.name() << ": " << first.error.describe()
              << "\n";
  }
  const ServerCounters before = counted.read();
  const std::uint64_t sent_before = connection.round_trips();
  int done = 0;
  for (int i = 0; i < cycles; ++i) {
    const AcquireAttempt attempt = variant.try_acquire(context, key, 60000);
    if (attempt.outcome != AcquireAttempt::Outcome::kAcquired) break;
    variant.release(context, key, attempt.token);
    ++done;
  }
  const ServerCounters after = counted.read();
  const auto sent = static_cast<double>(connection.round_trips() - sent_before);
  connection.command({"DEL", key});
  CycleCost cost;
  if (done == 0) return cost;
  cost.round_trips = sent / done;
  if (before.ok && after.ok) cost.commands = (after.calls - before.calls) / done;
  return cost;
}

std::string ms_text(double ns) {
  char text[32];
  std::snprintf(text, sizeof text, ns >= 1e7 ? "%.0f" : ns >= 1e6 ? "%.1f" : "%.2f", ns / 1e6);
  return text;
}

// measure_limit: the round trips on `probe`, the server's (or cluster's) capacity by `capacity`
// (0: not measured), and the cost of one uncontended cycle of each in-process variant of
// `variants` on a connection `dial` opens; prints them after `label`.
ContentionLimit measure_limit(Connection& probe, const CountedServers& counted,
                              const std::function<std::unique_ptr<Connection>()>& dial,
                              const std::set<std::string>& variants, const std::string& prefix,
                              int samples, const std::function<double()>& capacity,
                              const std::string& label, const std::string& capacity_words) {
  ContentionLimit limit;
  measure_round_trips(probe, prefix + "rtt", samples, limit);
  limit.server_ops_per_s = capacity();
  for (const std::string& v : variants) {
    // A library cannot be called from here: its cycle is taken as two round trips.
    if (!find_variant(v)->in_process()) continue;
    const std::unique_ptr<Connection> connection = dial();
    // On a cluster the key is a hash tag, as the points' are: a variant's own keys share its slot.
    const CycleCost cost = measure_cycle(*connection, counted, *find_variant(v),
                                         prefix + "{calibrate:" + v + "}", 300);
    limit.round_trips_per_cycle.emplace_back(v, cost.round_trips);
    limit.commands_per_cycle.emplace_back(v, cost.commands);
  }
  std::cout << "locksim: " << label << "round trip p50 PING "
            << ms_text(static_cast<double>(limit.ping_ns.percentile(50))) << " ms, SET NX PX "
            << ms_text(static_cast<double>(limit.set_ns.percentile(50))) << " ms (" << samples
            << " samples each); round trips per uncontended cycle:";
  for (const auto& [v, c] : limit.round_trips_per_cycle) {
    char text[32];
    std::snprintf(text, sizeof text, " %s %.2f", v.c_str(), c);
    std::cout << text;
  }
  if (limit.server_ops_per_s > 0) {
    char text[64];
    std::snprintf(text, sizeof text, " capacity %.0f SET NX PX/s", limit.server_ops_per_s);
    std::cout << "; "
              << (capacity_words.find("--cluster") != std::string::npos ? "cluster" : "server");
    std::cout << text << " (" << capacity_words << ")";
  }
  std::cout << std::endl;
  return limit;
}

// ClusterServers: a cluster study's own Redis Cluster, the primaries its counters are summed
// over, and the slot map the keys of its points are placed and counted by.
struct ClusterServers {
  std::unique_ptr<Topology> topology;
  CountedServers counted;
  std::vector<Endpoint> primaries;         // p1..pN
  std::unique_ptr<ClusterConnection> map;  // read once the cluster is formed
  ContentionLimit limit;
};

std::unique_ptr<Connection> dial_node(const Endpoint& node) {
  return std::make_unique<HiredisConnection>(node, ConnectionOptions{});
}

// primaries_of: by primary (p1..pN), how many of `keys` (full Redis keys) the cluster's map says
// the primary serves.
std::vector<int> primaries_of(const ClusterServers& cluster, const std::vector<std::string>& keys) {
  std::vector<int> counts(cluster.primaries.size(), 0);
  for (const std::string& key : keys) {
    const std::optional<Endpoint> owner = cluster.map->owner(key_slot(key));
    for (std::size_t p = 0; owner && p < cluster.primaries.size(); ++p) {
      if (cluster.primaries[p].port == owner->port) ++counts[p];
    }
  }
  return counts;
}

// spread_lock_key: the hash-tagged lock key ("{lock}", "{lock1}", "{lock2}", ...) whose `keys`
// workload keys (workload_key: "{lock-0}", "{lock-1}", ...) the cluster spreads most evenly over
// its primaries: the first whose counts differ by at most one, else the most even of the first
// kTries. A tag hashes alone, so the run's prefix does not move a key's slot.
std::string spread_lock_key(const ClusterServers& cluster, const std::string& prefix, int keys) {
  constexpr int kTries = 10000;
  std::string best = "{lock}";
  int best_spread = keys + 1;
  for (int salt = 0; salt < kTries && best_spread > 1; ++salt) {
    const std::string base = salt == 0 ? "{lock}" : "{lock" + std::to_string(salt) + "}";
    std::vector<std::string> full;
    for (int i = 0; i < keys; ++i) {
      full.push_back(prefix + workload_key(base, keys, static_cast<std::size_t>(i)));
    }
    const std::vector<int> counts = primaries_of(cluster, full);
    const auto [low, high] = std::minmax_element(counts.begin(), counts.end());
    if (*high - *low < best_spread) {
      best_spread = *high - *low;
      best = base;
    }
  }
  return best;
}

// start_cluster: the study's Redis Cluster, formed and measured; throws EnvironmentError. The
// progress line says so while the cluster forms, and is cleared before anything is printed.
ClusterServers start_cluster(const Study& study, const std::string& prefix, int samples,
                             ProgressLine& progress, const StopSignal& stop) {
  ClusterServers cluster;
  const Nanos started = real_clock().now_ns();
  progress.show(study.name + ": starting a Redis Cluster ...", /*milestone=*/true);
  try {
    cluster.topology = Topology::start(*study.topology, prefix + study.name);
  } catch (const EnvironmentError&) {
    progress.clear();
    throw;
  }
  progress.clear();
  // Ctrl-C while it formed: measuring it would only delay the stop.
  if (stop.requested()) throw EnvironmentError("interrupted while the cluster formed");
  const std::size_t primaries = cluster.topology->quorum_servers();  // p1..pN
  std::string ports;
  for (std::size_t p = 0; p < primaries; ++p) {
    cluster.primaries.push_back(cluster.topology->endpoint(p));
    cluster.counted.add(cluster.topology->name(p), cluster.topology->endpoint(p));
    ports += (ports.empty() ? "" : ", ") + cluster.topology->name(p) + " :" +
             std::to_string(cluster.topology->endpoint(p).port);
  }
  cluster.map = std::make_unique<ClusterConnection>(cluster.topology->endpoints(), dial_node);
  if (cluster.map->broken()) {
    throw EnvironmentError("cannot read the slot map of study " + study.name +
                           "'s cluster: " + cluster.map->last_error().describe());
  }
  const int replicas = study.topology->cluster->replicas_per_primary;
  std::cout << "locksim: " << study.name << ": a Redis Cluster of " << primaries << " primaries ("
            << ports << ")"
            << (replicas == 0 ? "" : " with " + std::to_string(replicas) + " replica(s) each")
            << ", formed in " << ms_text(static_cast<double>(elapsed_ns(started))) << " ms"
            << std::endl;
  ClusterConnection probe(cluster.topology->endpoints(), dial_node);
  const std::set<std::string> variants(study.variants.begin(), study.variants.end());
  const Endpoint node = cluster.primaries.front();
  cluster.limit = measure_limit(
      probe, cluster.counted,
      [&] { return std::make_unique<ClusterConnection>(cluster.topology->endpoints(), dial_node); },
      variants, prefix + study.name + ":", samples,
      [&] { return cluster_capacity(node, prefix + study.name + ":"); }, study.name + ": ",
      "redis-benchmark --cluster -c 50");
  return cluster;
}

// draw_plots: runs scripts/plot_contention.py on the report directory, if python3 with
// matplotlib is there; says what it did.
void draw_plots(const fs::path& dir) {
  const fs::path script = fs::path(LOCKSIM_SOURCE_DIR) / "scripts" / "plot_contention.py";
  const char* python = "/usr/bin/python3";
  std::error_code error;
  if (!fs::exists(script, error) || access(python, X_OK) != 0) {
    std::cout << "Plots: not drawn (" << script.string() << " or " << python
              << " missing); run: /usr/bin/python3 scripts/plot_contention.py " << dir.string()
              << "\n";
    return;
  }
  const pid_t pid = fork();
  if (pid == 0) {
    execl(python, python, script.c_str(), dir.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::cout << "Plots: the plot script failed; run it by hand: /usr/bin/python3 "
              << script.string() << " " << dir.string() << "\n";
    return;
  }
  std::cout << "Plots: " << (dir / "*.png").string() << "\n";
}

}  // namespace

int contend_command(const ContendOptions& options, StopSignal& stop) {
  std::vector<Study> studies;
  try {
    std::vector<fs::path> paths(options.paths.begin(), options.paths.end());
    register_libraries();
    studies = load_studies(paths, variant_names());
    for (const Study& study : studies) {
      for (const std::string& note : study.notes) std::cerr << "locksim: " << note << "\n";
    }
    for (const Study& study : studies) {
      for (const StudyPoint& point : study.points) {
        const std::string why =
            clients_run_as_refusal(point.scenario, *find_variant(point.variant));
        if (!why.empty()) throw InputError(study.file + ": $.clients_run_as: " + why);
      }
      // Permits are a semaphore's: a mutex would run the same point once per count. A read
      // share is a read-write lock's: any other lock takes every hold exclusively.
      if (study.permits != std::vector<int>{1}) {
        require_kind(study, &LockVariant::semaphore, "$.permits",
                     "semaphore variants when permits are swept", "is a mutex", "semaphores");
      }
      if (study.read_shares != std::vector<double>{0}) {
        require_kind(study, &LockVariant::read_write, "$.read_share",
                     "read-write variants when a read share is swept",
                     "takes every hold exclusively", "read-write");
      }
    }
    if (!options.redis_url.empty()) parse_redis_url(options.redis_url);
    for (const Study& study : studies) {
      if (!study.topology) continue;
      // A cluster is started for the study; a server of --redis is one server locksim did not
      // start, and cannot be made into a cluster.
      if (!options.redis_url.empty()) {
        throw InputError(study.file + ": $.topology: study \"" + study.name +
                         "\" runs on a Redis Cluster that locksim starts for it, so it cannot run "
                         "on --redis (one server locksim did not start); run it without --redis");
      }
      for (const std::string& v : study.variants) {
        const LibrarySpec* library = library_spec(*find_variant(v));
        if (library == nullptr) continue;
        if (const std::string why = library_refusal(study.points.front().scenario, *library);
            !why.empty()) {
          throw InputError(study.file + ": $.variants: \"" + v + "\" cannot run: " + why);
        }
      }
    }
    if (!options.junit_path.empty()) {
      if (const std::string problem = junit_path_problem(options.junit_path); !problem.empty()) {
        throw InputError(problem);
      }
    }
  } catch (const InputError& e) {
    std::cerr << "locksim: " << e.what() << "\n";
    return kExitUsage;
  }
  {
    std::vector<LibrarySpec> libraries;
    for (const Study& study : studies) {
      for (const std::string& v : study.variants) {
        if (const LibrarySpec* spec = library_spec(*find_variant(v))) libraries.push_back(*spec);
      }
    }
    if (const std::string missing = missing_runtime(libraries); !missing.empty()) {
      std::cerr << "locksim: " << missing << "\n";
      return kExitEnvironment;
    }
  }
  std::size_t total = 0;
  for (const Study& s : studies) total += s.points.size() * static_cast<std::size_t>(s.repetitions);
  if (options.dry_run) {
    std::cout << "locksim: dry run, nothing is run or written: " << studies.size() << " stud"
              << (studies.size() == 1 ? "y" : "ies") << ", " << total << " point run(s)\n";
    for (const Study& s : studies) {
      std::cout << "  " << s.name << ": " << s.points.size() << " point(s) x " << s.repetitions
                << " repetition(s)\n";
    }
    return kExitOk;
  }

  std::uint64_t seed = 0;
  std::optional<RedisTarget> target = start_session(options.redis_url, options.seed, seed);
  if (!target) return kExitEnvironment;
  const std::string run_id = make_run_id(seed, 0);
  const fs::path base = fs::path(options.out_dir) / "contention";
  const fs::path dir = base / run_id;

  std::vector<JunitSuite> junit;  // --junit: a suite per study, a case per point and repetition
  ContentionReport report;
  report.context = {{"run_id", run_id},
                    {"seed", seed},
                    {"commit", build_commit()},
                    {"redis_version", target->version},
                    {"redis_endpoint", target->external() ? target->label : "private redis-server"},
                    {"machine", machine_description()},
                    {"started_at", utc_now("%Y-%m-%dT%H:%M:%SZ")}};
  std::cout << "locksim: redis " << target->version << " (" << target->label << "), "
            << studies.size() << " stud" << (studies.size() == 1 ? "y" : "ies") << ", " << total
            << " point run(s)" << std::endl;

  int exit_code = kExitOk;
  bool interrupted = false;
  try {
    HiredisConnection admin(target->endpoint, ConnectionOptions{});
    CountedServers session_counted;
    session_counted.add("server", target->endpoint);
    const std::string prefix = "locksim:" + run_id + ":";
    // 1. The limit, of the one server (a cluster study measures its own cluster's when it starts
    // it): measured only if some study runs on it.
    std::set<std::string> variants;
    for (const Study& s : studies) {
      if (!s.topology) variants.insert(s.variants.begin(), s.variants.end());
    }
    if (!variants.empty()) {
      const Endpoint server = target->endpoint;
      const bool external = target->external();
      report.limit = measure_limit(
          admin, session_counted,
          [&] { return std::make_unique<HiredisConnection>(server, ConnectionOptions{}); },
          variants, prefix, options.round_trip_samples,
          [&] { return external ? 0.0 : server_capacity(server, prefix); }, "",
          "redis-benchmark -c 50");
    }

    // 2. The points.
    ProgressLine progress(options.progress);
    const TimeLeft time_left;
    // The line: "[3/12] study variant strategy c=4 40%, about 2m 10s left" (every point is a
    // time-bounded workload, so its share done is a fair measure of the time it still takes).
    const auto show_point = [&](const std::string& label, std::size_t started, double fraction,
                                bool milestone) {
      const double done = static_cast<double>(started - 1) + fraction;
      const std::string left = time_left.text(done, static_cast<double>(total));
      progress.show(label + " " + std::to_string(static_cast<int>(fraction * 100)) + "%" +
                        (left.empty() ? "" : ", " + left),
                    milestone);
    };
    std::size_t done = 0;
    for (const Study& study : studies) {
      ContentionStudyReport study_report{
          study.name, study.description, study.file, study.resolved, study.executor, {}, {}, {}};
      // A cluster study's points run on a Redis Cluster of its own, stopped after its points.
      std::optional<ClusterServers> cluster;
      if (study.topology) {
        try {
          cluster.emplace(start_cluster(study, prefix, options.round_trip_samples, progress, stop));
        } catch (const EnvironmentError&) {
          // Ctrl-C while the cluster formed: an interruption, not an environment failure.
          if (!stop.requested()) throw;
          interrupted = true;
          break;
        }
        study_report.limit = cluster->limit;
        study_report.counted_servers = cluster->counted.names();
      }
      const ContentionLimit& limit = cluster ? cluster->limit : report.limit;
      const double rtt_ns = static_cast<double>(limit.set_ns.percentile(50));
      const CountedServers& counted = cluster ? cluster->counted : session_counted;
      junit.push_back(JunitSuite{.name = "contend " + study.name, .cases = {}});
      for (int repetition = 1; repetition <= study.repetitions && !interrupted; ++repetition) {
        for (const StudyPoint& point : study.points) {
          if (stop.requested()) {
            interrupted = true;
            break;
          }
          ++done;
          const std::string point_id = make_run_id(seed + done, 0);
          const std::string label =
              "[" + std::to_string(done) + "/" + std::to_string(total) + "] " + study.name + " " +
              point.variant + " " + point.strategy +
              (study.permits != std::vector<int>{1} ? " p=" + std::to_string(point.permits) : "") +
              (study.read_shares != std::vector<double>{0} ? " r=" + share_text(point.read_share)
                                                           : "") +
              " c=" + std::to_string(point.clients);
          show_point(label, done, 0, /*milestone=*/true);
          const LockVariant& variant = *find_variant(point.variant);
          const LibrarySpec* library = library_spec(variant);
          const std::string point_prefix = "locksim:" + point_id + ":";
          // On a cluster the point's keys are placed so that they spread over the primaries.
          std::optional<Scenario> spread;
          if (cluster) {
            spread.emplace(point.scenario);
            spread->lock.key = spread_lock_key(*cluster, point_prefix, point.keys);
          }
          const Scenario& scenario = spread ? *spread : point.scenario;
          // A cluster's nodes get no per-point ACL user, as no topology's do (sim/app/run_unit.cc).
          std::optional<PrefixUser> user;
          if (!target->external() && !cluster) {
            const std::vector<std::string> more = library_prefixes(variant, point_prefix);
            user.emplace(
                PrefixUser::create(target->endpoint, "locksim-" + point_id, point_prefix, more));
          }
          const Endpoint server =
              cluster ? cluster->topology->primary_endpoint() : target->endpoint;
          const ServerCounters before = counted.read();
          RunRequest request{
              scenario,
              variant,
              seed + done,
              user ? user->endpoint() : server,
              point_prefix,
              stop,
              [&](double fraction) { show_point(label, done, fraction, /*milestone=*/false); },
              !target->external(),
              server,
              library != nullptr ? library->command : worker_command({}),
              /*worker_stderr_dir=*/{},
              cluster ? cluster->topology.get() : nullptr};
          const Nanos point_started = real_clock().now_ns();
          RunOutcome outcome = run_scenario(request);
          const double point_seconds = static_cast<double>(elapsed_ns(point_started)) / 1e9;
          const ServerCounters after = counted.read();
          progress.clear();
          if (!outcome.harness_error.empty()) throw EnvironmentError(outcome.harness_error);
          const CheckResult result = check_history(outcome.history, check_options(scenario));
          const Workload& w = *scenario.workload;
          ContentionPoint p;
          p.variant = point.variant;
          p.strategy = point.strategy;
          p.clients = point.clients;
          p.keys = point.keys;
          p.permits = point.permits;
          p.read_share = point.read_share;
          p.repetition = repetition;
          p.arrival_per_s = w.arrival_per_s;
          p.mean_work_ms = static_cast<double>(w.work_ms.min_ms + w.work_ms.max_ms) / 2;
          p.mean_rest_ms = static_cast<double>(w.rest_ms.min_ms + w.rest_ms.max_ms) / 2;
          p.metrics = contention_metrics(outcome.history, ms_to_ns(w.warmup_ms),
                                         ms_to_ns(w.warmup_ms + w.duration_ms));
          p.verdict = std::string(to_string(result.verdict));
          p.observed = describe_observation(result);
          // A node of a cluster study's own cluster that died unscripted is lost as the server is.
          const bool lost = outcome.server_lost || outcome.server_died;
          p.decided = !outcome.interrupted && !lost && !outcome.timed_out;
          for (const Event& e : outcome.history.events) {
            if (e.f == Op::kAcquire && e.type == EventType::kOk) ++p.run_acquisitions;
          }
          if (before.ok && after.ok && p.run_acquisitions > 0) {
            const auto n = static_cast<double>(p.run_acquisitions);
            p.commands_per_acquisition = (after.calls - before.calls) / n;
            p.cpu_us_per_acquisition = (after.cpu_seconds - before.cpu_seconds) * 1e6 / n;
          }
          p.limit_per_s = limit_per_s(rtt_ns, limit.round_trips_for(point.variant), point.clients,
                                      point.keys, p.mean_work_ms, p.mean_rest_ms, p.arrival_per_s,
                                      limit.server_ops_per_s, p.permits, p.read_share);
          if (cluster) {
            // The keys the clients acquired, as the history has them, where the cluster serves
            // them: the spread is measured, not assumed from the placement above.
            std::set<std::string> acquired;
            for (const Event& e : outcome.history.events) {
              if (e.f == Op::kAcquire && e.type == EventType::kOk) {
                acquired.insert(point_prefix + outcome.history.key_name(e));
              }
            }
            const std::vector<int> counts =
                primaries_of(*cluster, {acquired.begin(), acquired.end()});
            for (std::size_t i = 0; i < counts.size(); ++i) {
              p.keys_per_primary.emplace_back(cluster->counted.names()[i], counts[i]);
            }
          }
          p.latency_floor_ns = rtt_ns;
          const ContentionMetrics& m = p.metrics;
          char line[256];
          std::snprintf(line, sizeof line,
                        "%7.0f acq/s (%.2f of limit)  p50 %s ms  p99 %s ms  gap p50/p99 %s/%s ms  "
                        "jain %.3f  barging %.2f  inside %.2f/%d  ",
                        m.throughput_per_s,
                        p.limit_per_s > 0 ? m.throughput_per_s / p.limit_per_s : 0.0,
                        ms_text(static_cast<double>(m.latency_ns.percentile(50))).c_str(),
                        ms_text(static_cast<double>(m.latency_ns.percentile(99))).c_str(),
                        m.contended_handoffs > 0
                            ? ms_text(static_cast<double>(m.handoff_gap_ns.percentile(50))).c_str()
                            : "-",
                        m.contended_handoffs > 0
                            ? ms_text(static_cast<double>(m.handoff_gap_ns.percentile(99))).c_str()
                            : "-",
                        m.jain, m.barging_rate, m.mean_holders, m.most_holders);
          // A read-write lock's writers apart: a writer kept out by readers shows here first.
          const std::string writes =
              variant.read_write() && m.write_acquisitions > 0
                  ? "write p99 " + ms_text(static_cast<double>(m.write_latency_ns.percentile(99))) +
                        " ms  "
                  : "";
          std::string primaries;
          for (const auto& [name, keys] : p.keys_per_primary) {
            primaries += (primaries.empty() ? "keys " : " ") + name + ":" + std::to_string(keys);
          }
          std::cout << pad(label, 44) << line << writes
                    << (primaries.empty() ? "" : primaries + "  ")
                    << (p.decided ? p.observed : "UNDECIDED " + p.observed) << std::endl;
          if (outcome.interrupted) interrupted = true;
          if (lost) {
            exit_code = kExitEnvironment;
          } else if (!p.decided || result.verdict != Verdict::kOk) {
            // A correct lock shows no violation under contention; an undecided point is not ok.
            if (exit_code == kExitOk) exit_code = kExitMismatch;
            for (const Finding& f : result.findings) {
              if (verdict_of(f.kind) != Verdict::kOk) std::cout << "    " << f.words << "\n";
            }
          }
          {
            // A correct lock shows no violation under contention: a violation is a failure, a
            // point that could not decide an error.
            JunitCase c;
            c.classname = "locksim.contend." + study.name;
            c.name =
                point.variant + " " + point.strategy +
                (study.permits != std::vector<int>{1} ? " p=" + std::to_string(point.permits)
                                                      : "") +
                (study.read_shares != std::vector<double>{0} ? " r=" + share_text(point.read_share)
                                                             : "") +
                " c=" + std::to_string(point.clients) + " k=" + std::to_string(point.keys) +
                (study.repetitions > 1 ? " #" + std::to_string(repetition) : "");
            c.seconds = point_seconds;
            c.output = "throughput " + std::to_string(static_cast<long>(m.throughput_per_s)) +
                       " acquisitions/s";
            if (!p.decided) {
              c.status = JunitCase::Status::kError;
              c.message = "could not decide: " + p.observed;
            } else if (result.verdict != Verdict::kOk) {
              c.status = JunitCase::Status::kFailed;
              c.message = "observed " + p.observed;
              for (const Finding& f : result.findings) {
                if (verdict_of(f.kind) != Verdict::kOk) c.text += f.words + "\n";
              }
            }
            junit.back().cases.push_back(std::move(c));
          }
          study_report.points.push_back(std::move(p));
          if (lost) break;
        }
        if (exit_code == kExitEnvironment) break;
      }
      report.studies.push_back(std::move(study_report));
      if (interrupted || exit_code == kExitEnvironment) break;
    }
  } catch (const EnvironmentError& e) {
    std::cerr << "locksim: " << e.what() << "\n";
    exit_code = kExitEnvironment;
  }

  // 3. The report: whatever ran is written, also after Ctrl-C or a lost server.
  try {
    fs::create_directories(dir);
    if (interrupted) report.context["interrupted"] = true;
    write_file_atomically(dir / "contention.json", contention_json(report).dump(1) + "\n");
    write_file_atomically(dir / "contention.md", contention_markdown(report));
    point_latest(base, run_id);
  } catch (const std::exception& e) {
    std::cerr << "locksim: cannot write the report in " << dir.string() << ": " << e.what()
              << "\n";
    return kExitEnvironment;
  }
  std::cout << "\nReport: " << (dir / "contention.md").string() << "\n";
  if (!options.junit_path.empty()) {
    try {
      write_file_atomically(options.junit_path, junit_xml(junit, "locksim contend"));
      std::cout << "JUnit: " << options.junit_path << "\n";
    } catch (const std::exception& e) {
      std::cerr << "locksim: cannot write " << options.junit_path << ": " << e.what() << "\n";
      return kExitEnvironment;
    }
  }
  if (options.plots && !interrupted) draw_plots(dir);
  refresh_index(options.out_dir);
  if (interrupted) return kExitInterrupted;
  return exit_code;
}

}  // namespace locksim
