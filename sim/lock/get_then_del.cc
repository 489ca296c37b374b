// get_then_del: Doc B's final code (B3). Acquire stores a fresh token with `SET key token NX PX
// ttl_ms`; release is `GET key`, a comparison in the client, then `DEL key`. The check and the
// delete are two round trips: if the lease expires and another client takes the lock between them,
// the DEL deletes that client's lock. The checkpoint "after_get" is where scenarios pause the
// holder to show it.
#include <string>
#include <utility>

#include "sim/lock/outcome.h"

namespace locksim::lock_detail {
namespace {

class GetThenDeleteLock final : public LockVariant {
 public:
  std::string_view name() const override { return "get_then_del"; }
  std::vector<CheckpointSite> checkpoints() const override { return {{"after_get", false}}; }
  std::string_view summary() const override {
    return "SET key token NX PX ttl; release: GET key, compare in the client, then DEL key "
           "(Doc B, B3)";
  }
  bool uses_ttl() const override { return true; }

  AcquireAttempt try_acquire(const LockContext& context, const std::string& key,
                             std::int64_t ttl_ms) const override {
    return acquire_with_fresh_token(context, key, ttl_ms);
  }

  ReleaseResult release(const LockContext& context, const std::string& key,
                        const std::string& token) const override {
    RedisResult current = context.connection.command({"GET", key});
    if (!current.ok()) return ReleaseResult{ReleaseResult::Outcome::kError, 0, std::move(current)};
    if (current.reply.is_nil()) return ReleaseResult{};  // the lease already expired
    if (current.reply.type != Reply::Type::kString) {
      return ReleaseResult{ReleaseResult::Outcome::kError, 0,
                           unexpected_reply(std::move(current), "GET")};
    }
    if (current.reply.str != token) return ReleaseResult{};  // someone else's lock

    // The race window: whatever happens here, the DEL below is unconditional.
    context.at("after_get");
    return release_outcome(context.connection.command({"DEL", key}), "DEL");
  }
};

}  // namespace

const LockVariant& get_then_del_variant() {
  static const GetThenDeleteLock variant;
  return variant;
}

}  // namespace locksim::lock_detail
