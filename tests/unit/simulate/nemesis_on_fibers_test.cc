// nemesis_on_fibers_test: the nemesis in a simulated run, whose fibers share one thread: a fault
// injected by one fiber while another's server restart is under way (it sleeps on virtual time)
// goes through, and both are recorded.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include "sim/history/recorder.h"
#include "sim/nemesis/nemesis.h"
#include "sim/simulate/sim_runtime.h"
#include "sim/simulate/sim_topology.h"
#include "sim/simulate/simulation.h"

namespace locksim {
namespace {

TopologySpec single() {
  TopologySpec spec;
  spec.servers = {{"n1", "none", ""}};
  return spec;
}

// OverlappingFaults: one simulated run in which fiber 1 restarts the server while fiber 2, 1 ms
// later, partitions client 0's link, loses its next reply and heals it.
struct OverlappingFaults {
  Simulation sim{7};
  SimRuntime runtime{sim};
  SimTopology topology{single(), sim, runtime};
  VirtualClock virtual_clock{sim};
  RunClock clock{virtual_clock};
  Recorder recorder{clock, {"A", "nemesis"}};
  Nemesis nemesis{recorder.log(1)};
  std::unique_ptr<Link> link = runtime.open_link(topology.endpoint(0));
  std::string restarted = "not yet";
  Nanos restart_done_ns = -1;
  Nanos link_faults_done_ns = -1;

  void run() {
    nemesis.attach_topology(&topology);
    nemesis.attach(0, nullptr, {link.get()});
    sim.spawn([this] {
      topology.start();
      restarted = nemesis.restart_server(0);
      restart_done_ns = sim.now();
      topology.stop();
    });
    sim.spawn([this] {
      sim.sleep_until(ms_to_ns(1));
      nemesis.partition(0, /*reset=*/false);
      nemesis.lose_next_reply(0);
      nemesis.heal(0);
      link_faults_done_ns = sim.now();
    });
    sim.run();
  }
};

// Proves a partition, a lost reply and a heal injected by one fiber while another fiber's
// restart sleeps on virtual time all go through at once (the restart ends 20 ms later or more),
// and that every fault is recorded. The run goes on a thread of its own, waited for at most 10 s:
// a nemesis that held its lock across the restart blocked that thread for ever.
TEST(NemesisOnFibers, ALinkFaultDuringARestartDoesNotWaitForIt) {
  auto run = std::make_shared<OverlappingFaults>();
  std::packaged_task<void()> task([run] { run->run(); });
  std::future<void> done = task.get_future();
  std::thread thread(std::move(task));
  if (done.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    thread.detach();  // blocked for ever: `run` stays alive with it
    FAIL() << "the simulated run's thread is blocked: a fiber waits for a lock another fiber holds";
  }
  thread.join();
  done.get();
  EXPECT_EQ(run->restarted, "");
  EXPECT_EQ(run->link_faults_done_ns, ms_to_ns(1)) << "the link faults waited for the restart";
  EXPECT_GE(run->restart_done_ns, ms_to_ns(20));
  const History history = std::move(run->recorder).merge();
  std::vector<std::string> recorded;
  for (const Event& event : history.events) {
    recorded.push_back(std::string(traits(event.fault().kind).word) + " " +
                       std::string(to_string(event.fault().phase)));
  }
  // The restart is stamped as it begins (a client may reach the new process before the restart
  // sees it answer), its window "down" closed once it answers.
  const std::vector<std::string> expected = {"restart_server instant", "partition start",
                                             "lose_reply instant", "partition end", "down end"};
  EXPECT_EQ(recorded, expected);
}

}  // namespace
}  // namespace locksim
