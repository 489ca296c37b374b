#include "sim/client/resource_call.h"

#include <utility>

namespace locksim {

ResourceReadOutcome outcome_of(const ResourceRead& read) {
  if (!read.result.ok()) return {.failure = failure_of(read.result), .value = 0};
  return {.failure = std::nullopt, .value = read.value};
}

ResourceWriteOutcome outcome_of(const ResourceWrite& write) {
  if (write.refused) return {.failure = std::nullopt, .refusal = write.refusal};
  if (!write.result.ok()) return {.failure = failure_of(write.result), .refusal = std::nullopt};
  return {};
}

Task<void> resource_read_call(ResourceHost& host, ClientRecord& record,
                              const ClientRecord::ResourceTerms& terms, std::string record_id) {
  const ResourceReadOutcome read = co_await host.read_resource(record_id);
  // Recorded when the reply was read, as every completion is.
  record.end_read(terms, record_id, read.failure ? &*read.failure : nullptr, read.value);
}

Task<void> resource_write_call(ResourceHost& host, ClientRecord& record,
                               const ClientRecord::ResourceTerms& terms, std::string record_id) {
  const std::optional<std::int64_t> value = record.write_value(terms);
  if (!value) co_return;
  // A fenced store is shown the fencing number of the grant this client holds (-1: none).
  const ResourceWriteOutcome write =
      co_await host.write_resource(record_id, *value, record.held_fencing());
  record.end_write(terms, record_id, *value, write.failure ? &*write.failure : nullptr,
                   write.refusal ? &*write.refusal : nullptr);
}

}  // namespace locksim
