#include "sim/redis/acl_user.h"

#include <cstdio>
#include <utility>

#include "sim/core/error.h"
#include "sim/core/random.h"

namespace locksim {
namespace {

// A prefix as a literal in an ACL glob pattern: '*', '?', '[', ']' and '\' are escaped.
std::string glob_literal(std::string_view text) {
  std::string literal;
  literal.reserve(text.size());
  for (char c : text) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') literal += '\\';
    literal += c;
  }
  return literal;
}

// 128 bits from the operating system's random source (never the run's seeded Rng).
std::string random_password() {
  char text[40];
  std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(random_seed()),
                static_cast<unsigned long long>(random_seed()));
  return text;
}

}  // namespace

std::vector<std::string> acl_rules(std::string_view key_prefix,
                                   const std::vector<std::string>& more_prefixes) {
  std::vector<std::string> rules;
  for (std::string_view prefix : more_prefixes) {
    const std::string pattern = glob_literal(prefix) + "*";
    rules.push_back("~" + pattern);
    rules.push_back("&" + pattern);
  }
  const std::string pattern = glob_literal(key_prefix) + "*";
  for (const char* rule : {"+@all", "-@dangerous", "-script|flush", "-script|kill",
                           "-script|debug", "-function"}) {
    rules.emplace_back(rule);
  }
  rules.insert(rules.begin(), {"~" + pattern, "&" + pattern});
  return rules;
}

PrefixUser PrefixUser::create(const Endpoint& admin, std::string name, std::string_view key_prefix,
                              const std::vector<std::string>& more_prefixes) {
  HiredisConnection connection(admin, ConnectionOptions{});
  if (connection.broken()) {
    throw EnvironmentError("cannot connect to Redis at " + admin.redacted() +
                           " to create the ACL user " + name + ": " +
                           connection.last_error().describe());
  }
  PrefixUser user;
  user.admin_ = admin;
  user.endpoint_ = admin;
  user.endpoint_.username = std::move(name);
  user.endpoint_.password = random_password();

  // `reset` first: whatever a user of that name could do before is gone (also its passwords).
  std::vector<std::string> command = {"ACL",   "SETUSER", user.endpoint_.username,
                                      "reset", "on",      ">" + user.endpoint_.password};
  for (std::string& rule : acl_rules(key_prefix, more_prefixes)) {
    command.push_back(std::move(rule));
  }
  const RedisResult created = connection.command(command);
  if (!created.ok()) {
    throw EnvironmentError("cannot create the ACL user " + user.name() + " on " + admin.redacted() +
                           " (Redis 6 or later is needed): " + created.describe());
  }
  user.removed_ = false;  // from here on the destructor deletes it

  HiredisConnection check(user.endpoint_, ConnectionOptions{});
  const RedisResult ping = check.command({"PING"});
  if (!ping.ok()) {
    throw EnvironmentError("the ACL user " + user.name() +
                           " was created but cannot log in: " + ping.describe());
  }
  return user;
}

PrefixUser::PrefixUser(PrefixUser&& other) noexcept
    : admin_(std::move(other.admin_)),
      endpoint_(std::move(other.endpoint_)),
      removed_(std::exchange(other.removed_, true)) {}

PrefixUser& PrefixUser::operator=(PrefixUser&& other) noexcept {
  if (this != &other) {
    remove();
    admin_ = std::move(other.admin_);
    endpoint_ = std::move(other.endpoint_);
    removed_ = std::exchange(other.removed_, true);
  }
  return *this;
}

PrefixUser::~PrefixUser() { remove(); }

RedisResult PrefixUser::remove() {
  if (removed_) return RedisResult{};
  removed_ = true;
  HiredisConnection connection(admin_, ConnectionOptions{});
  return connection.command({"ACL", "DELUSER", endpoint_.username});
}

bool is_acl_denial(const RedisResult& result) {
  if (result.error != RedisErrorKind::kReplyError) return false;
  return result.message.find("NOPERM") != std::string::npos ||
         result.message.find("The user executing the script can't") != std::string::npos;
}

}  // namespace locksim
