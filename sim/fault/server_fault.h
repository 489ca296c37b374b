// server_fault.h: what a scripted server fault of one kind is, written once for every kind. A
// server fault is a step aimed at a server of the scenario's topology instead of a client
// ({"do": "kill_server", "server": "n1"}), run on the nemesis's thread; ServerFault is one step's
// settings of one kind, with what the kind does, and ServerFaultType how a step of the kind is
// read from a scenario.
//
// A server fault kind's own code is one file, sim/fault/server/<word>.cc (pause_server.cc is the
// model of a kind with a window, clock_jump.cc of one with a key of its own): its ServerFault (its
// own keys' values, validated and written back; its run: what it does to the server through a
// ServerFaultHost) and its ServerFaultType (its word, what it aims at, its window and its own
// keys, its topology needs, its parser), plus its row in server_fault.cc's table. A kind that
// does what no ServerFaultHost operation does needs that operation in the scripted runner, the
// nemesis and every Topology too, and one that records an event of its own a FaultKind
// (fault.h). The scenario parser accepts {"do": "<word>", "server": ...} for every kind of the
// table and checks its topology needs, the loader reads its traits (a clock shift, a moving
// primary), the scripted runner hands each step's settings the run's host; none of them names a
// kind.
//
// The host's operations record the fault events (FaultKind, sim/fault/fault.h): what a history
// says is the operation's word ("kill_server", "down", "replication_cut"), never the step's.
//
//   const ServerFaultType* type = server_fault_type("clock_jump");
//   std::shared_ptr<const ServerFault> jump = type->parse(step_reader);  // "jump_ms": 20000
//   std::string error = jump->run(host, 0);  // host.shift_clock(0, 20000); "" when it was done
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/json/json_reader.h"

namespace locksim {

struct ServerFaultType;

// ServerFaultHost: what a server fault may do to the run's servers; the scripted runner implements
// it through the nemesis (sim/driver/scripted.cc). Servers are indices in the topology's order.
// Each operation records its fault event as it acts and returns "" once done, or what went wrong
// (the runner makes that a harness failure, or a note if the run was stopping). None may be
// called for a server the topology does not have.
class ServerFaultHost {
 public:
  virtual ~ServerFaultHost() = default;

  // kill: SIGKILL; the server stays down ("kill_server", and the window "down" opens).
  virtual std::string kill(std::size_t server) = 0;
  // restart: starts a killed server again on its port and waits until it answers ("down" closes,
  // then "restart_server").
  virtual std::string restart(std::size_t server) = 0;
  // pause, resume: SIGSTOP and SIGCONT (the window "pause_server").
  virtual std::string pause(std::size_t server) = 0;
  virtual std::string resume(std::size_t server) = 0;
  // shift_clock: the server's wall clock jumps `ahead_ms` further ahead ("clock_jump").
  virtual std::string shift_clock(std::size_t server, std::int64_t ahead_ms) = 0;
  // cut_replication, heal_replication: the replica's link to its primary is cut and healed (the
  // window "replication_cut").
  virtual std::string cut_replication(std::size_t replica) = 0;
  virtual std::string heal_replication(std::size_t replica) = 0;
  // promote: REPLICAOF NO ONE on the replica; clients follow it ("promote").
  virtual std::string promote(std::size_t replica) = 0;
  // wait_for_failover: waits, at most `max_ms` or until the run stops, until Sentinel has
  // promoted another server ("failover", aimed at it).
  virtual std::string wait_for_failover(std::int64_t max_ms) = 0;
  // cluster_failover: CLUSTER FAILOVER [FORCE|TAKEOVER] (`mode` "", "force", "takeover") on a
  // replica of a Redis Cluster, waiting at most max_ms until it is a primary
  // ("cluster_failover", aimed at it).
  virtual std::string cluster_failover(std::size_t replica, std::string_view mode,
                                       std::int64_t max_ms) = 0;
  // migrate_slot_start, migrate_slot_finish: the lock key's slot starts migrating from primary
  // `from` to primary `to`, and is moved (the window "slot_migration", aimed at `from`).
  virtual std::string migrate_slot_start(std::size_t from, std::size_t to) = 0;
  virtual std::string migrate_slot_finish(std::size_t from, std::size_t to) = 0;
  // partition, heal_partition: the server is cut off from the rest of its cluster, and back
  // (the window "server_partition").
  virtual std::string partition(std::size_t server) = 0;
  virtual std::string heal_partition(std::size_t server) = 0;
  // server_index: the index of a server of the topology by its name (a kind's own key naming a
  // second server, checked by its check_topology).
  virtual std::size_t server_index(std::string_view name) const = 0;
  // hold_window: waits out the step's window (its duration key, or "until" at most "max_ms"); if
  // the window ran out without its conditions, notes "<doing> <the step's server> the full ...".
  virtual void hold_window(std::string_view doing) = 0;
};

// ServerFault: one step's settings of one kind, validated, and what the kind does with them.
// Immutable once the scenario is loaded.
class ServerFault {
 public:
  explicit ServerFault(const ServerFaultType& type) : type_(&type) {}
  virtual ~ServerFault() = default;

