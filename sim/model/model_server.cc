#include "sim/model/model_server.h"

#include <algorithm>
#include <utility>

#include "sim/core/assert.h"
#include "sim/model/server_state.h"
#include "sim/redis/key_slot.h"

namespace locksim {
namespace model_detail {
namespace {

// kPubSubOnly: processCommand's refusal of a subscribed RESP2 client's other commands.
Reply pubsub_context_error(std::string_view name) {
  return error_reply("ERR Can't execute '" + std::string(name) +
                     "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are "
                     "allowed in this context");
}

// unknown_command: commandCheckExistence's text: the name and the first arguments, at most 128
// bytes of each, newlines made spaces.
Reply unknown_command(std::span<const std::string_view> argv) {
  std::string args;
  for (std::size_t i = 1; i < argv.size() && args.size() < 128; ++i) {
    const std::string_view arg = argv[i].substr(0, argv[i].find('\0'));
    args += "'" + std::string(arg.substr(0, 128 - args.size())) + "' ";
  }
  const std::string_view name = argv[0].substr(0, argv[0].find('\0'));
  std::string text = "ERR unknown command '" + std::string(name.substr(0, 128)) +
                     "', with args beginning with: " + args;
  for (char& c : text) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return error_reply(std::move(text));
}

// ScriptCalls: the ScriptHost of one script run: redis.call runs in the script's context.
class ScriptCalls final : public ScriptHost {
 public:
  ScriptCalls(CommandContext& script, bool read_only) : script_(script), read_only_(read_only) {}
  Reply call(std::span<const std::string_view> argv) override {
    Reply reply = run_script_command(script_, argv, read_only_);
    if (is_error(reply)) model_detail::note_gap(script_.server, reply.str);
    return reply;
  }
  void note_gap(std::string_view message) override {
    model_detail::note_gap(script_.server, message);
  }

