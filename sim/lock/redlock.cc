// redlock: the Redlock algorithm of the Redis docs ("Distributed Locks with Redis") over N
// independent servers, LockContext::nodes (the one primary, `connection`, when there are none).
// One attempt: a fresh random token; `SET key token NX PX ttl` on every node in order, each with
// the node connection's short command timeout; the lock is ours if a majority (N/2 + 1) granted
// it and time is left: validity = ttl - elapsed - drift, drift = 1% of ttl + 2 ms, elapsed from
// before the first SET to after the last reply. The release is lua_owner's compare-and-delete on
// every node. Redlock's "retry after a random delay" is the driver's wait strategy: the variant
// makes one attempt.
//
// Kleppmann ("How to do distributed locking", 2016) shows why this is no safer than its nodes'
// clocks and persistence: a node that restarts empty, or whose clock jumps, can hand a second
// client a majority, and a client paused past its validity still believes it holds the lock.
//
// A failed attempt releases the key on every node where its SET may have taken effect (granted,
// or no answer: a SET that timed out may have run) before it answers, so it leaves nothing behind
// when those nodes can be reached; a node that answered nil or an error, or was not reached,
// holds nothing of this attempt. It answers kBusy when some node answered nil (another client
// holds the key there), else kError of kind kRefused, not indeterminate: the lock was not taken,
// and the message says which nodes failed and how.
//
// Node connections: a node whose connection an I/O error broke is not used again within the
// attempt, except for the cleanup release of a SET that may have run, which reconnects it once;
// any later call reconnects it first, bounded by its connect timeout.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/lock/outcome.h"
#include "sim/redis/script.h"

