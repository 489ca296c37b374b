#include "sim/client/release.h"

#include <utility>

namespace locksim {

Task<bool> release_call(ReleaseHost& host, ClientRecord& record, bool unsaved_token) {
  // An inner release of a reentrant lock leaves the client inside, still renewing.
  const bool inner = record.depth() > 1;
  if (!inner) co_await host.end_renewal();
  // A retry of a cancelled release has left already.
  if (record.holding() && !inner) {
    record.exit();
    host.outside();
  }
  // Moved into the release: nothing here reads it again.
  std::string token = record.invoke_release(unsaved_token);
  const std::optional<ReleaseOutcome> outcome = co_await host.release_with(std::move(token));
  if (!outcome) co_return false;
  record.end_release(*outcome);
  co_return true;
}

Task<void> extend_call(ExtendHost& host, ClientRecord& record) {
  record.invoke_extend();
  const std::optional<ExtendOutcome> outcome =
      co_await host.extend_with(record.held_key(), record.held_token());
  if (outcome) record.end_extend(*outcome);
}

bool needs_reconnect(const RedisResult& result) {
  return result.error == RedisErrorKind::kTimeout || result.error == RedisErrorKind::kClosed ||
         result.error == RedisErrorKind::kProtocol;
}

Task<ReleaseResult> carry_out_release(ReleaseIo& io, std::string key, std::string token) {
  ReleaseResult result = co_await io.send_release(key, token);
  if (result.outcome == ReleaseResult::Outcome::kError && needs_reconnect(result.error)) {
    io.reconnect();
  }
  if (result.outcome == ReleaseResult::Outcome::kReleased) co_await io.signal_release(key);
  co_return result;
}

}  // namespace locksim
