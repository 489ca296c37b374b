// study_parser_test: a study's clients_run_as reaches every point, whatever its wait strategy;
// its "client_mode" is a deprecated alias; its permits and read shares are swept between strategies
// and clients; its "topology" takes a Redis Cluster as a scenario's does, and nothing else.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/core/error.h"
#include "sim/scenario/study.h"
#include "tests/unit/scenario/scenario_test_support.h"

namespace locksim {
namespace {

using nlohmann::json;
using test::expect_contains;
using test::kFile;
using test::kVariants;

// A study's clients_run_as reaches every point, the waking strategies' points included.
TEST(StudyLoaderTest, ClientsRunAsReachesEveryPoint) {
  json study = json::parse(R"({
    "name": "s", "variants": ["lua_owner", "set_nx_ex"], "clients": [1, 4], "keys": "per_client",
    "strategies": [{"strategy": "poll", "interval_ms": 1}], "clients_run_as": "event_loop"})");
  const Study loaded = parse_study(study, kFile, kVariants);
  EXPECT_EQ(loaded.executor, Executor::kEventLoop);
  EXPECT_TRUE(loaded.notes.empty());
  ASSERT_EQ(loaded.points.size(), 4u);
  for (const StudyPoint& point : loaded.points) {
    EXPECT_EQ(point.scenario.executor, Executor::kEventLoop);
  }
  EXPECT_EQ(loaded.resolved["clients_run_as"], "event_loop");
  EXPECT_FALSE(loaded.resolved.contains("client_mode"));
  // The waking strategies run on the loop too (each client's waiter or subscriber connection).
  study["strategies"].push_back({{"strategy", "notify"}});
  study["strategies"].push_back({{"strategy", "pubsub"}});
  const Study waking = parse_study(study, kFile, kVariants);
  ASSERT_EQ(waking.points.size(), 12u);  // 2 variants x 2 client counts x 3 strategies
  for (const StudyPoint& point : waking.points) {
    EXPECT_EQ(point.scenario.executor, Executor::kEventLoop);
  }
  study.erase("clients_run_as");
  for (const StudyPoint& point : parse_study(study, kFile, kVariants).points) {
    EXPECT_EQ(point.scenario.executor, Executor::kThreads);
  }
}

// A study's "client_mode" loads as clients_run_as, with a note naming the file and field; given
// both, they must agree.
TEST(StudyLoaderTest, ClientModeIsADeprecatedAlias) {
  json study = json::parse(R"({
    "name": "s", "variants": ["lua_owner"], "clients": [1],
    "strategies": [{"strategy": "poll", "interval_ms": 1}], "client_mode": "processes"})");
  const Study loaded = parse_study(study, kFile, kVariants);
  EXPECT_EQ(loaded.executor, Executor::kProcesses);
  EXPECT_EQ(loaded.points.front().scenario.executor, Executor::kProcesses);
  EXPECT_EQ(loaded.resolved["clients_run_as"], "processes");
  ASSERT_EQ(loaded.notes.size(), 1u);
  expect_contains(loaded.notes[0], {kFile, "$.client_mode is deprecated",
                                    "write \"clients_run_as\": \"processes\""});
  study["clients_run_as"] = "threads";
  try {
    parse_study(study, kFile, kVariants);
    ADD_FAILURE() << "conflicting clients_run_as and client_mode accepted";
  } catch (const InputError& error) {
    expect_contains(error.what(), {kFile, "$.client_mode: \"processes\" conflicts with "
                                          "$.clients_run_as: \"threads\""});
  }
}

