// Server, pub/sub and replication commands: PING, ECHO, TIME, FLUSHALL, FLUSHDB, SELECT, WAIT,
// PUBLISH, SUBSCRIBE, UNSUBSCRIBE (src/server.c, src/db.c, src/replication.c, src/pubsub.c).
#include <algorithm>
#include <string>

#include "sim/model/command.h"
#include "sim/model/numbers.h"
#include "sim/model/server_state.h"

namespace locksim::model_detail {
namespace {

Reply flush(CommandContext& ctx) {
  if (ctx.argv.size() > 2 || (ctx.argv.size() == 2 && !equals_ignoring_case(ctx.argv[1], "sync") &&
                              !equals_ignoring_case(ctx.argv[1], "async"))) {
    return syntax_error();
  }
  ctx.keys().clear();
  ctx.propagate_as_sent();
  return ok_reply();
}

Reply confirmation(std::string_view kind, const std::string* channel, std::size_t count) {
  return array_reply({bulk_reply(kind), channel == nullptr ? nil_reply() : bulk_reply(*channel),
                      integer_reply(static_cast<std::int64_t>(count))});
}

// unsubscribe_one: removes `channel` from the client's subscriptions; true if it was there.
bool unsubscribe_one(CommandContext& ctx, const std::string& channel) {
  auto& channels = ctx.client.channels;
  const auto it = std::find(channels.begin(), channels.end(), channel);
  if (it == channels.end()) return false;
  channels.erase(it);
  const auto subscribers = ctx.server.subscribers.find(channel);
  if (subscribers != ctx.server.subscribers.end()) {
    std::erase(subscribers->second, ctx.client.id);
    if (subscribers->second.empty()) ctx.server.subscribers.erase(subscribers);
  }
  return true;
}

}  // namespace

Reply cmd_ping(CommandContext& ctx) {
  if (ctx.argv.size() > 2) return arity_error("ping");
  if (!ctx.client.channels.empty()) {
    return array_reply(
        {bulk_reply("pong"), bulk_reply(ctx.argv.size() == 1 ? std::string_view() : ctx.argv[1])});
  }
  return ctx.argv.size() == 1 ? status_reply("PONG") : bulk_reply(ctx.argv[1]);
}

Reply cmd_echo(CommandContext& ctx) { return bulk_reply(ctx.argv[1]); }

Reply cmd_time(CommandContext& ctx) {
  const std::int64_t seconds = ctx.now_us / 1'000'000;
  const std::int64_t micros = ctx.now_us % 1'000'000;
  return array_reply({bulk_reply(std::to_string(seconds)), bulk_reply(std::to_string(micros))});
}

Reply cmd_flushall(CommandContext& ctx) { return flush(ctx); }
Reply cmd_flushdb(CommandContext& ctx) { return flush(ctx); }

Reply cmd_select(CommandContext& ctx) {
  std::int64_t index = 0;
  if (!parse_integer(ctx.argv[1], index)) return not_an_integer();
  if (index < INT32_MIN || index > INT32_MAX) {
    return error_reply("ERR value is out of range, value must between -2147483648 and 2147483647");
  }
  if (index < 0 || index > 15) return error_reply("ERR DB index is out of range");
  if (index != 0) return error_reply("ERR locksim model: only database 0 is modelled");
  return ok_reply();
}

Reply cmd_wait(CommandContext& ctx) {
  if (ctx.server.replica) {
    return error_reply(
        "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 "
        "if a replica is configured to be writable (which is not the default) writes to "
        "replicas are just local and are not propagated.");
  }
  std::int64_t replicas = 0;
  if (!parse_integer(ctx.argv[1], replicas)) return not_an_integer();
  std::int64_t timeout_ms = 0;
  if (!parse_integer(ctx.argv[2], timeout_ms)) {
    return error_reply("ERR timeout is not an integer or out of range");
  }
  if (timeout_ms < 0) return error_reply("ERR timeout is negative");
  // The model does not block: the replicas caught up right now, as if the timeout had passed.
  std::int64_t acknowledged = 0;
  for (const ReplicationLink* link : ctx.server.replica_links) {
    if (link->pending() == 0) ++acknowledged;
  }
  return integer_reply(acknowledged);
}

Reply cmd_publish(CommandContext& ctx) {
  const std::string channel(ctx.argv[1]);
  std::int64_t receivers = 0;
  const auto subscribers = ctx.server.subscribers.find(channel);
  if (subscribers != ctx.server.subscribers.end()) {
    for (const ModelClientId id : subscribers->second) {
      ClientState* client = ctx.server.clients.find(id);
      if (client == nullptr) continue;
      client->pushes.push_back(
          array_reply({bulk_reply("message"), bulk_reply(channel), bulk_reply(ctx.argv[2])}));
      ++receivers;
    }
  }
  ctx.propagate_as_sent();  // a replica's subscribers hear it too
  return integer_reply(receivers);
}

Reply cmd_subscribe(CommandContext& ctx) {
  if (ctx.client.id == 0) {
    return error_reply("ERR locksim model: SUBSCRIBE needs a client of its own (connect())");
  }
  for (std::size_t j = 1; j < ctx.argv.size(); ++j) {
    const std::string channel(ctx.argv[j]);
    auto& channels = ctx.client.channels;
    if (std::find(channels.begin(), channels.end(), channel) == channels.end()) {
      channels.push_back(channel);
      ctx.server.subscribers[channel].push_back(ctx.client.id);
    }
    ctx.client.pushes.push_back(confirmation("subscribe", &channel, channels.size()));
  }
  ctx.client.reply_queued = true;
  return nil_reply();
}

Reply cmd_unsubscribe(CommandContext& ctx) {
  if (ctx.argv.size() == 1) {
    if (ctx.client.channels.empty()) {
      ctx.client.pushes.push_back(confirmation("unsubscribe", nullptr, 0));
    }
    while (!ctx.client.channels.empty()) {
      const std::string channel = ctx.client.channels.front();
      unsubscribe_one(ctx, channel);
      ctx.client.pushes.push_back(
          confirmation("unsubscribe", &channel, ctx.client.channels.size()));
    }
  } else {
    for (std::size_t j = 1; j < ctx.argv.size(); ++j) {
      const std::string channel(ctx.argv[j]);
      unsubscribe_one(ctx, channel);
      ctx.client.pushes.push_back(
          confirmation("unsubscribe", &channel, ctx.client.channels.size()));
    }
  }
  ctx.client.reply_queued = true;
  return nil_reply();
}

}  // namespace locksim::model_detail
