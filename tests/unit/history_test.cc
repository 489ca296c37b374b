// history_test: per-client logs merge into one time-ordered history, and history.jsonl
// round-trips exactly, rejects malformed lines with the line number, and a full disk leaves no
// temporary file behind; a worker's history transfer round-trips and refuses any other file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sim/core/error.h"
#include "sim/fault/fault.h"
#include "sim/history/jsonl.h"
#include "sim/history/recorder.h"
#include "sim/history/transfer.h"
#include "tests/support/file_size_limit.h"

namespace locksim {
namespace {

namespace fs = std::filesystem;

fs::path temp_file(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("locksim-history-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

// Logs written concurrently by several threads merge into one history sorted by time, and no
// event is lost; keys and tokens recorded in different logs land in the history's tables.
TEST(Recorder, MergesConcurrentLogsInTimeOrder) {
  RunClock clock;
  Recorder recorder(clock, {"A", "B", "C", "D"});
  std::vector<std::thread> threads;
  for (std::size_t c = 0; c < 4; ++c) {
    threads.emplace_back([&recorder, c] {
      ClientLog& log = recorder.log(c);
      for (int i = 0; i < 5000; ++i) {
        Event& e = log.record(EventType::kOk, Op::kAcquire, "lock" + std::to_string(i % 3));
        e.token = log.intern("t" + std::to_string(c) + "-" + std::to_string(i));
      }
    });
  }
  for (auto& t : threads) t.join();
  const History history = std::move(recorder).merge();
  ASSERT_EQ(history.events.size(), 20000u);
  ASSERT_EQ(history.clients.size(), 4u);
  EXPECT_EQ(history.keys.size(), 4u);  // "" and lock0..lock2
  std::vector<int> next(4, 0);
  for (std::size_t i = 0; i < history.events.size(); ++i) {
    const Event& e = history.events[i];
    if (i > 0) {
      ASSERT_LE(history.events[i - 1].time_ns, e.time_ns);
    }
    // Each client's own events keep their order, with their own key and token.
    const int n = next[static_cast<std::size_t>(e.client)]++;
    ASSERT_EQ(history.key_name(e), "lock" + std::to_string(n % 3));
    ASSERT_EQ(history.token(e), "t" + std::to_string(e.client) + "-" + std::to_string(n));
  }
}

// Events of different logs stamped at the same instant keep the order of a stable sort of the
// logs concatenated: lower log first (a renewal log is added after the client logs).
TEST(Recorder, TiesGoToTheLowerLog) {
  RunClock clock;
  Recorder recorder(clock, {"A", "B"});
  ClientLog& renewal = recorder.add_log(0);
  for (ClientLog* log : {&recorder.log(1), &renewal, &recorder.log(0)}) {
    for (int i = 0; i < 3; ++i) log->record(EventType::kInfo, Op::kWork, "k").time_ns = 7;
  }
  renewal.last().time_ns = 7;
  const History history = std::move(recorder).merge();
  ASSERT_EQ(history.events.size(), 9u);
  // Logs in creation order: A's, B's, then A's renewal log.
  const std::vector<int> clients = {0, 0, 0, 1, 1, 1, 0, 0, 0};
  for (std::size_t i = 0; i < 9; ++i) EXPECT_EQ(history.events[i].client, clients[i]) << i;
}

// A log of many chunks merges completely and frees its chunks: memory per event stays near the
// size of an event (the chunks are given back as the merge reads them).
TEST(Recorder, ChunkedLogsMergeCompletely) {
  RunClock clock;
  Recorder recorder(clock, {"A"});
  ClientLog& log = recorder.log(0);
  for (int i = 0; i < 100000; ++i)
    log.record(EventType::kInfo, Op::kWork, "k").work().planned_ms = i;
  EXPECT_EQ(recorder.events(), 100000u);
  EXPECT_LE(log.bytes(), 100000u * sizeof(Event) * 11 / 10);  // no vector doubling
  const History history = std::move(recorder).merge();
  ASSERT_EQ(history.events.size(), 100000u);
  for (int i = 0; i < 100000; ++i)
    ASSERT_EQ(history.events[static_cast<std::size_t>(i)].work().planned_ms, i);
}

// interning reuses the last string, so a token recorded on acquire and release is stored once.
TEST(Recorder, InternReusesTheLastString) {
  RunClock clock;
  Recorder recorder(clock, {"A"});
  ClientLog& log = recorder.log(0);
  const StringId first = log.intern("abc");
  EXPECT_EQ(log.intern("abc"), first);
  EXPECT_NE(log.intern("def"), first);
  EXPECT_EQ(log.intern(""), 0u);
}

// The hook the scripted driver marks a call's step started with runs once, at the next invoke
// (not at the exit recorded before a release's invoke), and an emptied hook never runs: the next
// client's step then never records its call before this one's (sim/driver/scripted.cc).
TEST(Recorder, OnNextInvokeRunsOnceAtTheInvoke) {
  RunClock clock;
  Recorder recorder(clock, {"A"});
  ClientLog& log = recorder.log(0);
  std::size_t ran_at = 0;
  int runs = 0;
  log.on_next_invoke([&] {
    ++runs;
    ran_at = log.size();
  });
  log.record(EventType::kOk, Op::kExit, "k");
  EXPECT_EQ(runs, 0);
  log.record(EventType::kInvoke, Op::kRelease, "k");
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(ran_at, 2u);  // after the invoke was recorded
  log.record(EventType::kInvoke, Op::kAcquire, "k");
  EXPECT_EQ(runs, 1);
  log.on_next_invoke([&] { ++runs; });
  log.on_next_invoke({});
  log.record(EventType::kInvoke, Op::kAcquire, "k");
  EXPECT_EQ(runs, 1);
}

// An event is compact: the memory budget per event depends on it.
TEST(Event, IsCompact) { EXPECT_LE(sizeof(Event), 72u); }

// Every error kind is written as its word and read back from it ("crashed" and "fenced"
// included); only a lost or unusable reply is indeterminate, and neither a client dying while
// waiting nor a write a fenced store refused is a lock error.
TEST(Event, ErrorKindsRoundTripByName) {
  for (int i = 0; i <= static_cast<int>(ErrorKind::kFenced); ++i) {
    const auto kind = static_cast<ErrorKind>(i);
    EXPECT_EQ(error_kind_from_string(to_string(kind)), kind) << to_string(kind);
  }
  EXPECT_EQ(to_string(ErrorKind::kCrashed), "crashed");
  EXPECT_FALSE(is_indeterminate(ErrorKind::kCrashed));
  EXPECT_FALSE(is_lock_error(ErrorKind::kCrashed));
  EXPECT_FALSE(error_kind_from_string("crash").has_value());
  EXPECT_EQ(to_string(ErrorKind::kFenced), "fenced");
  EXPECT_FALSE(is_indeterminate(ErrorKind::kFenced));
  EXPECT_FALSE(is_io_error(ErrorKind::kFenced));
  EXPECT_FALSE(is_lock_error(ErrorKind::kFenced));
}

// Every field survives a write and a read, and the file starts with the schema header; a
// multi-server grant is written as the names of its servers and read back as the same bits.
TEST(Jsonl, RoundTripsEveryField) {
  History history;
  history.clients = {"A", "B", "C"};
  history.servers = {"n1", "n2", "n3", "n4", "n5"};
  Event e = Event::make(EventType::kOk, Op::kAcquire);
  e.time_ns = 1500;
  e.client = 1;
  e.key = history.key_id("lock");
  e.token = history.strings.add("abc\"123");
  e.ttl_ms = 200;
  e.acquire().attempts = 3;
  e.acquire().sent_ns = 1400;
  e.acquire().fencing = 34;
  e.acquire().validity_ms = 180;
  e.acquire().granted = ServerGrant{.on = 0b01011, .of = 5};  // n1, n2, n4
  history.events.push_back(e);
  EXPECT_NE(event_to_json_line(history, e, 0)
                .find(R"("validity_ms":180,"granted_on":["n1","n2","n4"],"granted_of":5})"),
            std::string::npos)
      << event_to_json_line(history, e, 0);
  Event f = Event::make(EventType::kInfo, Op::kRelease);
  f.time_ns = 2500;
  f.client = 0;
  f.key = e.key;
  f.error = ErrorKind::kTimeout;
  f.message = history.strings.add("Resource temporarily unavailable");
  history.events.push_back(f);
  Event w = Event::make(EventType::kOk, Op::kWrite);
  w.time_ns = 2600;
  w.key = history.key_id("stock");
  w.resource().value = -1;
  w.resource().base = 0;
  w.resource().has_base = true;
  w.resource().record = history.strings.add("r7");
  history.events.push_back(w);
  Event refused = Event::make(EventType::kFail, Op::kWrite);
  refused.time_ns = 2650;
  refused.key = w.key;
  refused.error = ErrorKind::kFenced;
  refused.resource().value = 9;
  refused.resource().fencing = 33;
  history.events.push_back(refused);
  Event stop = Event::make(EventType::kInfo, Op::kStop);
  stop.time_ns = 2700;
  stop.stop().reason = StopReason::kInterrupted;
  history.events.push_back(stop);
  Event pause = Event::make(EventType::kInfo, Op::kFault);
  pause.time_ns = 2800;
  pause.client = 2;
  pause.fault().kind = FaultKind::kPause;
  pause.fault().target = 1;
  pause.fault().phase = FaultPhase::kEnd;
  history.events.push_back(pause);
  Event due = Event::make(EventType::kInvoke, Op::kAcquire);
  due.time_ns = 2900;
  due.schedule().intended_ns = 2850;
  history.events.push_back(due);

  const fs::path path = temp_file("roundtrip.jsonl");
  write_history_jsonl(path, history);
  {
    std::ifstream in(path);
    std::string header;
    std::getline(in, header);
    EXPECT_EQ(header,
              R"({"history_schema":5,"clients":["A","B","C"],"servers":["n1","n2","n3","n4","n5"]})");
    // A fault is written as its kind's word, as every schema since 2 has written it.
    std::string line;
    for (int i = 0; i < 6; ++i) std::getline(in, line);
    EXPECT_EQ(
        line,
        R"({"index":5,"time_ns":2800,"client":"C","type":"info","f":"fault","fault":"pause","target":"B","phase":"end"})");
  }
  const History back = read_history_jsonl(path);
  ASSERT_EQ(back.events.size(), 7u);
  EXPECT_EQ(back.clients, history.clients);  // C has no event and is still listed
  EXPECT_EQ(back.servers, history.servers);  // n3 and n5 granted nothing and are still listed
  EXPECT_EQ(back.clients[static_cast<std::size_t>(back.events[0].client)], "B");
  EXPECT_EQ(back.events[0].time_ns, 1500);
  EXPECT_EQ(back.events[0].type, EventType::kOk);
  EXPECT_EQ(back.events[0].f, Op::kAcquire);
  EXPECT_EQ(back.key_name(back.events[0]), "lock");
  EXPECT_EQ(back.token(back.events[0]), "abc\"123");
  EXPECT_EQ(back.events[0].ttl_ms, 200);
  EXPECT_EQ(back.events[0].acquire().attempts, 3);
  EXPECT_EQ(back.events[0].acquire().sent_ns, 1400);
  EXPECT_EQ(back.events[0].acquire().fencing, 34);
  EXPECT_EQ(back.events[0].acquire().validity_ms, 180);
  EXPECT_EQ(back.events[0].acquire().granted.on, 0b01011u);
  EXPECT_EQ(back.events[0].acquire().granted.of, 5);
  EXPECT_EQ(back.granted_servers(back.events[0].acquire().granted),
            (std::vector<std::string>{"n1", "n2", "n4"}));
  EXPECT_EQ(back.events[0].message, 0u);
  EXPECT_EQ(back.events[1].f, Op::kRelease);
  EXPECT_EQ(back.events[1].ttl_ms, -1);
  EXPECT_EQ(back.events[1].error, ErrorKind::kTimeout);
  EXPECT_EQ(back.message(back.events[1]), "Resource temporarily unavailable");
  EXPECT_EQ(back.events[2].resource().value, -1);
  EXPECT_TRUE(back.events[2].resource().has_base);
  EXPECT_EQ(back.events[2].resource().base, 0);
  EXPECT_EQ(back.str(back.events[2].resource().record), "r7");
  // A refused write keeps what it tried to write and the fencing number it presented.
  EXPECT_EQ(back.events[3].type, EventType::kFail);
  EXPECT_EQ(back.events[3].error, ErrorKind::kFenced);
  EXPECT_EQ(back.events[3].resource().value, 9);
  EXPECT_EQ(back.events[3].resource().fencing, 33);
  EXPECT_EQ(back.events[4].stop().reason, StopReason::kInterrupted);
  EXPECT_EQ(back.events[5].fault().kind, FaultKind::kPause);
  EXPECT_EQ(back.events[5].fault().target, 1);
  EXPECT_EQ(back.events[5].fault().phase, FaultPhase::kEnd);
  EXPECT_EQ(back.events[6].schedule().intended_ns, 2850);
  EXPECT_FALSE(fs::exists(path.string() + ".tmp"));
}

// Proves the lock's kind in the header (permits, reentrant, read_write, client_clocks) is read
// back as written, so `locksim check` judges a history as its run did; and that a lock of none
// writes none of them.
TEST(Jsonl, RoundTripsTheLocksKind) {
  History history;
  history.clients = {"A"};
  history.permits = 2;
  history.reentrant = true;
  history.read_write = true;
  history.client_clocks = true;
  const fs::path path = temp_file("kind.jsonl");
  write_history_jsonl(path, history);
  {
    std::ifstream in(path);
    std::string header;
    std::getline(in, header);
    EXPECT_EQ(
        header,
        R"({"history_schema":5,"clients":["A"],"permits":2,"reentrant":true,"read_write":true,"client_clocks":true})");
  }
  const History back = read_history_jsonl(path);
  EXPECT_EQ(back.permits, 2);
  EXPECT_TRUE(back.reentrant);
  EXPECT_TRUE(back.read_write);
  EXPECT_TRUE(back.client_clocks);
  History mutex;
  mutex.clients = {"A"};
  write_history_jsonl(path, mutex);
  const History plain = read_history_jsonl(path);
  EXPECT_EQ(plain.permits, 0);
  EXPECT_FALSE(plain.reentrant || plain.read_write || plain.client_clocks);
}

// A sample history from two logs: every kind of string an event holds.
History sample_history(const RunClock& clock) {
  Recorder recorder(clock, {"A", "B", "nemesis"});
  ClientLog& a = recorder.log(0);
  ClientLog& b = recorder.log(1);
  ClientLog& nemesis = recorder.log(2);
  Event& ok = a.record(EventType::kOk, Op::kAcquire, "lock");
  ok.token = a.intern("tok-1");
  ok.acquire().fencing = 7;
  Event& failed = b.record(EventType::kInfo, Op::kRelease, "lock");
  failed.error = ErrorKind::kTimeout;
  failed.message = b.intern("no reply within 300 ms");
  Event& write = a.record(EventType::kOk, Op::kWrite, "stock");
  write.resource().record = a.intern("r3");
  Event& fault = nemesis.record(EventType::kInfo, Op::kFault, "");
  fault.fault().kind = FaultKind::kPause;
  fault.fault().server = nemesis.intern("n1");
  fault.fault().target = 0;
  return std::move(recorder).merge();
}

std::vector<std::string> lines(const History& history) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < history.events.size(); ++i) {
    out.push_back(event_to_json_line(history, history.events[i], i));
  }
  return out;
}

// A worker's history comes back to the harness whole: the transfer round-trips every event, and
// ClientLog::append records each under the harness's log with its strings and time.
TEST(HistoryTransfer, RoundTripsAndAppendsIntoALog) {
  const RunClock clock;
  const History history = sample_history(clock);
  const fs::path path = temp_file("transfer.bin");
  write_history_transfer(path, history);
  const History back = read_history_transfer(path);
  EXPECT_EQ(back.clients, history.clients);
  EXPECT_EQ(lines(back), lines(history));

  Recorder harness(clock, {"A", "B", "nemesis"});
  ClientLog& a = harness.log(0);
  ClientLog& nemesis = harness.log(2);
  for (const Event& e : back.events) {
    if (e.client == 0) a.append(back, e);
    if (e.client == 2) nemesis.append(back, e);
  }
  const History appended = std::move(harness).merge();
  ASSERT_EQ(appended.events.size(), 3u);  // B's event was not appended
  std::vector<std::string> expected;
  for (const std::string& line : lines(history)) {
    if (line.find(R"("client":"B")") == std::string::npos) expected.push_back(line);
  }
  // Indices shift by the one event left out.
  std::vector<std::string> got = lines(appended);
  for (std::size_t i = 0; i < got.size(); ++i) {
    nlohmann::json g = nlohmann::json::parse(got[i]);
    nlohmann::json w = nlohmann::json::parse(expected[i]);
    g.erase("index");
    w.erase("index");
    EXPECT_EQ(g, w);
  }
}

// Anything but a transfer of this build is refused, with the file's name; so is one cut short or
// claiming more than it holds (no memory is taken for what is not there).
TEST(HistoryTransfer, RefusesOtherFilesAndDamagedOnes) {
  const RunClock clock;
  const fs::path jsonl = temp_file("not-a-transfer.jsonl");
  write_history_jsonl(jsonl, sample_history(clock));
  try {
    read_history_transfer(jsonl);
    ADD_FAILURE() << "a jsonl file was read as a transfer";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("not-a-transfer.jsonl: not a history transfer"),
              std::string::npos)
        << error.what();
  }
  const fs::path path = temp_file("cut.bin");
  write_history_transfer(path, sample_history(clock));
  fs::resize_file(path, fs::file_size(path) - 10);
  EXPECT_THROW(read_history_transfer(path), InputError);
  // A count of 2^60 clients right after the header.
  write_history_transfer(path, sample_history(clock));
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(sizeof("locksim history transfer 1") + sizeof(std::uint64_t));
    const std::uint64_t huge = std::uint64_t{1} << 60;
    file.write(reinterpret_cast<const char*>(&huge), sizeof huge);
  }
  EXPECT_THROW(read_history_transfer(path), InputError);
  EXPECT_THROW(read_history_transfer(temp_file("missing.bin")), InputError);
}

