#include "sim/client/resource.h"

#include <charconv>

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

ResourceRead read_resource(Connection& connection, ResourceConfig::Kind kind,
                           const std::string& key, const std::string& record_id) {
  const bool counter =
      kind == ResourceConfig::Kind::kCounter || kind == ResourceConfig::Kind::kFencedCounter;
  ResourceRead read;
  read.result =
      counter ? connection.command({"GET", key}) : connection.command({"HEXISTS", key, record_id});
  if (!read.result.ok()) return read;
  if (!counter) {
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

ResourceWrite write_resource(Connection& connection, ResourceConfig::Kind kind,
                             const std::string& key, const std::string& record_id,
                             std::int64_t value, const std::string& writer, std::int64_t fencing) {
  ResourceWrite write;
  switch (kind) {
    case ResourceConfig::Kind::kFencedCounter:
      write.result = fenced_store_write(connection, key, value, fencing);
      write.refused = write.result.ok() && write.result.reply.is_integer(0);
      if (write.refused) {
        write.refusal = "fencing number " + std::to_string(fencing) +
                        " is lower than one the store has accepted";
      }
      break;
    case ResourceConfig::Kind::kCounter:
      write.result = connection.command({"SET", key, std::to_string(value)});
      break;
    case ResourceConfig::Kind::kFindOrCreate:
    case ResourceConfig::Kind::kNone:
      write.result = connection.command({"HSET", key, record_id, writer});
      break;
  }
  return write;
}

}  // namespace locksim
