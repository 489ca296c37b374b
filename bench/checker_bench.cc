// checker_bench: check_history throughput on correct histories of 10k, 100k and 1M events, over
// one key and over eight. DESIGN.md budget: at least 2 million events/s, near-linear in size.
//
// The histories look like a contended run: 8 clients, the next holder asks while the current
// one is inside, and every 32nd holder first gives up once (a failed acquire the liveness checker
// has to measure). With renew:1 every hold also has a 1 ms TTL, a renewal, a read and a write of
// a per-key counter (the first key's is checked as the resource), and every 64th hold a fault
// marker, so the lease, fault and resource passes have work too. Items processed = events, so
// the output shows events/s; naive_overlaps shows the naive-timestamp pass found its artifact.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/checker/check.h"

namespace locksim {
namespace {

constexpr int kClients = 8;

History* building = nullptr;  // the history being built, for its key and string tables

Event make_event(Nanos t, int client, EventType type, Op f, const std::string& key) {
  Event e = Event::make(type, f);
  e.time_ns = t;
  e.client = client;
  e.key = building->key_id(key);
  return e;
}

constexpr std::int64_t kStockInitial = 1'000'000'000;

// append_key_stream: correct hold cycles on `key` until `events` holds `target` events; with
// `renew`, also renewals, counter sales on `stock`, and fault markers.
void append_key_stream(const std::string& key, const std::string& stock, bool renew,
                       std::size_t target, std::uint32_t seed, std::vector<Event>& events) {
  std::mt19937 rng(seed);
  std::int64_t stock_value = kStockInitial;
  const std::int64_t ttl_ms = renew ? 1 : -1;
  Nanos invoke_ns = 0;
  Nanos enter_ns = 1000;
  int holder = 0;
  for (std::int64_t cycle = 0; events.size() < target; ++cycle) {
    const Nanos exit_ns = enter_ns + 20'000 + static_cast<Nanos>(rng() % 200'000);
    const Nanos released_ns = exit_ns + 50'000 + static_cast<Nanos>(rng() % 50'000);
    events.push_back(make_event(invoke_ns, holder, EventType::kInvoke, Op::kAcquire, key));
    events.back().ttl_ms = static_cast<std::int32_t>(ttl_ms);
    events.push_back(make_event(enter_ns, holder, EventType::kOk, Op::kAcquire, key));
    events.back().token = building->strings.add(std::to_string(cycle));
    events.back().ttl_ms = static_cast<std::int32_t>(ttl_ms);
    events.back().acquire().attempts = 1;
    events.push_back(make_event(enter_ns, holder, EventType::kOk, Op::kEnter, key));
    events.push_back(make_event(enter_ns, holder, EventType::kInfo, Op::kWork, key));
    if (renew) {
      events.push_back(make_event(enter_ns + 5'000, holder, EventType::kInvoke, Op::kExtend, key));
      events.back().ttl_ms = static_cast<std::int32_t>(ttl_ms);
      events.back().token = building->strings.add(std::to_string(cycle));
      events.push_back(make_event(enter_ns + 6'000, holder, EventType::kOk, Op::kExtend, key));
      events.back().extend().extended = 1;
      events.push_back(make_event(enter_ns + 7'000, holder, EventType::kOk, Op::kRead, stock));
      events.back().resource().value = stock_value;
      events.push_back(make_event(enter_ns + 8'000, holder, EventType::kOk, Op::kWrite, stock));
      events.back().resource().base = stock_value;
      events.back().resource().has_base = true;
      events.back().resource().value = --stock_value;
      if (cycle % 64 == 63) {
        events.push_back(make_event(enter_ns + 9'000, holder, EventType::kInfo, Op::kFault, key));
        events.back().fault().kind = FaultKind::kLoseLock;
      }
    }
    events.push_back(make_event(exit_ns, holder, EventType::kOk, Op::kExit, key));
    events.push_back(make_event(exit_ns, holder, EventType::kInvoke, Op::kRelease, key));
    events.back().token = building->strings.add(std::to_string(cycle));
    events.push_back(make_event(released_ns, holder, EventType::kOk, Op::kRelease, key));
    events.back().release().deleted = 1;

    const int next = (holder + 1 + static_cast<int>(rng() % (kClients - 1))) % kClients;
    invoke_ns = enter_ns + static_cast<Nanos>(rng() % 10'000);
    if (cycle % 32 == 31) {
      // A first attempt that gives up while the lock is visibly held.
      events.push_back(make_event(invoke_ns, next, EventType::kInvoke, Op::kAcquire, key));
      events.push_back(make_event(invoke_ns + 5'000, next, EventType::kFail, Op::kAcquire, key));
      events.back().error = ErrorKind::kGaveUp;
      invoke_ns += 6'000;
    }
    holder = next;
    enter_ns = released_ns + 1'000 + static_cast<Nanos>(rng() % 10'000);
  }
}

const History& correct_history(std::size_t events, int keys, bool renew) {
  static std::map<std::tuple<std::size_t, int, bool>, History> cache;
  auto [it, inserted] = cache.try_emplace({events, keys, renew});
  if (!inserted) return it->second;
  History& h = it->second;
  building = &h;
  for (int c = 0; c < kClients; ++c) h.clients.push_back("c" + std::to_string(c));
  h.events.reserve(events + 16);
  for (int k = 0; k < keys; ++k) {
    const std::size_t share =
        events * static_cast<std::size_t>(k + 1) / static_cast<std::size_t>(keys);
    append_key_stream("lock" + std::to_string(k), "stock" + std::to_string(k), renew, share,
                      static_cast<std::uint32_t>(k + 1), h.events);
  }
  std::stable_sort(h.events.begin(), h.events.end(),
                   [](const Event& a, const Event& b) { return a.time_ns < b.time_ns; });
  return h;
}

void BM_CheckHistory(benchmark::State& state) {
  const bool renew = state.range(2) != 0;
  const History& history = correct_history(static_cast<std::size_t>(state.range(0)),
                                           static_cast<int>(state.range(1)), renew);
  CheckOptions options;
  if (renew) {
    options.resource = ResourceSpec{
        .kind = ResourceSpec::Kind::kCounter, .name = "stock0", .initial = kStockInitial};
  }
  std::int64_t naive_overlaps = 0;
  for (auto _ : state) {
    CheckResult result = check_history(history, options);
    if (result.verdict != Verdict::kOk) {
      state.SkipWithError("the generated history should be correct");
      break;
    }
    naive_overlaps = result.naive_timestamp_overlaps;
    benchmark::DoNotOptimize(result);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(history.events.size()));
  state.counters["naive_overlaps"] = static_cast<double>(naive_overlaps);
}

BENCHMARK(BM_CheckHistory)
    ->ArgNames({"events", "keys", "renew"})
    ->ArgsProduct({{10'000, 100'000, 1'000'000}, {1, 8}, {0, 1}})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace locksim

BENCHMARK_MAIN();
