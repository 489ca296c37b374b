// Resource integrity: what the lock was for. A counter (Doc C's stock) must end at initial - sales
// and never sell more than it had; find-or-create (Doc B's jobs) must create each record once. A
// fenced counter is judged as a counter: its sales are the writes it accepted (a rejected write
// is a failed event and changed nothing).
// Judged from the resource's own writes, independently of the hold windows: a lock that looks
// fine can still guard a resource badly, and a violation need not corrupt it.
#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/checker/checkers.h"
#include "sim/checker/explain.h"

namespace locksim::checker_internal {
namespace {

// kNamedMax: how many culprits an explanation names before "and N more".
constexpr std::size_t kNamedMax = 4;

std::string plural(std::int64_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// join_named: "a", "a and b", "a, b and c", "a, b, c, d and 3 more".
std::string join_named(const std::vector<std::string>& parts, std::size_t total) {
  std::string text;
  const std::size_t shown = parts.size();
  for (std::size_t i = 0; i < shown; ++i) {
    if (i > 0) text += (i + 1 == shown && total == shown) ? " and " : ", ";
    text += parts[i];
  }
  if (total > shown) text += " and " + std::to_string(total - shown) + " more";
  return text;
}

bool is_resource_write(const History& history, const Event& event, const std::string& name) {
  return event.f == Op::kWrite && event.type == EventType::kOk && history.key_name(event) == name;
}

void check_counter(const History& history, const ResourceSpec& resource, CheckResult& result) {
  std::int64_t sales = 0;
  std::int64_t value = resource.initial;  // after the latest write
  std::int64_t lowest = resource.initial;
  const Event* lowest_write = nullptr;
  std::vector<std::string> stale;  // writes computed from a value another write had replaced
  std::size_t stale_total = 0;
  for (const Event& event : history.events) {
    if (!is_resource_write(history, event, resource.name)) continue;
    const ResourceFacts& write = event.resource();
    ++sales;
    if (write.has_base && write.base != value) {
      if (stale.size() < kNamedMax) {
        stale.push_back(client_name(history, event.client) + " wrote " +
                        std::to_string(write.value) + " at " + format_ms(event.time_ns) +
                        " computed from a stale read of " + std::to_string(write.base));
      }
      ++stale_total;
    }
    if (write.value < lowest) {
      lowest = write.value;
      lowest_write = &event;
    }
    value = write.value;
  }
  const std::string& name = resource.name;
  const std::int64_t expected = resource.initial - sales;
  const std::int64_t oversold = std::max(sales - resource.initial, lowest < 0 ? -lowest : 0);
  if (oversold > 0) {
    const std::string how =
        sales > resource.initial
            ? plural(sales, "sale") + " from an initial " + std::to_string(resource.initial)
            : client_name(history, lowest_write->client) + " wrote " +
                  std::to_string(lowest_write->resource().value) + " at " +
                  format_ms(lowest_write->time_ns);
    result.findings.push_back(Finding{
        .kind = FindingKind::kResourceCorrupted,
        .cause = "oversell",
        .key = name,
        .clients = lowest_write ? std::vector<int>{lowest_write->client} : std::vector<int>{},
        .from_ns = lowest_write ? lowest_write->time_ns : -1,
        .to_ns = lowest_write ? lowest_write->time_ns : -1,
        .amount = oversold,
        .record = "",
        .words = name + ": " + how + ": oversold by " + std::to_string(oversold) + ".",
    });
  }
  if (value > expected) {
    const std::int64_t lost = value - expected;
    std::string text = name + " ends at " + std::to_string(value) + " but " +
                       plural(sales, "sale") + " from " + std::to_string(resource.initial) +
                       " should leave " + std::to_string(expected) + ": " + plural(lost, "update") +
                       " lost";
    if (!stale.empty()) text += " (" + join_named(stale, stale_total) + ")";
    result.findings.push_back(Finding{
        .kind = FindingKind::kResourceCorrupted,
        .cause = "lost_update",
        .key = name,
        .clients = {},
        .from_ns = -1,
        .to_ns = -1,
        .amount = lost,
        .record = "",
        .words = std::move(text) + ".",
    });
  }
}

void check_find_or_create(const History& history, const ResourceSpec& resource,
                          CheckResult& result) {
  struct Creation {
    int client = -1;
    Nanos time_ns = 0;
  };
  struct Record {
    std::string id;
    std::vector<Creation> creations;
  };
  std::vector<Record> records;  // in order of first creation
  std::unordered_map<std::string, std::size_t> by_id;
  for (const Event& event : history.events) {
    if (!is_resource_write(history, event, resource.name)) continue;
    const std::string id(history.str(event.resource().record));
    auto [it, inserted] = by_id.try_emplace(id, records.size());
    if (inserted) records.push_back(Record{.id = id, .creations = {}});
    records[it->second].creations.push_back({event.client, event.time_ns});
  }
  for (const Record& record : records) {
    const std::size_t creates = record.creations.size();
    if (creates < 2) continue;
    std::vector<std::string> by;
    for (std::size_t i = 0; i < creates && i < kNamedMax; ++i) {
      const Creation& creation = record.creations[i];
      by.push_back(client_name(history, creation.client) + " at " + format_ms(creation.time_ns));
    }
    const auto duplicates = static_cast<std::int64_t>(creates - 1);
    std::vector<int> creators;
    for (const Creation& creation : record.creations) creators.push_back(creation.client);
    result.findings.push_back(Finding{
        .kind = FindingKind::kResourceCorrupted,
        .cause = "duplicate",
        .key = resource.name,
        .clients = std::move(creators),
        .from_ns = record.creations.front().time_ns,
        .to_ns = record.creations.back().time_ns,
        .amount = duplicates,
        .record = record.id,
        .words = "record " + record.id + " created " + std::to_string(creates) + " times (by " +
                 join_named(by, creates) + "): " + plural(duplicates, "duplicate") + ".",
    });
  }
}

}  // namespace

void check_resource(const History& history, const ResourceSpec& resource, CheckResult& result) {
  switch (resource.kind) {
    case ResourceSpec::Kind::kNone:
      return;
    case ResourceSpec::Kind::kCounter:
    case ResourceSpec::Kind::kFencedCounter:
      check_counter(history, resource, result);
      return;
    case ResourceSpec::Kind::kFindOrCreate:
      check_find_or_create(history, resource, result);
      return;
  }
}

}  // namespace locksim::checker_internal
