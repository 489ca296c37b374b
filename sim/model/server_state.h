// server_state.h: ServerState, everything one model server holds (its keyspace, clients and
// subscriptions, script engine, replication links), and the dispatcher that runs a command
// against it. Internal to sim/model: ModelServer is the public face.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/model/command.h"
#include "sim/model/keyspace.h"
#include "sim/model/lua_scripting.h"
#include "sim/model/model_server.h"

namespace locksim::model_detail {

// ReplyQueue: replies in order, allocating nothing until the first one (a std::deque allocates
// when it is made, and every connection's state has a queue that is nearly always empty).
class ReplyQueue {
 public:
  bool empty() const { return head_ == items_.size(); }
  void push_back(Reply reply) { items_.push_back(std::move(reply)); }
  Reply& front() { return items_[head_]; }
  void pop_front() {
    ++head_;
    if (head_ == items_.size()) {
      items_.clear();
      head_ = 0;
    } else if (head_ >= 64 && 2 * head_ >= items_.size()) {  // a reader that never catches up
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }

 private:
  std::vector<Reply> items_;
  std::size_t head_ = 0;  // items_[head_] is the front
};

struct ClientState {
  ModelClientId id = 0;
  std::vector<std::string> channels;  // SUBSCRIBE order
  ReplyQueue pushes;                  // messages and confirmations not yet read
  // reply_queued: set by a command whose replies went into `pushes` (SUBSCRIBE, UNSUBSCRIBE):
  // the command's reply is the oldest queued one, as on the wire.
  bool reply_queued = false;
  // asking: ASKING was this client's last command: its next may reach a slot being imported.
  bool asking = false;
};

// ClientTable: the connected clients by id. A server has a handful, and every command looks its
// client up: a flat list beats a tree's pointer chase. A client's state keeps its address while it
// is connected.
class ClientTable {
 public:
  ClientState* find(ModelClientId id) {
    for (auto& [client_id, state] : clients_) {
      if (client_id == id) return state.get();
    }
    return nullptr;
  }
  const ClientState* find(ModelClientId id) const {
    return const_cast<ClientTable*>(this)->find(id);
  }
  bool contains(ModelClientId id) const { return find(id) != nullptr; }
  // add: a new client `id` (or the one already there, reset).
  ClientState& add(ModelClientId id) {
    ClientState* state = find(id);
    if (state == nullptr) {
      clients_.emplace_back(id, std::make_unique<ClientState>());
      state = clients_.back().second.get();
    }
    *state = ClientState{};
    state->id = id;
    return *state;
  }
  void erase(ModelClientId id) {
    std::erase_if(clients_, [id](const auto& client) { return client.first == id; });
  }
  void clear() { clients_.clear(); }

 private:
  std::vector<std::pair<ModelClientId, std::unique_ptr<ClientState>>> clients_;
};

struct ServerState {
  ModelOptions options;
  std::int64_t clock_offset_ms = 0;
  Keyspace keys;
  bool replica = false;
  std::uint64_t generation = 0;                  // restarts so far
  ClientTable clients;                           // 0: the anonymous client, never subscribed
  ModelClientId next_client_id = 1;
  // channel -> subscribers in SUBSCRIBE order (PUBLISH delivers in that order).
  std::map<std::string, std::vector<ModelClientId>, std::less<>> subscribers;
  Lrand48 random;
  std::unique_ptr<LuaScripting> lua;
  // Replication: links to this server's replicas, and the link from its primary.
  std::vector<ReplicationLink*> replica_links;
  ReplicationLink* primary_link = nullptr;
  // cluster: a cluster node's view of its cluster (ModelServer::enable_cluster), or null.
  std::unique_ptr<ModelCluster> cluster;
  // first_gap: ModelServer::first_gap (a restart keeps it: it is a fact about the whole run).
  std::string first_gap;

  ScriptLimits script_limits() const {
    return ScriptLimits{options.script_instruction_budget, options.lua_memory_limit_bytes,
                        options.script_allocation_budget_bytes, options.script_time_limit_ms};
  }
  void reset_scripts() { lua = std::make_unique<LuaScripting>(script_limits(), random); }
};

// Clock: the wall time a command runs at.
struct WallTime {
  std::int64_t ms = 0;
  std::int64_t us = 0;
};

// run_client_command: a client's command as processCommand checks it (existence, arity,
// READONLY on a replica, the subscribed state), then its handler. Writes are recorded in
// `effects` (nullptr: not recorded).
Reply run_client_command(ServerState& server, ClientState& client,
                         std::span<const std::string_view> argv, WallTime now, Effects* effects);

// run_script_command: redis.call's command as scriptCall checks it (existence, arity, not
// allowed from scripts, read-only script, READONLY), run with the script's frozen time.
Reply run_script_command(CommandContext& script, std::span<const std::string_view> argv,
                         bool read_only_script);

// run_script: runs the cached script `sha` for EVAL or EVALSHA (ctx.argv: name, script, numkeys,
// keys..., args...); `read_only_command`: EVAL_RO or EVALSHA_RO, which run it as read-only.
Reply run_script(CommandContext& ctx, std::string_view sha, std::int64_t key_count,
                 bool read_only_command);

// over_maxmemory: performEvictions under noeviction: the keyspace's estimated size is over
// maxmemory. A replica ignores maxmemory (replica-ignore-maxmemory): its writes come from its
// primary.
bool over_maxmemory(const ServerState& server);

// script_denies_oom: evalGetCommandFlags: whether EVAL, EVALSHA or their _RO forms (ctx.argv)
// run a script with a shebang line that neither allows OOM nor is read-only, a command Redis
// refuses as a whole over maxmemory (a script without one is checked command by command).
bool script_denies_oom(const ServerState& server, std::span<const std::string_view> argv);

// cluster_route: processCommand's cluster redirection (cluster.c getNodeByQuery) of a client's
// command on a cluster node: the error that refuses it here (MOVED, ASK, CROSSSLOT, TRYAGAIN,
// CLUSTERDOWN), or nullopt when this node runs it. `slot` is set to its keys' slot, or -1.
std::optional<Reply> cluster_route(const ServerState& server, const ClientState& client,
                                   const CommandSpec& spec, std::span<const std::string_view> argv,
                                   std::int64_t now_ms, int& slot);
// cluster_script_check: scriptVerifyClusterState for a script's redis.call on a cluster node:
// the error if the command's keys are not local or not in the script's one slot, else nullopt
// (and the script's slot set by its first keyed command).
std::optional<Reply> cluster_script_check(CommandContext& script, const CommandSpec& spec,
                                          std::span<const std::string_view> argv);
// rebuild_commands: the writes that make `key` what `entry` is on a replica (a migrated key
// reaching the new owner's replicas): DEL, then SET, HSET, RPUSH or ZADD, then PEXPIREAT.
std::vector<std::vector<std::string>> rebuild_commands(const std::string& key, const Entry& entry);
// note_gap: if `message` carries kModelGap and no gap was noted yet, notes the words after it.
void note_gap(ServerState& server, std::string_view message);

// apply_replicated: a primary's write replayed on its replica (nothing expires on the way).
void apply_replicated(ServerState& replica, std::span<const std::string> command);

// unsubscribe_all: drops every subscription of `client` (disconnect, restart).
void unsubscribe_all(ServerState& server, ModelClientId id);

}  // namespace locksim::model_detail
