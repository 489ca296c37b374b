// proxy_bench: what the loopback link proxy costs a client when no fault is active. One
// connection sends PING, waits for PONG, and again, straight to a private redis-server and through
// a LinkProxy in front of it (the path every client link of a scenario with link faults takes).
// The proxy adds one loopback hop each way, so a proxied round trip should cost at most two direct
// ones ("at most one extra round trip"). Prints `proxied / direct` per round trip at the end.
//
//   build/bench/proxy_bench --benchmark_repetitions=10
//     --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true
// (interleaved, so that a loopback whose speed drifts over minutes moves both sides alike)
#include <benchmark/benchmark.h>

#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include "bench/ratio_reporter.h"
#include "sim/proxy/link_proxy.h"
#include "sim/redis/connection.h"
#include "sim/redis/server.h"

namespace locksim {
namespace {

std::unique_ptr<RedisServer> g_server;
std::unique_ptr<LinkProxy> g_proxy;

void BM_RoundTrip(benchmark::State& state, bool proxied) {
  HiredisConnection connection(proxied ? g_proxy->endpoint() : g_server->endpoint(),
                               ConnectionOptions{});
  for (auto _ : state) {
    const RedisResult result = connection.command({"PING"});
    if (!result.ok()) {
      state.SkipWithError(result.describe().c_str());
      break;
    }
  }
}

// print_ratios: proxied against direct per round trip, for each run and aggregate.
void print_ratios(const RatioReporter::Times& times) {
  for (const auto& [name, time] : times) {
    if (!name.starts_with("ping/proxied")) continue;
    const std::string direct = "ping/direct" + name.substr(12);
    const auto found = times.find(direct);
    if (found == times.end() || found->second <= 0) continue;
    std::printf("%-44s %.2f x per round trip (%.1f us vs %.1f us)\n",
                (name + " / direct").c_str(), time / found->second, time / 1e3,
                found->second / 1e3);
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
    g_proxy = LinkProxy::start(g_server->endpoint());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "proxy_bench: %s\n", error.what());
    return 3;
  }
  // Real time: a round trip waits for the server (and the proxy's thread), which CPU time would
  // not count.
  benchmark::RegisterBenchmark("ping/direct", BM_RoundTrip, false)->UseRealTime();
  benchmark::RegisterBenchmark("ping/proxied", BM_RoundTrip, true)->UseRealTime();
  RatioReporter reporter(print_ratios);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  g_proxy.reset();
  g_server.reset();
  return 0;
}
