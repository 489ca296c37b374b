#include "sim/report/contention.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <tuple>

namespace locksim {
namespace {

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

// ms: a duration in ns as milliseconds with three significant digits.
std::string ms(double ns) {
  const double v = ns / 1e6;
  if (v >= 100) return format("%.0f", v);
  if (v >= 10) return format("%.1f", v);
  if (v >= 1) return format("%.2f", v);
  return format("%.3f", v);
}

nlohmann::json histogram_json(const LogHistogram& h) {
  nlohmann::json buckets = nlohmann::json::array();
  for (const LogHistogram::Bucket& b : h.buckets()) buckets.push_back({b.upper, b.count});
  return {{"count", h.count()},
          {"min_ns", h.min()},
          {"mean_ns", h.mean()},
          {"p50_ns", h.percentile(50)},
          {"p90_ns", h.percentile(90)},
          {"p99_ns", h.percentile(99)},
          {"p999_ns", h.percentile(99.9)},
          {"max_ns", h.max()},
          {"relative_error", LogHistogram::kRelativeError},
          {"buckets", buckets}};
}

// clients_run_as: how the clients of a study ran, in words.
std::string clients_run_as(Executor executor) {
  switch (executor) {
    case Executor::kThreads:
      return "a thread per client";
    case Executor::kProcesses:
      return "a process per client";
    case Executor::kEventLoop:
      return "every client on one event loop";
  }
  return "";
}

nlohmann::json limit_json(const ContentionLimit& limit) {
  nlohmann::json json = {{"ping", histogram_json(limit.ping_ns)},
                         {"set_nx_px", histogram_json(limit.set_ns)},
                         {"round_trips_per_cycle", nlohmann::json::object()},
                         {"commands_per_cycle", nlohmann::json::object()},
                         {"server_ops_per_s", limit.server_ops_per_s}};
  for (const auto& [variant, round_trips] : limit.round_trips_per_cycle) {
    json["round_trips_per_cycle"][variant] = round_trips;
  }
  for (const auto& [variant, commands] : limit.commands_per_cycle) {
    json["commands_per_cycle"][variant] = commands;
  }
  return json;
}

// limit_words: the measured round trips, cycle costs and capacity of `limit`, as sentences;
// `server` says who serves the capacity ("the server serves"), `capacity` how it was measured.
std::string limit_words(const ContentionLimit& limit, const std::string& server,
                        const std::string& capacity) {
  std::ostringstream md;
  const double rtt = static_cast<double>(limit.set_ns.percentile(50));
  md << "PING p50 " << ms(static_cast<double>(limit.ping_ns.percentile(50))) << " ms (p99 "
     << ms(static_cast<double>(limit.ping_ns.percentile(99))) << " ms), SET NX PX p50 " << ms(rtt)
     << " ms (p99 " << ms(static_cast<double>(limit.set_ns.percentile(99))) << " ms), "
     << limit.ping_ns.count()
     << " samples each. Per uncontended acquire + release cycle (round trips / server commands, "
        "a script's own calls included):";
  for (std::size_t i = 0; i < limit.round_trips_per_cycle.size(); ++i) {
    const auto& [variant, round_trips] = limit.round_trips_per_cycle[i];
    md << " " << variant << " " << format("%.2f", round_trips);
    if (i < limit.commands_per_cycle.size()) {
      md << " / " << format("%.2f", limit.commands_per_cycle[i].second);
    }
    md << ";";
  }
  if (limit.server_ops_per_s > 0) {
    md << " " << server << " " << format("%.0f", limit.server_ops_per_s)
       << " SET NX PX per second to 50 clients (" << capacity << ", same run).";
  }
  return md.str();
}

// primaries_text: a point's keys per primary, "2/2/2" (p1/p2/p3), or "-" off a cluster.
std::string primaries_text(const ContentionPoint& point) {
  std::string text;
  for (const auto& [primary, keys] : point.keys_per_primary) {
    text += (text.empty() ? "" : "/") + std::to_string(keys);
  }
  return text.empty() ? "-" : text;
}

}  // namespace

double ContentionLimit::round_trips_for(const std::string& variant) const {
  for (const auto& [name, round_trips] : round_trips_per_cycle) {
    if (name == variant) return round_trips;
  }
  return 2;
}

double limit_per_s(double rtt_ns, double round_trips, int clients, int keys, double work_ms,
                   double rest_ms, double arrival_per_s, double server_ops_per_s, int permits,
                   double read_share) {
  const double rtt_s = rtt_ns / 1e9;
  const double work_s = work_ms / 1e3;
  double per_client = 1.0 / (round_trips * rtt_s + work_s + (arrival_per_s > 0 ? 0 : rest_ms / 1e3));
  if (arrival_per_s > 0) per_client = std::min(per_client, arrival_per_s);
  const double per_key = 1.0 / (work_s + 2 * rtt_s);
  // Only the write holds are exclusive: a share r of read holds lets a key serve 1 / (1 - r)
  // times as many (all reads: the clients are the only bound).
  double limit = clients * per_client;
  if (read_share < 1) limit = std::min(limit, keys * permits * per_key / (1 - read_share));
  if (server_ops_per_s > 0) limit = std::min(limit, server_ops_per_s / round_trips);
  return limit;
}

std::vector<std::size_t> median_repetitions(const std::vector<ContentionPoint>& points) {
  using Group = std::tuple<std::string, std::string, int, double, int>;
  std::map<Group, std::vector<std::size_t>> groups;
  std::vector<Group> order;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto key = std::make_tuple(points[i].variant, points[i].strategy, points[i].permits,
                                     points[i].read_share, points[i].clients);
    if (groups.find(key) == groups.end()) order.push_back(key);
    groups[key].push_back(i);
  }
  std::vector<std::size_t> medians;
  for (const auto& key : order) {
    std::vector<std::size_t> group = groups[key];
    std::sort(group.begin(), group.end(), [&](std::size_t a, std::size_t b) {
      return points[a].metrics.throughput_per_s < points[b].metrics.throughput_per_s;
    });
    medians.push_back(group[(group.size() - 1) / 2]);
  }
  return medians;
}

