#include "sim/nemesis/nemesis.h"

#include "sim/core/assert.h"
#include "sim/proxy/link_proxy.h"
#include "sim/topology/topology.h"

namespace locksim {

Nemesis::Nemesis(ClientLog& log) : log_(log) {}

void Nemesis::attach(std::size_t client, FaultTarget* target, std::vector<Link*> links) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (clients_.size() <= client) clients_.resize(client + 1);
  clients_[client] = Attached{target, std::move(links)};
}

Event& Nemesis::record(FaultKind kind, std::size_t client, FaultPhase phase,
                       const std::vector<std::size_t>& servers) {
  // Requires mutex_: the log has one writer at a time.
  LOCKSIM_ASSERT(traits(kind).window == (phase != FaultPhase::kInstant));
  Event& event = log_.record(EventType::kInfo, Op::kFault, "");
  event.fault().kind = kind;
  event.fault().target = static_cast<std::int32_t>(client);
  event.fault().phase = phase;
  if (!servers.empty() && topology_ != nullptr && topology_->size() > 1) {
    std::string names;
    for (const std::size_t server : servers) {
      names += (names.empty() ? "" : ",") + topology_->name(server);
    }
    event.fault().server = log_.intern(names);
  }
  return event;
}

void Nemesis::client_clock(std::size_t client, std::string_view words) {
  std::lock_guard<std::mutex> lock(mutex_);
  Event& event = record(FaultKind::kClientClock, client, FaultPhase::kInstant);
  if (!words.empty()) event.message = log_.intern(words);
}

void Nemesis::pause(std::size_t client) {
  // Targets are attached before the run; freezing waits for a renewal under way to end, which
  // must not hold the nemesis's lock (a simulated run's fibers share one thread).
  LOCKSIM_ASSERT(client < clients_.size() && clients_[client].target != nullptr);
  // Frozen first, then recorded: nothing the client does can be stamped inside the window
  // while it still runs.
  clients_[client].target->freeze();
  std::lock_guard<std::mutex> lock(mutex_);
  record(FaultKind::kPause, client, FaultPhase::kStart);
}

void Nemesis::resume(std::size_t client) {
  LOCKSIM_ASSERT(client < clients_.size() && clients_[client].target != nullptr);
  {
    // Recorded first, then thawed: a renewal that fell due is stamped after the window's end.
    std::lock_guard<std::mutex> lock(mutex_);
    record(FaultKind::kPause, client, FaultPhase::kEnd);
  }
  clients_[client].target->thaw();
}

std::vector<Link*> Nemesis::links(std::size_t client,
                                  const std::vector<std::size_t>& servers) const {
  LOCKSIM_ASSERT(client < clients_.size() && !clients_[client].links.empty());
  const std::vector<Link*>& all = clients_[client].links;
  if (servers.empty()) return all;
  std::vector<Link*> chosen;
  for (const std::size_t server : servers) {
    LOCKSIM_ASSERT(server < all.size());
    chosen.push_back(all[server]);
  }
  return chosen;
}

// Link faults. A window opens once its fault is in place (acted, then recorded) and closes
// before it is lifted (recorded, then acted): whatever is stamped inside it happened under the
// fault. (A link fault's policy window is the other way round, below.)

void Nemesis::lose_next_reply(std::size_t client, const std::vector<std::size_t>& servers) {
  // An instant: from here on each link drops one reply; the client's timeout shows when.
  for (Link* link : links(client, servers)) link->drop_reply_of_next();
  std::lock_guard<std::mutex> lock(mutex_);
  record(FaultKind::kLoseReply, client, FaultPhase::kInstant, servers);
}

void Nemesis::hold_next_command(std::size_t client, const std::vector<std::size_t>& servers) {
  for (Link* link : links(client, servers)) link->hold_next_command();
  std::lock_guard<std::mutex> lock(mutex_);
  record(FaultKind::kDelay, client, FaultPhase::kStart, servers);
}