 private:
  CommandContext& script_;
  bool read_only_;
};

}  // namespace

Keyspace& CommandContext::keys() { return server.keys; }

Entry* CommandContext::find(std::string_view key) {
  if (from_primary) return server.keys.find(key, INT64_MIN, true);
  if (server.replica) return server.keys.find(key, now_ms, true);
  Entry* entry = server.keys.find(key, INT64_MIN, true);  // expired or not: one lookup
  if (entry == nullptr) return nullptr;                   // no entry at all
  if (is_live(entry->expire_at_ms, now_ms)) return entry;
  // Expired on a primary: deleted now, and the replicas are told (expireIfNeeded).
  server.keys.erase(key);
  if (effects != nullptr) effects->push_back({"DEL", std::string(key)});
  return nullptr;
}

bool CommandContext::already_expired(std::int64_t at_ms) const {
  return at_ms <= now_ms && !server.replica && !from_primary;
}

void CommandContext::propagate(std::vector<std::string> command) {
  if (effects != nullptr) effects->push_back(std::move(command));
}

void CommandContext::propagate(std::initializer_list<std::string_view> command) {
  if (effects != nullptr) effects->emplace_back(command.begin(), command.end());
}

void CommandContext::propagate_as_sent() {
  if (effects == nullptr) return;
  effects->emplace_back(argv.begin(), argv.end());
}

Reply run_client_command(ServerState& server, ClientState& client,
                         std::span<const std::string_view> argv, WallTime now, Effects* effects) {
  LOCKSIM_ASSERT(!argv.empty());
  const CommandSpec* spec = find_command(argv[0]);
  if (spec == nullptr) return unknown_command(argv);
  if (!arity_ok(*spec, argv.size())) return arity_error(spec->name);
  // A cluster node redirects a command for keys it does not serve before anything else is asked
  // (the model's gaps first: a command it lacks answers so wherever it is sent).
  int cluster_slot = -1;
  if (server.cluster && spec->handler != nullptr) {
    std::optional<Reply> redirected =
        cluster_route(server, client, *spec, argv, now.ms, cluster_slot);
    if (redirected) return std::move(*redirected);
  }
  // processCommand refuses a command that may grow memory before READONLY and the pub/sub check.
  // Over maxmemory is asked first: it is nearly always false, and a script's flags cost a lookup.
  if (over_maxmemory(server) &&
      ((spec->flags & kDenyOom) != 0 ||
       ((spec->handler == cmd_eval || spec->handler == cmd_evalsha ||
         spec->handler == cmd_eval_ro || spec->handler == cmd_evalsha_ro) &&
        script_denies_oom(server, argv)))) {
    return oom_error();
  }
  if (server.replica && (spec->flags & kWrite) != 0) return read_only_replica();
  if (!client.channels.empty() && (spec->flags & kPubSubContext) == 0) {
    return pubsub_context_error(spec->name);
  }
  if (spec->handler == nullptr) return not_modelled(argv[0]);
  CommandContext context{server, client, argv, now.ms, now.us, false, false, effects};
  context.cluster_slot = cluster_slot;
  return spec->handler(context);
}

Reply run_script_command(CommandContext& script, std::span<const std::string_view> argv,
                         bool read_only_script) {
  const CommandSpec* spec = find_command(argv[0]);
  if (spec != nullptr && spec->name == "script" && argv.size() >= 2) {
    // SCRIPT's subcommands are all refused in scripts; an unknown one is an unknown command.
    const std::string sub = lower(argv[1]);
    const bool known = sub == "debug" || sub == "exists" || sub == "flush" || sub == "help" ||
                       sub == "kill" || sub == "load";
    return error_reply(known ? "ERR This Redis command is not allowed from script"
                             : "ERR Unknown Redis command called from script");
  }
  if (spec == nullptr) return error_reply("ERR Unknown Redis command called from script");
  if (!arity_ok(*spec, argv.size())) {
    return error_reply("ERR Wrong number of args calling Redis command from script");
  }
  if ((spec->flags & kNoScript) != 0) {
    return error_reply("ERR This Redis command is not allowed from script");
  }
  if (read_only_script && (spec->flags & (kWrite | kMayReplicate)) != 0) {
    return error_reply("ERR Write commands are not allowed from read-only scripts.");
  }
  if ((spec->flags & kWrite) != 0 && script.server.replica) return read_only_replica();
  // scriptVerifyOOM: over maxmemory when the script started, it may not grow memory until it
  // has written (then it cannot be stopped halfway).
  if ((spec->flags & kDenyOom) != 0 && script.script_oom && !script.script_allow_oom &&
      !script.script_wrote) {
    return oom_error();
  }
  if ((spec->flags & kWrite) != 0) script.script_wrote = true;
  if (script.server.cluster && spec->handler != nullptr) {
    if (std::optional<Reply> refused = cluster_script_check(script, *spec, argv)) {
      return std::move(*refused);
    }
  }
  if (spec->handler == nullptr) return not_modelled(argv[0]);
  CommandContext context{script.server, script.client, argv,  script.now_ms,
                         script.now_us, true,          false, script.effects};
  return spec->handler(context);
}

void note_gap(ServerState& server, std::string_view message) {
  if (!server.first_gap.empty()) return;
  const std::size_t at = message.find(kModelGap);
  if (at == std::string_view::npos) return;
  std::string_view gap = message.substr(at + kModelGap.size());
  gap = gap.substr(0, std::min(gap.find(" script: "), gap.find('\n')));
  while (!gap.empty() && gap.front() == ' ') gap.remove_prefix(1);
  server.first_gap = gap.empty() ? std::string("(unnamed)") : std::string(gap);
}

void apply_replicated(ServerState& replica, std::span<const std::string> command) {
  const std::vector<std::string_view> argv(command.begin(), command.end());
  const CommandSpec* spec = find_command(argv[0]);
  LOCKSIM_ASSERT(spec != nullptr && spec->handler != nullptr);
  ClientState primary_client;
  CommandContext context{replica, primary_client, argv, 0, 0, false, true, nullptr};
  spec->handler(context);
}

void unsubscribe_all(ServerState& server, ModelClientId id) {
  ClientState* client = server.clients.find(id);
  if (client == nullptr) return;
  for (const std::string& channel : client->channels) {
    const auto subscribers = server.subscribers.find(channel);
    if (subscribers == server.subscribers.end()) continue;
    std::erase(subscribers->second, id);
    if (subscribers->second.empty()) server.subscribers.erase(subscribers);
  }
  client->channels.clear();
}

// Script execution shared by EVAL and EVALSHA (script_commands.cc calls it).
bool over_maxmemory(const ServerState& server) {
  return server.options.maxmemory_bytes != 0 && !server.replica &&
         server.keys.used_bytes() > server.options.maxmemory_bytes;
}

Reply run_script(CommandContext& ctx, std::string_view sha, std::int64_t key_count,
                 bool read_only_command) {
  const std::span<const std::string_view> keys =
      ctx.argv.subspan(3, static_cast<std::size_t>(key_count));
  const std::span<const std::string_view> args =
      ctx.argv.subspan(3 + static_cast<std::size_t>(key_count));
  const ScriptFlags flags = ctx.server.lua->flags(sha);
  // scriptPrepareForRun: a script with a shebang line runs under EVAL_RO only if it declared
  // itself read-only.
  if (read_only_command && flags.shebang && !flags.no_writes) {
    return error_reply("ERR Can not execute a script with write flag using *_ro command.");
  }
  if (flags.no_cluster && ctx.server.cluster) {
    return error_reply("ERR Can not run script on cluster, 'no-cluster' flag is set.");
  }
  // A script without a shebang (EVAL's compatibility mode) may reach keys of any local slot.
  ctx.script_cross_slot = !flags.shebang || flags.allow_cross_slot;
  ctx.script_oom = over_maxmemory(ctx.server);
  ctx.script_allow_oom = flags.allow_oom;
  ctx.script_wrote = false;
  ScriptCalls calls(ctx, flags.no_writes || read_only_command);
  // The engine may be replaced while the script runs only by SCRIPT FLUSH, which scripts cannot
  // call; keep it alive regardless.
  LuaScripting& lua = *ctx.server.lua;
  return lua.run(sha, keys, args, calls);
}

}  // namespace model_detail

using model_detail::ServerState;

ModelServer::ModelServer(ModelOptions options) : state_(std::make_unique<ServerState>()) {
  state_->options = options;
  state_->clients.add(0);
  state_->reset_scripts();
}

ModelServer::~ModelServer() {
  for (ReplicationLink* link : std::vector<ReplicationLink*>(state_->replica_links)) {
    link->detach();
  }
  if (state_->primary_link != nullptr) state_->primary_link->detach();
}

std::int64_t ModelServer::wall_ms(Nanos now_ns) const {
  return state_->options.unix_epoch_base_ms + state_->clock_offset_ms +
         (now_ns >= 0 ? now_ns / kNanosPerMilli
                      : -((-now_ns + kNanosPerMilli - 1) / kNanosPerMilli));
}

Reply ModelServer::execute(std::span<const std::string_view> argv, Nanos now_ns) {
  return execute(0, argv, now_ns);
}

Reply ModelServer::execute(ModelClientId client, std::span<const std::string_view> argv,
                           Nanos now_ns) {
  model_detail::ClientState* found = state_->clients.find(client);
  LOCKSIM_ASSERT(found != nullptr);
  // Every return below is `reply`'s, so it is made in the caller's place (a return of another
  // object beside it had it moved out: its string, at every command).
  Reply reply;
  if (argv.empty()) {
    reply = model_detail::error_reply("ERR empty command");
    return reply;
  }
  // Wall time in microseconds: base and offset in ms, virtual time in ns (floored).
  const std::int64_t base_us =
      (state_->options.unix_epoch_base_ms + state_->clock_offset_ms) * 1000;
  const std::int64_t now_us = base_us + (now_ns >= 0 ? now_ns / 1000 : -((-now_ns + 999) / 1000));
  const model_detail::WallTime now{wall_ms(now_ns), now_us};
  model_detail::Effects effects;
  const bool record = !state_->replica_links.empty();
  model_detail::ClientState& state = *found;
  reply = model_detail::run_client_command(*state_, state, argv, now, record ? &effects : nullptr);
  // ASKING holds for the one command after it (resetClient clears CLIENT_ASKING after any other).
  if (state.asking && !model_detail::equals_ignoring_case(argv[0], "asking")) state.asking = false;
  if (model_detail::is_error(reply)) model_detail::note_gap(*state_, reply.str);
  // On the wire a client reads its replies in order: what is already queued for it (messages,
  // SUBSCRIBE's confirmations) comes before this command's own reply.
  if (state.reply_queued || !state.pushes.empty()) {
    if (!state.reply_queued) state.pushes.push_back(std::move(reply));
    state.reply_queued = false;
    reply = std::move(state.pushes.front());
    state.pushes.pop_front();
  }
  if (record && !effects.empty()) {
    for (ReplicationLink* link : state_->replica_links) link->queue(effects);
  }
  return reply;
}

ModelClientId ModelServer::connect() {
  const ModelClientId id = state_->next_client_id++;
  state_->clients.add(id);
  return id;
}

void ModelServer::disconnect(ModelClientId client) {
  if (client == 0) return;
  model_detail::unsubscribe_all(*state_, client);
  state_->clients.erase(client);
}

bool ModelServer::connected(ModelClientId client) const { return state_->clients.contains(client); }

std::optional<Reply> ModelServer::next_push(ModelClientId client) {
  model_detail::ClientState* found = state_->clients.find(client);
  if (found == nullptr || found->pushes.empty()) return std::nullopt;
  Reply message = std::move(found->pushes.front());
  found->pushes.pop_front();
  return message;
}

bool ModelServer::subscribed(ModelClientId client) const {
  const model_detail::ClientState* found = state_->clients.find(client);
  return found != nullptr && !found->channels.empty();
}

void ModelServer::restart() {
  state_->keys.clear();
  state_->clients.clear();
  state_->clients.add(0);
  state_->subscribers.clear();
  state_->random = model_detail::Lrand48();
  state_->reset_scripts();
  ++state_->generation;
  for (ReplicationLink* link : state_->replica_links) link->full_sync();
  if (state_->primary_link != nullptr) state_->primary_link->full_sync();
}

void ModelServer::set_clock_offset_ms(std::int64_t offset_ms) {
  state_->clock_offset_ms = offset_ms;
}
std::int64_t ModelServer::clock_offset_ms() const { return state_->clock_offset_ms; }
std::uint64_t ModelServer::generation() const { return state_->generation; }
bool ModelServer::is_replica() const { return state_->replica; }

void ModelServer::promote() {
  if (state_->primary_link != nullptr) state_->primary_link->detach();
  state_->replica = false;
}

void ModelServer::enable_cluster(ModelCluster view) {
  LOCKSIM_ASSERT(view.slots.size() == kClusterSlots && view.myself >= 0 &&
                 static_cast<std::size_t>(view.myself) < view.nodes.size());
  state_->cluster = std::make_unique<ModelCluster>(std::move(view));
}

ModelCluster* ModelServer::cluster() { return state_->cluster.get(); }

std::size_t ModelServer::migrate_slot_keys(std::uint16_t slot, ModelServer& target, Nanos now_ns) {
  const std::int64_t now_ms = wall_ms(now_ns);
  const std::int64_t target_ms = target.wall_ms(now_ns);
  std::vector<std::string> moving;
  for (const auto& [key, entry] : state_->keys.entries()) {
    if (key_slot(key) == slot && model_detail::is_live(entry.expire_at_ms, now_ms)) {
      moving.push_back(key);
    }
  }
  for (const std::string& key : moving) {
    model_detail::Entry entry = *state_->keys.find(key, now_ms);
    // RESTORE with the TTL DUMP's caller read: the remaining time, from the target's clock.
    if (entry.expire_at_ms != model_detail::kNoExpiry) {
      entry.expire_at_ms = target_ms + std::max<std::int64_t>(1, entry.expire_at_ms - now_ms);
    }
    state_->keys.erase(key);
    for (ReplicationLink* link : state_->replica_links) link->queue({{"DEL", key}});
    const std::vector<std::vector<std::string>> rebuild =
        model_detail::rebuild_commands(key, entry);
    target.state_->keys.put(key, std::move(entry.value), entry.expire_at_ms);
    for (ReplicationLink* link : target.state_->replica_links) link->queue(rebuild);
  }
  return moving.size();
}

const std::string& ModelServer::first_gap() const { return state_->first_gap; }

std::vector<std::string> ModelServer::keys_at(Nanos now_ns) const {
  return state_->keys.live_keys(wall_ms(now_ns));
}

ReplicationLink::ReplicationLink(ModelServer& primary, ModelServer& replica)
    : primary_(&primary), replica_(&replica) {
  LOCKSIM_ASSERT(&primary != &replica);
  LOCKSIM_ASSERT(replica.state_->primary_link == nullptr);
  primary.state_->replica_links.push_back(this);
  replica.state_->primary_link = this;
  replica.state_->replica = true;
  full_sync();
}

ReplicationLink::~ReplicationLink() { detach(); }

void ReplicationLink::detach() {
  if (primary_ != nullptr) std::erase(primary_->state_->replica_links, this);
  if (replica_ != nullptr && replica_->state_->primary_link == this) {
    replica_->state_->primary_link = nullptr;
  }
  primary_ = nullptr;
  replica_ = nullptr;
  queue_.clear();
}

void ReplicationLink::full_sync() {
  if (!attached()) return;
  queue_.clear();
  // An RDB transfer: every entry with its absolute expiry, expired ones included.
  replica_->state_->keys = primary_->state_->keys;
}

void ReplicationLink::queue(std::vector<std::vector<std::string>> unit) {
  if (attached()) queue_.push_back(std::move(unit));
}

std::size_t ReplicationLink::deliver(std::size_t max_units) {
  std::size_t delivered = 0;
  while (attached() && delivered < max_units && !queue_.empty()) {
    for (const std::vector<std::string>& command : queue_.front()) {
      model_detail::apply_replicated(*replica_->state_, command);
    }
    queue_.pop_front();
    ++delivered;
  }
  return delivered;
}

}  // namespace locksim
