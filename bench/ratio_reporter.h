// ratio_reporter.h: a Google Benchmark reporter that prints the console output, then, at the end,
// ratios between benchmarks computed by the caller from each benchmark's real time.
//
//   RatioReporter reporter([](const RatioReporter::Times& times) { ... std::printf ... });
//   benchmark::RunSpecifiedBenchmarks(&reporter);
#pragma once

#include <benchmark/benchmark.h>

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace locksim {

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  // Times: adjusted real time (in each benchmark's unit) by benchmark name, aggregates included
  // ("x/real_time_median"), except standard deviations and coefficients of variation, whose
  // ratios mean nothing.
  using Times = std::map<std::string, double>;
  explicit RatioReporter(std::function<void(const Times&)> print) : print_(std::move(print)) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred || run.aggregate_name == "stddev" || run.aggregate_name == "cv") {
        continue;
      }
      times_[run.benchmark_name()] = run.GetAdjustedRealTime();
    }
    ConsoleReporter::ReportRuns(runs);
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    print_(times_);
  }

 private:
  std::function<void(const Times&)> print_;
  Times times_;
};

}  // namespace locksim