void Nemesis::forward_held(std::size_t client, const std::vector<std::size_t>& servers) {
  {
    // Recorded first: the server may act on the command the moment it is forwarded.
    std::lock_guard<std::mutex> lock(mutex_);
    record(FaultKind::kDelay, client, FaultPhase::kEnd, servers);
  }
  for (Link* link : links(client, servers)) link->release_held();
}

void Nemesis::partition(std::size_t client, bool reset, const std::vector<std::size_t>& servers) {
  for (Link* link : links(client, servers)) {
    link->partition(reset ? PartitionMode::kReset : PartitionMode::kHold);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  record(FaultKind::kPartition, client, FaultPhase::kStart, servers);
}

void Nemesis::heal(std::size_t client, const std::vector<std::size_t>& servers) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    record(FaultKind::kPartition, client, FaultPhase::kEnd, servers);
  }
  // A heal lets held messages go on: in the simulator, at events of their own.
  for (Link* link : links(client, servers)) link->heal();
}

void Nemesis::open_link_fault(std::size_t client, FaultKind kind, const LinkFaultSettings& settings,
                              const std::vector<std::size_t>& servers) {
  LOCKSIM_ASSERT(traits(kind).link_fault != nullptr);
  {
    // The recorded window holds every command the policy decides on: it opens before the policy
    // is installed and closes after it is removed.
    std::lock_guard<std::mutex> lock(mutex_);
    record(kind, client, FaultPhase::kStart, servers);
  }
  for (Link* link : links(client, servers)) link->set_command_policy(settings.make_policy());
}

void Nemesis::close_link_fault(std::size_t client, FaultKind kind,
                               const std::vector<std::size_t>& servers) {
  LOCKSIM_ASSERT(traits(kind).link_fault != nullptr);
  for (Link* link : links(client, servers)) link->set_command_policy(nullptr);
  std::lock_guard<std::mutex> lock(mutex_);
  record(kind, client, FaultPhase::kEnd, servers);
}

void Nemesis::record_server(std::size_t server,
                            std::initializer_list<std::pair<FaultKind, FaultPhase>> events) {
  // One lock for the events of one fault: nothing recorded elsewhere comes between them.
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [kind, phase] : events) {
    LOCKSIM_ASSERT(traits(kind).window == (phase != FaultPhase::kInstant));
    Event& event = log_.record(EventType::kInfo, Op::kFault, "");
    event.fault().kind = kind;
    event.fault().server = log_.intern(topology_->name(server));
    event.fault().phase = phase;
  }
}

// Server faults: the topology acts without the nemesis's lock (a restart waits for the server,
// and a simulated one sleeps on virtual time: another fiber of the thread must be able to inject
// its own fault meanwhile); the topology serializes its own faults if it must (ProcessTopology).

std::string Nemesis::kill_server(std::size_t server) {
  LOCKSIM_ASSERT(topology_ != nullptr);
  // Killed first, then recorded: nothing is stamped inside "down" while the server still runs.
  const std::string error = topology_->kill(server);
  if (error.empty()) {
    record_server(server, {{FaultKind::kKillServer, FaultPhase::kInstant},
                           {FaultKind::kDown, FaultPhase::kStart}});
  }
  return error;
}

std::string Nemesis::restart_server(std::size_t server) {
  LOCKSIM_ASSERT(topology_ != nullptr);
  // The instant is stamped as the restart begins: a client that retries a refused connection
  // can reach the new process before the restart sees it answer PING, and what it is granted
  // there comes after this. The window "down" closes once it answers.
  record_server(server, {{FaultKind::kRestartServer, FaultPhase::kInstant}});
  const std::string error = topology_->restart(server);
  if (error.empty()) record_server(server, {{FaultKind::kDown, FaultPhase::kEnd}});
  return error;
}