// A schema-2 history (before fault targets and phases) still reads; its faults are instants of
// their own client. A schema this locksim does not know is refused with its number.
TEST(Jsonl, ReadsSchemaTwoAndRefusesUnknownSchemas) {
  const fs::path path = temp_file("v2.jsonl");
  {
    std::ofstream out(path);
    out << R"({"history_schema":2,"clients":["A"]})" << "\n"
        << R"({"index":0,"time_ns":1,"client":"A","type":"info","f":"fault","fault":"lose_lock"})"
        << "\n";
  }
  const History h = read_history_jsonl(path);
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].fault().kind, FaultKind::kLoseLock);
  EXPECT_EQ(h.events[0].fault().target, -1);
  EXPECT_EQ(h.events[0].fault().phase, FaultPhase::kInstant);
  {
    std::ofstream out(path);
    out << R"({"history_schema":6,"clients":["A"]})" << "\n";
  }
  try {
    read_history_jsonl(path);
    ADD_FAILURE() << "schema 6 was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("got 6"), std::string::npos) << e.what();
  }
}

// A schema-4 history said which servers granted a Redlock acquire only in words ("granted by n1,
// n2, n3 of 5" in the ok's message): the reader turns them into the typed grant and drops the
// message, so old runs are judged like new ones. Written again, the grant is typed.
TEST(Jsonl, ReadsSchemaFourGrantWordsIntoTypedGrants) {
  const fs::path path = temp_file("v4.jsonl");
  {
    std::ofstream out(path);
    out << R"({"history_schema":4,"clients":["A","B"]})" << "\n"
        << R"({"index":0,"time_ns":1,"client":"A","type":"ok","f":"acquire","key":"lock","token":"t1","validity_ms":90,"message":"granted by n1, n2, n3 of 5"})"
        << "\n"
        << R"({"index":1,"time_ns":2,"client":"B","type":"ok","f":"acquire","key":"lock","token":"t2","message":"granted by n3, n4, n5 of 5"})"
        << "\n"
        << R"({"index":2,"time_ns":3,"client":"B","type":"info","f":"release","key":"lock","error":"timeout","message":"granted by n1 of 5"})"
        << "\n";
  }
  const History h = read_history_jsonl(path);
  ASSERT_EQ(h.events.size(), 3u);
  EXPECT_EQ(h.servers, (std::vector<std::string>{"n1", "n2", "n3", "n4", "n5"}));
  EXPECT_EQ(h.events[0].acquire().granted.on, 0b00111u);
  EXPECT_EQ(h.events[0].acquire().granted.of, 5);
  EXPECT_EQ(h.events[0].acquire().validity_ms, 90);
  EXPECT_EQ(h.events[0].message, 0u);
  EXPECT_EQ(h.granted_servers(h.events[1].acquire().granted),
            (std::vector<std::string>{"n3", "n4", "n5"}));
  EXPECT_EQ(h.events[1].message, 0u);
  EXPECT_EQ(h.message(h.events[2]), "granted by n1 of 5");  // only an acquire ok's is a grant

  write_history_jsonl(path, h);
  std::ifstream in(path);
  std::string header;
  std::string first;
  std::getline(in, header);
  std::getline(in, first);
  EXPECT_NE(first.find(R"("granted_on":["n1","n2","n3"],"granted_of":5})"), std::string::npos)
      << first;
  EXPECT_EQ(first.find("granted by"), std::string::npos) << first;
}

