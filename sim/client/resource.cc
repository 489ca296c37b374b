#include "sim/client/resource.h"

#include <charconv>
#include <utility>

#include "sim/client/fenced_store.h"

namespace locksim {

std::string_view resource_kind_word(ResourceConfig::Kind kind) {
  switch (kind) {
    case ResourceConfig::Kind::kCounter:
      return "counter";
    case ResourceConfig::Kind::kFencedCounter:
      return "fenced_counter";
    case ResourceConfig::Kind::kFindOrCreate:
    case ResourceConfig::Kind::kNone:
      break;
  }
  return "find_or_create";
}

std::optional<ResourceConfig::Kind> resource_kind_of(std::string_view word) {
  for (const auto kind : {ResourceConfig::Kind::kCounter, ResourceConfig::Kind::kFencedCounter,
                          ResourceConfig::Kind::kFindOrCreate}) {
    if (resource_kind_word(kind) == word) return kind;
  }
  return std::nullopt;
}

namespace {

bool counts(ResourceConfig::Kind kind) {
  return kind == ResourceConfig::Kind::kCounter || kind == ResourceConfig::Kind::kFencedCounter;
}

}  // namespace

OneCommand resource_read_command(ResourceConfig::Kind kind, const std::string& key,
                                 const std::string& record_id) {
  return OneCommand{.argv = counts(kind) ? OneCommand::words({"GET", key})
                                         : OneCommand::words({"HEXISTS", key, record_id})};
}

ResourceRead resource_read_reply(ResourceConfig::Kind kind, RedisResult result) {
  ResourceRead read;
  read.result = std::move(result);
  if (!read.result.ok()) return read;
  if (!counts(kind)) {
    read.value = read.result.reply.integer;
  } else if (!read.result.reply.is_nil()) {
    const std::string& text = read.result.reply.str;
    const auto parsed = std::from_chars(text.data(), text.data() + text.size(), read.value);
    if (parsed.ec != std::errc() || parsed.ptr != text.data() + text.size()) {
      read.result.error = RedisErrorKind::kUnexpectedReply;
      read.result.message = "the counter holds \"" + text.substr(0, 40) + "\", not an integer";
      read.value = 0;
    }
  }
  return read;
}

ResourceRead read_resource(Connection& connection, ResourceConfig::Kind kind,
                           const std::string& key, const std::string& record_id) {
  return resource_read_reply(kind, run_one(connection, resource_read_command(kind, key, record_id)));
}

OneCommand resource_write_command(ResourceConfig::Kind kind, const std::string& key,
                                  const std::string& record_id, std::int64_t value,
                                  const std::string& writer, std::int64_t fencing) {
  switch (kind) {
    case ResourceConfig::Kind::kFencedCounter:
      return fenced_store_write_command(key, value, fencing);
    case ResourceConfig::Kind::kCounter: {
      const std::string word = std::to_string(value);
      return OneCommand{.argv = OneCommand::words({"SET", key, word})};
    }
    case ResourceConfig::Kind::kFindOrCreate:
    case ResourceConfig::Kind::kNone:
      break;
  }
  return OneCommand{.argv = OneCommand::words({"HSET", key, record_id, writer})};
}

ResourceWrite resource_write_reply(ResourceConfig::Kind kind, RedisResult result,
                                   std::int64_t fencing) {
  ResourceWrite write;
  if (kind != ResourceConfig::Kind::kFencedCounter) {
    write.result = std::move(result);
    return write;
  }
  write.result = fenced_store_write_reply(std::move(result));
  write.refused = write.result.ok() && write.result.reply.is_integer(0);
  if (write.refused) {
    write.refusal = "fencing number " + std::to_string(fencing) +
                    " is lower than one the store has accepted";
  }
  return write;
}

ResourceWrite write_resource(Connection& connection, ResourceConfig::Kind kind,
                             const std::string& key, const std::string& record_id,
                             std::int64_t value, const std::string& writer, std::int64_t fencing) {
  return resource_write_reply(
      kind,
      run_one(connection, resource_write_command(kind, key, record_id, value, writer, fencing)),
      fencing);
}

}  // namespace locksim
