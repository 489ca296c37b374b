// resource_call.h: a recorded access to the scenario's protected resource, written once for every
// host: the read (recorded with the value it saw) and the write the application logic of the
// documents makes of it (sell one if stock was left, create the record if it was not found;
// nothing otherwise), presenting the fencing number of the grant held to a fenced store.
//
// The host carries the command out and gives back a host-independent outcome: the thread client
// and the event loop on their connection (resource.h's commands), the process harness through
// its worker (the worker protocol's codec, sim/host/worker_codec.h).
//
//   co_await resource_read_call(host, record, terms, record_id);
//   co_await resource_write_call(host, record, terms, record_id);
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sim/client/record.h"
#include "sim/client/resource.h"
#include "sim/core/task.h"

namespace locksim {

// ResourceReadOutcome: the value read, or the failure.
struct ResourceReadOutcome {
  std::optional<CallFailure> failure;
  std::int64_t value = 0;
};
// ResourceWriteOutcome: written; or refused by a fenced store (`refusal`, in words); or failed.
struct ResourceWriteOutcome {
  std::optional<CallFailure> failure;
  std::optional<std::string> refusal;
};
ResourceReadOutcome outcome_of(const ResourceRead& read);
ResourceWriteOutcome outcome_of(const ResourceWrite& write);

// ResourceHost: what a recorded resource access asks of its host.
class ResourceHost {
 public:
  virtual ~ResourceHost() = default;
  // read_resource: the read of `record_id` (a counter ignores it), sent now.
  virtual Task<ResourceReadOutcome> read_resource(const std::string& record_id) = 0;
  // write_resource: the write of `value` (a counter's) or of the record, presenting `fencing`
  // (-1: none) to a fenced store, sent now.
  virtual Task<ResourceWriteOutcome> write_resource(const std::string& record_id,
                                                    std::int64_t value, std::int64_t fencing) = 0;
};

// resource_read_call: the read, recorded when it ended.
Task<void> resource_read_call(ResourceHost& host, ClientRecord& record,
                              const ClientRecord::ResourceTerms& terms, std::string record_id);
// resource_write_call: the write the last read calls for, if any, recorded when it ended.
Task<void> resource_write_call(ResourceHost& host, ClientRecord& record,
                               const ClientRecord::ResourceTerms& terms, std::string record_id);

}  // namespace locksim
