// html_report_test: report.html draws each violation where the overlap is, on the rows of the two
// holders and never narrower than a mark, marks the part of a hold past its lease, draws every
// call from invoke to completion coloured by its result and the key's owner with its TTL, gives
// the script each finding's interval and clients, escapes every name and word, stays bounded
// with many clients; both pages colour an outcome by safety and mark "as expected" apart;
// index.html links every scenario x variant cell to its variant's section, finds the result sets
// one level down, and skips hostile result files (a FIFO, a huge file, malformed JSON) without
// reading them.
#include "sim/report/html_report.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/report/files.h"
#include "sim/report/html_index.h"
#include "sim/report/html_text.h"
#include "sim/report/results.h"
#include "sim/report/run_record.h"

namespace locksim {
namespace {

namespace fs = std::filesystem;
constexpr Nanos kMs = kNanosPerMilli;

Event event(History& h, Nanos t, int client, EventType type, Op f, std::int32_t ttl_ms = -1) {
  Event e = Event::make(type, f);
  e.time_ns = t;
  e.client = client;
  e.key = h.key_id("lock");
  e.ttl_ms = ttl_ms;
  if (f == Op::kAcquire && type == EventType::kOk) e.token = h.strings.add("t");
  if (f == Op::kRelease && type == EventType::kOk) e.release().deleted = 1;
  return e;
}

// A holds [1, 300] ms with a 100 ms lease (fencing number 7); B holds [150, 320] ms.
History overlapping(const std::vector<std::string>& names = {"A", "B"}) {
  History h;
  h.clients = names;
  h.events.push_back(event(h, 0, 0, EventType::kInvoke, Op::kAcquire, 100));
  h.events.push_back(event(h, 1 * kMs, 0, EventType::kOk, Op::kAcquire, 100));
  h.events.back().acquire().fencing = 7;
  h.events.push_back(event(h, 1 * kMs, 0, EventType::kOk, Op::kEnter));
  h.events.push_back(event(h, 2 * kMs, 1, EventType::kInvoke, Op::kAcquire, 100));
  h.events.push_back(event(h, 150 * kMs, 1, EventType::kOk, Op::kAcquire, 100));
  h.events.push_back(event(h, 150 * kMs, 1, EventType::kOk, Op::kEnter));
  h.events.push_back(event(h, 300 * kMs, 0, EventType::kOk, Op::kExit));
  h.events.push_back(event(h, 320 * kMs, 1, EventType::kOk, Op::kExit));
  h.events.push_back(event(h, 320 * kMs, 1, EventType::kInvoke, Op::kRelease));
  h.events.push_back(event(h, 321 * kMs, 1, EventType::kOk, Op::kRelease));
  return h;
}

Scenario scenario(const std::string& name = "tiny") {
  Scenario s;
  s.name = name;
  s.source = {"B", "a claim"};
  s.variants = {"lua_owner"};
  s.clients = {"A", "B"};
  return s;
}

VariantRun judged(History h, Verdict expected) {
  VariantRun run;
  run.variant = "lua_owner";
  run.expected.verdict = expected;
  run.result = check_history(h, {});
  run.history = std::move(h);
  run.matches = matches_expectation(run.expected, run.result);
  return run;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

// x: where the report's timeline puts `ms` on an axis that ends at `end_ms` (its geometry:
// 96 units of names on the left, 16 of margin on the right, 1000 in all).
double x(double ms, double end_ms) { return 96 + ms / end_ms * (1000 - 96 - 16); }

TEST(RunReport, DrawsTheViolationWhereTheOverlapIsOnBothHoldersRows) {
  const VariantRun run = judged(overlapping(), Verdict::kMutexViolation);
  ASSERT_EQ(run.result.verdict, Verdict::kMutexViolation);
  const std::string page = run_report_html(scenario(), {run}, RunInfo{});
  EXPECT_NE(page.find("<section class=\"variant\" id=\"v-lua_owner\" data-variant=\"lua_owner\" "
                      "data-outcome=\"ok\" data-safety=\"violation\">"),
            std::string::npos);
  EXPECT_EQ(count(page, "<rect class=\"violation\""), 2u);  // A's row and B's row
  EXPECT_EQ(count(page, "<rect class=\"violation-band\""), 1u);
  // The overlap is [150, 300] ms on an axis to 321 ms.
  const std::regex violation(
      "<rect class=\"violation\" x=\"([0-9.]+)\" y=\"[0-9.]+\" width=\"([0-9.]+)\"");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(page, m, violation));
  EXPECT_NEAR(std::stod(m[1]), x(150, 321), 0.11);
  EXPECT_NEAR(std::stod(m[2]), x(300, 321) - x(150, 321), 0.21);
  // A's lease ran out at 101 ms while it held on to 300 ms, B's at 250 ms while it held on to
  // 320 ms: the rest of each hold is an overrun, and each lease end is marked; A's fencing number
  // is written on its hold.
  EXPECT_EQ(count(page, "<rect class=\"overrun\""), 2u);
  EXPECT_EQ(count(page, "<line class=\"lease-end\""), 2u);
  EXPECT_NE(page.find(">#7</text>"), std::string::npos);
  EXPECT_EQ(count(page, "<rect class=\"hold\""), 2u);
  EXPECT_NE(page.find("<li class=\"finding verdict zoomable\" data-kind=\"mutex_violation\""),
            std::string::npos);
  EXPECT_NE(page.find("href=\"lua_owner/history.jsonl\""), std::string::npos);
}

TEST(RunReport, AViolationIsNeverNarrowerThanAMark) {
  // A holds [1, 500.01] ms, B [500, 1000] ms: a 0.01 ms overlap on a 1000 ms axis.
  History h;
  h.clients = {"A", "B"};
  h.events.push_back(event(h, 0, 0, EventType::kInvoke, Op::kAcquire, 10000));
  h.events.push_back(event(h, 1 * kMs, 0, EventType::kOk, Op::kAcquire, 10000));
  h.events.push_back(event(h, 1 * kMs, 0, EventType::kOk, Op::kEnter));
  h.events.push_back(event(h, 2 * kMs, 1, EventType::kInvoke, Op::kAcquire, 10000));
  h.events.push_back(event(h, 500 * kMs, 1, EventType::kOk, Op::kAcquire, 10000));
  h.events.push_back(event(h, 500 * kMs, 1, EventType::kOk, Op::kEnter));
  h.events.push_back(event(h, 500 * kMs + 10'000, 0, EventType::kOk, Op::kExit));
  h.events.push_back(event(h, 1000 * kMs, 1, EventType::kOk, Op::kExit));
  const VariantRun run = judged(std::move(h), Verdict::kMutexViolation);
  ASSERT_EQ(run.result.verdict, Verdict::kMutexViolation);
  const std::string page = run_report_html(scenario(), {run}, RunInfo{});
  const std::regex violation(
      "<rect class=\"violation\" x=\"([0-9.]+)\" y=\"[0-9.]+\" width=\"([0-9.]+)\" "
      "height=\"[0-9.]+\" data-t0=\"500.000\" data-t1=\"500.010\" data-min=\"6.0\"");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(page, m, violation)) << "no violation mark over [500, 500.01] ms";
  // At least 5 of the 1000 units (the script keeps it at 6 px at any zoom), about its middle.
  EXPECT_GE(std::stod(m[2]), 5.0);
  EXPECT_NEAR(std::stod(m[1]) + std::stod(m[2]) / 2, x(500.005, 1000), 0.11);
}

TEST(RunReport, DrawsEveryCallFromInvokeToCompletionColouredByItsResult) {
  History h = overlapping();
  // C's acquire times out (unknown), and its release deletes nothing (refused).
  h.clients.push_back("C");
  h.events.push_back(event(h, 330 * kMs, 2, EventType::kInvoke, Op::kAcquire, 100));
  Event timeout = event(h, 340 * kMs, 2, EventType::kInfo, Op::kAcquire, 100);
  timeout.error = ErrorKind::kTimeout;
  h.events.push_back(timeout);
  h.events.push_back(event(h, 341 * kMs, 2, EventType::kInvoke, Op::kRelease));
  Event refused = event(h, 342 * kMs, 2, EventType::kOk, Op::kRelease);
  refused.release().deleted = 0;
  h.events.push_back(refused);
  const VariantRun run = judged(std::move(h), Verdict::kMutexViolation);
  const std::string page = run_report_html(scenario(), {run}, RunInfo{});
  EXPECT_EQ(count(page, "<rect class=\"op op-acquire res-ok\""), 2u);
  EXPECT_EQ(count(page, "<rect class=\"op op-acquire res-info\""), 1u);
  EXPECT_EQ(count(page, "<rect class=\"op op-release res-ok\""), 1u);
  EXPECT_EQ(count(page, "<rect class=\"op op-release res-fail\""), 1u);
  EXPECT_EQ(count(page, "<rect class=\"op op-enter res-ok\""), 2u);
  // B's acquire, from its invoke at 2 ms to its grant at 150 ms, with what the tooltip shows.
  EXPECT_NE(page.find("data-t0=\"2.000\" data-t1=\"150.000\" data-min=\"3.0\" data-c=\"1\" "
                      "data-op=\"acquire\" data-client=\"B\" data-result=\"ok\" "
                      "data-key=\"lock\" data-token=\"t\" data-reply=\"granted\" "
                      "data-ttl=\"100\""),
            std::string::npos);
  EXPECT_NE(page.find("data-op=\"acquire\" data-client=\"C\" data-result=\"unknown\" "
                      "data-key=\"lock\" data-reply=\"timeout\""),
            std::string::npos);
  EXPECT_NE(page.find("data-result=\"refused\" data-key=\"lock\" "
                      "data-reply=\"deleted nothing (refused)\""),
            std::string::npos);
  // The page carries its script once, and the zoom bar the script drives.
  EXPECT_EQ(count(page, "<script>"), 1u);
  EXPECT_NE(page.find("<button type=\"button\" data-zoom=\"in\""), std::string::npos);
}

// Proves a long run draws its first kMaxTimelineMarks calls whole (an acquire answered after the
// cap still has its completion), says the rest were left out, and draws none of them.
TEST(RunReport, ALongRunDrawsItsFirstCallsAndSaysTheRestWereLeftOut) {
  History h;
  h.clients = {"A", "B"};
  // B's acquire is asked first and answered last; A acquires and releases 2,000 times.
  h.events.push_back(event(h, 0, 1, EventType::kInvoke, Op::kAcquire, 100));
  Nanos t = 1;
  for (int i = 0; i < 2000; ++i) {
    h.events.push_back(event(h, t++, 0, EventType::kInvoke, Op::kAcquire, 100));
    h.events.push_back(event(h, t++, 0, EventType::kOk, Op::kAcquire, 100));
    h.events.push_back(event(h, t++, 0, EventType::kInvoke, Op::kRelease));
    h.events.push_back(event(h, t++, 0, EventType::kOk, Op::kRelease));
  }
  h.events.push_back(event(h, t++, 1, EventType::kOk, Op::kAcquire, 100));
  const VariantRun run = judged(std::move(h), Verdict::kOk);
  const std::string page = run_report_html(scenario(), {run}, RunInfo{});
  EXPECT_EQ(count(page, "<rect class=\"op "), kMaxTimelineMarks);
  // B's acquire is the first call: drawn to its grant, after every other call.
  EXPECT_EQ(count(page, "data-op=\"acquire\" data-client=\"B\" data-result=\"ok\""), 1u);
  EXPECT_EQ(count(page, "data-op=\"acquire\" data-client=\"A\""), kMaxTimelineMarks / 2);
  EXPECT_EQ(count(page, "data-op=\"release\" data-client=\"A\""), kMaxTimelineMarks / 2 - 1);
  EXPECT_NE(page.find("calls after the first " + std::to_string(kMaxTimelineMarks)),
            std::string::npos);
}

TEST(RunReport, DrawsTheKeysOwnerUntilItsTtlRunsOut) {
  // A's grant stands from 1 ms until its 100 ms TTL runs out; B's from 150 to 250 ms.
  const VariantRun run = judged(overlapping(), Verdict::kMutexViolation);
  const std::string page = run_report_html(scenario(), {run}, RunInfo{});
  EXPECT_NE(page.find("text-anchor=\"end\">owner of lock</text>"), std::string::npos);
  EXPECT_EQ(count(page, "<rect class=\"owner owner-"), 2u);
  EXPECT_NE(page.find("A owned lock on the server from 1.0 ms to 101.0 ms: its TTL ran out at "
                      "101.0 ms"),
            std::string::npos);
  EXPECT_NE(page.find("B owned lock on the server from 150.0 ms to 250.0 ms: its TTL ran out"),
            std::string::npos);
  EXPECT_EQ(count(page, "<line class=\"key-end\""), 2u);
}

TEST(RunReport, TheOwnerRowShowsAStaleReleaseDeletingAnotherClientsKey) {
  // A's lease (100 ms) runs out while it works; B is granted the key at 150 ms; A's release at
  // 161 ms deletes it: B owned the key only until then.
  History h;
  h.clients = {"A", "B"};
  h.events.push_back(event(h, 0, 0, EventType::kInvoke, Op::kAcquire, 100));
  h.events.push_back(event(h, 1 * kMs, 0, EventType::kOk, Op::kAcquire, 100));
  h.events.push_back(event(h, 1 * kMs, 0, EventType::kOk, Op::kEnter));
  h.events.push_back(event(h, 2 * kMs, 1, EventType::kInvoke, Op::kAcquire, 100));
  h.events.push_back(event(h, 150 * kMs, 1, EventType::kOk, Op::kAcquire, 100));
  h.events.push_back(event(h, 150 * kMs, 1, EventType::kOk, Op::kEnter));
  h.events.push_back(event(h, 160 * kMs, 0, EventType::kOk, Op::kExit));
  h.events.push_back(event(h, 160 * kMs, 0, EventType::kInvoke, Op::kRelease));
  h.events.push_back(event(h, 161 * kMs, 0, EventType::kOk, Op::kRelease));
  h.events.push_back(event(h, 200 * kMs, 1, EventType::kOk, Op::kExit));
  const VariantRun run = judged(std::move(h), Verdict::kMutexViolation);
  const std::string page = run_report_html(scenario(), {run}, RunInfo{});
  EXPECT_NE(page.find("B owned lock on the server from 150.0 ms to 161.0 ms: deleted by A&#39;s "
                      "release at 161.0 ms (not its own: a stale release)"),
            std::string::npos);
}

TEST(RunReport, AFindingWithAnIntervalCarriesWhatTheScriptHighlights) {
  const VariantRun run = judged(overlapping(), Verdict::kMutexViolation);
  const std::string page = run_report_html(scenario(), {run}, RunInfo{});
  // The violation is the first finding: [150, 300] ms, between A (0) and B (1); its marks carry
  // its index.
  EXPECT_NE(
      page.find("data-kind=\"mutex_violation\" data-cause=\"lease_expired\" data-finding=\"0\" "
                "data-from-ms=\"150.000\" "
                "data-to-ms=\"300.000\" data-clients=\"0 1\" tabindex=\"0\""),
      std::string::npos);
  EXPECT_EQ(count(page, "data-finding=\"0\""), 1u + 3u);  // the finding, the band, two bars
}

TEST(RunReport, TheOutcomeIsColouredBySafetyAndMarkedAsExpectedApart) {
  // An expected violation is red with a check mark; the same violation unexpected is red too,
  // with a cross.
  const std::string expected =
      run_report_html(scenario(), {judged(overlapping(), Verdict::kMutexViolation)}, RunInfo{});
  EXPECT_NE(expected.find("<tr class=\"safety-violation outcome-ok\">"), std::string::npos);
  EXPECT_NE(expected.find("<span class=\"badge safety-violation\">violation</span>"),
            std::string::npos);
  EXPECT_NE(expected.find("<span class=\"expect expect-ok\""), std::string::npos);
  EXPECT_NE(expected.find("<p class=\"legend safety-legend\">"), std::string::npos);
  const std::string unexpected =
      run_report_html(scenario(), {judged(overlapping(), Verdict::kOk)}, RunInfo{});
  EXPECT_NE(unexpected.find("<tr class=\"safety-violation outcome-mismatch\">"), std::string::npos);
  EXPECT_NE(unexpected.find("<span class=\"expect expect-mismatch\""), std::string::npos);
}

TEST(Safety, EachVerdictHasItsColour) {
  EXPECT_EQ(html::safety_of(to_string(Verdict::kMutexViolation)), "violation");
  EXPECT_EQ(html::safety_of(to_string(Verdict::kResourceCorrupted)), "violation");
  EXPECT_EQ(html::safety_of(to_string(Verdict::kDeadlock)), "liveness");
  EXPECT_EQ(html::safety_of(to_string(Verdict::kOk)), "ok");
  EXPECT_EQ(html::safety_of(to_string(Verdict::kUnknown)), "unknown");
  EXPECT_EQ(html::safety_of(to_string(Verdict::kError)), "unknown");
  EXPECT_EQ(html::safety_of("any"), "unknown");
}

TEST(RunReport, AnOutcomeThatDiffersFromTheExpectationIsAMismatch) {
  const VariantRun run = judged(overlapping(), Verdict::kOk);
  ASSERT_FALSE(run.matches);
  const std::string page = run_report_html(scenario(), {run}, RunInfo{});
  EXPECT_NE(page.find("data-outcome=\"mismatch\""), std::string::npos);
  EXPECT_NE(page.find("<b>NO</b>"), std::string::npos);
}

TEST(RunReport, EscapesNamesAndWords) {
  const std::string evil = "<img src=x onerror=alert(1)>";
  VariantRun run = judged(overlapping({evil, "B&\"'"}), Verdict::kMutexViolation);
  run.notes = {"</section><script>alert(2)</script>"};
  Scenario s = scenario();
  s.description = "<b>bold</b>";
  const std::string page = run_report_html(s, {run}, RunInfo{});
  EXPECT_EQ(page.find("<img"), std::string::npos);
  EXPECT_EQ(count(page, "<script"), 1u);  // the page's own, at the end
  EXPECT_EQ(page.find("<script>alert"), std::string::npos);
  EXPECT_EQ(page.find("<b>bold"), std::string::npos);
  EXPECT_NE(page.find("&lt;img src=x onerror=alert(1)&gt;"), std::string::npos);
  EXPECT_NE(page.find("B&amp;&quot;&#39;"), std::string::npos);
}

TEST(RunReport, ManyClientsDrawTheOnesNamedByAFindingFirstAndSayWhatIsLeftOut) {
  // 500 clients; the last two overlap, the others hold one after another.
  History h;
  for (int c = 0; c < 500; ++c) h.clients.push_back("c" + std::to_string(c));
  for (int c = 0; c < 498; ++c) {
    const Nanos t = c * 2 * kMs;
    h.events.push_back(event(h, t, c, EventType::kInvoke, Op::kAcquire, 1000));
    h.events.push_back(event(h, t, c, EventType::kOk, Op::kAcquire, 1000));
    h.events.push_back(event(h, t, c, EventType::kOk, Op::kEnter));
    h.events.push_back(event(h, t + kMs, c, EventType::kOk, Op::kExit));
    h.events.push_back(event(h, t + kMs, c, EventType::kInvoke, Op::kRelease));
    h.events.push_back(event(h, t + kMs, c, EventType::kOk, Op::kRelease));
  }
  const Nanos t = 1000 * kMs;
  for (const int c : {498, 499}) {
    h.events.push_back(event(h, t, c, EventType::kInvoke, Op::kAcquire, 1000));
    h.events.push_back(event(h, t + (c - 497) * kMs, c, EventType::kOk, Op::kAcquire, 1000));
    h.events.push_back(event(h, t + (c - 497) * kMs, c, EventType::kOk, Op::kEnter));
  }
  for (const int c : {498, 499})
    h.events.push_back(event(h, t + 10 * kMs, c, EventType::kOk, Op::kExit));
  const VariantRun run = judged(std::move(h), Verdict::kMutexViolation);
  ASSERT_EQ(run.result.verdict, Verdict::kMutexViolation);
  const std::string page = run_report_html(scenario(), {run}, RunInfo{});
  EXPECT_EQ(count(page, "text-anchor=\"end\">c"), kMaxTimelineRows);
  EXPECT_NE(page.find("text-anchor=\"end\">c498<"), std::string::npos);
  EXPECT_NE(page.find("text-anchor=\"end\">c499<"), std::string::npos);
  EXPECT_NE(page.find("Not drawn: 460 of 500 clients"), std::string::npos);
  EXPECT_EQ(count(page, "<rect class=\"violation\""), 2u);
}

// TempDir: a directory removed at the end of the test.
struct TempDir {
  fs::path path =
      fs::temp_directory_path() / ("locksim-html-" + std::to_string(::getpid()) + "-" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TempDir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// write_run: a scenario's run as `locksim run` writes it: results.json, report.html, `latest`.
void write_run(const fs::path& set_dir, const std::string& name, const std::string& run_id,
               Verdict expected, const std::string& judged_as = "") {
  const fs::path run_dir = set_dir / name / run_id;
  fs::create_directories(run_dir);
  RunInfo info;
  info.run_id = run_id;
  const Scenario s = scenario(name);
  std::vector<VariantRun> runs = {judged(overlapping(), expected)};
  runs[0].judged = judged_as;
  if (!judged_as.empty()) runs[0].judged_why = "why it is judged " + judged_as;
  write_file_atomically(run_dir / "results.json",
                        scenario_results_json(s, runs, info).dump(2) + "\n");
  write_file_atomically(run_dir / "report.html", run_report_html(s, runs, info));
  fs::create_directory_symlink(run_id, set_dir / name / "latest");
}

TEST(Index, LinksEveryCellToItsVariantsSectionOfTheLatestRun) {
  TempDir out;
  write_run(out.path, "stale-release", "20261126-100000-s1-aaaaaa", Verdict::kMutexViolation);
  write_run(out.path, "other", "20261126-100001-s1-bbbbbb", Verdict::kOk);
  IndexSummary summary;
  const std::string page = index_html(out.path, &summary);
  EXPECT_EQ(summary.result_sets, 1u);
  EXPECT_EQ(summary.runs, 2u);
  EXPECT_EQ(summary.mismatches, 1u);
  EXPECT_NE(page.find("<table id=\"catalogue\""), std::string::npos);
  // Both cells observed a violation: red, whether expected (a check mark) or not (a cross).
  EXPECT_NE(page.find("<td class=\"cell safety-violation outcome-ok\" "
                      "data-scenario=\"stale-release\" data-variant=\"lua_owner\""),
            std::string::npos);
  EXPECT_NE(page.find("<span class=\"expect expect-ok\" title=\"as the scenario expects\">"
                      "&#10003;</span></a></td>"),
            std::string::npos);
  EXPECT_NE(page.find("<p class=\"legend safety-legend\">"), std::string::npos);
  EXPECT_NE(page.find("href=\"stale-release/20261126-100000-s1-aaaaaa/report.html#v-lua_owner\""),
            std::string::npos);
  EXPECT_NE(page.find("<td class=\"cell safety-violation outcome-mismatch\" "
                      "data-scenario=\"other\""),
            std::string::npos);
}

TEST(Index, AViolationSaysWhetherItIsTheLocksOwnOrALimitEveryLeaseHas) {
  TempDir out;
  write_run(out.path, "expiry", "20261126-100000-s1-aaaaaa", Verdict::kMutexViolation, "limit");
  write_run(out.path, "stale", "20261126-100001-s1-bbbbbb", Verdict::kMutexViolation, "own");
  write_run(out.path, "unjudged", "20261126-100002-s1-cccccc", Verdict::kMutexViolation);
  const std::string page = index_html(out.path, nullptr);
  EXPECT_NE(page.find("<span class=\"judged judged-limit\" title=\"why it is judged limit\">"
                      "lease limit</span>"),
            std::string::npos);
  EXPECT_NE(page.find("<span class=\"judged judged-own\" title=\"why it is judged own\">"
                      "own bug</span>"),
            std::string::npos);
  EXPECT_NE(page.find("; the lock&#39;s own bug: why it is judged own\""), std::string::npos);
  // The legend names both marks; the unjudged cell has none (3 cells, 2 marks, 2 in the legend).
  EXPECT_EQ(count(page, "<span class=\"judged judged-"), 4u);
  // The run's own page says it in words too.
  const std::string report =
      read_file(out.path / "stale" / "20261126-100001-s1-bbbbbb" / "report.html");
  EXPECT_NE(report.find("Judged the lock's own bug: why it is judged own."), std::string::npos);
}

TEST(Index, FindsTheResultSetsOneLevelDown) {
  TempDir out;
  write_run(out.path, "stale-release", "r1", Verdict::kMutexViolation);
  write_run(out.path / "libraries", "stale-release", "r2", Verdict::kMutexViolation);
  IndexSummary summary;
  const std::string page = index_html(out.path, &summary);
  EXPECT_EQ(summary.result_sets, 2u);
  EXPECT_NE(page.find("<table id=\"libraries\""), std::string::npos);
  EXPECT_NE(page.find("href=\"libraries/stale-release/r2/report.html#v-lua_owner\""),
            std::string::npos);
}

TEST(Index, SkipsHostileResultFilesWithoutReadingThem) {
  TempDir out;
  write_run(out.path, "good", "r1", Verdict::kMutexViolation);
  // A FIFO: reading it would block for ever.
  fs::create_directories(out.path / "fifo" / "r");
  fs::create_directory_symlink("r", out.path / "fifo" / "latest");
  ASSERT_EQ(::mkfifo((out.path / "fifo" / "r" / "results.json").c_str(), 0600), 0);
  // A sparse file larger than the limit: never read.
  fs::create_directories(out.path / "huge" / "r");
  fs::create_directory_symlink("r", out.path / "huge" / "latest");
  fs::resize_file((std::ofstream(out.path / "huge" / "r" / "results.json"),
                   out.path / "huge" / "r" / "results.json"),
                  kMaxIndexedFileBytes + 1);
  // Malformed JSON, and deeply nested JSON.
  fs::create_directories(out.path / "bad" / "r");
  fs::create_directory_symlink("r", out.path / "bad" / "latest");
  std::ofstream(out.path / "bad" / "r" / "results.json")
      << "{\"context\": [" << std::string(100000, '[');
  IndexSummary summary;
  const std::string page = index_html(out.path, &summary);
  EXPECT_EQ(summary.runs, 1u);
  EXPECT_EQ(summary.unreadable, 3u);
  EXPECT_NE(page.find("3 result files could not be read"), std::string::npos);
}

TEST(Index, ShowsSweepsAndContentionWithTheirPlotsWhenDrawn) {
  TempDir out;
  write_file_atomically(out.path / "ttl.map.json",
                        R"({"schema":1,"group":"ttl","parameter":"ttl_ms","unit":"ms",)"
                        R"("variants":[{"variant":"lua_owner","line":"l","breaks_when":"smaller",)"
                        R"("safe_edge":200,"breaking_edge":100,"points":[{"value":100,)"
                        R"("runs":1,"decided":1,"violations":1},{"value":200,"runs":1,)"
                        R"("decided":1,"violations":0}]}]})");
  fs::create_directories(out.path / "contention" / "c1");
  fs::create_directory_symlink("c1", out.path / "contention" / "latest");
  write_file_atomically(out.path / "contention" / "c1" / "contention.json",
                        R"({"schema":1,"studies":[{"name":"one-key","points":[{"variant":)"
                        R"("lua_owner","strategy":"spin","clients":4,"throughput_per_s":1234,)"
                        R"("latency":{"p50_ns":1000000,"p99_ns":5000000},"jain":0.98,)"
                        R"("verdict":"ok"}]}]})");
  write_file_atomically(out.path / "contention" / "c1" / "one-key-throughput.png", "png");
  IndexSummary summary;
  const std::string page = index_html(out.path, &summary);
  EXPECT_EQ(summary.sweeps, 1u);
  EXPECT_EQ(summary.studies, 1u);
  EXPECT_NE(page.find("<section id=\"sweeps\">"), std::string::npos);
  EXPECT_NE(page.find("<td>200 ms</td><td>100 ms</td>"), std::string::npos);
  EXPECT_NE(
      page.find("<span class=\"point safety-violation\" title=\"1 of 1 decided runs broke\">100<"),
      std::string::npos);
  EXPECT_NE(page.find("<span class=\"point safety-ok\" title=\"0 of 1 decided runs broke\">200<"),
            std::string::npos);
  EXPECT_EQ(page.find("ttl-sweep.png"), std::string::npos);  // not drawn: no image to break
  EXPECT_NE(page.find("<section id=\"contention\">"), std::string::npos);
  EXPECT_NE(page.find("src=\"contention/c1/one-key-throughput.png\""), std::string::npos);
  EXPECT_EQ(page.find("one-key-latency.png"), std::string::npos);
  EXPECT_NE(page.find(">1234<"), std::string::npos);
}

TEST(Index, ANonDirectoryIsAnError) {
  EXPECT_THROW(index_html("/nonexistent/locksim"), EnvironmentError);
}

}  // namespace
}  // namespace locksim
