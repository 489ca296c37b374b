// Hash commands, after Redis 7.0.15's src/t_hash.c. Fields keep insertion order (a small
// hash's listpack order, which HGETALL, HKEYS and HVALS answer in).
#include <string>
#include <variant>

#include "sim/model/command.h"
#include "sim/model/numbers.h"

namespace locksim::model_detail {
namespace {

// find_hash: the live hash at `key`; `wrong` is set if the key holds another type.
HashValue* find_hash(CommandContext& ctx, std::string_view key, bool& wrong) {
  Entry* entry = ctx.find(key);
  wrong = entry != nullptr && !std::holds_alternative<HashValue>(entry->value);
  return entry == nullptr || wrong ? nullptr : &std::get<HashValue>(entry->value);
}

// find_or_create_hash: hashTypeLookupWriteOrCreate.
HashValue* find_or_create_hash(CommandContext& ctx, std::string_view key) {
  bool wrong = false;
  HashValue* hash = find_hash(ctx, key, wrong);
  if (wrong) return nullptr;
  if (hash == nullptr)
    hash = &std::get<HashValue>(ctx.keys().put(key, HashValue{}, kNoExpiry).value);
  return hash;
}

Reply set_fields(CommandContext& ctx, bool hmset) {
  if (ctx.argv.size() % 2 == 1) return arity_error(hmset ? "hmset" : "hset");
  HashValue* hash = find_or_create_hash(ctx, ctx.argv[1]);
  if (hash == nullptr) return wrong_type();
  std::int64_t created = 0;
  for (std::size_t j = 2; j < ctx.argv.size(); j += 2) {
    if (hash->set(ctx.argv[j], ctx.argv[j + 1])) ++created;
  }
  ctx.propagate_as_sent();
  return hmset ? ok_reply() : integer_reply(created);
}

}  // namespace

Reply cmd_hset(CommandContext& ctx) { return set_fields(ctx, false); }
Reply cmd_hmset(CommandContext& ctx) { return set_fields(ctx, true); }

Reply cmd_hsetnx(CommandContext& ctx) {
  HashValue* hash = find_or_create_hash(ctx, ctx.argv[1]);
  if (hash == nullptr) return wrong_type();
  if (hash->get(ctx.argv[2]) != nullptr) return integer_reply(0);
  hash->set(ctx.argv[2], ctx.argv[3]);
  ctx.propagate_as_sent();
  return integer_reply(1);
}

Reply cmd_hget(CommandContext& ctx) {
  bool wrong = false;
  const HashValue* hash = find_hash(ctx, ctx.argv[1], wrong);
  if (wrong) return wrong_type();
  const std::string* value = hash == nullptr ? nullptr : hash->get(ctx.argv[2]);
  return value == nullptr ? nil_reply() : bulk_reply(*value);
}

Reply cmd_hmget(CommandContext& ctx) {
  bool wrong = false;
  const HashValue* hash = find_hash(ctx, ctx.argv[1], wrong);
  if (wrong) return wrong_type();
  std::vector<Reply> values;
  for (std::size_t j = 2; j < ctx.argv.size(); ++j) {
    const std::string* value = hash == nullptr ? nullptr : hash->get(ctx.argv[j]);
    values.push_back(value == nullptr ? nil_reply() : bulk_reply(*value));
  }
  return array_reply(std::move(values));
}

Reply cmd_hdel(CommandContext& ctx) {
  bool wrong = false;
  HashValue* hash = find_hash(ctx, ctx.argv[1], wrong);
  if (wrong) return wrong_type();
  if (hash == nullptr) return integer_reply(0);
  std::int64_t deleted = 0;
  for (std::size_t j = 2; j < ctx.argv.size(); ++j) {
    if (hash->erase(ctx.argv[j])) {
      ++deleted;
      if (hash->fields.empty()) {
        ctx.keys().erase(ctx.argv[1]);  // an empty hash is no key
        break;
      }
    }
  }
  if (deleted > 0) ctx.propagate_as_sent();
  return integer_reply(deleted);
}

Reply cmd_hexists(CommandContext& ctx) {
  bool wrong = false;
  const HashValue* hash = find_hash(ctx, ctx.argv[1], wrong);
  if (wrong) return wrong_type();
  return integer_reply(hash != nullptr && hash->get(ctx.argv[2]) != nullptr ? 1 : 0);
}

Reply cmd_hgetall(CommandContext& ctx) {
  bool wrong = false;
  const HashValue* hash = find_hash(ctx, ctx.argv[1], wrong);
  if (wrong) return wrong_type();
  std::vector<Reply> elements;
  if (hash != nullptr) {
    for (const auto& [field, value] : hash->fields) {
      elements.push_back(bulk_reply(field));
      elements.push_back(bulk_reply(value));
    }
  }
  return array_reply(std::move(elements));
}

Reply cmd_hlen(CommandContext& ctx) {
  bool wrong = false;
  const HashValue* hash = find_hash(ctx, ctx.argv[1], wrong);
  if (wrong) return wrong_type();
  return integer_reply(hash == nullptr ? 0 : static_cast<std::int64_t>(hash->fields.size()));
}

Reply cmd_hkeys(CommandContext& ctx) {
  bool wrong = false;
  const HashValue* hash = find_hash(ctx, ctx.argv[1], wrong);
  if (wrong) return wrong_type();
  std::vector<Reply> fields;
  if (hash != nullptr) {
    for (const auto& field : hash->fields) fields.push_back(bulk_reply(field.first));
  }
  return array_reply(std::move(fields));
}

Reply cmd_hvals(CommandContext& ctx) {
  bool wrong = false;
  const HashValue* hash = find_hash(ctx, ctx.argv[1], wrong);
  if (wrong) return wrong_type();
  std::vector<Reply> values;
  if (hash != nullptr) {
    for (const auto& field : hash->fields) values.push_back(bulk_reply(field.second));
  }
  return array_reply(std::move(values));
}

Reply cmd_hincrby(CommandContext& ctx) {
  std::int64_t increment = 0;
  if (!parse_integer(ctx.argv[3], increment)) return not_an_integer();
  HashValue* hash = find_or_create_hash(ctx, ctx.argv[1]);
  if (hash == nullptr) return wrong_type();
  std::int64_t value = 0;
  if (const std::string* current = hash->get(ctx.argv[2]); current != nullptr) {
    if (!parse_integer(*current, value)) return error_reply("ERR hash value is not an integer");
  }
  if ((increment < 0 && value < 0 && increment < INT64_MIN - value) ||
      (increment > 0 && value > 0 && increment > INT64_MAX - value)) {
    return overflow_error();
  }
  value += increment;
  hash->set(ctx.argv[2], std::to_string(value));
  ctx.propagate_as_sent();
  return integer_reply(value);
}

Reply cmd_hstrlen(CommandContext& ctx) {
  bool wrong = false;
  const HashValue* hash = find_hash(ctx, ctx.argv[1], wrong);
  if (wrong) return wrong_type();
  const std::string* value = hash == nullptr ? nullptr : hash->get(ctx.argv[2]);
  return integer_reply(value == nullptr ? 0 : static_cast<std::int64_t>(value->size()));
}

}  // namespace locksim::model_detail
