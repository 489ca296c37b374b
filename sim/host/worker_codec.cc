#include "sim/host/worker_codec.h"

#include <string>
#include <vector>

#include "sim/history/utf8.h"

namespace locksim::host {

nlohmann::json failure_to_json(const CallFailure& failure) {
  return {{"result", failure.maybe ? "info" : "fail"},
          {"error", to_string(failure.error)},
          // A reply's bytes may be anything; the protocol's JSON must be UTF-8.
          {"message", escape_invalid_utf8(failure.message)}};
}

CallFailure failure_from_json(const nlohmann::json& reply) {
  if (!reply.is_object()) return CallFailure{};
  return CallFailure{
      reply.value("result", "") == "info",
      error_kind_from_string(reply.value("error", "protocol")).value_or(ErrorKind::kProtocol),
      reply.value("message", "")};
}

nlohmann::json acquire_to_json(const AcquireOutcome& outcome, Nanos received_ns) {
  nlohmann::json reply;
  if (!outcome.granted) {
    reply = failure_to_json(outcome.failure);
    reply["attempts"] = outcome.attempts;
    if (outcome.busy_ns >= 0) reply["busy_after_ns"] = outcome.busy_ns - received_ns;
    return reply;
  }
  reply = {{"result", "ok"}, {"token", outcome.token}, {"attempts", outcome.attempts}};
  if (outcome.fencing >= 0) reply["fencing"] = outcome.fencing;
  if (outcome.validity_ms >= 0) reply["validity_ms"] = outcome.validity_ms;
  if (!outcome.granted_on.empty()) reply["granted_on"] = outcome.granted_on;
  // A duration, not an instant: the harness adds it to its own invoke time, which came before
  // the request arrived here, so the lease start it derives is never too late.
  if (outcome.sent_ns >= 0) reply["sent_after_ns"] = outcome.sent_ns - received_ns;
  if (outcome.busy_ns >= 0) reply["busy_after_ns"] = outcome.busy_ns - received_ns;
  return reply;
}

AcquireOutcome acquire_from_json(const nlohmann::json& reply, Nanos invoke_ns,
                                 std::size_t servers) {
  AcquireOutcome outcome;
  outcome.attempts = reply.value("attempts", std::int32_t{-1});
  // Durations, as sent_after_ns: added to the harness's own invoke time.
  if (const auto after = reply.value("busy_after_ns", std::int64_t{-1}); after >= 0) {
    outcome.busy_ns = invoke_ns + after;
  }
  if (reply.value("result", "") != "ok") {
    outcome.failure = failure_from_json(reply);
    return outcome;
  }
  outcome.granted = true;
  outcome.token = reply.value("token", "");
  outcome.fencing = reply.value("fencing", std::int64_t{-1});
  // A quorum lock's lease is its validity time, and it says which servers granted it.
  outcome.validity_ms = reply.value("validity_ms", std::int64_t{-1});
  if (const auto granted = reply.find("granted_on"); granted != reply.end() && granted->is_array()) {
    for (const nlohmann::json& server : *granted) {
      if (server.is_number_integer() && outcome.granted_on.size() < servers) {
        outcome.granted_on.push_back(server.get<int>());
      }
    }
  }
  if (const auto after = reply.value("sent_after_ns", std::int64_t{-1}); after >= 0) {
    outcome.sent_ns = invoke_ns + after;
  }
  return outcome;
}

nlohmann::json release_to_json(const ReleaseOutcome& outcome) {
  if (!outcome.ok) return failure_to_json(outcome.failure);
  return {{"result", "ok"}, {"deleted", outcome.deleted}};
}

ReleaseOutcome release_from_json(const nlohmann::json& reply) {
  ReleaseOutcome outcome;
  if (reply.value("result", "") != "ok") {
    outcome.failure = failure_from_json(reply);
    return outcome;
  }
  outcome.ok = true;
  const auto deleted = reply.find("deleted");
  if (deleted != reply.end() && deleted->is_number_integer() &&
      deleted->get<std::int64_t>() >= 0 && deleted->get<std::int64_t>() <= INT32_MAX) {
    outcome.deleted = deleted->get<std::int64_t>();
    return outcome;
  }
  outcome.deleted = -1;
  outcome.odd = "the release answered ok with \"deleted\": " +
                (deleted == reply.end() ? std::string("(missing)") : deleted->dump().substr(0, 40)) +
                "; expected a count of keys deleted from 0 up";
  return outcome;
}

nlohmann::json extend_to_json(const ExtendOutcome& outcome) {
  if (!outcome.ok) return failure_to_json(outcome.failure);
  return {{"result", "ok"}, {"extended", outcome.extended}};
}

ExtendOutcome extend_from_json(const nlohmann::json& reply) {
  ExtendOutcome outcome;
  if (reply.value("result", "") != "ok") {
    outcome.failure = failure_from_json(reply);
    return outcome;
  }
  outcome.ok = true;
  const auto extended = reply.find("extended");
  const bool valid = extended != reply.end() && extended->is_number_integer() &&
                     (*extended == 0 || *extended == 1);
  outcome.extended = valid ? extended->get<int>() : -1;
  return outcome;
}

nlohmann::json read_to_json(const ResourceReadOutcome& outcome) {
  if (outcome.failure) return failure_to_json(*outcome.failure);
  return {{"result", "ok"}, {"value", outcome.value}};
}

ResourceReadOutcome read_from_json(const nlohmann::json& reply) {
  if (!reply.is_object() || reply.value("result", "") != "ok") {
    return {.failure = failure_from_json(reply), .value = 0};
  }
  const auto value = reply.find("value");
  if (value == reply.end()) return {.failure = std::nullopt, .value = 0};
  if (!value->is_number_integer()) {
    return {.failure = CallFailure{false, ErrorKind::kProtocol,
                                   "a read's \"value\" is not an integer"},
            .value = 0};
  }
  return {.failure = std::nullopt, .value = value->get<std::int64_t>()};
}

nlohmann::json write_to_json(const ResourceWriteOutcome& outcome) {
  if (outcome.refusal) {
    return failure_to_json(CallFailure{false, ErrorKind::kFenced, *outcome.refusal});
  }
  if (outcome.failure) return failure_to_json(*outcome.failure);
  return {{"result", "ok"}};
}

ResourceWriteOutcome write_from_json(const nlohmann::json& reply) {
  if (reply.is_object() && reply.value("result", "") == "ok") return {};
  const CallFailure failure = failure_from_json(reply);
  if (!failure.maybe && failure.error == ErrorKind::kFenced) {
    return {.failure = std::nullopt, .refusal = failure.message};
  }
  return {.failure = failure, .refusal = std::nullopt};
}

nlohmann::json with_id(const nlohmann::json& request, nlohmann::json body) {
  body["id"] = request.value("id", 0);
  return body;
}

}  // namespace locksim::host
