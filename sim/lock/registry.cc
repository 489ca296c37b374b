#include "sim/lock/registry.h"

#include <cstdint>
#include <memory>
#include <utility>

#include "sim/lock/outcome.h"

namespace locksim {
namespace lock_detail {

RedisResult unexpected_reply(RedisResult result, std::string_view command) {
  result.error = RedisErrorKind::kUnexpectedReply;
  result.message = "unexpected reply type to " + std::string(command);
  return result;
}

AcquireAttempt acquire_outcome(RedisResult&& result, std::string_view token,
                               std::string_view command) {
  AcquireAttempt attempt;
  if (result.ok() && result.reply.is_status("OK")) {
    attempt.outcome = AcquireAttempt::Outcome::kAcquired;
    attempt.token = token;
  } else if (result.ok() && result.reply.is_nil()) {
    attempt.outcome = AcquireAttempt::Outcome::kBusy;
  } else {
    attempt.outcome = AcquireAttempt::Outcome::kError;
    attempt.error = result.ok() ? unexpected_reply(std::move(result), command) : std::move(result);
  }
  return attempt;
}

AcquireAttempt flag_acquire_outcome(RedisResult&& result, std::string_view token,
                                    std::string_view command) {
  AcquireAttempt attempt;
  if (result.ok() && result.reply.is_integer(1)) {
    attempt.outcome = AcquireAttempt::Outcome::kAcquired;
    attempt.token = token;
  } else if (result.ok() && result.reply.is_integer(0)) {
    attempt.outcome = AcquireAttempt::Outcome::kBusy;
  } else {
    attempt.outcome = AcquireAttempt::Outcome::kError;
    attempt.error = result.ok() ? unexpected_reply(std::move(result), command) : std::move(result);
  }
  return attempt;
}

bool is_deleted_count(const Reply& reply) {
  return reply.type == Reply::Type::kInteger && reply.integer >= 0 && reply.integer <= INT32_MAX;
}

ReleaseResult release_outcome(RedisResult&& result, std::string_view command) {
  ReleaseResult release;
  if (result.ok() && is_deleted_count(result.reply)) {
    release.deleted = result.reply.integer;
    release.outcome =
        release.deleted >= 1 ? ReleaseResult::Outcome::kReleased : ReleaseResult::Outcome::kNotHeld;
  } else {
    release.outcome = ReleaseResult::Outcome::kError;
    release.error = result.ok() ? unexpected_reply(std::move(result), command) : std::move(result);
  }
  return release;
}

}  // namespace lock_detail

namespace {

std::vector<const LockVariant*>& registry() {
  // Explicit references (not self-registration) so the static library keeps every variant.
  static std::vector<const LockVariant*> variants = {
      &lock_detail::naive_variant(),
      &lock_detail::set_nx_ex_variant(),
      &lock_detail::lua_owner_variant(),
      &lock_detail::setnx_then_expire_variant(),
      &lock_detail::lua_setnx_expire_variant(),
      &lock_detail::get_then_del_variant(),
      &lock_detail::lua_acquire_owner_variant(),
      &lock_detail::lua_owner_renew_variant(),
      &lock_detail::no_lock_variant(),
      &lock_detail::lua_fair_queue_variant(),
      &lock_detail::lua_owner_fenced_variant(),
      &lock_detail::redlock_variant(),
      &lock_detail::lua_owner_wait_variant(),
      &lock_detail::zset_semaphore_variant(),
      &lock_detail::zset_semaphore_server_variant(),
      &lock_detail::fair_semaphore_variant(),
      &lock_detail::hash_reentrant_variant(),
      &lock_detail::reentrant_counter_variant(),
      &lock_detail::rw_lock_variant(),
      &lock_detail::rw_lock_fair_variant(),
  };
  return variants;
}

}  // namespace

const std::vector<const LockVariant*>& all_variants() { return registry(); }

void register_variant(std::unique_ptr<const LockVariant> variant) {
  static std::vector<std::unique_ptr<const LockVariant>> owned;  // live for the program
  registry().push_back(variant.get());
  owned.push_back(std::move(variant));
}

const LockVariant* find_variant(std::string_view name) {
  for (const LockVariant* variant : all_variants()) {
    if (variant->name() == name) return variant;
  }
  return nullptr;
}

std::vector<std::string> variant_names() {
  std::vector<std::string> names;
  for (const LockVariant* variant : all_variants()) names.emplace_back(variant->name());
  return names;
}

}  // namespace locksim

namespace locksim {

std::string reference_of(const LockVariant& variant) {
  if (variant.semaphore()) return "zset_semaphore_server";
  if (variant.reentrant()) return "hash_reentrant";
  if (variant.read_write()) return "rw_lock_fair";
  if (variant.multi_server()) return "redlock";
  if (variant.queues()) return "lua_fair_queue";
  if (variant.renews()) return "lua_owner_renew";
  return "lua_owner";
}

}  // namespace locksim
