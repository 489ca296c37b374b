// history_test: per-client logs merge into one time-ordered history, and history.jsonl
// round-trips exactly, rejects malformed lines with the line number, and a full disk leaves no
// temporary file behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "sim/core/error.h"
#include "sim/history/jsonl.h"
#include "sim/history/recorder.h"
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

// Logs written concurrently by several threads merge into one history sorted by time with
// indexes equal to positions, and no event is lost.
TEST(Recorder, MergesConcurrentLogsInTimeOrder) {
  RunClock clock;
  Recorder recorder(clock, {"A", "B", "C", "D"}, 16);
  std::vector<std::thread> threads;
  for (std::size_t c = 0; c < 4; ++c) {
    threads.emplace_back([&recorder, c] {
      for (int i = 0; i < 5000; ++i)
        recorder.log(c).record(EventType::kInvoke, Op::kAcquire, "lock");
    });
  }
  for (auto& t : threads) t.join();
  const History history = std::move(recorder).merge();
  ASSERT_EQ(history.events.size(), 20000u);
  ASSERT_EQ(history.clients.size(), 4u);
  for (std::size_t i = 0; i < history.events.size(); ++i) {
    ASSERT_EQ(history.events[i].index, static_cast<std::int64_t>(i));
    if (i > 0) {
      ASSERT_LE(history.events[i - 1].time_ns, history.events[i].time_ns);
    }
  }
}

// Every field survives a write and a read.
TEST(Jsonl, RoundTripsEveryField) {
  History history;
  history.clients = {"A", "B"};
  Event e;
  e.index = 0;
  e.time_ns = 1500;
  e.client = 1;
  e.type = EventType::kOk;
  e.f = Op::kAcquire;
  e.key = "lock";
  e.token = "abc123";
  e.ttl_ms = 200;
  e.count = 3;
  history.events.push_back(e);
  Event f;
  f.index = 1;
  f.time_ns = 2500;
  f.client = 0;
  f.type = EventType::kInfo;
  f.f = Op::kCrash;
  f.error = "timeout: lost";
  history.events.push_back(f);

  const fs::path path = temp_file("roundtrip.jsonl");
  write_history_jsonl(path, history);
  const History back = read_history_jsonl(path);
  ASSERT_EQ(back.events.size(), 2u);
  EXPECT_EQ(back.clients[static_cast<std::size_t>(back.events[0].client)], "B");
  EXPECT_EQ(back.clients[static_cast<std::size_t>(back.events[1].client)], "A");
  EXPECT_EQ(back.events[0].time_ns, 1500);
  EXPECT_EQ(back.events[0].type, EventType::kOk);
  EXPECT_EQ(back.events[0].f, Op::kAcquire);
  EXPECT_EQ(back.events[0].key, "lock");
  EXPECT_EQ(back.events[0].token, "abc123");
  EXPECT_EQ(back.events[0].ttl_ms, 200);
  EXPECT_EQ(back.events[0].count, 3);
  EXPECT_EQ(back.events[1].f, Op::kCrash);
  EXPECT_EQ(back.events[1].ttl_ms, -1);
  EXPECT_EQ(back.events[1].error, "timeout: lost");
  EXPECT_FALSE(fs::exists(path.string() + ".tmp"));
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
  EXPECT_THROW(read_history_jsonl(temp_file("absent.jsonl")), InputError);
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
    Event event;
    event.index = i;
    event.time_ns = i;
    event.type = EventType::kInvoke;
    event.f = Op::kAcquire;
    event.key = "lock";
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
