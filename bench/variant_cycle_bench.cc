// variant_cycle_bench: one uncontended acquire + release cycle of each lock variant against a
// private redis-server, next to raw round trips. DESIGN budget: a cycle costs at most
// 1.2 x two raw round trips (printed as `cycle / 2 x SET NX PX` at the end).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <string>

#include "bench/ratio_reporter.h"
#include "sim/core/random.h"
#include "sim/lock/registry.h"
#include "sim/redis/connection.h"
#include "sim/redis/server.h"

namespace locksim {
namespace {

std::unique_ptr<RedisServer> g_server;

HiredisConnection connect_or_skip(benchmark::State& state) {
  HiredisConnection connection(g_server->endpoint(), ConnectionOptions{});
  if (connection.broken()) state.SkipWithError(connection.last_error().describe().c_str());
  return connection;
}

void BM_RawPing(benchmark::State& state) {
  HiredisConnection connection = connect_or_skip(state);
  for (auto _ : state) {
    const RedisResult r = connection.command({"PING"});
    if (!r.ok()) state.SkipWithError(r.describe().c_str());
  }
}

// The key is not deleted between iterations, so after the first one SET answers nil: the same
// single round trip a busy acquire costs.
void BM_RawSetNxPx(benchmark::State& state) {
  HiredisConnection connection = connect_or_skip(state);
  for (auto _ : state) {
    const RedisResult r = connection.command({"SET", "bench:raw", "v", "NX", "PX", "1000"});
    if (!r.ok()) state.SkipWithError(r.describe().c_str());
  }
}

void BM_VariantCycle(benchmark::State& state, const LockVariant* variant) {
  HiredisConnection connection = connect_or_skip(state);
  Rng rng(1);
  const LockContext context{connection, rng, real_clock(), {}, "bench", 1000};
  const std::string key = "bench:lock:" + std::string(variant->name());
  for (auto _ : state) {
    const AcquireAttempt attempt = variant->try_acquire(context, key, 1000);
    if (attempt.outcome != AcquireAttempt::Outcome::kAcquired) {
      state.SkipWithError("acquire did not succeed");
      break;
    }
    const ReleaseResult release = variant->release(context, key, attempt.token);
    if (release.outcome != ReleaseResult::Outcome::kReleased) {
      state.SkipWithError("release did not succeed");
      break;
    }
  }
}

// print_ratios: each cycle against two raw SET NX PX.
void print_ratios(const RatioReporter::Times& times) {
  for (const auto& [name, time] : times) {
    if (!name.starts_with("cycle/")) continue;
    // "cycle/lua_owner/real_time_median" pairs with "raw_set_nx_px/real_time_median".
    const std::size_t suffix = name.find('/', 6);
    const std::string baseline =
        "raw_set_nx_px" + (suffix == std::string::npos ? "" : name.substr(suffix));
    const auto found = times.find(baseline);
    if (found == times.end() || found->second <= 0) continue;
    std::printf("%-40s %.2f x (budget 1.20)\n", (name + " / 2 x SET NX PX").c_str(),
                time / (2 * found->second));
  }
}

}  // namespace
}  // namespace locksim

int main(int argc, char** argv) {
  using namespace locksim;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  try {
    g_server = std::make_unique<RedisServer>(RedisServer::start(RedisServerOptions{}));
  } catch (const std::exception& error) {
    std::fprintf(stderr, "variant_cycle_bench: %s\n", error.what());
    return 3;
  }
  std::printf("redis-server %s on %s\n", g_server->version().c_str(),
              g_server->endpoint().redacted().c_str());

  // Real time: the work is waiting for the server, which CPU time would not count.
  benchmark::RegisterBenchmark("raw_ping", BM_RawPing)->UseRealTime();
  benchmark::RegisterBenchmark("raw_set_nx_px", BM_RawSetNxPx)->UseRealTime();
  for (const LockVariant* variant : all_variants()) {
    // lua_owner_wait's grants need a replica's acknowledgement; this server has no replica.
    if (variant->name() == "lua_owner_wait") continue;
    benchmark::RegisterBenchmark(("cycle/" + std::string(variant->name())).c_str(), BM_VariantCycle,
                                 variant)
        ->UseRealTime();
  }
  RatioReporter reporter(print_ratios);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  g_server.reset();
  return 0;
}
