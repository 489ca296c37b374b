// String commands, after Redis 7.0.15's src/t_string.c (setGenericCommand,
// parseExtendedStringArgumentsOrReply, getExpireMillisecondsOrReply, incrDecrCommand...).
#include <string>
#include <variant>

#include "sim/model/command.h"
#include "sim/model/numbers.h"

namespace locksim::model_detail {
namespace {

enum SetFlag : unsigned {
  kNx = 1u << 0,
  kXx = 1u << 1,
  kEx = 1u << 2,
  kPx = 1u << 3,
  kKeepTtl = 1u << 4,
  kGet = 1u << 5,
  kExAt = 1u << 6,
  kPxAt = 1u << 7,
  kPersist = 1u << 8,
};
constexpr unsigned kAnyExpire = kEx | kPx | kExAt | kPxAt;

// parse_options: parseExtendedStringArgumentsOrReply for SET (is_set) or GETEX. Sets `expire`
// to the argument after EX/PX/EXAT/PXAT. False: a syntax error.
bool parse_options(const CommandContext& ctx, bool is_set, unsigned& flags,
                   std::string_view& expire) {
  const std::size_t argc = ctx.argv.size();
  for (std::size_t j = is_set ? 3 : 2; j < argc; ++j) {
    // Redis reads options as C strings: an option ends at its first NUL byte.
    const std::string_view option = ctx.argv[j].substr(0, ctx.argv[j].find('\0'));
    const bool has_next = j + 1 < argc;
    if (equals_ignoring_case(option, "nx") && !(flags & kXx) && is_set) {
      flags |= kNx;
    } else if (equals_ignoring_case(option, "xx") && !(flags & kNx) && is_set) {
      flags |= kXx;
    } else if (equals_ignoring_case(option, "get") && is_set) {
      flags |= kGet;
    } else if (equals_ignoring_case(option, "keepttl") && !(flags & kPersist) &&
               !(flags & kAnyExpire) && is_set) {
      flags |= kKeepTtl;
    } else if (equals_ignoring_case(option, "persist") && !is_set && !(flags & kAnyExpire) &&
               !(flags & kKeepTtl)) {
      flags |= kPersist;
    } else if (equals_ignoring_case(option, "ex") && !(flags & kKeepTtl) && !(flags & kPersist) &&
               !(flags & (kExAt | kPx | kPxAt)) && has_next) {
      flags |= kEx;
      expire = ctx.argv[++j];
    } else if (equals_ignoring_case(option, "px") && !(flags & kKeepTtl) && !(flags & kPersist) &&
               !(flags & (kEx | kExAt | kPxAt)) && has_next) {
      flags |= kPx;
      expire = ctx.argv[++j];
    } else if (equals_ignoring_case(option, "exat") && !(flags & kKeepTtl) && !(flags & kPersist) &&
               !(flags & (kEx | kPx | kPxAt)) && has_next) {
      flags |= kExAt;
      expire = ctx.argv[++j];
    } else if (equals_ignoring_case(option, "pxat") && !(flags & kKeepTtl) && !(flags & kPersist) &&
               !(flags & (kEx | kExAt | kPx)) && has_next) {
      flags |= kPxAt;
      expire = ctx.argv[++j];
    } else {
      return false;
    }
  }
  return true;
}

// expire_at_ms: getExpireMillisecondsOrReply: the absolute unix ms of an EX/PX/EXAT/PXAT
// argument, or an error reply ("value is not an integer", "invalid expire time in 'set'").
bool expire_at_ms(const CommandContext& ctx, std::string_view text, unsigned flags,
                  std::string_view command, std::int64_t& at_ms, Reply& error) {
  std::int64_t value = 0;
  if (!parse_integer(text, value)) {
    error = not_an_integer();
    return false;
  }
  const bool seconds = (flags & (kEx | kExAt)) != 0;
  if (value <= 0 || (seconds && value > INT64_MAX / 1000)) {
    error = invalid_expire_time(command);
    return false;
  }
  if (seconds) value *= 1000;
  if ((flags & (kPx | kEx)) != 0 && __builtin_add_overflow(value, ctx.now_ms, &value)) {
    error = invalid_expire_time(command);  // Redis sees the sum wrap to a negative
    return false;
  }
  if (value <= 0) {
    error = invalid_expire_time(command);
    return false;
  }
  at_ms = value;
  return true;
}

bool is_string(const Entry* entry) {
  return entry != nullptr && std::holds_alternative<StringValue>(entry->value);
}

// set_generic: setGenericCommand. `ok` and `aborted` make the replies when it sets and when NX
// or XX stops it (SETNX answers 1 and 0): only the one sent is built.
Reply set_generic(CommandContext& ctx, unsigned flags, std::string_view key, std::string_view value,
                  std::string_view expire, std::string_view command, Reply (*ok)(),
                  Reply (*aborted)()) {
  std::int64_t at_ms = kNoExpiry;
  if ((flags & kAnyExpire) != 0) {
    Reply error;
    if (!expire_at_ms(ctx, expire, flags, command, at_ms, error)) return error;
  }
  Reply old_value;
  if ((flags & kGet) != 0) {
    const Entry* current = ctx.find(key);
    if (current != nullptr && !is_string(current)) return wrong_type();
    if (current != nullptr) old_value = bulk_reply(std::get<StringValue>(current->value));
  }
  Entry* found = ctx.find(key);
  if (((flags & kNx) != 0 && found != nullptr) || ((flags & kXx) != 0 && found == nullptr)) {
    if ((flags & kGet) != 0) return old_value;  // each moved, not copied (a conditional copies)
    return aborted();
  }
  const std::int64_t kept =
      (flags & kKeepTtl) != 0 && found != nullptr ? found->expire_at_ms : kNoExpiry;
  ctx.keys().put(key, StringValue(value), (flags & kAnyExpire) != 0 ? at_ms : kept);
  if ((flags & kAnyExpire) != 0) {
    if (ctx.effects != nullptr) ctx.propagate({"SET", key, value, "PXAT", std::to_string(at_ms)});
  } else if ((flags & kGet) != 0) {
    std::vector<std::string> command_without_get;
    for (std::size_t j = 0; j < ctx.argv.size(); ++j) {
      if (j >= 3 && equals_ignoring_case(ctx.argv[j].substr(0, ctx.argv[j].find('\0')), "get")) {
        continue;
      }
      command_without_get.emplace_back(ctx.argv[j]);
    }
    ctx.propagate(std::move(command_without_get));
  } else {
    ctx.propagate_as_sent();
  }
  if ((flags & kGet) != 0) return old_value;
  return ok();
}

// incr_decr: incrDecrCommand: the value must be an integer string; the TTL is kept.
Reply incr_decr(CommandContext& ctx, std::int64_t increment) {
  const std::string_view key = ctx.argv[1];
  Entry* entry = ctx.find(key);
  if (entry != nullptr && !is_string(entry)) return wrong_type();
  std::int64_t value = 0;
  if (entry != nullptr && !parse_integer(std::get<StringValue>(entry->value), value)) {
    return not_an_integer();
  }
  if ((increment < 0 && value < 0 && increment < INT64_MIN - value) ||
      (increment > 0 && value > 0 && increment > INT64_MAX - value)) {
    return overflow_error();
  }
  value += increment;
  if (entry != nullptr) {
    entry->value = std::to_string(value);
  } else {
    ctx.keys().put(key, std::to_string(value), kNoExpiry);
  }
  ctx.propagate_as_sent();
  return integer_reply(value);
}

}  // namespace

Reply cmd_get(CommandContext& ctx) {
  const Entry* entry = ctx.find(ctx.argv[1]);
  if (entry == nullptr) return nil_reply();
  if (!is_string(entry)) return wrong_type();
  return bulk_reply(std::get<StringValue>(entry->value));
}

Reply cmd_set(CommandContext& ctx) {
  unsigned flags = 0;
  std::string_view expire;
  if (!parse_options(ctx, true, flags, expire)) return syntax_error();
  return set_generic(ctx, flags, ctx.argv[1], ctx.argv[2], expire, "set", ok_reply, nil_reply);
}

Reply cmd_setnx(CommandContext& ctx) {
  return set_generic(
      ctx, kNx, ctx.argv[1], ctx.argv[2], {}, "setnx", [] { return integer_reply(1); },
      [] { return integer_reply(0); });
}

Reply cmd_setex(CommandContext& ctx) {
  return set_generic(ctx, kEx, ctx.argv[1], ctx.argv[3], ctx.argv[2], "setex", ok_reply, nil_reply);
}

Reply cmd_psetex(CommandContext& ctx) {
  return set_generic(ctx, kPx, ctx.argv[1], ctx.argv[3], ctx.argv[2], "psetex", ok_reply,
                     nil_reply);
}

Reply cmd_getex(CommandContext& ctx) {
  unsigned flags = 0;
  std::string_view expire;
  if (!parse_options(ctx, false, flags, expire)) return syntax_error();
  const std::string_view key = ctx.argv[1];
  Entry* entry = ctx.find(key);
  if (entry == nullptr) return nil_reply();
  if (!is_string(entry)) return wrong_type();
  std::int64_t at_ms = kNoExpiry;
  if ((flags & kAnyExpire) != 0) {
    Reply error;
    if (!expire_at_ms(ctx, expire, flags, "getex", at_ms, error)) return error;
  }
  Reply reply = bulk_reply(std::get<StringValue>(entry->value));
  if ((flags & (kPxAt | kExAt)) != 0 && ctx.already_expired(at_ms)) {
    ctx.keys().erase(key);
    ctx.propagate({"DEL", key});
  } else if ((flags & kAnyExpire) != 0) {
    entry->expire_at_ms = at_ms;
    ctx.propagate({"PEXPIREAT", key, std::to_string(at_ms)});
  } else if ((flags & kPersist) != 0 && entry->expire_at_ms != kNoExpiry) {
    entry->expire_at_ms = kNoExpiry;
    ctx.propagate({"PERSIST", key});
  }
  return reply;
}

Reply cmd_getdel(CommandContext& ctx) {
  const std::string_view key = ctx.argv[1];
  const Entry* entry = ctx.find(key);
  if (entry == nullptr) return nil_reply();
  if (!is_string(entry)) return wrong_type();
  Reply reply = bulk_reply(std::get<StringValue>(entry->value));
  ctx.keys().erase(key);
  ctx.propagate({"DEL", key});
  return reply;
}

Reply cmd_getset(CommandContext& ctx) {
  const std::string_view key = ctx.argv[1];
  const Entry* entry = ctx.find(key);
  if (entry != nullptr && !is_string(entry)) return wrong_type();
  Reply reply = entry == nullptr ? nil_reply() : bulk_reply(std::get<StringValue>(entry->value));
  ctx.keys().put(key, StringValue(ctx.argv[2]), kNoExpiry);
  ctx.propagate({"SET", key, ctx.argv[2]});
  return reply;
}

Reply cmd_mget(CommandContext& ctx) {
  std::vector<Reply> values;
  for (std::size_t j = 1; j < ctx.argv.size(); ++j) {
    const Entry* entry = ctx.find(ctx.argv[j]);
    values.push_back(is_string(entry) ? bulk_reply(std::get<StringValue>(entry->value))
                                      : nil_reply());
  }
  return array_reply(std::move(values));
}

Reply cmd_mset(CommandContext& ctx) {
  if (ctx.argv.size() % 2 == 0) return arity_error("mset");
  for (std::size_t j = 1; j < ctx.argv.size(); j += 2) {
    ctx.keys().put(ctx.argv[j], StringValue(ctx.argv[j + 1]), kNoExpiry);
  }
  ctx.propagate_as_sent();
  return ok_reply();
}

Reply cmd_msetnx(CommandContext& ctx) {
  if (ctx.argv.size() % 2 == 0) return arity_error("msetnx");
  for (std::size_t j = 1; j < ctx.argv.size(); j += 2) {
    if (ctx.find(ctx.argv[j]) != nullptr) return integer_reply(0);
  }
  for (std::size_t j = 1; j < ctx.argv.size(); j += 2) {
    ctx.keys().put(ctx.argv[j], StringValue(ctx.argv[j + 1]), kNoExpiry);
  }
  ctx.propagate_as_sent();
  return integer_reply(1);
}

Reply cmd_append(CommandContext& ctx) {
  const std::string_view key = ctx.argv[1];
  Entry* entry = ctx.find(key);
  std::size_t length = 0;
  if (entry == nullptr) {
    ctx.keys().put(key, StringValue(ctx.argv[2]), kNoExpiry);
    length = ctx.argv[2].size();
  } else {
    if (!is_string(entry)) return wrong_type();
    auto& value = std::get<StringValue>(entry->value);
    value.append(ctx.argv[2]);
    length = value.size();
  }
  ctx.propagate_as_sent();
  return integer_reply(static_cast<std::int64_t>(length));
}

Reply cmd_strlen(CommandContext& ctx) {
  const Entry* entry = ctx.find(ctx.argv[1]);
  if (entry == nullptr) return integer_reply(0);
  if (!is_string(entry)) return wrong_type();
  return integer_reply(static_cast<std::int64_t>(std::get<StringValue>(entry->value).size()));
}

Reply cmd_incr(CommandContext& ctx) { return incr_decr(ctx, 1); }
Reply cmd_decr(CommandContext& ctx) { return incr_decr(ctx, -1); }

Reply cmd_incrby(CommandContext& ctx) {
  std::int64_t increment = 0;
  if (!parse_integer(ctx.argv[2], increment)) return not_an_integer();
  return incr_decr(ctx, increment);
}

Reply cmd_decrby(CommandContext& ctx) {
  std::int64_t decrement = 0;
  if (!parse_integer(ctx.argv[2], decrement)) return not_an_integer();
  if (decrement == INT64_MIN) return error_reply("ERR decrement would overflow");
  return incr_decr(ctx, -decrement);
}

}  // namespace locksim::model_detail