std::string Nemesis::pause_server(std::size_t server) {
  LOCKSIM_ASSERT(topology_ != nullptr);
  const std::string error = topology_->pause(server);
  if (error.empty()) record_server(server, {{FaultKind::kPauseServer, FaultPhase::kStart}});
  return error;
}

std::string Nemesis::resume_server(std::size_t server) {
  LOCKSIM_ASSERT(topology_ != nullptr);
  record_server(server, {{FaultKind::kPauseServer, FaultPhase::kEnd}});
  return topology_->resume(server);
}

std::string Nemesis::clock_jump(std::size_t server, std::int64_t ahead_ms) {
  LOCKSIM_ASSERT(topology_ != nullptr);
  const std::string error = topology_->jump_clock(server, ahead_ms);
  if (error.empty()) record_server(server, {{FaultKind::kClockJump, FaultPhase::kInstant}});
  return error;
}

std::string Nemesis::cut_replication(std::size_t replica) {
  LOCKSIM_ASSERT(topology_ != nullptr);
  const std::string error = topology_->cut_replication(replica);
  if (error.empty()) record_server(replica, {{FaultKind::kReplicationCut, FaultPhase::kStart}});
  return error;
}

std::string Nemesis::heal_replication(std::size_t replica) {
  LOCKSIM_ASSERT(topology_ != nullptr);
  record_server(replica, {{FaultKind::kReplicationCut, FaultPhase::kEnd}});
  return topology_->heal_replication(replica);
}

std::string Nemesis::promote(std::size_t replica) {
  LOCKSIM_ASSERT(topology_ != nullptr);
  const std::string error = topology_->promote(replica);
  if (error.empty()) record_server(replica, {{FaultKind::kPromote, FaultPhase::kInstant}});
  return error;
}

std::string Nemesis::failover(std::int64_t max_ms, const std::function<bool()>& stop) {
  LOCKSIM_ASSERT(topology_ != nullptr);
  // Waits without the lock: client faults may go on meanwhile.
  const std::string error = topology_->await_failover(max_ms, stop);
  if (!error.empty()) return error;
  record_server(topology_->primary(), {{FaultKind::kFailover, FaultPhase::kInstant}});
  return "";
}

std::string Nemesis::cluster_failover(std::size_t replica, std::string_view mode,
                                      std::int64_t max_ms) {
  LOCKSIM_ASSERT(topology_ != nullptr);
  const std::string error = topology_->cluster_failover(replica, mode, max_ms);
  if (error.empty()) record_server(replica, {{FaultKind::kClusterFailover, FaultPhase::kInstant}});
  return error;
}

std::string Nemesis::migrate_slot_start(std::size_t from, std::size_t to) {
  LOCKSIM_ASSERT(topology_ != nullptr);
  // Recorded first: a redirection a client follows from here on falls inside the window.
  record_server(from, {{FaultKind::kSlotMigration, FaultPhase::kStart}});
  return topology_->migrate_slot_start(from, to);
}

std::string Nemesis::migrate_slot_finish(std::size_t from, std::size_t to) {
  LOCKSIM_ASSERT(topology_ != nullptr);
  const std::string error = topology_->migrate_slot_finish(from, to);
  record_server(from, {{FaultKind::kSlotMigration, FaultPhase::kEnd}});
  return error;
}

std::string Nemesis::partition_server(std::size_t server) {
  LOCKSIM_ASSERT(topology_ != nullptr);
  const std::string error = topology_->isolate(server);
  if (error.empty()) record_server(server, {{FaultKind::kServerPartition, FaultPhase::kStart}});
  return error;
}

std::string Nemesis::heal_server_partition(std::size_t server) {
  LOCKSIM_ASSERT(topology_ != nullptr);
  const std::string error = topology_->rejoin(server);
  record_server(server, {{FaultKind::kServerPartition, FaultPhase::kEnd}});
  return error;
}

}  // namespace locksim
