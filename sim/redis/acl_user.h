// acl_user.h: PrefixUser, a Redis ACL user that may only touch keys under one prefix, so that a
// run's clients cannot reach other keys or the server itself, even from a user's Lua script.
//
// On a server it started, locksim runs each scenario run's clients as such a user for the run's
// prefix "locksim:<run-id>:". A command outside what the user may do gets an error reply that is
// recorded like any other Redis error: NOPERM for a command sent directly; inside a script,
// Redis 7.0 answers "ERR The user executing the script can't ..." (see is_acl_denial). Redis 7
// checks the keys of every command a script calls, not only the declared KEYS.
//
// The user may run every command except the @dangerous category (FLUSHALL, FLUSHDB, KEYS, INFO,
// CONFIG, DEBUG, SHUTDOWN, ACL, CLIENT KILL, SORT...) and the server-wide script commands
// (SCRIPT FLUSH, SCRIPT KILL, SCRIPT DEBUG, FUNCTION); on keys, and Pub/Sub channels, under the
// prefix only. That leaves everything a lock client uses: SET, GET, DEL, SETNX, PEXPIRE, EXISTS,
// EVALSHA, SCRIPT LOAD, BLPOP, LPUSH/RPUSH, HSET, HEXISTS, SCAN (cleanup), PING, PUBLISH,
// SUBSCRIBE, WAIT. INFO is not among them: server-level reads use the admin endpoint.
//
//   PrefixUser user = PrefixUser::create(admin, "locksim-" + run_id, "locksim:" + run_id + ":");
//   HiredisConnection client(user.endpoint(), {});  // AUTH locksim-<run-id> <random password>
//   ...                                      // ~PrefixUser: ACL DELUSER
//
// Not thread-safe; the endpoint it hands out may be used by any number of connections.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/redis/connection.h"
#include "sim/redis/endpoint.h"

namespace locksim {

class PrefixUser {
 public:
  // create: ACL SETUSER `name` with a fresh random password (from the operating system) limited
  // to keys and channels starting with `key_prefix` (glob characters in it are escaped), then
  // checks that the user can log in. `admin` must be allowed to run ACL SETUSER (the default user
  // of a private server). A user of that name is replaced. Throws EnvironmentError if the server
  // refuses (Redis before 6, no ACL rights) or is unreachable.
  // `more_prefixes`: further key prefixes the user may use (a lock library that keeps its lock
  // at "mutex:<key>" needs "mutex:" + key_prefix).
  static PrefixUser create(const Endpoint& admin, std::string name, std::string_view key_prefix,
                           const std::vector<std::string>& more_prefixes = {});

  PrefixUser(PrefixUser&&) noexcept;
  PrefixUser& operator=(PrefixUser&&) noexcept;
  PrefixUser(const PrefixUser&) = delete;
  PrefixUser& operator=(const PrefixUser&) = delete;
  ~PrefixUser();  // remove(), errors ignored

  // endpoint: the admin endpoint with this user's name and password (never print it unredacted).
  const Endpoint& endpoint() const { return endpoint_; }
  const std::string& name() const { return endpoint_.username; }

  // remove: ACL DELUSER, which also closes every connection logged in as the user. Idempotent.
  // Returns the failure, if any (an ok() result otherwise).
  RedisResult remove();

 private:
  PrefixUser() = default;

  Endpoint admin_;
  Endpoint endpoint_;
  bool removed_ = true;  // nothing to remove until create() succeeded
};

// acl_rules: the ACL SETUSER rules create() applies for `key_prefix` (after the password rule).
std::vector<std::string> acl_rules(std::string_view key_prefix,
                                   const std::vector<std::string>& more_prefixes = {});

// is_acl_denial: the server refused a command because of the connection's ACL user: a NOPERM
// reply, or the error Redis 7.0 gives a script whose redis.call() was refused.
bool is_acl_denial(const RedisResult& result);

}  // namespace locksim
