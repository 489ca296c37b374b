// nemesis.h: Nemesis, the one place faults are injected from (Jepsen's word for it).
//
// The nemesis owns every fault injector of a run and records what it does under the reserved
// client "nemesis", as a FaultKind (sim/fault): a fault with a duration opens a window (phase
// "start") and closes it (phase "end"), a fault without one is an instant; every event names its
// target client or server. The checkers
// read these windows (a hold inside one is `faulted`), and the reports draw them.
//
// What a fault does to a client depends on the executor, so each client is attached as a
// FaultTarget: a thread client freezes its renewal thread and is held by its own thread, a
// process client is sent SIGSTOP and SIGCONT. Link faults go to the client's Link
// (sim/proxy/link.h: a LinkProxy, or the simulator's SimLink) (sim/proxy), placed between the
// client and its server by the run. (A crash is the client's own act, recorded by the client: a
// thread closes its connection, a worker is sent SIGKILL.)
//
// Thread-safe: any client's thread may inject a fault aimed at any client. Its lock guards the
// log only: it is never held across a fault's action (a link's, a client's or the topology's),
// which may wait (a restart waits for its server) or, in the simulator, switch fibers: another
// fiber of the same thread could then never take it, and the thread would sleep for ever. So two
// faults injected at once may act in one order and be recorded in the other; each fault's own
// events keep the order documented at each method (nemesis.cc).
//
//   Nemesis nemesis(log);
//   nemesis.attach(0, &target, {proxy.get()});  // client 0: its FaultTarget, one link per server
//   nemesis.pause(0);     // records {"fault":"pause","target":"c1","phase":"start"}
//   ...
//   nemesis.resume(0);    // records the window's end, then lets the client run again
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/clock.h"
#include "sim/fault/fault.h"
#include "sim/fault/link_fault.h"
#include "sim/history/recorder.h"

namespace locksim {

class Link;
class Topology;

// kNemesisClient: the reserved client name of the nemesis's events.
inline constexpr const char* kNemesisClient = "nemesis";

// FaultTarget: what the nemesis can do to one client; its executor implements it.
class FaultTarget {
 public:
  virtual ~FaultTarget() = default;
  // freeze: stop the whole client (its renewal too) as a GC or VM stall would.
  virtual void freeze() = 0;
  // thaw: let it run again; a renewal that fell due meanwhile runs at once.
  virtual void thaw() = 0;
};

class Nemesis {
 public:
  // log: the nemesis's own ClientLog, written only under the nemesis's lock (held for nothing
  // else).
  explicit Nemesis(ClientLog& log);

  // attach: client `client`'s target and its link proxies, one per server of the topology (or
  // one, to the run's server); none: direct links, no link faults.
  void attach(std::size_t client, FaultTarget* target, std::vector<Link*> links);

  // client_clock: an instant "client_clock" aimed at `client`, whose own clock runs off the
  // others' for the whole run (the scenario's client_clocks: an offset, a drift or both),
  // recorded as the run starts; `words` (the event's message) says how ("drift +500 ms/s").
  void client_clock(std::size_t client, std::string_view words = {});

  // pause / resume: a window in which `client` is frozen.
  void pause(std::size_t client);
  void resume(std::size_t client);

  // Link faults (require attached proxies). `servers` picks the client's links by server index
  // (empty: every link); with a topology of several servers the events then name them
  // ("server": "n1,n2"), so a window says which links it cut.
  // lose_next_reply: the reply of the next command on each chosen link is dropped.
  void lose_next_reply(std::size_t client, const std::vector<std::size_t>& servers = {});
  // hold_next_command / forward_held: a window in which the client's next command on each chosen
  // link is held in the proxy before the server sees it (a delayed packet).
  void hold_next_command(std::size_t client, const std::vector<std::size_t>& servers = {});
  void forward_held(std::size_t client, const std::vector<std::size_t>& servers = {});
  // partition / heal: a window in which the chosen links are cut.
  // reset: close the links' connections (and new ones) instead of holding their bytes.
  void partition(std::size_t client, bool reset, const std::vector<std::size_t>& servers = {});
  void heal(std::size_t client, const std::vector<std::size_t>& servers = {});
  // open_link_fault / close_link_fault: a window of link fault `kind` (one with a LinkFaultType,
  // sim/fault/link_fault.h): each chosen link gets its own policy from `settings` until the
  // window closes, which removes it. The nemesis does not know what the policy does.
  void open_link_fault(std::size_t client, FaultKind kind, const LinkFaultSettings& settings,
                       const std::vector<std::size_t>& servers = {});
  void close_link_fault(std::size_t client, FaultKind kind,
                        const std::vector<std::size_t>& servers = {});

  // Server faults (require attach_topology). Each records its event under the server's name
  // (client target: the nemesis) and returns "" or what went wrong. The topology's own state
  // changes before the fault, so the run's watch never mistakes it for a lost server. A server
  // fault step's kind (sim/fault/server_fault.h) reaches them through the scripted runner's
  // ServerFaultHost.
  void attach_topology(Topology* topology) { topology_ = topology; }
  std::string kill_server(std::size_t server);     // an instant "kill_server"; opens "down"
  std::string restart_server(std::size_t server);  // closes "down"; an instant "restart_server"
  std::string pause_server(std::size_t server);    // opens "pause_server"
  std::string resume_server(std::size_t server);   // closes it
  // clock_jump: an instant "clock_jump"; the server's wall clock jumps `ahead_ms` further ahead.
  std::string clock_jump(std::size_t server, std::int64_t ahead_ms);
  std::string cut_replication(std::size_t replica);   // opens "replication_cut"
  std::string heal_replication(std::size_t replica);  // closes it
  std::string promote(std::size_t replica);           // an instant "promote"
  // failover: waits for Sentinel's promotion, then records an instant "failover" aimed at the
  // server it promoted.
  std::string failover(std::int64_t max_ms, const std::function<bool()>& stop);
  // cluster_failover: CLUSTER FAILOVER on a cluster's replica; an instant "cluster_failover".
  std::string cluster_failover(std::size_t replica, std::string_view mode, std::int64_t max_ms);
  // migrate_slot_start opens the window "slot_migration" (aimed at `from`); finish closes it.
  std::string migrate_slot_start(std::size_t from, std::size_t to);
  std::string migrate_slot_finish(std::size_t from, std::size_t to);
  // partition_server opens the window "server_partition" (Topology::isolate); heal closes it.
  std::string partition_server(std::size_t server);
  std::string heal_server_partition(std::size_t server);

 private:
  struct Attached {
    FaultTarget* target = nullptr;
    std::vector<Link*> links;  // by server index
  };
  // record: `servers` (link indices) are named in the event when given on a topology.
  // Each asserts that `phase` suits `kind` (a window's start or end, or an instant).
  Event& record(FaultKind kind, std::size_t client, FaultPhase phase,
                const std::vector<std::size_t>& servers = {});
  // record_server: the events of one server fault, in order, under one lock.
  void record_server(std::size_t server,
                     std::initializer_list<std::pair<FaultKind, FaultPhase>> events);
  // links: the chosen links of `client` (asserts they exist).
  std::vector<Link*> links(std::size_t client, const std::vector<std::size_t>& servers) const;

  std::mutex mutex_;  // guards log_, and nothing else
  ClientLog& log_;    // guarded by mutex_
  std::vector<Attached> clients_;
  Topology* topology_ = nullptr;
};

}  // namespace locksim
