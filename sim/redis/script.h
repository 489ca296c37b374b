// script.h: Script, a named Lua script run with EVALSHA, loaded on demand.
//
// The SHA1 is computed from the source here, as Redis computes it; every call is EVALSHA, and a
// NOSCRIPT reply (a server that never saw it, restarted, ran SCRIPT FLUSH, or a replica promoted)
// is answered by one SCRIPT LOAD and a retry; a second NOSCRIPT (a cluster's failover between the
// two) by an EVAL of the source. So what a call sends depends only on the server's state, never on
// which earlier run in this process loaded it (a simulated run is the same whatever ran before
// it). Thread-safe: many client threads may share one Script, each with its own Connection.
//
//   static const Script kRelease("lua_owner.release", R"lua(
//     if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
//     return 0)lua");
//   RedisResult r = kRelease.run(conn, {key}, {token});
#pragma once

#include <span>
#include <string>
#include <vector>

#include "sim/redis/connection.h"

namespace locksim {

class Script {
 public:
  Script(std::string name, std::string source);

  const std::string& name() const { return name_; }
  const std::string& source() const { return source_; }

  // run: EVALSHA with the given KEYS and ARGV, loading the script when needed. A script error
  // reply is returned as kReplyError with the script's name in the message.
  RedisResult run(Connection& connection, const std::vector<std::string>& keys,
                  const std::vector<std::string>& args) const;
  // run_in_place: the same, with KEYS and ARGV where they already are (no word copied).
  RedisResult run_in_place(Connection& connection, std::span<const std::string_view> keys,
                           std::span<const std::string_view> args) const;

  // load: SCRIPT LOAD now, e.g. to report a syntax error before a run starts. A compile error
  // is a kReplyError whose message names the script.
  RedisResult load(Connection& connection) const;
  // sha: the SHA1 of the source (what EVALSHA names it by).
  const std::string& sha() const { return sha_; }

 private:
  std::string name_;
  std::string source_;
  std::string sha_;
};

}  // namespace locksim
