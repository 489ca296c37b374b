// lua_owner: the owner-checked lock of Docs A, C and D. Each acquisition stores a fresh random
// token; the release deletes the key only if it still holds that token, atomically in Lua, so a
// holder whose lease expired cannot delete a newer holder's lock.
#include <array>
#include <charconv>
#include <string>
#include <utility>

#include "sim/lock/outcome.h"
#include "sim/redis/script.h"

namespace locksim::lock_detail {
namespace {

// KEYS[1] = lock key, ARGV[1] = this acquisition's token. Returns the number of keys deleted.
constexpr const char* kCompareAndDeleteSource = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
else
  return 0
end
)lua";

class OwnerCheckedLuaLock final : public OneCommandVariant {
 public:
  std::string_view name() const override { return "lua_owner"; }
  std::string_view summary() const override {
    return "SET key token NX PX ttl; release: Lua compare-and-delete (Docs A, C, D)";
  }
  bool uses_ttl() const override { return true; }

  std::optional<OneCommand> acquire_command(const std::string& key, std::int64_t ttl_ms,
                                            Rng& rng) const override {
    std::array<char, 32> token;  // kept in the command's words only (most attempts fail)
    rng.fill_hex(token);
    std::array<char, 24> ttl;  // the words copy it: no string made for it at every attempt
    const std::size_t ttl_size = static_cast<std::size_t>(
        std::to_chars(ttl.data(), ttl.data() + ttl.size(), ttl_ms).ptr - ttl.data());
    // Made in the optional's place (a OneCommand returned into it was moved, its words' buffer
    // with it, at every attempt).
    return std::optional<OneCommand>(
        std::in_place, nullptr,
        OneCommand::words({"SET", key, std::string_view(token.data(), token.size()), "NX", "PX",
                           std::string_view(ttl.data(), ttl_size)}),
        0, 2);
  }
  AcquireAttempt read_acquire(RedisResult result, std::string_view token) const override {
    return acquire_outcome(std::move(result), token, "SET NX PX");
  }
  std::optional<OneCommand> release_command(const std::string& key,
                                            const std::string& token) const override {
    return OneCommand{&compare_and_delete_script(), OneCommand::words({key, token}), 1};
  }

 protected:
  // redraw_token: an attempt differs from the last only in its token, drawn as acquire_command
  // draws it.
  bool redraw_token(OneCommand& command, Rng& rng) const override {
    rng.fill_hex(command.argv.word_bytes(command.token_word));
    return true;
  }
  ReleaseResult read_release(RedisResult result) const override {
    return release_outcome(std::move(result), "EVALSHA lua_owner.release");
  }
};

}  // namespace

AcquireAttempt acquire_with_fresh_token(const LockContext& context, const std::string& key,
                                        std::int64_t ttl_ms) {
  std::string token = context.rng.token_hex(32);
  const std::string ttl = std::to_string(ttl_ms);
  RedisResult result = context.connection.command({"SET", key, token, "NX", "PX", ttl});
  return acquire_outcome(std::move(result), token, "SET NX PX");
}

const Script& compare_and_delete_script() {
  static const Script script("lua_owner.release", kCompareAndDeleteSource);
  return script;
}

const LockVariant& lua_owner_variant() {
  static const OwnerCheckedLuaLock variant;
  return variant;
}

}  // namespace locksim::lock_detail