namespace locksim::lock_detail {
namespace {

constexpr std::int64_t kNanosPerMs = 1'000'000;

// drift_ns: the clock drift Redlock allows for over a lease of ttl_ms: 1% of it plus 2 ms.
constexpr std::int64_t drift_ns(std::int64_t ttl_ms) { return ttl_ms * 10'000 + 2 * kNanosPerMs; }

// NodeAnswer: what one node's SET did, as far as the client can tell.
enum class NodeAnswer {
  kGranted,   // OK: the key is ours there
  kHeld,      // nil: another client holds the key there
  kNotSet,    // not reached, or an error reply: the SET did not run
  kMaybeSet,  // no usable reply to a SET that was sent: it may have run
};

std::vector<Connection*> nodes_of(const LockContext& context) {
  if (context.nodes.empty()) return {&context.connection};
  return {context.nodes.begin(), context.nodes.end()};
}

// usable: whether `node` can be sent a command now, reconnecting it first if an earlier I/O error
// broke it (bounded by its connect timeout).
bool usable(Connection& node) {
  if (node.broken()) node.reconnect();
  return !node.broken();
}

std::string node_name(std::size_t index, const Connection& node) {
  return "node " + std::to_string(index) + " (" + node.endpoint().host + ":" +
         std::to_string(node.endpoint().port) + ")";
}

class RedlockLock final : public LockVariant {
 public:
  std::string_view name() const override { return "redlock"; }
  std::vector<CheckpointSite> checkpoints() const override { return {{"after_first_node", true}}; }
  std::string_view summary() const override {
    return "Redlock: SET key token NX PX ttl on each of N servers, held if a majority granted "
           "within ttl - elapsed - (1% ttl + 2 ms); else and on release: Lua compare-and-delete "
           "on all (Redis docs \"Distributed Locks\"; Kleppmann 2016)";
  }
  bool uses_ttl() const override { return true; }
  bool multi_server() const override { return true; }

  AcquireAttempt try_acquire(const LockContext& context, const std::string& key,
                             std::int64_t ttl_ms) const override {
    const std::vector<Connection*> nodes = nodes_of(context);
    const std::size_t majority = nodes.size() / 2 + 1;
    std::string token = context.rng.token_hex(32);
    const std::string ttl = std::to_string(ttl_ms);
    std::vector<NodeAnswer> answers(nodes.size(), NodeAnswer::kNotSet);
    std::string failures;  // "; node 2 (...): timeout: ..." for every node that failed
    AcquireAttempt attempt;

    const Nanos started = context.clock.now_ns();
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      Connection& node = *nodes[i];
      const bool sent = usable(node);
      RedisResult result =
          sent ? node.command({"SET", key, token, "NX", "PX", ttl}) : node.last_error();
      if (result.ok() && result.reply.is_status("OK")) {
        answers[i] = NodeAnswer::kGranted;
        attempt.granted_on.push_back(static_cast<int>(i));
      } else if (result.ok() && result.reply.is_nil()) {
        answers[i] = NodeAnswer::kHeld;
      } else {
        if (result.ok()) result = unexpected_reply(std::move(result), "SET NX PX");
        answers[i] = sent && result.indeterminate() ? NodeAnswer::kMaybeSet : NodeAnswer::kNotSet;
        failures += "; " + node_name(i, node) + ": " + result.describe();
      }
      // May throw (a crash injected by the driver): the keys set so far expire with their TTL.
      if (i == 0) context.at("after_first_node");
    }
    const std::int64_t elapsed_ns = context.clock.now_ns() - started;
    // Truncation is the floor here for every validity that matters (> 0).
    const std::int64_t validity_ms =
        (ttl_ms * kNanosPerMs - elapsed_ns - drift_ns(ttl_ms)) / kNanosPerMs;

    const std::size_t granted = attempt.granted_on.size();
    if (granted >= majority && validity_ms > 0) {
      attempt.outcome = AcquireAttempt::Outcome::kAcquired;
      attempt.token = std::move(token);
      attempt.validity_ms = validity_ms;
      return attempt;
    }

    const std::string cleanup_failures = release_where_maybe_set(nodes, answers, key, token);
    bool held_elsewhere = false;
    for (const NodeAnswer answer : answers) held_elsewhere |= answer == NodeAnswer::kHeld;
    if (held_elsewhere) {
      attempt.outcome = AcquireAttempt::Outcome::kBusy;
      return attempt;
    }
    std::string message =
        granted >= majority
            ? "granted on " + std::to_string(granted) + " of " + std::to_string(nodes.size()) +
                  " nodes, but acquiring took " + std::to_string(elapsed_ns / kNanosPerMs) +
                  " ms of the " + ttl + " ms TTL (drift " +
                  std::to_string(drift_ns(ttl_ms) / kNanosPerMs) + " ms): no validity left"
            : "granted on " + std::to_string(granted) + " of " + std::to_string(nodes.size()) +
                  " nodes, " + std::to_string(majority) + " needed";
    message += failures;
    message += cleanup_failures.empty()
                   ? "; released it"
                   : "; releasing it failed" + cleanup_failures + "; it expires with its TTL there";
    attempt.outcome = AcquireAttempt::Outcome::kError;
    attempt.error = RedisResult{RedisErrorKind::kRefused, std::move(message), {}};
    return attempt;
  }

  ReleaseResult release(const LockContext& context, const std::string& key,
                        const std::string& token) const override {
    const std::vector<Connection*> nodes = nodes_of(context);
    ReleaseResult release;
    std::size_t errors = 0;
    std::string failures;
    RedisResult first_error;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      Connection& node = *nodes[i];
      RedisResult result =
          usable(node) ? compare_and_delete_script().run(node, {key}, {token}) : node.last_error();
      if (result.ok() && result.reply.type == Reply::Type::kInteger) {
        release.deleted += result.reply.integer;
        continue;
      }
      if (result.ok()) result = unexpected_reply(std::move(result), "EVALSHA lua_owner.release");
      // The error to report: the first that may have deleted the key, else the first.
      if (errors == 0 || (!first_error.indeterminate() && result.indeterminate())) {
        first_error = result;
      }
      ++errors;
      failures += (failures.empty() ? "" : "; ") + node_name(i, node) + ": " + result.describe();
    }
    if (errors == nodes.size()) {
      release.outcome = ReleaseResult::Outcome::kError;
      release.error = RedisResult{first_error.error, "every node failed: " + failures, {}};
    } else {
      release.outcome = release.deleted >= 1 ? ReleaseResult::Outcome::kReleased
                                             : ReleaseResult::Outcome::kNotHeld;
    }
    return release;
  }

 private:
  // release_where_maybe_set: the cleanup of a failed attempt: compare-and-delete on every node
  // that granted the key or may have. Returns "; node i (...): <error>" per node where it failed.
  static std::string release_where_maybe_set(const std::vector<Connection*>& nodes,
                                             const std::vector<NodeAnswer>& answers,
                                             const std::string& key, const std::string& token) {
    std::string failures;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (answers[i] != NodeAnswer::kGranted && answers[i] != NodeAnswer::kMaybeSet) continue;
      Connection& node = *nodes[i];
      const RedisResult result =
          usable(node) ? compare_and_delete_script().run(node, {key}, {token}) : node.last_error();
      if (!result.ok() || result.reply.type != Reply::Type::kInteger) {
        failures += "; " + node_name(i, node) + ": " +
                    (result.ok() ? std::string("unexpected reply") : result.describe());
      }
    }
    return failures;
  }
};

}  // namespace

const LockVariant& redlock_variant() {
  static const RedlockLock variant;
  return variant;
}

}  // namespace locksim::lock_detail
