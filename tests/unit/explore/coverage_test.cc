// coverage_test: a schedule's coverage (sim/explore/coverage.h): on hand-written histories, each
// fault counts at the place of the lock it struck and each race of two clients' operations on one
// key is seen exactly when their intervals overlap; on the simulator, scripted schedules cover
// exactly the items they were written for; the words of the items read back.
#include "sim/explore/coverage.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "sim/explore/schedule.h"
#include "sim/lock/registry.h"
#include "tests/unit/history_builder.h"

namespace locksim {
namespace {

using Json = nlohmann::json;
using test::HistoryBuilder;
using test::ms;

const std::vector<LockVariant::CheckpointSite> kAfterSetnx = {{"after_setnx", true}};
const std::vector<std::string> kAfterSetnxPoints = {"after_setnx"};

// words: a coverage in words, checkpoints named as in kAfterSetnx.
std::set<std::string> words(const Coverage& covered) {
  std::set<std::string> out;
  covered.for_each([&](CoverageItem item) { out.insert(coverage_word(item, kAfterSetnxPoints)); });
  return out;
}

std::set<std::string> covered_by(const History& history, const Scenario& scenario = Scenario{}) {
  return words(schedule_coverage(scenario, history, kAfterSetnx));
}

// Proves two acquires that overlap are a race, and that one that starts as the other's completion
// is recorded (later in the history) is none.
TEST(Coverage, OverlappingAcquiresRaceAndTouchingOnesDoNot) {
  HistoryBuilder overlap;
  overlap.acquire_invoke(ms(0), 0).acquire_invoke(ms(0.5), 1).acquire_ok(ms(1), 0);
  overlap.acquire_end(ms(10), 1, EventType::kFail).release(ms(20), ms(21), 0);
  EXPECT_EQ(covered_by(overlap.build()), std::set<std::string>{"acquire/acquire"});

  HistoryBuilder touching;
  touching.acquire_invoke(ms(0), 0).acquire_ok(ms(1), 0).acquire_invoke(ms(1), 1);
  touching.acquire_end(ms(10), 1, EventType::kFail).release(ms(20), ms(21), 0);
  EXPECT_EQ(covered_by(touching.build()), std::set<std::string>{});

  // On two keys, nothing races.
  HistoryBuilder keys;
  keys.acquire_invoke(ms(0), 0, -1, "a").acquire_invoke(ms(0.5), 1, -1, "b");
  keys.acquire_ok(ms(1), 0, -1, "a").acquire_ok(ms(1), 1, -1, "b");
  EXPECT_EQ(covered_by(keys.build()), std::set<std::string>{});
}

// Proves a release that overlaps another client's acquire is release/acquire, and a renewal that
// overlaps it extend/acquire, whichever was invoked first.
TEST(Coverage, AReleaseOrARenewalDuringAnotherClientsAcquireRace) {
  HistoryBuilder release;
  release.hold(0, ms(0), ms(1), ms(5), ms(6)).acquire_invoke(ms(5.5), 1).acquire_ok(ms(7), 1);
  EXPECT_EQ(covered_by(release.build()), std::set<std::string>{"release/acquire"});

  HistoryBuilder extend;
  extend.acquire_invoke(ms(0), 0, 100).acquire_ok(ms(1), 0, 100).acquire_invoke(ms(10), 1, 100);
  extend.extend(ms(30), ms(31), 0, 100).acquire_end(ms(40), 1, EventType::kFail);
  extend.release(ms(50), ms(51), 0);
  EXPECT_EQ(covered_by(extend.build()), std::set<std::string>{"extend/acquire"});
}

// Proves release/expiry needs the release to hold the whole span in which the lease could have
// run out: invoked before it could have (sent + TTL), ended after it certainly had (ok + TTL).
TEST(Coverage, AReleaseRacesItsExpiryOnlyIfItHoldsTheWholeSpanOfIt) {
  const auto release_from_to = [](double invoke, double done) {
    HistoryBuilder h;
    h.acquire_invoke(ms(0), 0, 100).acquire_ok(ms(2), 0, 100).sent_at(ms(0));
    h.release(ms(invoke), ms(done), 0, 0);
    return covered_by(h.build());
  };
  EXPECT_EQ(release_from_to(90, 150), std::set<std::string>{"release/expiry"});
  EXPECT_EQ(release_from_to(99.9, 102), std::set<std::string>{"release/expiry"});
  EXPECT_EQ(release_from_to(100, 150), std::set<std::string>{});   // it may have run out first
  EXPECT_EQ(release_from_to(90, 101.9), std::set<std::string>{});  // it may still have held
  // A renewal that took moves the span.
  HistoryBuilder renewed;
  renewed.acquire_invoke(ms(0), 0, 100).acquire_ok(ms(2), 0, 100).sent_at(ms(0));
  renewed.extend(ms(50), ms(51), 0, 100).release(ms(90), ms(150), 0, 0);
  EXPECT_EQ(covered_by(renewed.build()), std::set<std::string>{});
  // A lock without a TTL never expires.
  HistoryBuilder no_ttl;
  no_ttl.hold(0, ms(0), ms(2), ms(90), ms(150));
  EXPECT_EQ(covered_by(no_ttl.build()), std::set<std::string>{});
}

// Proves a fault aimed at a client counts where that client stood when it struck, a window only
// at its start, and a crash where the crashed client was.
TEST(Coverage, AClientFaultCountsWhereItsVictimStood) {
  HistoryBuilder h({"A", "B", "nemesis"});
  h.acquire_invoke(ms(0), 0).acquire_ok(ms(1), 0);
  h.nemesis(ms(2), 2, 0, FaultKind::kPause, FaultPhase::kStart);
  h.acquire_invoke(ms(3), 1).nemesis(ms(3), 2, 1, FaultKind::kLoseReply, FaultPhase::kInstant);
  h.nemesis(ms(50), 2, 0, FaultKind::kPause, FaultPhase::kEnd);  // A is releasing: not counted
  h.event(ms(50), 0, EventType::kOk, Op::kExit).event(ms(50), 0, EventType::kInvoke, Op::kRelease);
  h.nemesis(ms(50), 2, 0, FaultKind::kDelay, FaultPhase::kStart);
  h.event(ms(60), 0, EventType::kOk, Op::kRelease).last().release().deleted = 1;
  h.nemesis(ms(61), 2, 0, FaultKind::kPartition, FaultPhase::kStart);
  h.acquire_end(ms(70), 1, EventType::kInfo).crash(ms(80), 1);
  EXPECT_EQ(covered_by(h.build()),
            (std::set<std::string>{"pause @ inside", "lose_reply @ waiting", "delay @ releasing",
                                   "partition @ outside", "crash @ outside", "release/acquire"}));

  HistoryBuilder inside;
  inside.acquire_invoke(ms(0), 0).acquire_ok(ms(1), 0).crash(ms(5), 0);
  EXPECT_EQ(covered_by(inside.build()), std::set<std::string>{"crash @ inside"});

  // A lost reply armed while A is inside (a renewing client stops its renewal before it
  // releases) strikes the release it was armed for; one armed for no call, where it was.
  HistoryBuilder armed({"A", "B", "nemesis"});
  armed.acquire_invoke(ms(0), 0).acquire_ok(ms(1), 0);
  armed.nemesis(ms(10), 2, 0, FaultKind::kLoseReply, FaultPhase::kInstant);
  armed.event(ms(12), 0, EventType::kOk, Op::kExit);
  armed.event(ms(12), 0, EventType::kInvoke, Op::kRelease);
  armed.nemesis(ms(30), 2, 1, FaultKind::kDelay, FaultPhase::kStart);
  EXPECT_EQ(covered_by(armed.build()),
            (std::set<std::string>{"lose_reply @ releasing", "delay @ outside"}));
}

// Proves a server fault covers the place of every client engaged with the lock, and outside only
// when none was.
TEST(Coverage, AServerFaultCountsWhereEveryClientStood) {
  HistoryBuilder h({"A", "B", "C", "nemesis"});
  h.acquire_invoke(ms(0), 0).acquire_ok(ms(1), 0).acquire_invoke(ms(2), 1);
  h.server_fault(ms(3), 3, FaultKind::kKillServer, "n1");
  h.server_fault(ms(3), 3, FaultKind::kDown, "n1", FaultPhase::kStart);
  h.acquire_end(ms(10), 1, EventType::kFail).release(ms(20), ms(21), 0);
  h.server_fault(ms(30), 3, FaultKind::kClockJump, "n1");
  EXPECT_EQ(covered_by(h.build()),
            (std::set<std::string>{"kill_server @ inside", "kill_server @ waiting",
                                   "clock_jump @ outside"}));
}

// scripted: a scenario of `steps` for setnx_then_expire, to name the checkpoints of calls.
Scenario scripted(const Json& steps) {
  const Json doc = {{"name", "coverage"},
                    {"description", "coverage"},
                    {"source", {{"doc", "none"}, {"claim", "coverage"}}},
                    {"variants", {"setnx_then_expire"}},
                    {"lock", {{"ttl_ms", 100}}},
                    {"clients", {"A", "B"}},
                    {"steps", steps},
                    {"expect", {{"setnx_then_expire", "any"}}}};
  return parse_schedule(doc, *find_variant("setnx_then_expire"));
}

// Proves a crash or a pause inside a call counts at the checkpoint its step names (the client's
// calls matched to its steps in order, a skipped release included), and at its place otherwise.
TEST(Coverage, AFaultInsideACallCountsAtItsStepsCheckpoint) {
  const Scenario scenario =
      scripted(Json::array({{{"client", "A"}, {"do", "acquire"}},
                            {{"client", "A"}, {"do", "release"}},
                            {{"client", "A"}, {"do", "acquire"}, {"crash_at", "after_setnx"}}}));
  // A's first acquire failed (its release was skipped); its second died at after_setnx.
  HistoryBuilder h;
  h.acquire_invoke(ms(0), 0).acquire_end(ms(5), 0, EventType::kFail);
  h.acquire_invoke(ms(6), 0).crash(ms(7), 0);
  EXPECT_EQ(covered_by(h.build(), scenario), std::set<std::string>{"crash @ after_setnx"});
  // Without the step's crash_at, the crash counts where A stood.
  EXPECT_EQ(covered_by(h.build()), std::set<std::string>{"crash @ waiting"});
  // A crash at a checkpoint after a busy answer records the failed acquire first.
  HistoryBuilder busy;
  busy.acquire_invoke(ms(0), 0).acquire_end(ms(5), 0, EventType::kFail);
  busy.acquire_invoke(ms(6), 0).acquire_end(ms(7), 0, EventType::kFail);
  busy.last().error = ErrorKind::kCrashed;
  busy.crash(ms(7), 0);
  EXPECT_EQ(covered_by(busy.build(), scenario), std::set<std::string>{"crash @ after_setnx"});

  const Scenario paused = scripted(Json::array(
      {{{"client", "A"}, {"do", "acquire"}},
       {{"client", "A"},
        {"do", "release"},
        {"pause_at", {{"point", "after_setnx"}, {"until", {{"inside", "B"}}}, {"max_ms", 50}}}}}));
  HistoryBuilder p;
  p.acquire_invoke(ms(0), 0).acquire_ok(ms(1), 0);
  p.event(ms(2), 0, EventType::kOk, Op::kExit).event(ms(2), 0, EventType::kInvoke, Op::kRelease);
  p.fault(ms(2), 0, FaultKind::kPause).last().fault().phase = FaultPhase::kStart;
  EXPECT_EQ(covered_by(p.build(), paused), std::set<std::string>{"pause @ after_setnx"});
}

// document: a scripted schedule of `variant` on the simulator.
Json document(const std::string& variant, const Json& steps) {
  return {{"name", "coverage"},
          {"description", "coverage"},
          {"source", {{"doc", "none"}, {"claim", "coverage"}}},
          {"variants", {variant}},
          {"lock",
           {{"ttl_ms", 100},
            {"acquire_timeout_ms", 300},
            {"reply_timeout_ms", 200},
            {"wait", {{"strategy", "poll"}, {"interval_ms", 5}}}}},
          {"clients", {"A", "B"}},
          {"steps", steps},
          {"expect", {{variant, "any"}}}};
}

std::set<std::string> run_words(const Json& doc, const std::string& variant, std::uint64_t seed) {
  const LockVariant& lock = *find_variant(variant);
  const ScheduleRun run = run_schedule(doc, lock, seed, false);
  EXPECT_EQ(run.error, "");
  std::set<std::string> out;
  std::vector<std::string> points;
  for (const auto& site : lock.checkpoints()) points.emplace_back(site.point);
  run.coverage.for_each([&](CoverageItem item) { out.insert(coverage_word(item, points)); });
  return out;
}

// Proves scripted schedules run on the simulator cover exactly what they were written for, under
// each of the four timing profiles: a release held on the link past its lease's end while B
// waits; a crash at a checkpoint; a renewing holder's release whose reply is lost; a restart
// while A holds and B waits.
TEST(Coverage, ScriptedSchedulesOnTheSimulatorCoverWhatTheyWereWrittenFor) {
  const Json delayed = document(
      "lua_owner", Json::array({{{"client", "A"}, {"do", "acquire"}},
                                {{"client", "A"}, {"do", "work"}, {"work_ms", 50}},
                                {{"client", "B"}, {"do", "acquire"}},
                                {{"client", "A"},
                                 {"do", "release"},
                                 {"delay", {{"until", {{"inside", "B"}}}, {"max_ms", 150}}}},
                                {{"client", "B"}, {"do", "release"}}}));
  const Json crashed =
      document("setnx_then_expire",
               Json::array({{{"client", "A"}, {"do", "acquire"}, {"crash_at", "after_setnx"}}}));
  Json restarted =
      document("lua_owner", Json::array({{{"client", "A"}, {"do", "acquire"}},
                                         {{"client", "B"}, {"do", "acquire"}},
                                         {{"do", "kill_server"}, {"server", "n1"}},
                                         {{"do", "restart_server"}, {"server", "n1"}},
                                         {{"client", "A"}, {"do", "work"}, {"work_ms", 20}},
                                         {{"client", "A"}, {"do", "release"}}}));
  restarted["topology"] = "single";
  const Json renewing = document(
      "lua_owner_renew", Json::array({{{"client", "A"}, {"do", "acquire"}},
                                      {{"client", "A"}, {"do", "work"}, {"work_ms", 20}},
                                      {{"client", "A"}, {"do", "release"}, {"lose_reply", true}}}));
  for (std::uint64_t seed = 0; seed < 4; ++seed) {
    EXPECT_EQ(run_words(delayed, "lua_owner", seed),
              (std::set<std::string>{"delay @ releasing", "release/acquire", "release/expiry"}))
        << "seed " << seed;
    EXPECT_EQ(run_words(crashed, "setnx_then_expire", seed),
              std::set<std::string>{"crash @ after_setnx"})
        << "seed " << seed;
    // The lost reply costs the release its reply timeout (200 ms), past the lease's end.
    EXPECT_EQ(run_words(renewing, "lua_owner_renew", seed),
              (std::set<std::string>{"lose_reply @ releasing", "release/expiry"}))
        << "seed " << seed;
    const std::set<std::string> restart = run_words(restarted, "lua_owner", seed);
    for (const char* item : {"kill_server @ inside", "kill_server @ waiting",
                             "restart_server @ inside", "restart_server @ waiting"}) {
      EXPECT_TRUE(restart.count(item)) << item << ", seed " << seed;
    }
  }
}

// Proves every item of a menu reads back from its words, a checkpoint interned in a table of
// its own, and that words naming no item are refused.
TEST(Coverage, WordsReadBackToTheirItems) {
  const Coverage menu = coverage_menu(*find_variant("setnx_then_expire"), ExerciseOptions{}.faults);
  std::vector<std::string> read_points;
  std::size_t items = 0;
  menu.for_each([&](CoverageItem item) {
    ++items;
    const std::string word = coverage_word(item, kAfterSetnxPoints);
    EXPECT_EQ(coverage_item(word, read_points), item) << word;
  });
  EXPECT_GT(items, 20U);
  EXPECT_EQ(read_points, kAfterSetnxPoints);
  EXPECT_TRUE(menu.has(checkpoint_item(std::nullopt, 0)));  // crash @ after_setnx
  EXPECT_TRUE(menu.has(kReleaseExpiry));
  EXPECT_FALSE(menu.has(kExtendAcquire));  // it does not renew
  for (const char* bad : {"", "crash", "crash @ ", "fire @ inside", "down @ inside",
                          "crash @ two words", "acquire/release"}) {
    EXPECT_EQ(coverage_item(bad, read_points), std::nullopt) << bad;
  }
  // A lock with no checkpoint has no checkpoint item on its menu; one that renews races renewals.
  const Coverage renew = coverage_menu(*find_variant("lua_owner_renew"), ExerciseOptions{}.faults);
  EXPECT_TRUE(renew.has(kExtendAcquire));
  EXPECT_FALSE(renew.has(checkpoint_item(std::nullopt, 0)));
}

// Proves counts add a schedule's items once each, and that without() tells what is new.
TEST(Coverage, CountsAddSchedulesAndWithoutTellsWhatIsNew) {
  Coverage a;
  a.add(kAcquireAcquire);
  a.add(fault_item(std::nullopt, CoveragePlace::kInside));
  Coverage b;
  b.add(kAcquireAcquire);
  CoverageCounts counts;
  counts.add(a);
  counts.add(b);
  EXPECT_EQ(counts.schedules[kAcquireAcquire], 2U);
  EXPECT_EQ(counts.schedules[fault_item(std::nullopt, CoveragePlace::kInside)], 1U);
  EXPECT_EQ(counts.covered(), a);
  EXPECT_FALSE(b.without(a).any());
  EXPECT_EQ(a.without(b).count(), 1U);
  EXPECT_TRUE(a.without(b).has(fault_item(std::nullopt, CoveragePlace::kInside)));
}

}  // namespace
}  // namespace locksim