// "permits" makes a point per permit count (between the strategy and the client counts), each
// point's lock carrying its count; it is written back resolved, and absent it is 1 everywhere and
// not in the resolved study; counts out of 1..1000 or not increasing are refused at their path.
TEST(StudyLoaderTest, PermitsAreSweptPerPoint) {
  json study = json::parse(R"({
    "name": "s", "variants": ["lua_owner", "set_nx_ex"], "clients": [2, 8],
    "strategies": [{"strategy": "poll", "interval_ms": 1}], "permits": [1, 3]})");
  const Study loaded = parse_study(study, kFile, kVariants);
  EXPECT_EQ(loaded.permits, (std::vector<int>{1, 3}));
  ASSERT_EQ(loaded.points.size(), 8u);  // 2 variants x 2 permit counts x 2 client counts
  const std::vector<std::pair<int, int>> expected = {{1, 2}, {1, 8}, {3, 2}, {3, 8}};
  for (std::size_t i = 0; i < loaded.points.size(); ++i) {
    const StudyPoint& point = loaded.points[i];
    EXPECT_EQ(std::make_pair(point.permits, point.clients), expected[i % 4]) << i;
    EXPECT_EQ(point.scenario.lock.permits, point.permits) << i;
  }
  EXPECT_NE(loaded.points[0].scenario.name, loaded.points[2].scenario.name);
  EXPECT_EQ(loaded.resolved["permits"], json::parse("[1, 3]"));

  study.erase("permits");
  const Study plain = parse_study(study, kFile, kVariants);
  EXPECT_EQ(plain.permits, (std::vector<int>{1}));
  EXPECT_FALSE(plain.resolved.contains("permits"));
  for (const StudyPoint& point : plain.points) EXPECT_EQ(point.scenario.lock.permits, 1);

  for (const auto& [permits, words] : std::vector<std::pair<const char*, std::vector<std::string>>>{
           {"[0]", {kFile, "$.permits[0]", "a number of permits between 1 and 1000"}},
           {"[2, 2]", {kFile, "$.permits[1]", "permit counts must increase"}},
           {"[]", {kFile, "$.permits"}}}) {
    study["permits"] = json::parse(permits);
    try {
      parse_study(study, kFile, kVariants);
      ADD_FAILURE() << "permits " << permits << " accepted";
    } catch (const InputError& error) {
      for (const std::string& word : words) expect_contains(error.what(), {word});
    }
  }
}

// "read_share" makes a point per share (between the permits and the client counts), each
// point's workload carrying it; written back resolved; out of 0..1 or not increasing: refused.
TEST(StudyLoaderTest, ReadSharesAreSweptPerPoint) {
  json study = json::parse(R"({
    "name": "s", "variants": ["lua_owner"], "clients": [2, 8],
    "strategies": [{"strategy": "poll", "interval_ms": 1}], "read_share": [0, 0.9]})");
  const Study loaded = parse_study(study, kFile, kVariants);
  EXPECT_EQ(loaded.read_shares, (std::vector<double>{0, 0.9}));
  ASSERT_EQ(loaded.points.size(), 4u);
  const std::vector<std::pair<double, int>> expected = {{0, 2}, {0, 8}, {0.9, 2}, {0.9, 8}};
  for (std::size_t i = 0; i < loaded.points.size(); ++i) {
    const StudyPoint& point = loaded.points[i];
    EXPECT_EQ(std::make_pair(point.read_share, point.clients), expected[i]) << i;
    EXPECT_EQ(point.scenario.workload->read_share, point.read_share) << i;
  }
  EXPECT_NE(loaded.points[0].scenario.name, loaded.points[2].scenario.name);
  EXPECT_EQ(loaded.resolved["read_share"], json::parse("[0, 0.9]"));
  study.erase("read_share");
  EXPECT_FALSE(parse_study(study, kFile, kVariants).resolved.contains("read_share"));

  for (const auto& [shares, words] : std::vector<std::pair<const char*, std::vector<std::string>>>{
           {"[1.5]", {kFile, "$.read_share[0]", "a share of read holds between 0 and 1"}},
           {"[0.5, 0.5]", {kFile, "$.read_share[1]", "read shares must increase"}},
           {"[-0.1]", {kFile, "$.read_share[0]", "between 0 and 1"}}}) {
    study["read_share"] = json::parse(shares);
    try {
      parse_study(study, kFile, kVariants);
      ADD_FAILURE() << "read_share " << shares << " accepted";
    } catch (const InputError& error) {
      for (const std::string& word : words) expect_contains(error.what(), {word});
    }
  }
}

