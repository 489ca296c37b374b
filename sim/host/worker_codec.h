// worker_codec.h (internal to the hosts): the one codec of a call's outcome across the worker
// protocol (worker_protocol.h). `locksim worker` encodes the client's own outcomes (sim/client/
// record.h) as reply lines; the harness decodes every worker's lines, locksim's or an adapter's,
// back into the same outcomes and records them through its ClientRecord. Nothing turns a reply
// line into history events by hand.
//
//   worker:  out.write(with_id(request, acquire_to_json(outcome_of(end), received_ns)));
//   harness: record.end_acquire(acquire_from_json(reply, invoke_ns, servers));
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>

#include "sim/client/record.h"
#include "sim/client/resource_call.h"

namespace locksim::host {

// failure_to_json / failure_from_json: "result" ("fail", or "info" when it may have taken
// effect), "error" (a history error word) and "message". A missing or unknown error word reads
// as "protocol".
nlohmann::json failure_to_json(const CallFailure& failure);
CallFailure failure_from_json(const nlohmann::json& reply);

// acquire_to_json: ok {token, attempts[, fencing][, validity_ms][, granted_on], sent_after_ns}
// (the granting attempt was sent sent_after_ns after `received_ns`, the worker's instant of the
// request), or the failure with its attempts. acquire_from_json: the harness's side, whose
// invoke was at `invoke_ns` (before the request was written, so a lease start derived from it is
// never too late); at most `servers` entries of granted_on are read.
nlohmann::json acquire_to_json(const AcquireOutcome& outcome, Nanos received_ns);
AcquireOutcome acquire_from_json(const nlohmann::json& reply, Nanos invoke_ns,
                                 std::size_t servers);

// release: ok {deleted} (a count from 0 up; anything else reads as a reply outside the contract).
nlohmann::json release_to_json(const ReleaseOutcome& outcome);
ReleaseOutcome release_from_json(const nlohmann::json& reply);

// extend: ok {extended: 0|1} (anything else reads as a reply outside the contract).
nlohmann::json extend_to_json(const ExtendOutcome& outcome);
ExtendOutcome extend_from_json(const nlohmann::json& reply);

// resource read: ok {value} (an integer; anything else reads as a reply outside the contract).
nlohmann::json read_to_json(const ResourceReadOutcome& outcome);
ResourceReadOutcome read_from_json(const nlohmann::json& reply);

// resource write: ok; a fenced store's refusal is fail {error "fenced", message: why}.
nlohmann::json write_to_json(const ResourceWriteOutcome& outcome);
ResourceWriteOutcome write_from_json(const nlohmann::json& reply);

// with_id: `body` as the reply to `request` (its "id").
nlohmann::json with_id(const nlohmann::json& request, nlohmann::json body);

}  // namespace locksim::host
