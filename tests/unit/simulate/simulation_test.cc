// simulation_test: the simulator's scheduler (virtual time, fibers, seeded order of ties), its
// VirtualClock and its SimConnection to the model.
#include "sim/simulate/simulation.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/model/model_server.h"
#include "sim/simulate/sim_connection.h"
#include "sim/simulate/sim_link.h"
#include "sim/simulate/sim_runtime.h"

namespace locksim {
namespace {

TEST(Simulation, FibersRunInVirtualTimeOrder) {
  Simulation sim(1);
  std::vector<std::string> seen;
  sim.spawn([&] {
    sim.sleep_until(ms_to_ns(30));
    seen.push_back("a@" + std::to_string(sim.now() / kNanosPerMilli));
  });
  sim.spawn([&] {
    sim.sleep_until(ms_to_ns(10));
    seen.push_back("b@" + std::to_string(sim.now() / kNanosPerMilli));
    sim.sleep_until(ms_to_ns(50));
    seen.push_back("b@" + std::to_string(sim.now() / kNanosPerMilli));
  });
  sim.run();
  EXPECT_EQ(seen, (std::vector<std::string>{"b@10", "a@30", "b@50"}));
  EXPECT_EQ(sim.now(), ms_to_ns(50));
  EXPECT_EQ(sim.fibers_alive(), 0U);
}

// handled_now: the text of the exception being handled here.
std::string handled_now() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  }
}

// Proves each fiber keeps its own exceptions: one suspended inside a catch block still handles
// its own exception when it resumes, whatever another fiber caught meanwhile.
TEST(Simulation, AFiberSuspendedInACatchBlockKeepsItsOwnException) {
  Simulation sim(9);
  std::vector<std::string> seen;
  for (const char* name : {"a", "b"}) {
    sim.spawn([&sim, &seen, name] {
      const Nanos first = ms_to_ns(name[0] == 'a' ? 1 : 2);
      sim.sleep_until(first);
      try {
        throw std::runtime_error(name);
      } catch (const std::exception&) {
        sim.sleep_until(first + ms_to_ns(2));  // the other fiber catches its own meanwhile
        seen.push_back(std::string(name) + " handles " + handled_now());
      }
    });
  }
  sim.run();
  EXPECT_EQ(seen, (std::vector<std::string>{"a handles a", "b handles b"}));
}

// order_of_ties: the order in which eight fibers woken at one instant run, under `seed`.
std::string order_of_ties(std::uint64_t seed) {
  Simulation sim(seed);
  std::string order;
  for (int i = 0; i < 8; ++i) {
    sim.spawn([&, i] {
      sim.sleep_until(ms_to_ns(1));
      order += static_cast<char>('a' + i);
    });
  }
  sim.run();
  return order;
}

TEST(Simulation, TiesRunInAnOrderTheSeedDraws) {
  EXPECT_EQ(order_of_ties(7), order_of_ties(7));  // one seed, one schedule
  std::set<std::string> orders;
  for (std::uint64_t seed = 0; seed < 20; ++seed) orders.insert(order_of_ties(seed));
  EXPECT_GT(orders.size(), 10U) << "seeds should draw different interleavings";
  for (const std::string& order : orders) EXPECT_EQ(order.size(), 8U);
}

TEST(Simulation, JoinWaitsForTheFibersEnd) {
  Simulation sim(2);
  std::vector<std::string> seen;
  sim.spawn([&] {
    SimThreads threads(sim);
    Thread worker(threads, [&] {
      sim.sleep_until(ms_to_ns(20));
      seen.push_back("worker done");
    });
    worker.join();
    seen.push_back("joined at " + std::to_string(sim.now() / kNanosPerMilli));
  });
  sim.run();
  EXPECT_EQ(seen, (std::vector<std::string>{"worker done", "joined at 20"}));
}

TEST(Simulation, AFiberThatWaitsForeverIsAStall) {
  Simulation sim(3);
  sim.spawn([&] { sim.park(); });
  EXPECT_THROW(sim.run(), SimulationStalled);
}

TEST(Simulation, WhatAFiberThrowsEndsTheRun) {
  Simulation sim(4);
  sim.spawn([&] {
    sim.sleep_until(5);
    throw std::logic_error("inside the fiber");
  });
  try {
    sim.run();
    FAIL() << "run() returned";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "inside the fiber");
  }
}

