#include "sim/redis/script.h"

#include <utility>

#include "sim/core/sha1.h"

namespace locksim {

Script::Script(std::string name, std::string source)
    : name_(std::move(name)), source_(std::move(source)), sha_(sha1_hex(source_)) {}

RedisResult Script::load(Connection& connection) const {
  RedisResult loaded = connection.command({"SCRIPT", "LOAD", source_});
  if (loaded.error == RedisErrorKind::kReplyError) {
    loaded.message = "script " + name_ + ": " + loaded.message;  // e.g. a syntax error
    return loaded;
  }
  if (!loaded.ok()) return loaded;
  if (loaded.reply.type != Reply::Type::kString || loaded.reply.str.empty()) {
    return RedisResult{
        RedisErrorKind::kProtocol, "script " + name_ + ": SCRIPT LOAD did not return a SHA1", {}};
  }
  return loaded;
}

RedisResult Script::run(Connection& connection, const std::vector<std::string>& keys,
                        const std::vector<std::string>& args) const {
  std::vector<std::string> argv;
  argv.reserve(3 + keys.size() + args.size());
  argv.emplace_back("EVALSHA");
  argv.push_back(sha_);
  argv.push_back(std::to_string(keys.size()));
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), args.begin(), args.end());

  RedisResult result = connection.command(argv);
  // NOSCRIPT: the server lost its script cache (restart, SCRIPT FLUSH). Load once and retry once;
  // a second NOSCRIPT is reported like any other error.
  if (result.error == RedisErrorKind::kReplyError && result.message.starts_with("NOSCRIPT")) {
    RedisResult loaded = load(connection);
    if (!loaded.ok()) return loaded;
    argv[1] = loaded.reply.str;
    result = connection.command(argv);
  }
  if (result.error == RedisErrorKind::kReplyError) {
    result.message = "script " + name_ + ": " + result.message;
  }
  return result;
}

}  // namespace locksim
