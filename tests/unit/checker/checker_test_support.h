// checker_test_support.h: what the checker tests share: check(), finding filters, histories.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "sim/checker/check.h"
#include "tests/unit/history_builder.h"

namespace locksim::test {

inline constexpr int A = 0;
inline constexpr int B = 1;
inline constexpr int C = 2;

inline std::vector<const Finding*> violations(const CheckResult& r) {
  return r.of(FindingKind::kMutexViolation);
}
inline std::vector<const Finding*> stale_releases(const CheckResult& r) {
  return r.of(FindingKind::kStaleRelease);
}
inline std::vector<const Finding*> deadlocks(const CheckResult& r) {
  return r.of(FindingKind::kDeadlock);
}
inline std::vector<const Finding*> recoveries(const CheckResult& r) {
  return r.of(FindingKind::kRecovery);
}
inline std::vector<const Finding*> indeterminate(const CheckResult& r) {
  return r.of(FindingKind::kIndeterminate);
}
inline std::vector<const Finding*> idle_holds(const CheckResult& r) {
  return r.of(FindingKind::kIdleHold);
}
inline std::vector<const Finding*> resource_findings(const CheckResult& r) {
  return r.of(FindingKind::kResourceCorrupted);
}
inline Nanos overlap_of(const Finding& f) { return f.to_ns - f.from_ns; }
// hold_of: the hold window of `client` that contains instant `t`.
inline const HoldWindow& hold_of(const CheckResult& r, int client, Nanos t) {
  for (const HoldWindow& w : r.holds) {
    if (w.client == client && w.start_ns <= t && t <= w.end_ns) return w;
  }
  static const HoldWindow kNone;
  ADD_FAILURE() << "no hold of client " << client << " at " << t;
  return kNone;
}

inline CheckResult check(const History& history, Nanos stuck_threshold_ns = ms(500)) {
  return check_history(history, CheckOptions{.stuck_threshold_ns = stuck_threshold_ns});
}

inline CheckResult check(const History& history, const ResourceSpec& resource) {
  return check_history(history, CheckOptions{.stuck_threshold_ns = ms(500), .resource = resource});
}

inline ResourceSpec counter(std::int64_t initial) {
  return ResourceSpec{.kind = ResourceSpec::Kind::kCounter, .name = "stock", .initial = initial};
}

inline ResourceSpec fenced_counter(std::int64_t initial) {
  return ResourceSpec{
      .kind = ResourceSpec::Kind::kFencedCounter, .name = "stock", .initial = initial};
}

inline std::vector<const Finding*> stale_writes(const CheckResult& r) {
  return r.of(FindingKind::kStaleWrite);
}

inline ResourceSpec records() {
  return ResourceSpec{.kind = ResourceSpec::Kind::kFindOrCreate, .name = "records", .initial = 0};
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// CycleTimes: where one generated hold's events lie.
struct CycleTimes {
  std::size_t ok_event = 0;  // index of the acquire ok (the enter follows it)
  Nanos invoke_ns = 0;
  Nanos exit_ns = 0;
};

// correct_history: `cycles` holds handed between `clients` clients, each next client waiting
// during the previous hold and entering 1..1000 ns after the previous release completed.
inline History correct_history(int cycles, int clients, std::uint32_t seed,
                               std::vector<CycleTimes>* times) {
  std::vector<std::string> names;
  for (int c = 0; c < clients; ++c) names.push_back("c" + std::to_string(c));
  HistoryBuilder builder(names);
  std::mt19937 rng(seed);
  Nanos enter_ns = 1000;
  Nanos invoke_ns = 0;
  int holder = 0;
  for (int i = 0; i < cycles; ++i) {
    const Nanos exit_ns = enter_ns + 10'000 + static_cast<Nanos>(rng() % 100'000);
    const Nanos released_ns = exit_ns + 1 + static_cast<Nanos>(rng() % 1000);
    const int next = (holder + 1 + static_cast<int>(rng() % std::uint32_t(clients - 1))) % clients;
    // The next client asks while this hold is on, at least 2 ns before its exit.
    const Nanos next_invoke_ns = enter_ns + static_cast<Nanos>(rng() % 9'000);
    times->push_back({0, invoke_ns, exit_ns});
    builder.acquire_invoke(invoke_ns, holder);
    builder.acquire_ok(enter_ns, holder);
    builder.event(enter_ns, holder, EventType::kInfo, Op::kWork);
    builder.release(exit_ns, released_ns, holder);
    invoke_ns = next_invoke_ns;
    holder = next;
    enter_ns = released_ns + 1 + static_cast<Nanos>(rng() % 1000);
  }
  History h = builder.build();
  // Locate each cycle's ok after sorting (stable: an ok precedes its enter).
  std::size_t cycle = 0;
  for (std::size_t i = 0; i < h.events.size(); ++i) {
    if (h.events[i].f == Op::kAcquire && h.events[i].type == EventType::kOk) {
      (*times)[cycle++].ok_event = i;
    }
  }
  return h;
}

}  // namespace locksim::test