// From schema 5 on a grant is typed: an acquire ok's message is only words, and a grant that
// names more servers than it asked is refused with its line.
TEST(Jsonl, ReadsSchemaFiveGrantsOnlyFromTypedFields) {
  const fs::path path = temp_file("v5.jsonl");
  {
    std::ofstream out(path);
    out << R"({"history_schema":5,"clients":["A"],"servers":["a","b","c"]})" << "\n"
        << R"({"index":0,"time_ns":1,"client":"A","type":"ok","f":"acquire","granted_on":["c","a"],"granted_of":3,"message":"granted by b of 3"})"
        << "\n";
  }
  const History h = read_history_jsonl(path);
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].acquire().granted.on, 0b101u);  // bits in the header's order
  EXPECT_EQ(h.granted_servers(h.events[0].acquire().granted),
            (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(h.message(h.events[0]), "granted by b of 3");
  {
    std::ofstream out(path);
    out << R"({"history_schema":5,"clients":["A"]})" << "\n"
        << R"({"index":0,"time_ns":1,"client":"A","type":"ok","f":"acquire","granted_on":["n1","n2"],"granted_of":1})"
        << "\n";
  }
  try {
    read_history_jsonl(path);
    ADD_FAILURE() << "a grant of 2 servers out of 1 was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(":2: malformed event: $.granted_of"), std::string::npos)
        << e.what();
  }
}

// A history written by an earlier locksim (schema 1: no header, value.count, "kind: text"
// errors) is read into the typed fields, so old runs can still be re-judged.
TEST(Jsonl, ReadsSchemaOne) {
  const fs::path path = temp_file("v1.jsonl");
  {
    std::ofstream out(path);
    out << R"({"index":0,"time_ns":1,"client":"A","type":"invoke","f":"acquire","key":"lock","value":{"ttl_ms":500}})"
        << "\n"
        << R"({"index":1,"time_ns":2,"client":"A","type":"ok","f":"acquire","key":"lock","value":{"token":"t1","ttl_ms":500,"count":2,"base":1}})"
        << "\n"
        << R"({"index":2,"time_ns":3,"client":"B","type":"fail","f":"acquire","key":"lock","value":{"count":4},"error":"timeout: lock still held after 100 ms"})"
        << "\n"
        << R"({"index":3,"time_ns":4,"client":"A","type":"ok","f":"release","key":"lock","value":{"count":1}})"
        << "\n"
        << R"({"index":4,"time_ns":5,"client":"B","type":"info","f":"acquire","key":"lock","error":"protocol: script my.acquire returned a table"})"
        << "\n"
        << R"({"index":5,"time_ns":6,"client":"A","type":"info","f":"fault","key":"lock","value":{"token":"lose_lock"}})"
        << "\n";
  }
  const History h = read_history_jsonl(path);
  ASSERT_EQ(h.events.size(), 6u);
  EXPECT_EQ(h.token(h.events[1]), "t1");
  EXPECT_EQ(h.events[1].acquire().attempts, 2);
  EXPECT_EQ(h.events[1].acquire().sent_ns, 1);
  EXPECT_EQ(h.events[2].error, ErrorKind::kGaveUp);
  EXPECT_EQ(h.events[2].acquire().attempts, 4);
  EXPECT_EQ(h.events[3].release().deleted, 1);
  EXPECT_EQ(h.events[4].error, ErrorKind::kUnexpectedReply);
  EXPECT_EQ(h.message(h.events[4]), "script my.acquire returned a table");
  EXPECT_EQ(h.events[5].fault().kind, FaultKind::kLoseLock);  // schema 1 named it in value.token
}

// A malformed line is reported with the file name and its line number.
TEST(Jsonl, RejectsBadLinesWithLineNumbers) {
  const fs::path path = temp_file("bad.jsonl");
  {
    std::ofstream out(path);
    out << R"({"index":0,"time_ns":1,"client":"A","type":"invoke","f":"acquire"})"
        << "\n";
    out << R"({"index":1,"time_ns":2,"client":"A","type":"maybe","f":"acquire"})"
        << "\n";
  }
  try {
    read_history_jsonl(path);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.jsonl:2"), std::string::npos) << e.what();
  }
  {
    std::ofstream out(path);
    out << R"({"index":0,"time_ns":5,"client":"A","type":"invoke","f":"acquire"})"
        << "\n";
    out << R"({"index":1,"time_ns":2,"client":"A","type":"ok","f":"acquire"})"
        << "\n";
  }
  EXPECT_THROW(read_history_jsonl(path), InputError);  // out of time order
  {
    std::ofstream out(path);
    out << R"({"history_schema":6,"clients":[]})"
        << "\n";
  }
  EXPECT_THROW(read_history_jsonl(path), InputError);  // a schema this locksim cannot read
  {
    std::ofstream out(path);
    out << R"({"history_schema":2,"clients":["A"]})"
        << "\n"
        << R"({"index":0,"time_ns":1,"client":"A","type":"fail","f":"acquire","error":"oops"})"
        << "\n";
  }
  EXPECT_THROW(read_history_jsonl(path), InputError);  // an unknown error kind
  EXPECT_THROW(read_history_jsonl(temp_file("absent.jsonl")), InputError);
}

// A fault whose word this locksim does not know (or that has none) is refused naming the file,
// the line, the field and every word it knows, in every schema: the checkers judge a fault by its
// kind, so a word they cannot place would be judged as nothing.
TEST(Jsonl, RefusesUnknownFaultWordsListingTheKnownOnes) {
  std::string known;
  for (const FaultKind kind : all_fault_kinds()) {
    known += (known.empty() ? "" : ", ") + std::string(traits(kind).word);
  }
  EXPECT_NE(known.find("pause, partition, lose_reply"), std::string::npos) << known;
  const fs::path path = temp_file("unknown-fault.jsonl");
  const std::string header = R"({"history_schema":5,"clients":["A","nemesis"]})";
  const std::string pause =
      R"({"index":0,"time_ns":1,"client":"nemesis","type":"info","f":"fault","fault":"pause","target":"A","phase":"start"})";
  // Each case: the file's lines, and the end of the error after the file's path.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {header + "\n" + pause + "\n" +
           R"({"index":1,"time_ns":2,"client":"nemesis","type":"info","f":"fault","fault":"meteor","target":"A"})",
       ":3: $.fault: unknown fault \"meteor\"; expected one of " + known},
      {header + "\n" +
           R"({"index":0,"time_ns":1,"client":"nemesis","type":"info","f":"fault","target":"A"})",
       ":2: $.fault: missing; expected one of " + known},
      {header + "\n" +
           R"({"index":0,"time_ns":1,"client":"nemesis","type":"info","f":"fault","fault":""})",
       ":2: $.fault: unknown fault \"\"; expected one of " + known},
      {R"({"index":0,"time_ns":1,"client":"A","type":"info","f":"fault","value":{"token":"Pause"}})",
       ":1: $.value.token: unknown fault \"Pause\"; expected one of " + known},
  };
  for (const auto& [lines, expected] : cases) {
    std::ofstream(path, std::ios::binary) << lines << "\n";
    try {
      read_history_jsonl(path);
      ADD_FAILURE() << "no InputError for " << lines;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), path.string() + expected);
    }
  }
}