TEST(VirtualClock, NotifyWakesAWaiterAndDeadlinesPass) {
  Simulation sim(5);
  VirtualClock clock(sim);
  std::mutex mutex;
  std::condition_variable cv;
  bool ready = false;
  Nanos woke_at = -1;
  Nanos gave_up_at = -1;
  sim.spawn([&] {
    std::unique_lock<std::mutex> lock(mutex);
    EXPECT_TRUE(clock.wait_until(cv, lock, ms_to_ns(100), [&] { return ready; }));
    woke_at = clock.now_ns();
  });
  sim.spawn([&] {
    std::unique_lock<std::mutex> lock(mutex);
    EXPECT_FALSE(clock.wait_until(cv, lock, ms_to_ns(7), [] { return false; }));
    gave_up_at = clock.now_ns();
  });
  sim.spawn([&] {
    clock.sleep_for(ms_to_ns(40));
    {
      std::lock_guard<std::mutex> lock(mutex);
      ready = true;
    }
    clock.notify_all(cv);
  });
  sim.run();
  // The sleep of 40 ms ends 5 to 50 µs late (a timer's slack), and the waiter is woken a drawn 5
  // to 50 µs after the notify, as a thread runs a little after it is woken; the timed wait gives
  // up 5 to 50 µs after its deadline.
  EXPECT_GE(woke_at, ms_to_ns(40) + 10'000);
  EXPECT_LE(woke_at, ms_to_ns(40) + 100'000);
  EXPECT_GE(gave_up_at, ms_to_ns(7) + 5'000);
  EXPECT_LE(gave_up_at, ms_to_ns(7) + 50'000);
}

// Proves two threads polling at one interval drift apart, as real ones do: each sleep ends a drawn
// latency late, so after some polls their phase differs from where it started (in lockstep, the
// one that started first would win every race between them).
TEST(VirtualClock, SleepsEndADrawnLatencyLateSoPollersDrift) {
  Simulation sim(8);
  VirtualClock clock(sim);
  std::vector<Nanos> a, b;
  sim.spawn([&] {
    for (int i = 0; i < 20; ++i) {
      clock.sleep_for(ms_to_ns(5));
      a.push_back(clock.now_ns());
    }
  });
  sim.spawn([&] {
    clock.sleep_for(100'000);
    for (int i = 0; i < 20; ++i) {
      clock.sleep_for(ms_to_ns(5));
      b.push_back(clock.now_ns());
    }
  });
  sim.run();
  ASSERT_EQ(a.size(), 20U);
  ASSERT_EQ(b.size(), 20U);
  std::set<Nanos> gaps;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_GE(a[i] - (i == 0 ? 0 : a[i - 1]), ms_to_ns(5) + 5'000);
    EXPECT_LE(a[i] - (i == 0 ? 0 : a[i - 1]), ms_to_ns(5) + 50'000);
    gaps.insert(b[i] - a[i]);
  }
  EXPECT_GT(gaps.size(), 10U);
}

TEST(VirtualClock, AWaitWithoutNotifyIsNotWokenByOthersWork) {
  Simulation sim(6);
  VirtualClock clock(sim);
  std::mutex mutex;
  std::condition_variable cv;
  int checks = 0;
  sim.spawn([&] {
    std::unique_lock<std::mutex> lock(mutex);
    clock.wait_until(cv, lock, ms_to_ns(50), [&] {
      ++checks;
      return false;
    });
  });
  sim.spawn([&] {
    for (int i = 0; i < 10; ++i) clock.sleep_for(ms_to_ns(1));
  });
  sim.run();
  EXPECT_EQ(checks, 2);  // once before waiting, once at the deadline
}

TEST(SimConnection, ACommandTakesTwoHopsAndRunsOnTheModel) {
  Simulation sim(7);
  ModelServer server;
  RedisResult set;
  RedisResult get;
  Nanos took = 0;
  sim.spawn([&] {
    SimConnection c(sim, server, Endpoint{}, ConnectionOptions{},
                    SimLinkLatency{ms_to_ns(1), ms_to_ns(1)});
    set = c.command({"SET", "k", "v", "NX", "PX", "100"});
    took = sim.now();
    get = c.command({"GET", "k"});
  });
  sim.run();
  ASSERT_TRUE(set.ok()) << set.describe();
  EXPECT_TRUE(set.reply.is_status("OK"));
  EXPECT_EQ(took, ms_to_ns(2));
  EXPECT_EQ(get.reply.str, "v");
  EXPECT_EQ(sim.now(), ms_to_ns(4));
}

TEST(SimConnection, ALateReplyIsATimeoutButTheCommandRan) {
  Simulation sim(8);
  ModelServer server;
  RedisResult set;
  bool broken = false;
  sim.spawn([&] {
    ConnectionOptions options;
    options.command_timeout = std::chrono::milliseconds(5);
    SimConnection c(sim, server, Endpoint{}, options, SimLinkLatency{ms_to_ns(4), ms_to_ns(4)});
    set = c.command({"SET", "k", "v"});
    broken = c.broken();
    sim.sleep_until(ms_to_ns(20));
  });
  sim.run();
  EXPECT_EQ(set.error, RedisErrorKind::kTimeout);
  EXPECT_TRUE(broken);
  EXPECT_EQ(server.keys_at(sim.now()), std::vector<std::string>{"k"});  // it ran at 4 ms
}

// A command waits for its reply without a timer while the reply is sure to come first; whatever
// holds or loses the command or its reply gives the wait its timer back: each ends as a timeout
// exactly at the command timeout, and the one after it (the hold or the fault gone) goes through
// (a link still too slow times out again), and finds what the first one set once let through.
TEST(SimConnection, AHeldOrLostCommandOrReplyTimesOutAtItsDeadline) {
  enum class Fault { kHoldCommand, kDropReply, kPartition, kPausedServer, kSlowReply };
  for (const Fault fault : {Fault::kHoldCommand, Fault::kDropReply, Fault::kPartition,
                            Fault::kPausedServer, Fault::kSlowReply}) {
    Simulation sim(11);
    ModelServer server;
    SimLink link(sim, 0, Endpoint{});
    auto host = std::make_shared<SimServerHost>();
    RedisResult first;
    Nanos first_at = -1;
    RedisResult second;
    sim.spawn([&] {
      ConnectionOptions options;
      options.command_timeout = std::chrono::milliseconds(5);
      const Nanos hop = fault == Fault::kSlowReply ? ms_to_ns(3) : ms_to_ns(1);
      SimConnection c(sim, server, Endpoint{}, options, SimLinkLatency{hop, hop}, link.state(),
                      host);
      switch (fault) {
        case Fault::kHoldCommand:
          link.hold_next_command();
          break;
        case Fault::kDropReply:
          link.drop_reply_of_next();
          break;
        case Fault::kPartition:
          link.partition(PartitionMode::kHold);
          break;
        case Fault::kPausedServer:
          host->paused = true;
          break;
        case Fault::kSlowReply:
          break;  // 6 ms there and back, against a 5 ms timeout
      }
      std::string value = "v";
      first = c.command({"SET", "k", value});
      first_at = sim.now();
      value = "changed";  // the caller's words are gone: a command still on its way kept a copy
      link.release_held();
      link.heal();
      host->paused = false;
      for (auto& held : std::exchange(host->held, {})) held();
      sim.sleep_until(ms_to_ns(20));  // whatever was held has landed by now
      c.reconnect();
      second = c.command({"GET", "k"});
    });
    sim.run();
    const int which = static_cast<int>(fault);
    EXPECT_EQ(first.error, RedisErrorKind::kTimeout) << which;
    EXPECT_EQ(first_at, ms_to_ns(5)) << which;
    if (fault == Fault::kSlowReply) {
      EXPECT_EQ(second.error, RedisErrorKind::kTimeout) << "still too slow";
    } else {
      EXPECT_TRUE(second.ok()) << which << ": " << second.describe();
      EXPECT_EQ(second.reply.str, "v") << which << ": the SET ran later, with its own words";
    }
  }
}

// A command a link or a paused server still holds when the run ends goes with the link or the
// runtime: held, it kept alive the state that held it (a cycle: the command's route holds the
// link's and the host's state), and a long exploration leaked every such schedule's flights.
TEST(SimConnection, WhatIsStillHeldAtTheEndGoesWithItsHolder) {
  enum class Hold { kCommand, kPartition, kPausedServer };
  for (const Hold hold : {Hold::kCommand, Hold::kPartition, Hold::kPausedServer}) {
    std::weak_ptr<SimLinkState> link_state;
    std::weak_ptr<SimServerHost> host_state;
    {
      Simulation sim(5);
      ModelServer server;
      SimRuntime runtime(sim);
      const Endpoint endpoint = runtime.add_server(server);
      auto link = std::make_unique<SimLink>(sim, 0, endpoint);
      link_state = link->state();
      host_state = runtime.host(endpoint);
      RedisResult result;
      sim.spawn([&] {
        ConnectionOptions options;
        options.command_timeout = std::chrono::milliseconds(5);
        SimConnection c(sim, server, endpoint, options, SimLinkLatency{}, link->state(),
                        runtime.host(endpoint));
        if (hold == Hold::kCommand) link->hold_next_command();
        if (hold == Hold::kPartition) link->partition(PartitionMode::kHold);
        if (hold == Hold::kPausedServer) runtime.host(endpoint)->paused = true;
        result = c.command({"SET", "k", "v"});  // held until the end
      });
      sim.run();
      const int which = static_cast<int>(hold);
      EXPECT_EQ(result.error, RedisErrorKind::kTimeout) << which;
      const bool held = !link_state.lock()->held_commands.empty() ||
                        !link_state.lock()->held_partition.empty() ||
                        !host_state.lock()->held.empty();
      EXPECT_TRUE(held) << which << ": still held when the run ended";
    }
    EXPECT_TRUE(link_state.expired()) << static_cast<int>(hold) << ": the link's state leaked";
    EXPECT_TRUE(host_state.expired()) << static_cast<int>(hold) << ": the host's state leaked";
  }
}

TEST(SimConnection, ARestartClosesTheConnection) {
  Simulation sim(9);
  ModelServer server;
  RedisResult after;
  RedisResult again;
  sim.spawn([&] {
    SimConnection c(sim, server, Endpoint{}, ConnectionOptions{}, SimLinkLatency{});
    ASSERT_TRUE(c.command({"SET", "k", "v"}).ok());
    server.restart();
    after = c.command({"GET", "k"});
    c.reconnect();
    again = c.command({"GET", "k"});
  });
  sim.run();
  EXPECT_EQ(after.error, RedisErrorKind::kClosed);
  EXPECT_TRUE(again.ok());
  EXPECT_TRUE(again.reply.is_nil());
}

// Proves a reply nesting arrays 9 deep is hiredis's protocol error on the simulator too (a real
// run's connection cannot read it: a user lock returning such a table got a protocol error there
// and an unexpected reply here), the command having run, and the connection broken; 8 deep reads.
TEST(SimConnection, AReplyNestedDeeperThanHiredisReadsIsAProtocolError) {
  Simulation sim(11);
  ModelServer server;
  RedisResult eight;
  RedisResult nine;
  bool broken = false;
  RedisResult set;
  sim.spawn([&] {
    SimConnection c(sim, server, Endpoint{}, ConnectionOptions{}, SimLinkLatency{});
    eight = c.command({"EVAL", "return {{{{{{{{1}}}}}}}}", "0"});
    nine = c.command({"EVAL", "redis.call('SET', 'k', 'v') return {{{{{{{{{1}}}}}}}}}", "0"});
    broken = c.broken();
    c.reconnect();
    set = c.command({"GET", "k"});
  });
  sim.run();
  ASSERT_TRUE(eight.ok()) << eight.describe();
  EXPECT_EQ(eight.reply.type, Reply::Type::kArray);
  EXPECT_EQ(nine.error, RedisErrorKind::kProtocol);
  EXPECT_EQ(nine.message, "No support for nested multi bulk replies with depth > 7");
  EXPECT_TRUE(nine.indeterminate());
  EXPECT_TRUE(broken);
  EXPECT_EQ(set.reply.str, "v");  // it ran
}

// Proves a BLPOP on an empty list waits for a push (asked again every 100 µs: served within
// 0.1 ms of it, not at its timeout), and one that nothing feeds answers nil at its timeout.
TEST(SimConnection, BlpopWaitsForAPushOrItsTimeout) {
  Simulation sim(10);
  ModelServer server;
  RedisResult served;
  Nanos served_at = 0;
  RedisResult timed_out;
  Nanos timed_out_at = 0;
  sim.spawn([&] {
    SimConnection c(sim, server, Endpoint{}, ConnectionOptions{}, SimLinkLatency{0, 0});
    served = c.command({"BLPOP", "empty", "q", "1"});
    served_at = sim.now();
    timed_out = c.command({"BLPOP", "q", "0.05"});
    timed_out_at = sim.now();
  });
  sim.spawn([&] {
    sim.sleep_until(ms_to_ns(5));
    SimConnection c(sim, server, Endpoint{}, ConnectionOptions{}, SimLinkLatency{0, 0});
    ASSERT_TRUE(c.command({"RPUSH", "q", "wake"}).ok());
  });
  sim.run();
  ASSERT_TRUE(served.ok()) << served.describe();
  ASSERT_EQ(served.reply.elements.size(), 2u);
  EXPECT_EQ(served.reply.elements[0].str, "q");
  EXPECT_EQ(served.reply.elements[1].str, "wake");
  EXPECT_GE(served_at, ms_to_ns(5));
  EXPECT_LE(served_at, ms_to_ns(5) + 100'000);
  ASSERT_TRUE(timed_out.ok()) << timed_out.describe();
  EXPECT_TRUE(timed_out.reply.is_nil());
  EXPECT_EQ(timed_out_at, served_at + ms_to_ns(50));
  EXPECT_TRUE(server.keys_at(sim.now()).empty());  // the served list is gone
}

}  // namespace
}  // namespace locksim
