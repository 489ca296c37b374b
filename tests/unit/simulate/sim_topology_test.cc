// sim_topology_test: the simulator's topology: model servers behind SimConnections, and the
// nemesis's server faults on them (kill, restart without persistence, pause, clock jump), a
// replica fed asynchronously (cut, heal, promote) and WAIT blocking as Redis's does.
#include "sim/simulate/sim_topology.h"

#include <gtest/gtest.h>

#include <string>

#include "sim/simulate/sim_runtime.h"
#include "sim/simulate/simulation.h"

namespace locksim {
namespace {

TopologySpec spec_of(std::vector<ServerSpec> servers) {
  TopologySpec spec;
  spec.name = "custom";
  spec.servers = std::move(servers);
  return spec;
}

const SimLinkLatency kHop{ms_to_ns(1), ms_to_ns(1)};  // every hop 1 ms: times are exact

// Proves a killed server closes its connections and refuses new ones, comes back empty from a
// restart (no persistence), and that the topology's generation moves so clients reconnect.
TEST(SimTopology, AKilledServerClosesAndRefusesThenRestartsEmpty) {
  Simulation sim(1);
  SimRuntime runtime(sim, kHop);
  SimTopology topology(spec_of({{"n1", "none", ""}, {"n2", "none", ""}}), sim, runtime);
  RedisResult after_kill;
  RedisResult refused;
  RedisResult after_restart;
  std::uint64_t generations = 0;
  sim.spawn([&] {
    std::unique_ptr<Connection> c = runtime.connect(topology.endpoint(1), ConnectionOptions{});
    ASSERT_TRUE(c->command({"SET", "k", "v"}).ok());
    const std::uint64_t before = topology.primary_generation();
    EXPECT_EQ(topology.kill(1), "");
    EXPECT_FALSE(topology.expected_up(1));
    after_kill = c->command({"GET", "k"});
    refused = runtime.connect(topology.endpoint(1), ConnectionOptions{})->last_error();
    EXPECT_EQ(topology.restart(1), "");
    EXPECT_TRUE(topology.expected_up(1));
    c->reconnect();
    after_restart = c->command({"GET", "k"});
    generations = topology.primary_generation() - before;
  });
  sim.run();
  EXPECT_EQ(after_kill.error, RedisErrorKind::kClosed) << after_kill.describe();
  EXPECT_EQ(refused.error, RedisErrorKind::kRefused) << refused.describe();
  ASSERT_TRUE(after_restart.ok()) << after_restart.describe();
  EXPECT_TRUE(after_restart.reply.is_nil());
  EXPECT_GE(generations, 2U);
}

// Proves a command that reaches a paused server waits, then runs when it resumes (its reply 1 ms
// later), and that a jumped clock expires a key early.
TEST(SimTopology, APausedServerRunsCommandsWhenItResumesAndAClockJumpExpiresKeys) {
  Simulation sim(2);
  SimRuntime runtime(sim, kHop);
  SimTopology topology(spec_of({{"n1", "none", ""}}), sim, runtime);
  Nanos answered = -1;
  RedisResult after_jump;
  sim.spawn([&] {
    std::unique_ptr<Connection> c = runtime.connect(topology.endpoint(0), ConnectionOptions{});
    EXPECT_EQ(topology.pause(0), "");
    sim.spawn([&] {
      sim.sleep_until(ms_to_ns(50));
      EXPECT_EQ(topology.resume(0), "");
    });
    ASSERT_TRUE(c->command({"SET", "k", "v", "PX", "10000"}).ok());
    answered = sim.now();
    EXPECT_EQ(topology.jump_clock(0, 20'000), "");
    after_jump = c->command({"GET", "k"});
  });
  sim.run();
  EXPECT_EQ(answered, ms_to_ns(51));
  ASSERT_TRUE(after_jump.ok());
  EXPECT_TRUE(after_jump.reply.is_nil()) << "a key 20 s past its TTL on the server's clock";
}

// Proves a replica gets its primary's writes within a millisecond, not while its link is cut
// (WAIT then times out with 0), again after the heal, and that a promoted replica is the primary.
TEST(SimTopology, AReplicaIsFedUnlessCutAndWaitBlocksUntilItAcknowledges) {
  Simulation sim(3);
  SimRuntime runtime(sim, kHop);
  SimTopology topology(spec_of({{"primary", "none", ""}, {"replica", "none", "primary"}}), sim,
                       runtime);
  RedisResult wait_in_sync;
  RedisResult wait_cut;
  Nanos waited = 0;
  RedisResult read_cut;
  RedisResult read_healed;
  sim.spawn([&] {
    topology.start();
    std::unique_ptr<Connection> p = runtime.connect(topology.endpoint(0), ConnectionOptions{});
    std::unique_ptr<Connection> r = runtime.connect(topology.endpoint(1), ConnectionOptions{});
    ASSERT_TRUE(p->command({"SET", "a", "1"}).ok());
    wait_in_sync = p->command({"WAIT", "1", "1000"});
    EXPECT_EQ(topology.cut_replication(1), "");
    ASSERT_TRUE(p->command({"SET", "b", "2"}).ok());
    const Nanos before = sim.now();
    wait_cut = p->command({"WAIT", "1", "100"});
    waited = sim.now() - before;
    read_cut = r->command({"GET", "b"});
    EXPECT_EQ(topology.heal_replication(1), "");
    sim.sleep_until(sim.now() + ms_to_ns(5));
    read_healed = r->command({"GET", "b"});
    EXPECT_EQ(topology.promote(1), "");
    EXPECT_EQ(topology.primary(), 1U);
    topology.stop();
  });
  sim.run();
  EXPECT_TRUE(wait_in_sync.reply.is_integer(1)) << wait_in_sync.describe();
  EXPECT_TRUE(wait_cut.reply.is_integer(0)) << wait_cut.describe();
  EXPECT_GE(waited, ms_to_ns(100));  // WAIT blocked for its timeout, as Redis's does
  EXPECT_TRUE(read_cut.reply.is_nil());
  EXPECT_EQ(read_healed.reply.str, "2");
}

// Proves what the simulator cannot run is refused in words: Sentinel and persistence.
TEST(SimTopology, SentinelAndPersistenceAreRefused) {
  TopologySpec sentinel = spec_of({{"primary", "none", ""}});
  sentinel.sentinel = true;
  EXPECT_NE(SimTopology::refusal(sentinel).find("Sentinel"), std::string::npos);
  EXPECT_NE(SimTopology::refusal(spec_of({{"n1", "aof_always", ""}})).find("persist"),
            std::string::npos);
  EXPECT_EQ(SimTopology::refusal(spec_of({{"n1", "none", ""}, {"n2", "none", ""}})), "");
}

}  // namespace
}  // namespace locksim
