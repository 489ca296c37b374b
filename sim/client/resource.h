// resource.h (sim/client): the commands of a scenario's protected resource, written once
// for every host that runs a client's calls itself (a thread of locksim, `locksim worker`, the
// event loop, which sends the one-command forms below): a
// read (the stock count, or whether a record exists) and a write (a sale, a record created, a
// sale at the fenced store), with what came of them as data. The host records the events.
//
//   ResourceRead r = read_resource(connection, kind, key, record_id);
//   if (r.result.ok()) { ... r.value ... }
//   ResourceWrite w = write_resource(connection, kind, key, record_id, r.value - 1, name, fencing);
//   if (w.refused) { ... w.refusal ... }
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/lock/variant.h"
#include "sim/redis/connection.h"
#include "sim/scenario/scenario.h"

namespace locksim {

// resource_kind_word: the scenario's (and the worker protocol's) word for `kind`
// ("counter", "fenced_counter", "find_or_create"); resource_kind_of reads it back.
std::string_view resource_kind_word(ResourceConfig::Kind kind);
std::optional<ResourceConfig::Kind> resource_kind_of(std::string_view word);

// ResourceRead: a counter's value, or 1/0 for whether the record exists; or the error (a counter
// that does not hold an integer is kUnexpectedReply).
struct ResourceRead {
  RedisResult result;
  std::int64_t value = 0;
};
ResourceRead read_resource(Connection& connection, ResourceConfig::Kind kind,
                           const std::string& key, const std::string& record_id);

// ResourceWrite: the write's reply, and for a fenced counter whether the store refused it (a
// fencing number lower than one it has accepted) and why, in words.
struct ResourceWrite {
  RedisResult result;
  bool refused = false;
  std::string refusal;
};
// write_resource: a counter is set to `value`; a fenced counter is written presenting `fencing`
// (-1: none); a record `record_id` is created with `writer` as its value.
ResourceWrite write_resource(Connection& connection, ResourceConfig::Kind kind,
                             const std::string& key, const std::string& record_id,
                             std::int64_t value, const std::string& writer, std::int64_t fencing);

// The same as one command each and what its reply says, for a host that sends its own commands
// (the event loop): read_resource is resource_read_reply(run_one(resource_read_command(...))).
OneCommand resource_read_command(ResourceConfig::Kind kind, const std::string& key,
                                 const std::string& record_id);
ResourceRead resource_read_reply(ResourceConfig::Kind kind, RedisResult result);
OneCommand resource_write_command(ResourceConfig::Kind kind, const std::string& key,
                                  const std::string& record_id, std::int64_t value,
                                  const std::string& writer, std::int64_t fencing);
ResourceWrite resource_write_reply(ResourceConfig::Kind kind, RedisResult result,
                                   std::int64_t fencing);

}  // namespace locksim