nlohmann::json contention_json(const ContentionReport& report) {
  nlohmann::json studies = nlohmann::json::array();
  for (const ContentionStudyReport& study : report.studies) {
    nlohmann::json points = nlohmann::json::array();
    for (const ContentionPoint& p : study.points) {
      const ContentionMetrics& m = p.metrics;
      points.push_back({
          {"variant", p.variant},
          {"strategy", p.strategy},
          {"clients", p.clients},
          {"keys", p.keys},
          {"permits", p.permits},
          {"read_share", p.read_share},
          {"repetition", p.repetition},
          {"arrival_per_s", p.arrival_per_s},
          {"verdict", p.verdict},
          {"observed", p.observed},
          {"decided", p.decided},
          {"seconds", m.seconds},
          {"acquisitions", m.acquisitions},
          {"throughput_per_s", m.throughput_per_s},
          {"acquires_failed", m.acquires_failed},
          {"latency", histogram_json(m.latency_ns)},
          {"write_acquisitions", m.write_acquisitions},
          {"write_latency", histogram_json(m.write_latency_ns)},
          {"handoff_gap", histogram_json(m.handoff_gap_ns)},
          {"contended_handoffs", m.contended_handoffs},
          {"barges", m.barges},
          {"barging_rate", m.barging_rate},
          {"utilisation", m.utilisation},
          {"most_holders", m.most_holders},
          {"mean_holders", m.mean_holders},
          {"acquisitions_per_client", m.acquisitions_per_client},
          {"jain", m.jain},
          {"max_min_share", m.max_min_share},
          {"starved_clients", m.starved_clients},
          {"longest_wait_ns", m.longest_wait_ns},
          {"wasted_attempts_per_acquisition", m.wasted_attempts_per_acquisition},
          {"run_acquisitions", p.run_acquisitions},
          {"commands_per_acquisition", p.commands_per_acquisition},
          {"cpu_us_per_acquisition", p.cpu_us_per_acquisition},
          {"limit_per_s", p.limit_per_s},
          {"throughput_over_limit", p.limit_per_s > 0 ? m.throughput_per_s / p.limit_per_s : 0},
          {"latency_floor_ns", p.latency_floor_ns},
          {"p50_over_floor",
           p.latency_floor_ns > 0
               ? static_cast<double>(m.latency_ns.percentile(50)) / p.latency_floor_ns
               : 0},
      });
      if (!p.keys_per_primary.empty()) {
        nlohmann::json& spread = points.back()["keys_per_primary"];
        spread = nlohmann::json::object();
        for (const auto& [primary, keys] : p.keys_per_primary) spread[primary] = keys;
      }
    }
    nlohmann::json entry = {{"name", study.name},
                            {"description", study.description},
                            {"file", study.file},
                            {"study", study.resolved},
                            {"topology", study.limit ? "cluster" : "single"}};
    if (study.limit) {
      entry["cluster"] = study.resolved["topology"]["cluster"];
      entry["limit"] = limit_json(*study.limit);
      entry["counted_servers"] = study.counted_servers;
    }
    entry["points"] = std::move(points);
    studies.push_back(std::move(entry));
  }
  return {{"schema", kContentionSchemaVersion},
          {"context", report.context},
          {"limit", limit_json(report.limit)},
          {"studies", studies}};
}