  const ServerFaultType& type() const { return *type_; }
  // write: adds the kind's own keys (ServerFaultType::keys) to the step's entry in the resolved
  // scenario.json, in a form ServerFaultType::parse accepts again. The "server" and the window
  // are written by the scenario module.
  virtual void write(nlohmann::json& /*step*/) const {}
  // run: does the fault, through `host`, to `server` (the index of the step's "server"; 0 for a
  // kind aimed at none); "" or what went wrong, from the host. Runs on the nemesis's thread.
  virtual std::string run(ServerFaultHost& host, std::size_t server) const = 0;

 private:
  const ServerFaultType* type_;
};

// ServerFaultAim: what a kind's "server" must name.
enum class ServerFaultAim : std::uint8_t {
  kNone,     // no "server": the kind acts on the topology as a whole (failover)
  kServer,   // any server of the topology
  kReplica,  // a replica ("<word>" needs a replica; "n1" is a primary)
};

// ServerFaultServer: one server of the scenario's topology, as a kind's topology check sees it
// (the scenario module's ServerSpec, from below it).
struct ServerFaultServer {
  std::string name;
  std::string replica_of = {};  // "": a primary
};

// ServerFaultTopology: the scenario's topology, as a kind's topology check sees it.
struct ServerFaultTopology {
  std::vector<ServerFaultServer> servers;
  bool sentinel = false;  // a redis-sentinel watches the first primary
  bool cluster = false;   // the servers form a Redis Cluster
};

// not_on_a_cluster: a check_topology for a kind that sets a replica's role (REPLICAOF), which a
// Redis Cluster's election decides: refused on a cluster, with what to use.
void not_on_a_cluster(const json::JsonReader& step, const ServerFaultTopology& topology);

// ServerFaultType: one kind: its word, its keys, its topology needs, its traits and its parser.
struct ServerFaultType {
  // word: the step's "do" ("kill_server"); not a history word (the host's operations record).
  std::string_view word;
  // aim: what its "server" names; the scenario parser reads and checks it.
  ServerFaultAim aim = ServerFaultAim::kServer;
  // duration_key: a kind that holds a window ("pause_ms"): the key of its exact duration, which
  // excludes "until" (with "max_ms"); the scenario parser reads them into the step, and the run
  // waits the window out with ServerFaultHost::hold_window. "": no window.
  std::string_view duration_key = {};
  // keys: the kind's own keys beyond "server" and the window's, which `parse` reads.
  std::vector<std::string> keys = {};
  // shifts_clock: a step of the kind jumps a server's clock, so the topology's servers run with
  // the clock shift preloaded.
  bool shifts_clock = false;
  // moves_primary: a step of the kind moves the primary to another server, which clients (and a
  // library adapter, which cannot) must follow.
  bool moves_primary = false;
  // check_topology: the kind's own needs of the topology beyond `aim` (failover: Sentinel);
  // throws InputError naming the step's file, path and what was expected. Null: none.
  void (*check_topology)(const json::JsonReader& step,
                         const ServerFaultTopology& topology) = nullptr;
  // parse: the kind's settings from the step `step` (an object whose keys are all allowed);
  // throws InputError naming the file, the JSON path and what was expected.
  std::shared_ptr<const ServerFault> (*parse)(const json::JsonReader& step) = nullptr;
};

// server_fault_types: every kind, in the order of server_fault.cc's table (the order "do" lists
// them in its messages).
std::span<const ServerFaultType* const> server_fault_types();
// server_fault_type: the kind whose word is `word`; nullptr for any other word.
const ServerFaultType* server_fault_type(std::string_view word);
// server_fault_keys: every key a step of `type` allows beyond the common step keys: "server" if
// it aims at one, the window's (duration_key, "until", "max_ms") if it has one, then its own.
std::vector<std::string> server_fault_keys(const ServerFaultType& type);

}  // namespace locksim
