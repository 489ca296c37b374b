// drawn_fault_test: the table of drawn fault kinds (sim/fault/drawn_fault.cc) and each kind's
// file: its keys read and written back, its draw, and its injection on a host that records what
// it is asked. How a plan draws the kinds is pinned in plan_test; the kinds carried out on the
// real executors in driver_test and faults_test.
#include "sim/fault/drawn_fault.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/random.h"
#include "sim/core/task.h"

namespace locksim {
namespace {

using nlohmann::json;

const std::string kFile = "w.json";

// parse: kind `word`'s settings from a "workload" object.
std::shared_ptr<const DrawnFault> parse(std::string_view word, const json& workload) {
  const DrawnFaultType* type = drawn_fault_type(word);
  EXPECT_NE(type, nullptr) << word;
  return type->parse(locksim::json::JsonReader(workload, "$.workload", kFile));
}

// written: the keys `fault` writes into the resolved workload.
json written(const DrawnFault& fault) {
  json keys = json::object();
  fault.write(keys);
  return keys;
}

// error_of: the InputError of parsing kind `word` from `workload`; "" if it parsed.
std::string error_of(std::string_view word, const json& workload) {
  try {
    parse(word, workload);
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

// RecordingHost: writes down every call a drawn fault makes.
class RecordingHost final : public DrawnFaultHost {
 public:
  std::vector<std::string> calls;

  Ask<bool> sleep(Nanos duration) override {
    calls.push_back("sleep " + std::to_string(duration / kNanosPerMilli) + " ms");
    return Ask<bool>(true);
  }
  void crash() override { calls.emplace_back("crash"); }
  Task<void> end_renewal() override {
    calls.emplace_back("end_renewal");
    co_return;
  }
  void record_fault(FaultKind kind) override {
    calls.emplace_back("record_fault " + std::string(traits(kind).word));
  }
  void lose_next_reply() override { calls.emplace_back("lose_next_reply"); }
  void pause_holder() override { calls.emplace_back("pause_holder"); }
  void resume_holder() override { calls.emplace_back("resume_holder"); }
  void note(const std::string& line) override { calls.push_back("note: " + line); }
};

// inject: every point of a cycle that drew `fault` with `drawn`, as the workload client asks
// them of a cycle whose acquire was granted (before_acquire, inside, before_release) and of one
// whose acquire went unanswered; "gone" when before_release ended the client.
std::vector<std::string> inject(const DrawnFault& fault, std::int64_t drawn, bool granted) {
  RecordingHost host;
  const DrawnCycle cycle{.client = "c1", .cycle = 4, .drawn = drawn};
  fault.before_acquire(host, cycle);
  if (granted) {
    if (fault.type().work_role != WorkRole::kNone) run_inline(fault.inside(host, cycle));
    if (fault.before_release(host, cycle)) host.calls.emplace_back("gone");
  } else {
    fault.unanswered_acquire(host, cycle);
  }
  return host.calls;
}

// Proves the table holds each kind once, with keys no other kind claims, and that only the four
// kinds that always drew from a cycle's own stream draw there: a kind added later must take a
// stream of its own (DrawSlot::kOwnStream), or the runs of every older seed would change.
TEST(DrawnFaultTable, KindsAreDistinctAndOnlyTheFirstFourShareACyclesStream) {
  std::set<std::string> words;
  std::set<std::string> keys;
  std::set<std::uint64_t> streams;
  std::set<std::string> shared;
  for (const DrawnFaultType* type : drawn_fault_types()) {
    EXPECT_FALSE(type->word.empty());
    EXPECT_TRUE(words.emplace(type->word).second) << type->word;
    EXPECT_NE(type->parse, nullptr) << type->word;
    EXPECT_FALSE(type->keys.empty()) << type->word;
    for (const std::string& key : type->keys) EXPECT_TRUE(keys.insert(key).second) << key;
    EXPECT_TRUE(streams.insert(own_stream(*type)).second) << type->word;
    if (type->slot != DrawSlot::kOwnStream) shared.emplace(type->word);
    EXPECT_EQ(drawn_fault_type(type->word), type);
    EXPECT_EQ(drawn_fault_types()[drawn_fault_index(type->word)], type);
  }
  EXPECT_LE(drawn_fault_types().size(), kMaxDrawnFaultKinds);
  EXPECT_EQ(shared, (std::set<std::string>{"crash", "lose", "pause", "lost_reply"}));
  EXPECT_EQ(drawn_fault_type("lose_lock"), nullptr);  // a FaultKind's word, not a drawn kind's
  EXPECT_EQ(drawn_fault_type(""), nullptr);
}

// Proves that a kind whose keys are absent is off, never drawn, takes no draw from its stream
// (a workload without it draws as if the kind did not exist), and that what every kind writes
// reads back to the same settings.
TEST(DrawnFaultTable, EveryKindIsOffByDefaultAndRoundTripsItsKeys) {
  for (const DrawnFaultType* type : drawn_fault_types()) {
    const std::shared_ptr<const DrawnFault> off = parse(type->word, json::object());
    EXPECT_FALSE(off->on()) << type->word;
    EXPECT_EQ(&off->type(), type);
    Rng used(11);
    Rng untouched(11);
    for (int i = 0; i < 100; ++i) EXPECT_EQ(off->draw(used), 0) << type->word;
    EXPECT_EQ(used.next(), untouched.next()) << type->word << " took a draw while off";
    EXPECT_EQ(off->event_loop_refusal(" (why)"), "") << type->word;
    EXPECT_EQ(off->estimated_inside_ms(), 0.0) << type->word;
    const json keys = written(*off);
    for (const auto& [key, value] : keys.items()) {
      EXPECT_NE(std::find(type->keys.begin(), type->keys.end(), key), type->keys.end()) << key;
    }
    EXPECT_EQ(written(*parse(type->word, keys)), keys) << type->word;
  }
  const json on = json::parse(R"({"crash_probability": 0.25, "lose_probability": 0.5,
      "lose_sleep_ms": 700, "pause_probability": 0.125, "pause_ms": {"min": 10, "max": 20},
      "lost_reply_probability": 1})");
  for (const DrawnFaultType* type : drawn_fault_types()) {
    const json keys = written(*parse(type->word, on));
    for (const std::string& key : type->keys) {
      ASSERT_TRUE(on.contains(key)) << "give " << key << " a value in `on` above";
      EXPECT_EQ(keys.at(key), on.at(key)) << key;
    }
    EXPECT_EQ(written(*parse(type->word, keys)), keys) << type->word;
  }
}

// Proves the keys' errors name the file, the path and what was expected.
TEST(DrawnFaultTable, KeysAreValidated) {
  EXPECT_EQ(error_of("crash", json::parse(R"({"crash_probability": 1.5})")),
            "w.json: $.workload.crash_probability: expected a probability between 0 and 1, got "
            "1.5");
  EXPECT_EQ(error_of("lose", json::parse(R"({"lose_sleep_ms": -1})")),
            "w.json: $.workload.lose_sleep_ms: expected a duration in ms between 0 and 3600000, "
            "got -1");
  EXPECT_EQ(error_of("pause", json::parse(R"({"pause_probability": 0.5})")),
            "w.json: $.workload: \"pause_probability\" needs \"pause_ms\", how long a paused "
            "holder stays frozen");
  EXPECT_EQ(error_of("pause", json::parse(R"({"pause_ms": {"min": 6, "max": 5}})")),
            "w.json: $.workload.pause_ms: \"min\" (6) must not exceed \"max\" (5)");
  EXPECT_EQ(error_of("lost_reply", json::parse(R"({"lost_reply_probability": "often"})")),
            "w.json: $.workload.lost_reply_probability: expected a probability (a number), got "
            "\"often\"");
}

// Proves each kind's injection: what the workload client's host is asked, at which point.
TEST(DrawnFaultKinds, CrashEndsTheClientInsteadOfItsRelease) {
  const auto crash = parse("crash", json::parse(R"({"crash_probability": 1})"));
  EXPECT_EQ(crash->type().work_role, WorkRole::kNone);
  EXPECT_EQ(inject(*crash, 1, true),
            (std::vector<std::string>{"crash",
                                      "note: c1 crashed inside the critical section "
                                      "(cycle 5)",
                                      "gone"}));
  EXPECT_TRUE(inject(*crash, 1, false).empty());
  EXPECT_EQ(crash->event_loop_refusal(" (why)"), "");  // one loop can crash a client
}

TEST(DrawnFaultKinds, LoseStopsRenewingAndSleepsThreeLeasesInsteadOfWorking) {
  const auto lose = parse("lose", json::parse(R"({"lose_probability": 0.5})"));
  EXPECT_EQ(lose->type().work_role, WorkRole::kInstead);
  EXPECT_TRUE(lose->type().loses_lock);
  const auto completed = lose->with_lock_ttl(1000);
  ASSERT_NE(completed, nullptr);
  EXPECT_EQ(written(*completed)["lose_sleep_ms"], 3000);
  EXPECT_EQ(completed->with_lock_ttl(5), nullptr);  // a given sleep stays
  EXPECT_EQ(written(*lose->with_lock_ttl(2000000))["lose_sleep_ms"], 3600000);  // capped
  EXPECT_EQ(completed->estimated_inside_ms(), 1500.0);
  EXPECT_EQ(inject(*completed, 1, true), (std::vector<std::string>{"end_renewal", "record_fault lose_lock", "sleep 3000 ms"}));
  // One loop can lose an iteration: it ends the renewal it runs (lose_lock).
  EXPECT_EQ(completed->event_loop_refusal(" (why)"), "");
}

TEST(DrawnFaultKinds, PauseFreezesTheHolderForItsDraw) {
  const auto pause =
      parse("pause", json::parse(R"({"pause_probability": 1, "pause_ms": {"min": 7, "max": 9}})"));
  EXPECT_EQ(pause->type().work_role, WorkRole::kBeside);
  Rng rng(3);
  for (int i = 0; i < 50; ++i) {
    const std::int64_t drawn = pause->draw(rng);
    EXPECT_GE(drawn, 7);
    EXPECT_LE(drawn, 9);
  }
  EXPECT_EQ(inject(*pause, 8, true),
            (std::vector<std::string>{"pause_holder", "sleep 8 ms", "resume_holder"}));
  EXPECT_EQ(pause->event_loop_refusal(" (why)"),
            "$.workload.pause_probability: not supported (why); use \"threads\" or "
            "\"processes\"");
}

TEST(DrawnFaultKinds, LostReplyIsArmedBeforeTheAcquireAndNotedWhenUnanswered) {
  const auto lost = parse("lost_reply", json::parse(R"({"lost_reply_probability": 0.5})"));
  EXPECT_TRUE(lost->type().needs_link_proxy);
  EXPECT_EQ(inject(*lost, 1, true), (std::vector<std::string>{"lose_next_reply"}));
  EXPECT_EQ(inject(*lost, 1, false),
            (std::vector<std::string>{"lose_next_reply",
                                      "note: c1: the reply of its acquire was lost (cycle 5)"}));
  EXPECT_EQ(lost->event_loop_refusal(" (why)"),
            "$.workload.lost_reply_probability: not supported (why); use \"threads\" or "
            "\"processes\"");
}

}  // namespace
}  // namespace locksim
