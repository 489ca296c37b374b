#include "sim/redis/script.h"

#include <algorithm>
#include <array>
#include <string_view>
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
  const std::vector<std::string_view> key_views(keys.begin(), keys.end());
  const std::vector<std::string_view> arg_views(args.begin(), args.end());
  return run_in_place(connection, key_views, arg_views);
}

RedisResult Script::run_in_place(Connection& connection, std::span<const std::string_view> keys,
                                 std::span<const std::string_view> args) const {
  // The words as views, on the stack for a lock's few (a long call spills to the heap).
  constexpr std::size_t kInline = 16;
  const std::size_t count = 3 + keys.size() + args.size();
  std::array<std::string_view, kInline> inline_words;
  std::vector<std::string_view> more_words;
  std::string_view* words = inline_words.data();
  if (count > kInline) {
    more_words.resize(count);
    words = more_words.data();
  }
  const std::string numkeys = std::to_string(keys.size());
  words[0] = "EVALSHA";
  words[1] = sha_;
  words[2] = numkeys;
  std::copy(keys.begin(), keys.end(), words + 3);
  std::copy(args.begin(), args.end(), words + 3 + keys.size());
  const std::span<const std::string_view> argv(words, count);

  RedisResult result = connection.command(argv);
  // NOSCRIPT: the server never saw the script, or lost its cache (a restart, SCRIPT FLUSH, a
  // replica promoted: scripts are not replicated). Load once and retry once. On a Redis Cluster
  // the load (no key) goes to the node of the last command and the retry to its keys' node: a
  // failover between them answers NOSCRIPT again, and then the source itself is sent (EVAL,
  // routed by its keys, caches it). A third NOSCRIPT cannot be: EVAL never answers it.
  if (result.error == RedisErrorKind::kReplyError && result.message.starts_with("NOSCRIPT")) {
    const RedisResult loaded = load(connection);
    if (!loaded.ok()) return loaded;
    words[1] = loaded.reply.str;
    result = connection.command(argv);
    if (result.error == RedisErrorKind::kReplyError && result.message.starts_with("NOSCRIPT")) {
      words[0] = "EVAL";
      words[1] = source_;
      result = connection.command(argv);
    }
  }
  if (result.error == RedisErrorKind::kReplyError) {
    result.message = "script " + name_ + ": " + result.message;
  }
  return result;
}

}  // namespace locksim
