// report_test: expectation matching (verdict and exact causes), results.json fields, the words of
// summary.md, and trace.json's async hold slices, on a hand-written history with a violation; and
// report files are written completely or not at all.
#include <algorithm>
#include <tuple>
#include <fstream>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "sim/report/files.h"
#include "sim/report/results.h"
#include "sim/report/run_record.h"
#include "sim/report/summary.h"
#include "sim/report/trace.h"
#include "tests/support/file_size_limit.h"

namespace locksim {
namespace {

// A holds from 1 ms to 300 ms with a 100 ms lease; B gets in at 150 ms.
History overlapping_history() {
  History h;
  h.clients = {"A", "B"};
  const KeyId lock = h.key_id("lock");
  auto make = [&h, lock](Nanos t, int client, EventType type, Op f, std::int64_t ttl_ms = -1,
                         std::int64_t count = -1) {
    Event e = Event::make(type, f);
    e.time_ns = t;
    e.client = client;
    e.key = lock;
    e.ttl_ms = static_cast<std::int32_t>(ttl_ms);
    if (f == Op::kAcquire && type == EventType::kOk) {
      e.token = h.strings.add("t" + std::to_string(client));
      e.acquire().attempts = static_cast<std::int32_t>(count);
    }
    if (f == Op::kRelease && type == EventType::kOk) {
      e.release().deleted = static_cast<std::int32_t>(count);
    }
    return e;
  };
  const Nanos ms = kNanosPerMilli;
  h.events = {make(0, 0, EventType::kInvoke, Op::kAcquire, 100),
              make(1 * ms, 0, EventType::kOk, Op::kAcquire, 100, 1),
              make(1 * ms, 0, EventType::kOk, Op::kEnter),
              make(2 * ms, 1, EventType::kInvoke, Op::kAcquire, 100),
              make(150 * ms, 1, EventType::kOk, Op::kAcquire, 100, 30),
              make(150 * ms, 1, EventType::kOk, Op::kEnter),
              make(300 * ms, 0, EventType::kOk, Op::kExit),
              make(300 * ms, 0, EventType::kInvoke, Op::kRelease),
              make(301 * ms, 0, EventType::kOk, Op::kRelease, -1, 0),
              make(320 * ms, 1, EventType::kOk, Op::kExit),
              make(320 * ms, 1, EventType::kInvoke, Op::kRelease),
              make(321 * ms, 1, EventType::kOk, Op::kRelease, -1, 1)};
  return h;
}

Scenario tiny_scenario() {
  Scenario s;
  s.name = "tiny";
  s.source = {"B", "a claim"};
  s.variants = {"lua_owner"};
  s.clients = {"A", "B"};
  return s;
}

Expectation expect(Verdict verdict, std::optional<std::set<std::string>> causes = std::nullopt) {
  Expectation e;
  e.verdict = verdict;
  e.causes = std::move(causes);
  return e;
}

// The scenario's check block reaches the checker: its stuck threshold and whether to look for
// barging.
TEST(CheckOptions, FollowTheScenariosCheckBlock) {
  Scenario s = tiny_scenario();
  s.check.stuck_ms = 700;
  EXPECT_EQ(check_options(s).stuck_threshold_ns, ms_to_ns(700));
  EXPECT_FALSE(check_options(s).barging);
  s.check.barging = true;
  EXPECT_TRUE(check_options(s).barging);
}

// An expectation matches on the verdict, and on the exact cause set when one is given.
TEST(Expectation, VerdictAndExactCauses) {
  const CheckResult r = check_history(overlapping_history(), {});
  ASSERT_EQ(r.verdict, Verdict::kMutexViolation);
  EXPECT_TRUE(matches_expectation(expect(Verdict::kMutexViolation), r));
  EXPECT_TRUE(matches_expectation(
      expect(Verdict::kMutexViolation, std::set<std::string>{"lease_expired"}), r));
  EXPECT_FALSE(matches_expectation(
      expect(Verdict::kMutexViolation, std::set<std::string>{"lease_expired", "stale_release"}),
      r));
  EXPECT_FALSE(matches_expectation(expect(Verdict::kOk), r));
  Expectation any = expect(Verdict::kOk);
  any.any = true;  // reported, not asserted
  EXPECT_TRUE(matches_expectation(any, r));
  Expectation intact = any;
  intact.resource_intact = true;  // no resource findings in this history
  EXPECT_TRUE(matches_expectation(intact, r));
  intact.resource_intact = false;
  EXPECT_FALSE(matches_expectation(intact, r));
  Expectation unfaulted = any;
  unfaulted.max_violations_outside_faults = 0;  // the one violation is in an unfaulted window
  EXPECT_FALSE(matches_expectation(unfaulted, r));
  EXPECT_EQ(describe_observation(r), "mutex_violation (lease_expired)");
  // A fenced store's refusal is what kept the resource intact: the observation says so.
  CheckResult fenced = r;
  fenced.stats.stale_writes_rejected = 1;
  EXPECT_EQ(describe_observation(fenced), "mutex_violation (lease_expired), stale write rejected");
  // Barging changes no verdict: the observation names it, so a user sees why a fair lock failed.
  CheckResult barged = r;
  barged.findings.push_back(Finding{.kind = FindingKind::kBarging, .cause = "", .key = "lock",
                                    .clients = {2, 1}, .from_ns = 0, .to_ns = 1, .amount = 0,
                                    .record = "", .words = "C barged past B"});
  EXPECT_EQ(describe_observation(barged), "mutex_violation (lease_expired), barging");
}

VariantRun judged_run() {
  VariantRun run;
  run.variant = "lua_owner";
  run.expected = expect(Verdict::kMutexViolation, std::set<std::string>{"lease_expired"});
  run.history = overlapping_history();
  run.result = check_history(run.history, {});
  run.matches = matches_expectation(run.expected, run.result);
  run.notes = {"12.0 ms: B (step-3): something worth knowing"};
  return run;
}

RunInfo info() {
  RunInfo i;
  i.run_id = "20261122-000000-s7";
  i.seed = 7;
  i.redis_version = "7.0.15";
  i.commit = "abc";
  return i;
}

// results.json carries the schema version, the context block, the violation as a finding in ms
// with its clients by name, and the hold windows with their lease ends.
TEST(Results, SchemaContextAndViolation) {
  const auto j = variant_results_json(tiny_scenario(), judged_run(), info());
  EXPECT_EQ(j["schema_version"], kResultsSchemaVersion);
  EXPECT_EQ(j["context"]["seed"], 7);
  EXPECT_EQ(j["context"]["variant"], "lua_owner");
  EXPECT_EQ(j["context"]["redis_version"], "7.0.15");
  EXPECT_EQ(j["observed"]["verdict"], "mutex_violation");
  EXPECT_TRUE(j["matches"].get<bool>());
  // The violation first, then both holders' overruns (each stayed inside past its lease).
  ASSERT_EQ(j["findings"].size(), 3u);
  EXPECT_EQ(j["findings"][1]["kind"], "lease_overrun");
  EXPECT_EQ(j["findings"][1]["clients"], (nlohmann::json{"A"}));
  EXPECT_DOUBLE_EQ(j["findings"][1]["from_ms"].get<double>(), 101.0);
  EXPECT_EQ(j["findings"][2]["kind"], "lease_overrun");
  const auto& v = j["findings"][0];
  EXPECT_EQ(v["kind"], "mutex_violation");
  EXPECT_EQ(v["clients"], (nlohmann::json{"A", "B"}));
  EXPECT_DOUBLE_EQ(v["from_ms"].get<double>(), 150.0);
  EXPECT_DOUBLE_EQ(v["to_ms"].get<double>(), 300.0);
  EXPECT_EQ(v["cause"], "lease_expired");
  EXPECT_NE(v["words"].get<std::string>().find("ran out at 101.0 ms"), std::string::npos);
  ASSERT_EQ(j["holds"].size(), 2u);
  EXPECT_EQ(j["holds"][0]["client"], "A");
  EXPECT_DOUBLE_EQ(j["holds"][0]["lease_end_ms"].get<double>(), 101.0);
  EXPECT_EQ(j["holds"][1]["ended_by"], "exit");
  // Two samples: a p50 is stated, a p99 is not.
  EXPECT_TRUE(j["stats"]["acquire_latency_p99_ms"].is_null());
  EXPECT_EQ(j["stats"]["latency_samples"], 2);
}

// summary.md has the table row and states the anomaly in words with both clients.
TEST(Summary, TableAndAnomalyInWords) {
  const std::string md = summary_markdown(tiny_scenario(), {judged_run()}, info());
  EXPECT_NE(md.find("| lua_owner | mutex_violation (lease_expired) | mutex_violation "
                    "(lease_expired) | yes |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("Mutual exclusion violated"), std::string::npos);
  EXPECT_NE(md.find("150.0"), std::string::npos);  // the overlap in ms
  EXPECT_NE(md.find("something worth knowing"), std::string::npos);
}

// fenced_run: the overlapping history with a fenced stock of 10: A (fencing 1) reads 10 before B
// (fencing 2) gets in; B sells one, and the store refuses A's stale write of 9 at 299 ms.
VariantRun fenced_run(Scenario& scenario) {
  scenario.resource.kind = ResourceConfig::Kind::kFencedCounter;
  scenario.resource.name = "stock";
  scenario.resource.initial = 10;
  VariantRun run;
  run.variant = "lua_owner_fenced";
  run.expected = expect(Verdict::kMutexViolation, std::set<std::string>{"lease_expired"});
  run.expected.resource_intact = true;
  run.history = overlapping_history();
  History& h = run.history;
  const KeyId stock = h.key_id("stock");
  for (Event& e : h.events) {
    if (e.f == Op::kAcquire && e.type == EventType::kOk) e.acquire().fencing = e.client + 1;
  }
  auto resource = [stock](Nanos t, int client, EventType type, Op f, std::int64_t value) {
    Event e = Event::make(type, f);
    e.time_ns = t;
    e.client = client;
    e.key = stock;
    e.resource().value = value;
    if (f == Op::kWrite) {
      e.resource().base = 10;
      e.resource().has_base = true;
      e.resource().fencing = client + 1;
    }
    return e;
  };
  const Nanos ms = kNanosPerMilli;
  Event refused = resource(299 * ms, 0, EventType::kFail, Op::kWrite, 9);
  refused.error = ErrorKind::kFenced;
  for (const Event& e : {resource(2 * ms, 0, EventType::kOk, Op::kRead, 10),
                         resource(151 * ms, 1, EventType::kOk, Op::kRead, 10),
                         resource(152 * ms, 1, EventType::kOk, Op::kWrite, 9), refused}) {
    h.events.push_back(e);
  }
  std::stable_sort(h.events.begin(), h.events.end(),
                   [](const Event& a, const Event& b) { return a.time_ns < b.time_ns; });
  run.result = check_history(h, check_options(scenario));
  run.matches = matches_expectation(run.expected, run.result);
  return run;
}

// A stale write is counted as accepted or rejected in results.json's stats and in summary.md's
// findings cell, and each one is stated in words, through the one rendering path of findings.
TEST(Summary, StaleWritesAcceptedAndRejected) {
  Scenario scenario = tiny_scenario();
  const VariantRun run = fenced_run(scenario);
  EXPECT_TRUE(run.matches);
  const auto j = variant_results_json(scenario, run, info());
  EXPECT_EQ(j["stats"]["stale_writes_accepted"], 0);
  EXPECT_EQ(j["stats"]["stale_writes_rejected"], 1);
  EXPECT_TRUE(j["resource_intact"].get<bool>());
  bool listed = false;
  for (const auto& finding : j["findings"]) {
    listed |= finding["kind"] == "stale_write" && finding["cause"] == "rejected" &&
              finding["clients"] == nlohmann::json{"A", "B"};
  }
  EXPECT_TRUE(listed) << j["findings"].dump(2);
  const std::string md = summary_markdown(scenario, {run}, info());
  EXPECT_NE(md.find("1 overlap(s), stale writes 0 accepted / 1 rejected, 2 lease overrun(s), "
                    "longest "),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- Stale write (rejected): A wrote 9 to stock at 299.0 ms"), std::string::npos)
      << md;
  EXPECT_NE(md.find("Resource `stock` intact"), std::string::npos) << md;
}

// trace.json is valid trace-event JSON with one async begin/end pair per hold, the violation as
// red slices on the later holder's track and on the violations track, and a named track per
// client plus the violations track.
TEST(Trace, AsyncSlicesPerHoldAndViolation) {
  const VariantRun run = judged_run();
  const auto doc = nlohmann::json::parse(trace_json(run.history, run.result, "tiny / lua_owner"));
  int hold_begin = 0, hold_end = 0, violation = 0, thread_names = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") ++thread_names;
    if (e.value("cat", "") == "hold") (e["ph"] == "b" ? hold_begin : hold_end) += 1;
    if (e.value("cat", "") == "violation") {
      ++violation;
      EXPECT_EQ(e["ph"], "X");
      EXPECT_EQ(e["cname"], "terrible");                  // drawn red
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 150000.0);  // microseconds
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 150000.0);
      EXPECT_TRUE(e["tid"] == 0 || e["tid"] == 2);  // violations track, B's track
    }
  }
  EXPECT_EQ(thread_names, 3);
  EXPECT_EQ(hold_begin, 2);
  EXPECT_EQ(hold_end, 2);
  EXPECT_EQ(violation, 2);
}

// write_trace_json streams a large trace (several MB, written in pieces) and the file is exactly
// the document trace_json builds in memory.
TEST(Trace, StreamedFileEqualsTheDocument) {
  namespace fs = std::filesystem;
  History h;
  h.clients = {"A"};
  const KeyId lock = h.key_id("lock");
  for (int cycle = 0; cycle < 20000; ++cycle) {
    const Nanos t = static_cast<Nanos>(cycle) * 1000;
    for (const auto& [offset, type, f] : {std::tuple{0, EventType::kInvoke, Op::kAcquire},
                                          std::tuple{100, EventType::kOk, Op::kAcquire},
                                          std::tuple{100, EventType::kOk, Op::kEnter},
                                          std::tuple{500, EventType::kOk, Op::kExit},
                                          std::tuple{500, EventType::kInvoke, Op::kRelease},
                                          std::tuple{600, EventType::kOk, Op::kRelease}}) {
      Event e = Event::make(type, f);
      e.time_ns = t + offset;
      e.key = lock;
      if (f == Op::kAcquire) e.ttl_ms = 100;
      if (f == Op::kAcquire && type == EventType::kOk) e.token = h.strings.add("t");
      if (f == Op::kRelease && type == EventType::kOk) e.release().deleted = 1;
      h.events.push_back(e);
    }
  }
  const CheckResult result = check_history(h, CheckOptions{});
  ASSERT_EQ(result.holds.size(), 20000u);
  const std::string document = trace_json(h, result, "big / lua_owner");
  ASSERT_GT(document.size(), 3u << 20);  // more than one piece
  const fs::path path =
      fs::temp_directory_path() / ("locksim-trace-" + std::to_string(::getpid()) + ".json");
  write_trace_json(path, h, result, "big / lua_owner");
  std::ifstream in(path, std::ios::binary);
  const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  fs::remove(path);
  EXPECT_EQ(file.size(), document.size());
  EXPECT_TRUE(file == document);
  EXPECT_TRUE(nlohmann::json::accept(file));
}

// A report file that does not fit on the disk (RLIMIT_FSIZE: EFBIG) fails naming the file and the
// reason, and leaves no temporary behind.
TEST(Files, FullDiskNamesTheReasonAndLeavesNoTemporary) {
  namespace fs = std::filesystem;
  const fs::path path =
      fs::temp_directory_path() / ("locksim-report-full-" + std::to_string(::getpid()) + ".json");
  fs::remove(path);
  const std::string message = test_support::message_under_file_size_limit(
      4096, [&] { write_file_atomically(path, std::string(100000, 'x')); });
  EXPECT_NE(message.find(path.string() + ".tmp: File too large"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(path.string() + ".tmp"));
  EXPECT_FALSE(fs::exists(path));
}

}  // namespace
}  // namespace locksim
