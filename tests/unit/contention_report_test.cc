// contention_report_test: the limit formula, the median repetition, and that contention.json and
// contention.md carry what the metrics say (computed from a hand-written history), a cluster
// study's own limit and keys per primary included.
#include <gtest/gtest.h>

#include "sim/report/contention.h"
#include "tests/unit/history_builder.h"

namespace locksim {
namespace {

using test::HistoryBuilder;
using test::ms;

TEST(ContentionLimit, ClientsOrKeysBound) {
  // One client, 2 commands of 50 us, no work: 10k cycles/s.
  EXPECT_NEAR(limit_per_s(50e3, 2, 1, 1, 0, 0, 0), 10000, 1e-6);
  // 8 clients on one key with 1 ms of work: the key allows 1 / (1 ms + 2 x 50 us) = 909/s.
  EXPECT_NEAR(limit_per_s(50e3, 2, 8, 1, 1, 0, 0), 1 / 1.1e-3, 1e-6);
  // 8 clients on 8 keys: each client's own cycle bounds it, 8 / (0.1 ms + 1 ms).
  EXPECT_NEAR(limit_per_s(50e3, 2, 8, 8, 1, 0, 0), 8 / 1.1e-3, 1e-6);
  // Open loop at 10/s per client: the offered rate.
  EXPECT_NEAR(limit_per_s(50e3, 2, 4, 4, 1, 0, 10), 40, 1e-9);
  // The server's capacity divided by the round trips of a cycle.
  EXPECT_NEAR(limit_per_s(50e3, 2, 64, 64, 0, 0, 0, 100000), 50000, 1e-6);
  // Rest counts in a closed loop only.
  EXPECT_NEAR(limit_per_s(50e3, 2, 1, 1, 0, 9.9, 0), 100, 1e-6);
}

ContentionPoint point(const std::string& strategy, int clients, int repetition, double rate) {
  ContentionPoint p;
  p.variant = "lua_owner";
  p.strategy = strategy;
  p.clients = clients;
  p.repetition = repetition;
  p.metrics.throughput_per_s = rate;
  return p;
}

TEST(ContentionReport, MedianRepetitionByThroughput) {
  const std::vector<ContentionPoint> points = {
      point("poll-1ms", 1, 1, 300), point("poll-1ms", 2, 1, 50), point("poll-1ms", 1, 2, 100),
      point("poll-1ms", 2, 2, 70),  point("poll-1ms", 1, 3, 200)};
  // c=1: 100, 200, 300 -> 200 (index 4); c=2: 50, 70 -> the lower middle, 50 (index 1).
  EXPECT_EQ(median_repetitions(points), (std::vector<std::size_t>{4, 1}));
}

TEST(ContentionReport, JsonAndMarkdownCarryTheMetrics) {
  HistoryBuilder b;
  b.acquire_invoke(ms(0), 0).acquire_invoke(ms(0), 1);
  b.acquire_ok(ms(0.1), 0).release(ms(1.1), ms(1.2), 0);
  b.acquire_ok(ms(1.4), 1).release(ms(2.4), ms(2.5), 1);
  ContentionReport report;
  report.context = {{"run_id", "r1"}, {"seed", 7}, {"redis_version", "7.0.15"}};
  for (int i = 0; i < 100; ++i) {
    report.limit.ping_ns.record(40000);
    report.limit.set_ns.record(50000);
  }
  report.limit.round_trips_per_cycle = {{"lua_owner", 2.0}};
  report.limit.commands_per_cycle = {{"lua_owner", 4.0}};
  ContentionStudyReport study;
  study.name = "one-key";
  study.file = "scenarios/contention/one-key.json";
  study.resolved = {{"keys", "1"}, {"work_ms", {{"min", 1}, {"max", 1}}},
                    {"rest_ms", {{"min", 0}, {"max", 0}}}, {"warmup_ms", 0},
                    {"duration_ms", 10}, {"repetitions", 1}, {"arrival_per_s", 0.0}};
  ContentionPoint p = point("notify", 2, 1, 0);
  p.metrics = contention_metrics(b.build(), 0, ms(10));
  p.verdict = "ok";
  p.observed = "ok";
  p.limit_per_s = limit_per_s(50000, 2, 2, 1, 1, 0, 0);
  p.latency_floor_ns = 50000;
  study.points.push_back(p);
  report.studies.push_back(study);

  const nlohmann::json j = contention_json(report);
  EXPECT_EQ(j["schema"], kContentionSchemaVersion);
  EXPECT_EQ(j["context"]["run_id"], "r1");
  EXPECT_EQ(j["limit"]["set_nx_px"]["p50_ns"], 50000);
  const nlohmann::json& jp = j["studies"][0]["points"][0];
  EXPECT_EQ(jp["acquisitions"], 2);
  EXPECT_DOUBLE_EQ(jp["throughput_per_s"].get<double>(), 200.0);
  EXPECT_EQ(jp["contended_handoffs"], 1);
  EXPECT_EQ(jp["barges"], 0);
  EXPECT_NEAR(jp["throughput_over_limit"].get<double>(), 200.0 / (1 / 1.1e-3), 1e-9);
  EXPECT_FALSE(jp["latency"]["buckets"].empty());

  const std::string md = contention_markdown(report);
  EXPECT_NE(md.find("## one-key"), std::string::npos) << md;
  EXPECT_NE(md.find("SET NX PX p50 0.050 ms"), std::string::npos) << md;
  // strategy, clients, acq/s, of limit (200 / 909 = 0.22).
  EXPECT_NE(md.find("| notify | 2 | 200 | 0.22 |"), std::string::npos) << md;
  EXPECT_NE(md.find("closed loop, a thread per client."), std::string::npos) << md;
  report.studies.front().executor = Executor::kEventLoop;
  EXPECT_NE(contention_markdown(report).find("closed loop, every client on one event loop."),
            std::string::npos);
}

// A study on a Redis Cluster carries its own limit (measured on the cluster, with redis-benchmark
// --cluster's capacity), the primaries its counters are summed over and each point's keys per
// primary, in the JSON and the markdown; a study on the one server says "single" and has none of
// them; a report whose every study ran on a cluster says so where the one server's limit was.
TEST(ContentionReport, AClusterStudyCarriesItsOwnLimitAndKeysPerPrimary) {
  ContentionReport report;
  report.context = {{"run_id", "r1"}};
  ContentionStudyReport study;
  study.name = "cluster";
  study.resolved = {
      {"keys", "per_client"},
      {"work_ms", {{"min", 1}, {"max", 1}}},
      {"rest_ms", {{"min", 0}, {"max", 0}}},
      {"topology",
       {{"cluster", {{"primaries", 3}, {"replicas_per_primary", 0}, {"node_timeout_ms", 5000}}},
        {"persistence", "none"}}}};
  ContentionLimit limit;
  for (int i = 0; i < 10; ++i) limit.set_ns.record(30000);
  limit.server_ops_per_s = 120000;
  study.limit = limit;
  study.counted_servers = {"p1", "p2", "p3"};
  ContentionPoint p = point("poll-1ms", 6, 1, 900);
  p.keys_per_primary = {{"p1", 2}, {"p2", 2}, {"p3", 2}};
  study.points.push_back(p);
  ContentionStudyReport single = study;
  single.name = "single";
  single.resolved.erase("topology");
  single.limit.reset();
  single.counted_servers.clear();
  single.points.front().keys_per_primary.clear();
  report.studies = {study, single};

  const nlohmann::json j = contention_json(report);
  const nlohmann::json& on_cluster = j["studies"][0];
  EXPECT_EQ(on_cluster["topology"], "cluster");
  EXPECT_EQ(on_cluster["cluster"]["primaries"], 3);
  EXPECT_EQ(on_cluster["limit"]["server_ops_per_s"], 120000.0);
  EXPECT_EQ(on_cluster["limit"]["set_nx_px"]["count"], 10);
  EXPECT_EQ(on_cluster["counted_servers"], nlohmann::json::parse(R"(["p1", "p2", "p3"])"));
  EXPECT_EQ(on_cluster["points"][0]["keys_per_primary"],
            nlohmann::json::parse(R"({"p1": 2, "p2": 2, "p3": 2})"));
  const nlohmann::json& on_one = j["studies"][1];
  EXPECT_EQ(on_one["topology"], "single");
  EXPECT_FALSE(on_one.contains("limit"));
  EXPECT_FALSE(on_one["points"][0].contains("keys_per_primary"));

  const std::string md = contention_markdown(report);
  EXPECT_NE(md.find("**On a Redis Cluster** of 3 primaries (no replicas"), std::string::npos) << md;
  EXPECT_NE(md.find("serve 120000 SET NX PX per second to 50 clients (redis-benchmark --cluster"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("summed over the primaries (p1, p2, p3)"), std::string::npos) << md;
  EXPECT_NE(md.find("| poll-1ms | 6 | 2/2/2 | 900 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| poll-1ms | 6 | 900 |"), std::string::npos) << md;  // the one server's
  EXPECT_NE(md.find("Every study ran on a Redis Cluster"), std::string::npos) << md;
}

}  // namespace
}  // namespace locksim