// "topology": "cluster" and {"cluster": {...}} load as a scenario's topology: the study and each
// point carry the cluster's shape, each point's lock key is one hash tag ("{lock}", which the
// plan makes "{lock-0}", "{lock-1}"... per key), and the shape is written back resolved. Without
// it, or with "single", the points run on the one server with the plain key.
TEST(StudyLoaderTest, TopologyTakesARedisCluster) {
  json study = json::parse(R"({
    "name": "s", "variants": ["lua_owner"], "clients": [1, 4], "keys": "per_client",
    "strategies": [{"strategy": "poll", "interval_ms": 1}], "topology": "cluster"})");
  const Study named = parse_study(study, kFile, kVariants);
  ASSERT_TRUE(named.topology.has_value());
  ASSERT_TRUE(named.topology->cluster.has_value());
  EXPECT_EQ(named.topology->cluster->primaries, 3);
  EXPECT_EQ(named.topology->cluster->replicas_per_primary, 1);
  EXPECT_EQ(named.resolved["topology"]["cluster"]["primaries"], 3);
  ASSERT_EQ(named.points.size(), 2u);
  for (const StudyPoint& point : named.points) {
    ASSERT_TRUE(point.scenario.topology.has_value());
    EXPECT_TRUE(point.scenario.topology->cluster.has_value());
    EXPECT_EQ(point.scenario.lock.key, "{lock}");
  }

  study["topology"] = json::parse(
      R"({"cluster": {"primaries": 4, "replicas_per_primary": 0, "node_timeout_ms": 5000}})");
  const Study shaped = parse_study(study, kFile, kVariants);
  ASSERT_TRUE(shaped.topology && shaped.topology->cluster);
  EXPECT_EQ(shaped.topology->cluster->primaries, 4);
  EXPECT_EQ(shaped.topology->cluster->replicas_per_primary, 0);
  EXPECT_EQ(shaped.topology->cluster->node_timeout_ms, 5000);
  EXPECT_EQ(shaped.topology->servers.size(), 4u);  // p1..p4
  EXPECT_EQ(shaped.resolved["topology"]["cluster"],
            json::parse(R"({"primaries": 4, "replicas_per_primary": 0, "node_timeout_ms": 5000})"));
  EXPECT_EQ(shaped.points.front().scenario.topology->cluster->primaries, 4);

  study["topology"] = "single";
  const Study single = parse_study(study, kFile, kVariants);
  EXPECT_FALSE(single.topology.has_value());
  EXPECT_FALSE(single.resolved.contains("topology"));
  EXPECT_FALSE(single.points.front().scenario.topology.has_value());
  EXPECT_EQ(single.points.front().scenario.lock.key, "lock");
  study.erase("topology");
  EXPECT_FALSE(parse_study(study, kFile, kVariants).topology.has_value());
}

// A study's topology is refused, at its path, when it is not a cluster (the other topologies are
// for fault scenarios) or a malformed one (the scenario parser's own messages), and a cluster
// study whose clients would have no slot-aware client (the event loop, locksim's worker
// processes) is refused at clients_run_as; a library's processes may run on one.
TEST(StudyLoaderTest, TopologyRefusesWhatCannotRunOnACluster) {
  const auto refusal = [](const json& study, const std::vector<std::string>& variants) {
    try {
      parse_study(study, kFile, variants);
    } catch (const InputError& error) {
      return std::string(error.what());
    }
    ADD_FAILURE() << "accepted: " << study.dump();
    return std::string();
  };
  json study = json::parse(R"({
    "name": "s", "variants": ["lua_owner"], "clients": [1],
    "strategies": [{"strategy": "poll", "interval_ms": 1}], "topology": "sentinel"})");
  expect_contains(refusal(study, kVariants),
                  {kFile, "$.topology: a contention study runs on the session's one server",
                   "got \"sentinel\""});
  study["topology"] = json::parse(R"({"cluster": {"primaries": 2}})");
  expect_contains(refusal(study, kVariants), {kFile, "$.topology.cluster.primaries"});
  study["topology"] = json::parse(R"({"servers": [{"name": "a"}]})");
  expect_contains(refusal(study, kVariants), {kFile, "$.topology: a contention study"});
  study["topology"] = "clustr";
  expect_contains(refusal(study, kVariants), {kFile, "$.topology", "did you mean \"cluster\""});

  study["topology"] = "cluster";
  study["clients_run_as"] = "event_loop";
  expect_contains(refusal(study, kVariants),
                  {kFile, "$.clients_run_as: a Redis Cluster study runs its clients as threads"});
  study["clients_run_as"] = "processes";
  expect_contains(refusal(study, kVariants), {kFile, "$.clients_run_as", "\"lua_owner\" as threads",
                                              "worker processes have no slot-aware client"});
  study["variants"] = json::array({"lib:redis-py"});
  const Study library = parse_study(study, kFile, {"lua_owner", "lib:redis-py"});
  EXPECT_TRUE(library.topology.has_value());
  EXPECT_EQ(library.executor, Executor::kProcesses);
}

}  // namespace
}  // namespace locksim
