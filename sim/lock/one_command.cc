// The one-command form of a variant (variant.h): how it is run on a blocking connection, and the
// answers of a variant that has none.
#include "sim/lock/variant.h"
#include "sim/redis/script.h"

namespace locksim {
namespace {

RedisResult no_form() {
  return RedisResult{RedisErrorKind::kUnexpectedReply,
                     "this variant has no one-command form (it runs on threads)", {}};
}

}  // namespace

RedisResult run_one(Connection& connection, const OneCommand& command) {
  const Words::Views views = command.argv.views();
  const std::span<const std::string_view> argv = views;
  if (command.script == nullptr) return connection.command(argv);
  return command.script->run_in_place(connection, argv.first(command.keys),
                                      argv.subspan(command.keys));
}

AcquireAttempt LockVariant::read_acquire(RedisResult /*result*/, std::string_view /*token*/) const {
  return {AcquireAttempt::Outcome::kError, {}, no_form()};
}

ReleaseResult LockVariant::read_release(RedisResult /*result*/) const {
  return {ReleaseResult::Outcome::kError, 0, no_form()};
}

ExtendResult LockVariant::read_extend(RedisResult /*result*/) const {
  return {ExtendResult::Outcome::kError, no_form()};
}

bool LockVariant::one_command() const {
  Rng rng(0);
  return acquire_command("k", 1000, rng).has_value() && release_command("k", "t").has_value();
}

}  // namespace locksim
