// server_fault_test: the table of server fault kinds (sim/fault/server_fault.cc) and each kind's
// file: its word and keys, its topology needs and traits, its own keys read and written back, and
// its run on a host that records what it is asked. How the scenario parser reads a step of each
// kind is pinned in tests/unit/scenario/server_fault_step_test.cc; the kinds carried out on real
// servers in tests/cli/server_faults_test.sh and the scenario catalogue.
#include "sim/fault/server_fault.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "sim/core/error.h"

namespace locksim {
namespace {

using nlohmann::json;

const std::string kFaultsFile = "s.json";

// words: the word of every kind, in table order.
std::vector<std::string> words() {
  std::vector<std::string> all;
  for (const ServerFaultType* type : server_fault_types()) all.emplace_back(type->word);
  return all;
}

// words_where: the words of the kinds for which `trait` holds, in table order.
template <typename Trait>
std::vector<std::string> words_where(Trait trait) {
  std::vector<std::string> chosen;
  for (const ServerFaultType* type : server_fault_types()) {
    if (trait(*type)) chosen.emplace_back(type->word);
  }
  return chosen;
}

// parse: kind `word`'s settings from the step `step`.
std::shared_ptr<const ServerFault> parse(std::string_view word, const json& step) {
  const ServerFaultType* type = server_fault_type(word);
  EXPECT_NE(type, nullptr) << word;
  return type->parse(locksim::json::JsonReader(step, "$.steps[1]", kFaultsFile));
}

// error_of: the InputError of parsing kind `word` from `step`; "" if it parsed.
std::string error_of(std::string_view word, const json& step) {
  try {
    parse(word, step);
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

// written: the keys `fault` writes into the resolved step.
json written(const ServerFault& fault) {
  json keys = json::object();
  fault.write(keys);
  return keys;
}

// RecordingHost: writes down every call a server fault makes; `failing` makes that operation
// fail.
class RecordingHost final : public ServerFaultHost {
 public:
  std::vector<std::string> calls;
  std::string failing;

  std::string kill(std::size_t server) override { return call("kill", server); }
  std::string restart(std::size_t server) override { return call("restart", server); }
  std::string pause(std::size_t server) override { return call("pause", server); }
  std::string resume(std::size_t server) override { return call("resume", server); }
  std::string shift_clock(std::size_t server, std::int64_t ahead_ms) override {
    return call("shift_clock", server, " by " + std::to_string(ahead_ms) + " ms");
  }
  std::string cut_replication(std::size_t replica) override {
    return call("cut_replication", replica);
  }
  std::string heal_replication(std::size_t replica) override {
    return call("heal_replication", replica);
  }
  std::string promote(std::size_t replica) override { return call("promote", replica); }
  std::string wait_for_failover(std::int64_t max_ms) override {
    calls.push_back("wait_for_failover " + std::to_string(max_ms) + " ms");
    return failing == "wait_for_failover" ? "no failover" : "";
  }
  std::string cluster_failover(std::size_t replica, std::string_view mode,
                               std::int64_t max_ms) override {
    return call("cluster_failover", replica,
                " " + std::string(mode) + " within " + std::to_string(max_ms) + " ms");
  }
  std::string migrate_slot_start(std::size_t from, std::size_t to) override {
    return call("migrate_slot_start", from, " to " + std::to_string(to));
  }
  std::string migrate_slot_finish(std::size_t from, std::size_t to) override {
    return call("migrate_slot_finish", from, " to " + std::to_string(to));
  }
  std::string partition(std::size_t server) override { return call("partition", server); }
  std::string heal_partition(std::size_t server) override { return call("heal_partition", server); }
  std::size_t server_index(std::string_view name) const override { return name == "p2" ? 1 : 9; }
  void hold_window(std::string_view doing) override {
    calls.push_back("hold_window " + std::string(doing));
  }

 private:
  std::string call(const std::string& what, std::size_t server, const std::string& more = "") {
    calls.push_back(what + " " + std::to_string(server) + more);
    return what == failing ? what + " failed" : "";
  }
};

// run: the calls kind `word`, parsed from `step`, makes when run on server 2.
std::vector<std::string> run(std::string_view word, const json& step) {
  RecordingHost host;
  EXPECT_EQ(parse(word, step)->run(host, 2), "");
  return host.calls;
}

// Proves the words are the steps' words every scenario file since server faults has used, one per
// kind, each found by its word: a renamed word would make those files unreadable.
TEST(ServerFaultTable, WordsAreTheScriptsWords) {
  EXPECT_EQ(words(),
            (std::vector<std::string>{"kill_server", "restart_server", "pause_server", "clock_jump",
                                      "cut_replication", "heal_replication", "promote", "failover",
                                      "cluster_failover", "migrate_slot", "partition_server"}));
  std::set<std::string> seen;
  for (const ServerFaultType* type : server_fault_types()) {
    EXPECT_FALSE(type->word.empty());
    EXPECT_TRUE(seen.insert(std::string(type->word)).second) << type->word;
    EXPECT_EQ(server_fault_type(type->word), type);
    EXPECT_NE(type->parse, nullptr) << type->word;
  }
  EXPECT_EQ(server_fault_type("Kill_server"), nullptr);
  EXPECT_EQ(server_fault_type("replication_cut"), nullptr);  // a history word, not a step's
  EXPECT_EQ(server_fault_type(""), nullptr);
}

// Proves a kind's keys are "server" when it aims at one, its window's when it has one, then its
// own, each once, and never a key every step has (those are the scenario parser's).
TEST(ServerFaultTable, KeysFollowTheAimAndTheWindow) {
  const std::vector<std::string> common = {"client", "do", "id", "wait_for", "wait_max_ms"};
  for (const ServerFaultType* type : server_fault_types()) {
    const std::vector<std::string> keys = server_fault_keys(*type);
    const auto has = [&keys](const std::string& key) {
      return std::find(keys.begin(), keys.end(), key) != keys.end();
    };
    EXPECT_EQ(has("server"), type->aim != ServerFaultAim::kNone) << type->word;
    if (!type->duration_key.empty()) {
      EXPECT_TRUE(has(std::string(type->duration_key)) && has("until") && has("max_ms"))
          << type->word;
    }
    EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()).size(), keys.size()) << type->word;
    for (const std::string& key : common) EXPECT_FALSE(has(key)) << type->word << " " << key;
  }
  EXPECT_EQ(server_fault_keys(*server_fault_type("pause_server")),
            (std::vector<std::string>{"server", "pause_ms", "until", "max_ms"}));
  EXPECT_EQ(server_fault_keys(*server_fault_type("clock_jump")),
            (std::vector<std::string>{"server", "jump_ms"}));
  EXPECT_EQ(server_fault_keys(*server_fault_type("failover")),
            (std::vector<std::string>{"max_ms"}));
}

// Proves the topology needs and traits sit on the kinds they were written for: the replication
// steps name a replica, failover names no server and needs Sentinel, a clock jump needs the shift
// preloaded, and promote and failover move the primary.
TEST(ServerFaultTable, TopologyNeedsAndTraits) {
  EXPECT_EQ(words_where([](const ServerFaultType& t) { return t.aim == ServerFaultAim::kReplica; }),
            (std::vector<std::string>{"cut_replication", "heal_replication", "promote",
                                      "cluster_failover"}));
  EXPECT_EQ(words_where([](const ServerFaultType& t) { return t.aim == ServerFaultAim::kNone; }),
            (std::vector<std::string>{"failover"}));
  EXPECT_EQ(words_where([](const ServerFaultType& t) { return !t.duration_key.empty(); }),
            (std::vector<std::string>{"pause_server", "migrate_slot", "partition_server"}));
  EXPECT_EQ(words_where([](const ServerFaultType& t) { return t.shifts_clock; }),
            (std::vector<std::string>{"clock_jump"}));
  EXPECT_EQ(words_where([](const ServerFaultType& t) { return t.moves_primary; }),
            (std::vector<std::string>{"promote", "failover", "cluster_failover"}));
  EXPECT_EQ(words_where([](const ServerFaultType& t) { return t.check_topology != nullptr; }),
            (std::vector<std::string>{"promote", "failover", "cluster_failover", "migrate_slot",
                                      "partition_server"}));

  const ServerFaultType& failover = *server_fault_type("failover");
  const json step = {{"do", "failover"}};
  const locksim::json::JsonReader reader(step, "$.steps[1]", kFaultsFile);
  ServerFaultTopology topology{
      .servers = {{.name = "primary"}, {.name = "replica", .replica_of = "primary"}}};
  try {
    failover.check_topology(reader, topology);
    ADD_FAILURE() << "failover accepted a topology without Sentinel";
  } catch (const InputError& error) {
    EXPECT_EQ(std::string(error.what()),
              "s.json: $.steps[1].do: \"failover\" waits for Sentinel or a Redis Cluster's "
              "election; the topology has neither (use \"topology\": \"sentinel\" or \"cluster\", "
              "or \"promote\" to promote a replica yourself)");
  }
  topology.sentinel = true;
  failover.check_topology(reader, topology);
  topology.sentinel = false;
  topology.cluster = true;
  failover.check_topology(reader, topology);
}

// Proves the cluster's own kinds need a cluster, that promote (REPLICAOF NO ONE) is refused on
// one (its election decides roles), and that migrate_slot moves the lock's slot between two
// primaries only.
TEST(ServerFaultTable, ClusterKindsNeedACluster) {
  const ServerFaultTopology plain{
      .servers = {{.name = "primary"}, {.name = "replica", .replica_of = "primary"}}};
  const ServerFaultTopology cluster{.servers = {{.name = "p1"},
                                                {.name = "p2"},
                                                {.name = "p3"},
                                                {.name = "r1", .replica_of = "p1"}},
                                    .cluster = true};
  const auto check = [](std::string_view word, const json& step,
                        const ServerFaultTopology& topology) -> std::string {
    const locksim::json::JsonReader reader(step, "$.steps[1]", kFaultsFile);
    try {
      server_fault_type(word)->check_topology(reader, topology);
      return "";
    } catch (const InputError& error) {
      return error.what();
    }
  };
  EXPECT_EQ(check("cluster_failover", {{"do", "cluster_failover"}}, plain),
            "s.json: $.steps[1].do: \"cluster_failover\" needs a Redis Cluster (\"topology\": "
            "\"cluster\"); on a primary with a replica, \"promote\" promotes it");
  EXPECT_EQ(check("cluster_failover", {{"do", "cluster_failover"}}, cluster), "");
  EXPECT_EQ(check("promote", {{"do", "promote"}}, plain), "");
  EXPECT_EQ(check("promote", {{"do", "promote"}}, cluster),
            "s.json: $.steps[1].do: \"promote\" is not for a Redis Cluster, whose replicas are "
            "elected by the cluster: kill the primary (\"kill_server\", then \"failover\"), or use "
            "\"cluster_failover\"");
  const json move = {{"do", "migrate_slot"}, {"server", "p1"}, {"to", "p2"}};
  EXPECT_EQ(check("migrate_slot", move, cluster), "");
  EXPECT_NE(check("migrate_slot", move, plain).find("needs a Redis Cluster"), std::string::npos);
  EXPECT_EQ(
      check("migrate_slot", {{"do", "migrate_slot"}, {"server", "r1"}, {"to", "p2"}}, cluster),
      "s.json: $.steps[1].server: unknown primary \"r1\" (did you mean \"p1\"?); primaries "
      "of the cluster: p1, p2, p3");
  EXPECT_EQ(
      check("migrate_slot", {{"do", "migrate_slot"}, {"server", "p1"}, {"to", "p1"}}, cluster),
      "s.json: $.steps[1].to: the slot moves from \"p1\" to another primary; name one of: p2, "
      "p3");
}

// Proves each kind's own keys read and write back as they are, with their defaults filled in,
// and a kind without keys of its own writes none.
TEST(ServerFaultKinds, OwnKeysRoundTrip) {
  EXPECT_EQ(written(*parse("clock_jump", {{"jump_ms", 20000}})), json({{"jump_ms", 20000}}));
  EXPECT_EQ(written(*parse("failover", {{"max_ms", 5000}})), json({{"max_ms", 5000}}));
  EXPECT_EQ(written(*parse("failover", json::object())), json({{"max_ms", 30000}}));
  EXPECT_EQ(written(*parse("cluster_failover", json::object())),
            json({{"mode", "default"}, {"max_ms", 30000}}));
  EXPECT_EQ(written(*parse("migrate_slot", {{"to", "p3"}})), json({{"to", "p3"}}));
  for (const ServerFaultType* type : server_fault_types()) {
    if (!type->keys.empty()) continue;
    EXPECT_EQ(
        written(*type->parse(locksim::json::JsonReader(json::object(), "$.steps[1]", kFaultsFile))),
        json::object())
        << type->word;
  }
  for (const json& step : {json({{"jump_ms", 1}}), json({{"jump_ms", 3600000}})}) {
    const json keys = written(*parse("clock_jump", step));
    EXPECT_EQ(written(*parse("clock_jump", keys)), keys);
  }
}

// Proves a bad value of a kind's own key names the file, its path and what was expected.
TEST(ServerFaultKinds, BadOwnKeysAreRejected) {
  EXPECT_EQ(error_of("clock_jump", {{"jump_ms", 0}}),
            "s.json: $.steps[1].jump_ms: expected a duration in ms between 1 and 3600000, got 0");
  EXPECT_EQ(error_of("clock_jump", json::object()),
            "s.json: $.steps[1]: missing required key \"jump_ms\"");
  EXPECT_EQ(error_of("cluster_failover", {{"mode", "forced"}}),
            "s.json: $.steps[1].mode: unknown mode \"forced\" (did you mean \"force\"?); modes: "
            "default, force, takeover");
  EXPECT_EQ(error_of("failover", {{"max_ms", 0}}),
            "s.json: $.steps[1].max_ms: expected a duration in ms between 1 and 3600000, got 0");
}

// Proves what each kind asks of the host, and on which server.
TEST(ServerFaultKinds, EachRunsThroughTheHost) {
  const json none = json::object();
  EXPECT_EQ(run("kill_server", none), (std::vector<std::string>{"kill 2"}));
  EXPECT_EQ(run("restart_server", none), (std::vector<std::string>{"restart 2"}));
  EXPECT_EQ(run("pause_server", none),
            (std::vector<std::string>{"pause 2", "hold_window paused", "resume 2"}));
  EXPECT_EQ(run("clock_jump", {{"jump_ms", 20000}}),
            (std::vector<std::string>{"shift_clock 2 by 20000 ms"}));
  EXPECT_EQ(run("cut_replication", none), (std::vector<std::string>{"cut_replication 2"}));
  EXPECT_EQ(run("heal_replication", none), (std::vector<std::string>{"heal_replication 2"}));
  EXPECT_EQ(run("promote", none), (std::vector<std::string>{"promote 2"}));
  EXPECT_EQ(run("failover", {{"max_ms", 5000}}),
            (std::vector<std::string>{"wait_for_failover 5000 ms"}));
  EXPECT_EQ(run("cluster_failover", none),
            (std::vector<std::string>{"cluster_failover 2  within 30000 ms"}));
  EXPECT_EQ(run("cluster_failover", {{"mode", "takeover"}, {"max_ms", 3000}}),
            (std::vector<std::string>{"cluster_failover 2 takeover within 3000 ms"}));
  EXPECT_EQ(run("partition_server", none),
            (std::vector<std::string>{"partition 2", "hold_window cut off", "heal_partition 2"}));
  EXPECT_EQ(run("migrate_slot", {{"to", "p2"}}),
            (std::vector<std::string>{"migrate_slot_start 2 to 1",
                                      "hold_window kept migrating the lock's slot of",
                                      "migrate_slot_finish 2 to 1"}));
}

// Proves a failed operation is what the run returns, and that a server that could not be paused
// is neither held nor resumed.
TEST(ServerFaultKinds, AFailedOperationIsReturned) {
  RecordingHost host;
  host.failing = "pause";
  EXPECT_EQ(parse("pause_server", json::object())->run(host, 0), "pause failed");
  EXPECT_EQ(host.calls, (std::vector<std::string>{"pause 0"}));
  RecordingHost resume;
  resume.failing = "resume";
  EXPECT_EQ(parse("pause_server", json::object())->run(resume, 1), "resume failed");
  RecordingHost failover;
  failover.failing = "wait_for_failover";
  EXPECT_EQ(parse("failover", json::object())->run(failover, 0), "no failover");
}

}  // namespace
}  // namespace locksim
