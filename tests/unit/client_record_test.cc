// client_record_test: what a lock client records is written once (sim/client/record.h), and the
// worker protocol's codec (sim/host/worker_codec.h) carries every outcome across a process
// boundary so that the harness records exactly what an in-process host records.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "sim/client/record.h"
#include "sim/host/worker_codec.h"
#include "sim/history/jsonl.h"
#include "sim/history/recorder.h"

namespace locksim {
namespace {

using host::acquire_from_json;
using host::acquire_to_json;
using host::extend_from_json;
using host::extend_to_json;
using host::release_from_json;
using host::release_to_json;

ReleaseOutcome released(std::int64_t deleted) {
  ReleaseOutcome outcome;
  outcome.ok = true;
  outcome.deleted = deleted;
  return outcome;
}
ReleaseOutcome release_failed(CallFailure failure) {
  ReleaseOutcome outcome;
  outcome.failure = std::move(failure);
  return outcome;
}
ExtendOutcome extended(int extended) {
  ExtendOutcome outcome;
  outcome.ok = true;
  outcome.extended = extended;
  return outcome;
}
ExtendOutcome extend_failed(CallFailure failure) {
  ExtendOutcome outcome;
  outcome.failure = std::move(failure);
  return outcome;
}

// Calls: one client's life, told twice: once with its outcomes as an in-process host has them,
// once with each outcome through the worker codec, as the harness reads a worker's reply line.
struct Life {
  std::vector<AcquireOutcome> acquires;  // each followed, when granted, by an extend and a release
  std::vector<ReleaseOutcome> releases;
  std::vector<ExtendOutcome> extends;
};

// record_life: the events `life` leaves, as JSON lines without their instants (the two records
// are made at different times).
std::vector<std::string> record_life(const Life& life, bool through_codec) {
  RunClock clock;
  Recorder recorder(clock, {"A"});
  ClientRecord record(recorder.log(0), ClientTerms{true, 1000, 3});
  std::size_t release = 0;
  std::size_t extend = 0;
  for (const AcquireOutcome& acquire : life.acquires) {
    const Nanos invoked = record.invoke_acquire("lock");
    AcquireOutcome told = acquire;
    if (told.granted) told.sent_ns = invoked;  // sent when invoked: its clamp is the same
    if (through_codec) told = acquire_from_json(acquire_to_json(told, invoked), invoked, 3);
    if (record.end_acquire(told) != AcquireStatus::kAcquired) continue;
    ExtendOutcome extend_told = life.extends.at(extend++);
    if (through_codec) extend_told = extend_from_json(extend_to_json(extend_told));
    record.invoke_extend();
    record.end_extend(extend_told);
    ReleaseOutcome release_told = life.releases.at(release++);
    if (through_codec) release_told = release_from_json(release_to_json(release_told));
    record.exit();
    record.invoke_release();
    record.end_release(release_told);
    if (record.release_pending()) {
      record.invoke_release();
      record.end_release(released(1));
    }
  }
  const History history = std::move(recorder).merge();
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < history.events.size(); ++i) {
    nlohmann::json line =
        nlohmann::json::parse(event_to_json_line(history, history.events[i], i));
    line.erase("queued_ns");  // an instant too (ClientRecord.TheWorkerCodecCarriesWhenItWaited)
    line.erase("time_ns");
    line.erase("sent_ns");
    lines.push_back(line.dump());
  }
  return lines;
}

Life every_outcome() {
  Life life;
  AcquireOutcome granted;
  granted.granted = true;
  granted.attempts = 3;
  granted.token = "tok-1";
  granted.fencing = 41;
  granted.validity_ms = 870;
  granted.granted_on = {0, 2};
  life.acquires.push_back(granted);
  AcquireOutcome plain;
  plain.granted = true;
  plain.attempts = 1;
  plain.token = "tok-2";
  life.acquires.push_back(plain);
  life.acquires.push_back(plain);
  life.acquires.push_back(plain);
  AcquireOutcome timed_out;
  timed_out.attempts = 2;
  timed_out.failure = CallFailure{true, ErrorKind::kTimeout, "Resource temporarily unavailable"};
  life.acquires.push_back(timed_out);
  AcquireOutcome gave_up;
  gave_up.attempts = 7;
  gave_up.failure = CallFailure{false, ErrorKind::kGaveUp, ""};
  life.acquires.push_back(gave_up);
  AcquireOutcome refused;
  refused.attempts = 1;
  refused.failure = CallFailure{false, ErrorKind::kReplyError, "NOPERM this user has no perm"};
  life.acquires.push_back(refused);

  life.releases.push_back(released(1));
  life.releases.push_back(released(0));
  life.releases.push_back(release_failed(CallFailure{true, ErrorKind::kCancelled, "cancelled"}));
  life.releases.push_back(release_failed(CallFailure{true, ErrorKind::kClosed, "EOF"}));
  life.extends.push_back(extended(1));
  life.extends.push_back(extended(0));
  life.extends.push_back(extend_failed(CallFailure{false, ErrorKind::kReplyError, "ERR x"}));
  life.extends.push_back(extended(1));
  return life;
}

// Proves the worker protocol carries when an acquire was first answered busy, as a duration from
// the request (as sent_after_ns), so the harness records it on its own clock, granted or not.
TEST(ClientRecord, TheWorkerCodecCarriesWhenItWaited) {
  for (const bool granted : {true, false}) {
    AcquireOutcome outcome;
    outcome.granted = granted;
    outcome.token = "t";
    outcome.attempts = 4;
    if (!granted) outcome.failure = CallFailure{false, ErrorKind::kGaveUp, {}};
    outcome.busy_ns = 5'000'300;  // the worker's clock: 300 ns after it received the request
    const AcquireOutcome decoded =
        acquire_from_json(acquire_to_json(outcome, 5'000'000), 70'000'000, 3);
    EXPECT_EQ(decoded.busy_ns, 70'000'300) << granted;
    outcome.busy_ns = -1;
    EXPECT_EQ(acquire_from_json(acquire_to_json(outcome, 5'000'000), 70'000'000, 3).busy_ns, -1);
  }
}

TEST(ClientRecord, TheWorkerCodecCarriesEveryOutcomeAsRecordedInProcess) {
  const std::vector<std::string> in_process = record_life(every_outcome(), false);
  const std::vector<std::string> decoded = record_life(every_outcome(), true);
  EXPECT_EQ(decoded, in_process);
  // 4 granted acquires (invoke, ok, enter, extend invoke and end, exit, release invoke and end;
  // the cancelled release once more), 3 failed ones (invoke and end).
  EXPECT_EQ(in_process.size(), 4U * 8 + 2 + 3 * 2);
}

// What the record says of each outcome: the grant's facts, the failures' types, a cancelled
// release that leaves the client free to try again.
TEST(ClientRecord, RecordsEachOutcomeAtItsPoint) {
  const std::vector<std::string> lines = record_life(every_outcome(), false);
  ASSERT_GE(lines.size(), 3U);
  const nlohmann::json ok = nlohmann::json::parse(lines[1]);
  EXPECT_EQ(ok["type"], "ok");
  EXPECT_EQ(ok["f"], "acquire");
  EXPECT_EQ(ok["attempts"], 3);
  EXPECT_EQ(ok["fencing"], 41);
  EXPECT_EQ(ok["validity_ms"], 870);
  EXPECT_EQ(ok["ttl_ms"], 1000);
  EXPECT_EQ(nlohmann::json::parse(lines[2])["f"], "enter");
  std::vector<std::string> shapes;
  for (const std::string& line : lines) {
    const nlohmann::json j = nlohmann::json::parse(line);
    shapes.push_back(j["type"].get<std::string>() + " " + j["f"].get<std::string>() +
                     (j.contains("error") ? " " + j["error"].get<std::string>() : ""));
  }
  ASSERT_EQ(shapes.size(), 40U);
  const std::vector<std::string> third_life(shapes.begin() + 16, shapes.begin() + 27);
  EXPECT_EQ(third_life, (std::vector<std::string>{
                            "invoke acquire", "ok acquire", "ok enter", "invoke extend",
                            "fail extend reply_error", "ok exit", "invoke release",
                            "info release cancelled", "invoke release", "ok release",
                            "invoke acquire"}));
  EXPECT_EQ(shapes.back(), "fail acquire reply_error");
  EXPECT_EQ(shapes[shapes.size() - 3], "fail acquire gave_up");
  EXPECT_EQ(shapes[shapes.size() - 5], "info acquire timeout");
}

// A worker's reply outside the contract is recorded as such, never as a success it did not
// report: a release without a count, an extend that says neither 0 nor 1, an unknown error word.
TEST(ClientRecord, RepliesOutsideTheContractAreRecordedAsUnknown) {
  const ReleaseOutcome release = release_from_json({{"result", "ok"}, {"deleted", -3}});
  EXPECT_TRUE(release.ok);
  EXPECT_LT(release.deleted, 0);
  EXPECT_NE(release.odd.find("\"deleted\": -3"), std::string::npos) << release.odd;
  EXPECT_EQ(extend_from_json({{"result", "ok"}, {"extended", 2}}).extended, -1);
  const CallFailure odd = host::failure_from_json({{"result", "fail"}, {"error", "?"}});
  EXPECT_EQ(odd.error, ErrorKind::kProtocol);
  EXPECT_FALSE(odd.maybe);
  const CallFailure none = host::failure_from_json(nullptr);
  EXPECT_EQ(none.error, ErrorKind::kProtocol);

  RunClock clock;
  Recorder recorder(clock, {"A"});
  ClientRecord record(recorder.log(0), ClientTerms{false, 0, 0});
  record.invoke_acquire("k");
  AcquireOutcome granted;
  granted.granted = true;
  granted.token = "t";
  ASSERT_EQ(record.end_acquire(granted), AcquireStatus::kAcquired);
  record.invoke_extend();
  record.end_extend(extend_from_json({{"result", "ok"}, {"extended", 2}}));
  record.exit();
  record.invoke_release();
  record.end_release(release);
  const History history = std::move(recorder).merge();
  ASSERT_EQ(history.events.size(), 8U);
  EXPECT_EQ(history.events[4].type, EventType::kInfo);
  EXPECT_EQ(history.events[4].error, ErrorKind::kUnexpectedReply);
  EXPECT_EQ(history.events[7].type, EventType::kInfo);
  EXPECT_EQ(history.events[7].error, ErrorKind::kUnexpectedReply);
  EXPECT_FALSE(record.holding());
  EXPECT_TRUE(record.held_token().empty());
}

}  // namespace
}  // namespace locksim
