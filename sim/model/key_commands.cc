// Keyspace and expiry commands, after Redis 7.0.15's src/db.c and src/expire.c.
#include <string>
#include <variant>

#include "sim/model/command.h"
#include "sim/model/numbers.h"
#include "sim/model/server_state.h"

namespace locksim::model_detail {
namespace {

// c_string: an argument as Redis's strcasecmp sees it: up to its first NUL byte.
std::string_view c_string(std::string_view argument) {
  return argument.substr(0, argument.find('\0'));
}

Reply delete_keys(CommandContext& ctx) {
  std::int64_t deleted = 0;
  for (std::size_t j = 1; j < ctx.argv.size(); ++j) {
    if (ctx.find(ctx.argv[j]) != nullptr && ctx.keys().erase(ctx.argv[j])) ++deleted;
  }
  if (deleted > 0) ctx.propagate_as_sent();
  return integer_reply(deleted);
}

enum ExpireFlag : unsigned { kExpireNx = 1, kExpireXx = 2, kExpireGt = 4, kExpireLt = 8 };

// expire_generic: expireGenericCommand. `basetime_ms` is now for EXPIRE/PEXPIRE, 0 for the
// *AT forms; `seconds` for EXPIRE/EXPIREAT.
Reply expire_generic(CommandContext& ctx, std::int64_t basetime_ms, bool seconds,
                     std::string_view command) {
  unsigned flags = 0;
  for (std::size_t j = 3; j < ctx.argv.size(); ++j) {
    const std::string_view option = c_string(ctx.argv[j]);
    if (equals_ignoring_case(option, "nx")) {
      flags |= kExpireNx;
    } else if (equals_ignoring_case(option, "xx")) {
      flags |= kExpireXx;
    } else if (equals_ignoring_case(option, "gt")) {
      flags |= kExpireGt;
    } else if (equals_ignoring_case(option, "lt")) {
      flags |= kExpireLt;
    } else {
      return error_reply("ERR Unsupported option " + std::string(option));
    }
  }
  if ((flags & kExpireNx) != 0 && (flags & (kExpireXx | kExpireGt | kExpireLt)) != 0) {
    return error_reply("ERR NX and XX, GT or LT options at the same time are not compatible");
  }
  if ((flags & kExpireGt) != 0 && (flags & kExpireLt) != 0) {
    return error_reply("ERR GT and LT options at the same time are not compatible");
  }
  std::int64_t when = 0;
  if (!parse_integer(ctx.argv[2], when)) return not_an_integer();
  if (seconds) {
    if (when > INT64_MAX / 1000 || when < INT64_MIN / 1000) return invalid_expire_time(command);
    when *= 1000;
  }
  if (when > INT64_MAX - basetime_ms) return invalid_expire_time(command);
  when += basetime_ms;

  const std::string_view key = ctx.argv[1];
  Entry* entry = ctx.find(key);
  if (entry == nullptr) return integer_reply(0);
  if (flags != 0) {
    const std::int64_t current = entry->expire_at_ms;
    if ((flags & kExpireNx) != 0 && current != kNoExpiry) return integer_reply(0);
    if ((flags & kExpireXx) != 0 && current == kNoExpiry) return integer_reply(0);
    // GT: no TTL counts as infinite, so GT always fails on it.
    if ((flags & kExpireGt) != 0 && (when <= current || current == kNoExpiry)) {
      return integer_reply(0);
    }
    if ((flags & kExpireLt) != 0 && current != kNoExpiry && when >= current) {
      return integer_reply(0);
    }
  }
  if (ctx.already_expired(when)) {
    ctx.keys().erase(key);
    ctx.propagate({"DEL", key});
    return integer_reply(1);
  }
  entry->expire_at_ms = when;
  ctx.propagate({"PEXPIREAT", key, std::to_string(when)});
  return integer_reply(1);
}

// ttl_generic: ttlGenericCommand (TTL, PTTL, EXPIRETIME, PEXPIRETIME).
Reply ttl_generic(CommandContext& ctx, bool milliseconds, bool absolute) {
  const Entry* entry = ctx.find(ctx.argv[1]);
  if (entry == nullptr) return integer_reply(-2);
  if (entry->expire_at_ms == kNoExpiry) return integer_reply(-1);
  std::int64_t ttl = absolute ? entry->expire_at_ms : entry->expire_at_ms - ctx.now_ms;
  if (ttl < 0) ttl = 0;
  return integer_reply(milliseconds ? ttl : (ttl + 500) / 1000);
}

// glob_match: stringmatchlen (util.c), case-sensitive. Redis reads the pattern as a C string
// past its length in places; `at` gives '\0' there, as the NUL terminator would.
bool glob_match(std::string_view pattern, std::string_view string, bool& skip_longer) {
  std::size_t p = 0;
  std::size_t s = 0;
  const auto at = [&pattern](std::size_t index) {
    return index < pattern.size() ? pattern[index] : '\0';
  };
  while (p < pattern.size() && s < string.size()) {
    switch (pattern[p]) {
      case '*':
        while (p + 1 < pattern.size() && pattern[p + 1] == '*') ++p;
        if (p + 1 == pattern.size()) return true;
        while (s < string.size()) {
          if (glob_match(pattern.substr(p + 1), string.substr(s), skip_longer)) return true;
          if (skip_longer) return false;
          ++s;
        }
        skip_longer = true;
        return false;
      case '?':
        ++s;
        break;
      case '[': {
        ++p;
        const bool negate = at(p) == '^';
        if (negate) ++p;
        bool match = false;
        while (true) {
          if (at(p) == '\\' && pattern.size() - p >= 2) {
            ++p;
            if (pattern[p] == string[s]) match = true;
          } else if (at(p) == ']') {
            break;
          } else if (p >= pattern.size()) {
            --p;
            break;
          } else if (pattern.size() - p >= 3 && pattern[p + 1] == '-') {
            // Redis compares plain chars, signed on the machines it runs on: bytes from 0x80
            // sort below 0, so "[\x80-\x01]" takes them and "[a-\xff]" takes 0x80..0x7f.
            auto start = static_cast<signed char>(pattern[p]);
            auto end = static_cast<signed char>(pattern[p + 2]);
            const auto c = static_cast<signed char>(string[s]);
            if (start > end) std::swap(start, end);
            p += 2;
            if (c >= start && c <= end) match = true;
          } else if (pattern[p] == string[s]) {
            match = true;
          }
          ++p;
        }
        if (negate) match = !match;
        if (!match) return false;
        ++s;
        break;
      }
      case '\\':
        if (pattern.size() - p >= 2) ++p;
        [[fallthrough]];
      default:
        if (pattern[p] != string[s]) return false;
        ++s;
        break;
    }
    ++p;
    if (s == string.size()) {
      while (at(p) == '*') ++p;
      break;
    }
  }
  return p >= pattern.size() && s == string.size();
}

}  // namespace

Reply cmd_del(CommandContext& ctx) { return delete_keys(ctx); }
Reply cmd_unlink(CommandContext& ctx) { return delete_keys(ctx); }

Reply cmd_exists(CommandContext& ctx) {
  std::int64_t count = 0;
  for (std::size_t j = 1; j < ctx.argv.size(); ++j) {
    if (ctx.find(ctx.argv[j]) != nullptr) ++count;
  }
  return integer_reply(count);
}

Reply cmd_touch(CommandContext& ctx) { return cmd_exists(ctx); }

Reply cmd_expire(CommandContext& ctx) { return expire_generic(ctx, ctx.now_ms, true, "expire"); }
Reply cmd_pexpire(CommandContext& ctx) { return expire_generic(ctx, ctx.now_ms, false, "pexpire"); }
Reply cmd_expireat(CommandContext& ctx) { return expire_generic(ctx, 0, true, "expireat"); }
Reply cmd_pexpireat(CommandContext& ctx) { return expire_generic(ctx, 0, false, "pexpireat"); }

Reply cmd_ttl(CommandContext& ctx) { return ttl_generic(ctx, false, false); }
Reply cmd_pttl(CommandContext& ctx) { return ttl_generic(ctx, true, false); }
Reply cmd_expiretime(CommandContext& ctx) { return ttl_generic(ctx, false, true); }
Reply cmd_pexpiretime(CommandContext& ctx) { return ttl_generic(ctx, true, true); }

Reply cmd_persist(CommandContext& ctx) {
  Entry* entry = ctx.find(ctx.argv[1]);
  if (entry == nullptr || entry->expire_at_ms == kNoExpiry) return integer_reply(0);
  entry->expire_at_ms = kNoExpiry;
  ctx.propagate_as_sent();
  return integer_reply(1);
}

Reply cmd_type(CommandContext& ctx) {
  const Entry* entry = ctx.find(ctx.argv[1]);
  return status_reply(entry == nullptr ? "none" : std::string(type_name(entry->value)));
}

Reply cmd_keys(CommandContext& ctx) {
  const std::string_view pattern = ctx.argv[1];
  const bool all = pattern == "*";
  std::vector<Reply> keys;
  // Live keys only, none erased (keysCommand checks keyIsExpired without deleting).
  const std::int64_t now_ms = ctx.from_primary ? INT64_MIN : ctx.now_ms;
  for (const std::string& key : ctx.keys().live_keys(now_ms)) {
    bool skip_longer = false;
    if (all || glob_match(pattern, key, skip_longer)) keys.push_back(bulk_reply(key));
  }
  return array_reply(std::move(keys));
}

Reply cmd_dbsize(CommandContext& ctx) {
  return integer_reply(static_cast<std::int64_t>(ctx.keys().live_keys(ctx.now_ms).size()));
}

}  // namespace locksim::model_detail