// Hostile lines are InputErrors naming the file and line, never an abort: a number beyond a
// double (nlohmann's out_of_range 406), a duplicate key, too deep a nesting, a NUL byte.
TEST(Jsonl, HostileLinesAreInputErrorsWithLineNumbers) {
  const fs::path path = temp_file("hostile.jsonl");
  const std::string first = R"({"index":0,"time_ns":1,"client":"A","type":"invoke","f":"acquire"})";
  for (const auto& [line, expected] : std::vector<std::pair<std::string, std::string>>{
           {R"({"index":1,"time_ns":1e400,"client":"A","type":"ok","f":"acquire"})",
            ":2: column 22: number 1e400 is out of range"},
           {R"({"index":1,"time_ns":2,"time_ns":3,"client":"A","type":"ok","f":"acquire"})",
            ":2: $.time_ns: duplicate key"},
           {R"({"index":1,"value":)" + std::string(40, '[') + std::string(40, ']') + "}",
            ":2: $.value[0]"},
           {std::string("{\"index\":1,\0}", 13), ":2: column 12: invalid JSON"},
       }) {
    std::ofstream(path, std::ios::binary) << first << "\n" << line << "\n";
    try {
      read_history_jsonl(path);
      ADD_FAILURE() << "no InputError for " << line;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(path.string() + expected), std::string::npos)
          << e.what();
    }
  }
}

// A history that does not fit on the disk (RLIMIT_FSIZE: EFBIG) fails naming the file and the
// reason, and leaves neither the history nor its temporary behind.
TEST(Jsonl, FullDiskNamesTheReasonAndLeavesNoTemporary) {
  const fs::path path = temp_file("full.jsonl");
  fs::remove(path);
  History history;
  history.clients = {"A"};
  for (int i = 0; i < 2000; ++i) {
    Event event = Event::make(EventType::kInvoke, Op::kAcquire);
    event.time_ns = i;
    event.key = history.key_id("lock");
    history.events.push_back(event);
  }
  const std::string message = test_support::message_under_file_size_limit(
      8192, [&] { write_history_jsonl(path, history); });
  EXPECT_NE(message.find(path.string() + ".tmp: File too large"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(path.string() + ".tmp"));
  EXPECT_FALSE(fs::exists(path));
}

}  // namespace
}  // namespace locksim