std::string contention_markdown(const ContentionReport& report) {
  std::ostringstream md;
  md << "# Contention report\n\n";
  const nlohmann::json& c = report.context;
  md << "Run `" << c.value("run_id", "") << "`, seed " << c.value("seed", std::uint64_t{0})
     << ", redis " << c.value("redis_version", "") << " (" << c.value("redis_endpoint", "")
     << "), commit " << c.value("commit", "") << ", " << c.value("machine", "") << ", "
     << c.value("started_at", "") << ".\n\n";
  if (report.limit.ping_ns.count() > 0) {
    md << "**The limit.** Round trip on this machine, measured in this run: "
       << limit_words(report.limit, "the server serves", "redis-benchmark -c 50");
  } else {
    md << "**The limit.** Every study ran on a Redis Cluster, which has its own, measured on "
          "it, under its heading.";
  }
  md << " The limit of a point is min(clients / (round trips x RTT + work + rest), keys / (work + "
        "2 x RTT), server capacity / round trips) acquisitions per second (open loop: the offered "
        "rate, if lower); *of limit* is the throughput over it, *p50/RTT* the median acquire "
        "latency over one round trip.\n\n";
  for (const ContentionStudyReport& study : report.studies) {
    md << "## " << study.name << "\n\n";
    if (!study.description.empty()) md << study.description << "\n\n";
    const nlohmann::json& s = study.resolved;
    md << "`" << study.file << "`: keys " << s.value("keys", std::string("1")) << ", work "
       << s["work_ms"].value("min", 0) << ".." << s["work_ms"].value("max", 0) << " ms, rest "
       << s["rest_ms"].value("min", 0) << ".." << s["rest_ms"].value("max", 0) << " ms, warm-up "
       << s.value("warmup_ms", 0) << " ms, measured " << s.value("duration_ms", 0) << " ms, "
       << s.value("repetitions", 1) << " repetition(s)";
    if (s.value("arrival_per_s", 0.0) > 0) {
      md << ", open loop at " << format("%g", s.value("arrival_per_s", 0.0))
         << " acquires/s per client (latency from the intended start)";
    } else {
      md << ", closed loop";
    }
    md << ", " << clients_run_as(study.executor) << ".\n\n";
    if (study.limit) {
      const nlohmann::json& shape = s["topology"]["cluster"];
      const int replicas = shape.value("replicas_per_primary", 0);
      md << "**On a Redis Cluster** of " << shape.value("primaries", 0) << " primaries ("
         << (replicas == 0 ? std::string("no replicas")
                           : std::to_string(replicas) + " replica(s) each")
         << ", cluster-node-timeout " << shape.value("node_timeout_ms", 0)
         << " ms), started for this study; each point's keys are hash-tagged (\"{lock-0}\") and "
            "spread over the primaries (*keys/primary*). Round trip to the primary serving the "
            "key's slot: "
         << limit_words(*study.limit, "the cluster's primaries serve",
                        "redis-benchmark --cluster -c 50")
         << " *cmds/acq* and *CPU us/acq* are summed over the primaries (";
      for (std::size_t i = 0; i < study.counted_servers.size(); ++i) {
        md << (i == 0 ? "" : ", ") << study.counted_servers[i];
      }
      md << (replicas == 0 ? "" : "; the replicas are not counted") << ").\n\n";
    }
    const std::vector<std::size_t> medians = median_repetitions(study.points);
    std::vector<std::string> variants;
    for (const std::size_t i : medians) {
      if (std::find(variants.begin(), variants.end(), study.points[i].variant) == variants.end()) {
        variants.push_back(study.points[i].variant);
      }
    }
    // A study that sweeps a semaphore's permits shows them, and how many clients were inside at
    // once (the mean over the window and the most), measured from the history.
    const bool by_permits = s.contains("permits");
    // One that sweeps a read-write lock's read share shows it, and the writers' latency apart.
    const bool by_reads = s.contains("read_share");
    for (const std::string& variant : variants) {
      md << "### " << variant << "\n\n"
         << "| strategy | " << (by_permits ? "permits | " : "") << (by_reads ? "read share | " : "")
         << "clients | " << (study.limit ? "keys/primary | " : "")
         << "acq/s | of limit | p50 ms | p99 ms | p99.9 ms | p50/RTT | "
            "gap p50 ms | gap p99 ms | Jain | barging | wasted/acq | cmds/acq | CPU us/acq | "
         << (by_permits ? "inside mean | inside most | " : "")
         << (by_reads ? "write p50 ms | write p99 ms | inside mean | inside most | " : "")
         << "verdict |\n"
         << "|---|" << (by_permits ? "---:|" : "") << (by_reads ? "---:|" : "")
         << "---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
         << (study.limit ? "---:|" : "") << (by_permits ? "---:|---:|" : "")
         << (by_reads ? "---:|---:|---:|---:|" : "") << "---|\n";
      for (const std::size_t i : medians) {
        const ContentionPoint& p = study.points[i];
        if (p.variant != variant) continue;
        const ContentionMetrics& m = p.metrics;
        md << "| " << p.strategy << " | " << (by_permits ? std::to_string(p.permits) + " | " : "")
           << (by_reads ? format("%.2f", p.read_share) + " | " : "") << p.clients << " | "
           << (study.limit ? primaries_text(p) + " | " : "") << format("%.0f", m.throughput_per_s)
           << " | "
           << (p.limit_per_s > 0 ? format("%.2f", m.throughput_per_s / p.limit_per_s) : "-")
           << " | " << ms(static_cast<double>(m.latency_ns.percentile(50))) << " | "
           << ms(static_cast<double>(m.latency_ns.percentile(99))) << " | "
           << ms(static_cast<double>(m.latency_ns.percentile(99.9))) << " | "
           << (p.latency_floor_ns > 0
                   ? format("%.1f",
                            static_cast<double>(m.latency_ns.percentile(50)) / p.latency_floor_ns)
                   : "-")
           << " | "
           << (m.contended_handoffs > 0
                   ? ms(static_cast<double>(m.handoff_gap_ns.percentile(50))) + " | " +
                         ms(static_cast<double>(m.handoff_gap_ns.percentile(99)))
                   : "- | -")
           << " | " << format("%.3f", m.jain) << " | "
           << (m.contended_handoffs > 0 ? format("%.2f", m.barging_rate) : "-") << " | "
           << format("%.2f", m.wasted_attempts_per_acquisition) << " | "
           << (p.commands_per_acquisition >= 0 ? format("%.2f", p.commands_per_acquisition) : "-")
           << " | "
           << (p.cpu_us_per_acquisition >= 0 ? format("%.1f", p.cpu_us_per_acquisition) : "-")
           << " | "
           << (by_permits
                   ? format("%.2f", m.mean_holders) + " | " + std::to_string(m.most_holders) + " | "
                   : "")
           << (by_reads
                   ? (m.write_acquisitions > 0
                          ? ms(static_cast<double>(m.write_latency_ns.percentile(50))) + " | " +
                                ms(static_cast<double>(m.write_latency_ns.percentile(99)))
                          : "- | -") +
                         " | " + format("%.2f", m.mean_holders) + " | " +
                         std::to_string(m.most_holders) + " | "
                   : "")
           << (p.decided ? p.observed : p.observed + " (undecided)") << " |\n";
      }
      md << "\n";
    }
    std::size_t repetitions = 0;
    for (const ContentionPoint& p : study.points) {
      repetitions = std::max<std::size_t>(repetitions, static_cast<std::size_t>(p.repetition));
    }
    if (repetitions > 1) {
      md << "Each row is the repetition with the median throughput; contention.json has every "
            "repetition.\n\n";
    }
  }
  md << "Metrics: *acq/s* acquisitions per second in the measured window; *p50/p99/p99.9* acquire "
        "latency (from the invoke, or from the intended start in an open loop; log-bucket "
        "histogram, at most "
     << format("%.2f", LogHistogram::kRelativeError * 100)
     << "% above the true value); *gap* (handoff gap) the time from one holder's exit to the next "
        "holder's enter while another client waited; *Jain* (sum x)^2 / (n sum x^2) of "
        "acquisitions per client (1 = even); *barging* the share of contended handoffs won by "
        "the client that had just released; *wasted/acq* busy answers per acquisition; "
        "*cmds/acq* and *CPU us/acq* Redis commands and server CPU time (INFO commandstats and "
        "INFO cpu deltas over the whole run, harness PINGs and INFO excluded) per acquisition";
  const bool any_permits = std::any_of(
      report.studies.begin(), report.studies.end(),
      [](const ContentionStudyReport& study) { return study.resolved.contains("permits"); });
  if (any_permits) {
    md << "; *permits* a semaphore's permit count; *inside mean* and *inside most* how many "
          "clients were inside at once, on average over the measured window and at the most "
          "(from the history's enter and exit events; a limit of the permits that the lock "
          "itself keeps, never more without a violation)";
  }
  const bool any_reads = std::any_of(
      report.studies.begin(), report.studies.end(),
      [](const ContentionStudyReport& study) { return study.resolved.contains("read_share"); });
  if (any_reads) {
    md << "; *read share* the share of a read-write lock's holds that were read holds (each "
          "cycle drawn); *write p50/p99* the latency of the write holds' acquires alone (a "
          "writer kept out by readers shows here first); *inside mean* and *inside most* how "
          "many clients were inside at once, on average over the window and at the most "
          "(readers share the lock); the limit counts only the write holds as exclusive: "
          "keys / ((1 - read share) x (work + 2 x RTT))";
  }
  md << ".\n";
  return md.str();
}

}  // namespace locksim
