// json_test: the one strict JSON reader: duplicate keys, nesting and size caps, numbers out of
// range, positions, non-regular files refused without blocking, JsonReader's bounded messages, and
// JSON Pointers (RFC 6901) resolved with the path of what they name or why they name nothing.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>

#include "sim/core/error.h"
#include "sim/json/file.h"
#include "sim/json/json_reader.h"
#include "sim/json/messages.h"
#include "sim/json/parse.h"
#include "sim/json/pointer.h"

namespace locksim::json {
namespace {

namespace fs = std::filesystem;

constexpr JsonLimits kSmall{1024, 8};

// error_of: the InputError message of parsing `text` as file "x.json", or "" if it parsed.
std::string error_of(std::string_view text, const JsonLimits& limits = kSmall) {
  try {
    parse_json_text(text, "x.json", limits);
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

std::string nested_arrays(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

// A key given twice is an error at its path, however deep; the same key in two objects is not.
TEST(ParseJsonText, DuplicateKeysAreRejectedWithTheirPath) {
  EXPECT_EQ(error_of(R"({"a": 1, "a": 2})"),
            "x.json: $.a: duplicate key (each key may appear once in an object)");
  EXPECT_EQ(error_of(R"({"a": [{"b": 1}, {"c": {"d": 1, "d": 1}}]})"),
            "x.json: $.a[1].c.d: duplicate key (each key may appear once in an object)");
  EXPECT_EQ(error_of(R"({"x y": {"": 1, "": 2}})"),
            "x.json: $[\"x y\"][\"\"]: duplicate key (each key may appear once in an object)");
  EXPECT_EQ(error_of(R"([{"a": 1}, {"a": 1}])"), "");
  const nlohmann::json parsed =
      parse_json_text(R"({"a": [1, {"b": null}], "c": "d"})", "x", kSmall);
  EXPECT_EQ(parsed, nlohmann::json::parse(R"({"a": [1, {"b": null}], "c": "d"})"));
}

// Nesting is capped at max_depth: exactly the cap parses, one more fails at its JSON path.
TEST(ParseJsonText, DepthIsCappedAtItsPath) {
  const JsonLimits limits{1 << 20, 64};
  EXPECT_EQ(error_of(nested_arrays(60), limits), "");
  EXPECT_EQ(error_of(nested_arrays(64), limits), "");
  const std::string error = error_of(nested_arrays(65), limits);
  std::string path = "$";
  for (int i = 0; i < 64; ++i) path += "[0]";
  EXPECT_EQ(error, "x.json: " + path + ": nested more than 64 levels deep (objects and arrays " +
                       "inside each other); the limit is 64");
  EXPECT_NE(error_of(R"({"a": {"b": [{"c": 1}]}})", JsonLimits{1024, 3}).find("$.a.b[0]: nested"),
            std::string::npos);
}

// A million levels in 2 MB are refused at level 65 without building them: fast, and the message
// stays short (memory is linear in the accepted depth, not quadratic in the given one).
TEST(ParseJsonText, MillionLevelsAreRefusedEarly) {
  const auto started = std::chrono::steady_clock::now();
  const std::string error = error_of(nested_arrays(1000000), JsonLimits{4 << 20, 64});
  EXPECT_NE(error.find("nested more than 64 levels deep"), std::string::npos);
  EXPECT_LT(error.size(), 400u);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
}

// A text over max_bytes is refused before parsing, naming its size and the limit.
TEST(ParseJsonText, SizeIsCapped) {
  const std::string text = "[\"" + std::string(2000, 'x') + "\"]";
  EXPECT_EQ(error_of(text), "x.json: a text of 2004 bytes is larger than the limit of 1024 bytes");
  EXPECT_EQ(error_of(text, JsonLimits{4096, 8}), "");
}

// Numbers beyond a double are an error at the number's line and column, never an abort;
// a non-zero number that would read as 0 is an error at its path.
TEST(ParseJsonText, NumbersOutOfRangeAreInputErrors) {
  EXPECT_EQ(error_of(R"({"name": 1e400})"),
            "x.json: line 1, column 10: number 1e400 is out of range (a number must lie within "
            "+-1.7e308)");
  EXPECT_NE(error_of("{\n  \"a\": [1,\n    -1e400]}").find("line 3, column 5: number -1e400"),
            std::string::npos);
  EXPECT_EQ(error_of(R"({"p": [0, 1e-400]})"),
            "x.json: $.p[1]: number 1e-400 is too small to represent (it would read as 0)");
  EXPECT_EQ(error_of(R"({"p": [0.0, 0e-400, 1e308, 4.9e-324]})"), "");
  const std::string long_number = "1" + std::string(400, '0') + ".5";
  const std::string error = error_of("[" + long_number + "]");
  EXPECT_NE(error.find("line 1, column 2: number 1000000000000000...000000.5 (403 characters)"),
            std::string::npos)
      << error;
  // Integers beyond 64 bits become doubles (the readers then name them as out of range).
  EXPECT_EQ(error_of("[18446744073709551616, -9223372036854775809]"), "");
}

// Syntax errors give the line and column of the character where parsing stopped.
TEST(ParseJsonText, SyntaxErrorsNameLineAndColumn) {
  EXPECT_NE(error_of("{\n  \"name\": \"x\",\n  \"variants\": [\"naive\",]\n}\n")
                .find("x.json: line 3, column 24: invalid JSON: syntax error"),
            std::string::npos);
  EXPECT_NE(error_of("[NaN]").find("x.json: line 1, column 2: invalid JSON"), std::string::npos);
  EXPECT_NE(error_of("{} {}").find("x.json: line 1, column 4: invalid JSON"), std::string::npos);
  EXPECT_EQ(error_of(""),
            "x.json: line 1, column 1: invalid JSON: no value (the input is empty or "
            "only whitespace)");
  EXPECT_NE(error_of("\n\n  ").find("x.json: line 3, column 3: invalid JSON: no value"),
            std::string::npos);
}

// Invalid UTF-8 and NUL bytes are syntax errors, and the message shows them escaped, not raw.
TEST(ParseJsonText, BadBytesAreRejectedAndShownEscaped) {
  const std::string invalid_utf8 = error_of("[\"a\xff\xfe\"]");
  EXPECT_NE(invalid_utf8.find("line 1, column 4: invalid JSON"), std::string::npos) << invalid_utf8;
  EXPECT_EQ(invalid_utf8.find('\xff'), std::string::npos);
  const std::string nul = error_of(std::string("[1,\0 2]", 7));
  EXPECT_NE(nul.find("line 1, column 4: invalid JSON"), std::string::npos) << nul;
  EXPECT_EQ(nul.find('\0'), std::string::npos);
}

// One JSON Lines line: errors start "<file>:<line>:" and give the column.
TEST(ParseJsonLine, ErrorsNameFileLineAndColumn) {
  try {
    parse_json_line(R"({"time_ns": 1e400})", "h.jsonl", 7, kHistoryLineLimits);
    FAIL() << "no InputError";
  } catch (const InputError& error) {
    EXPECT_EQ(std::string(error.what()),
              "h.jsonl:7: column 13: number 1e400 is out of range (a number must lie within "
              "+-1.7e308)");
  }
  try {
    parse_json_line(R"({"a": 1, "a": 1})", "h.jsonl", 2, kHistoryLineLimits);
    FAIL() << "no InputError";
  } catch (const InputError& error) {
    EXPECT_EQ(std::string(error.what()),
              "h.jsonl:2: $.a: duplicate key (each key may appear once in an object)");
  }
  try {
    parse_json_line(nested_arrays(17), "h.jsonl", 3, kHistoryLineLimits);
    FAIL() << "no InputError";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("h.jsonl:3: $[0]"), std::string::npos);
  }
  EXPECT_EQ(parse_json_line(R"({"a":[1]})", "h.jsonl", 1, kHistoryLineLimits)["a"][0], 1);
}

// Files on disk, in a fresh directory per test.
class JsonFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    directory_ = fs::temp_directory_path() /
                 ("locksim-json-test-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(directory_);
    fs::create_directories(directory_);
  }
  void TearDown() override { fs::remove_all(directory_); }

  fs::path write(const std::string& name, const std::string& text) {
    const fs::path path = directory_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  static std::string file_error(const fs::path& path, const JsonLimits& limits = kSmall) {
    try {
      read_json_file(path, limits, "test file");
    } catch (const InputError& error) {
      return error.what();
    }
    return "";
  }

  fs::path directory_;
};

// A regular file is read and parsed, errors naming the file.
TEST_F(JsonFileTest, RegularFileIsReadAndParsed) {
  EXPECT_EQ(read_json_file(write("ok.json", R"({"a": 1})"), kSmall, "test file")["a"], 1);
  const fs::path broken = write("broken.json", "{\n\"a\": 1e400}");
  EXPECT_EQ(file_error(broken),
            broken.string() +
                ": line 2, column 6: number 1e400 is out of range (a number must "
                "lie within +-1.7e308)");
  const fs::path empty = write("empty.json", "");
  EXPECT_NE(file_error(empty).find(empty.string() + ": line 1, column 1: invalid JSON: no value"),
            std::string::npos);
}

// A file over the cap is refused before reading, naming its size and the limit.
TEST_F(JsonFileTest, TooLargeFileNamesSizeAndLimit) {
  const fs::path big = write("big.json", "[\"" + std::string(5000, 'x') + "\"]");
  EXPECT_EQ(file_error(big),
            big.string() + ": 5004 bytes is larger than the limit for a test file (1024 bytes)");
}

// A FIFO is refused at once: no open() that waits for a writer. If the reader did block, this
// test unblocks it by opening the writing end, and fails.
TEST_F(JsonFileTest, FifoIsRefusedWithoutBlocking) {
  const fs::path fifo = directory_ / "fifo.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto result = std::async(std::launch::async, [&] { return file_error(fifo); });
  if (result.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    const int writer = open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (writer >= 0) close(writer);
    FAIL() << "read_json_file blocked on a FIFO";
  }
  EXPECT_EQ(result.get(), fifo.string() + ": not a regular file (a FIFO); expected a test file");
}

// Directories, character devices, sockets, symlink loops and missing files are refused with the
// reason.
TEST_F(JsonFileTest, OtherNonRegularFilesAreRefused) {
  const fs::path directory = directory_ / "dir.json";
  fs::create_directory(directory);
  EXPECT_EQ(file_error(directory),
            directory.string() + ": not a regular file (a directory); expected a test file");
  EXPECT_EQ(file_error("/dev/zero"),
            "/dev/zero: not a regular file (a character device); expected a test file");

  const fs::path socket_path = directory_ / "sock.json";
  const int listener = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string socket_name = socket_path.string();
  ASSERT_LT(socket_name.size(), sizeof address.sun_path);
  std::copy(socket_name.begin(), socket_name.end(), address.sun_path);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  EXPECT_EQ(file_error(socket_path),
            socket_path.string() + ": not a regular file (a socket); expected a test file");
  close(listener);

  const fs::path loop = directory_ / "loop.json";
  fs::create_symlink(loop, loop);
  EXPECT_EQ(file_error(loop), loop.string() + ": cannot open (Too many levels of symbolic links)");
  EXPECT_EQ(file_error(directory_ / "absent.json"),
            (directory_ / "absent.json").string() + ": cannot open (No such file or directory)");
  const fs::path link = directory_ / "link.json";
  fs::create_symlink(write("target.json", "[1]"), link);
  EXPECT_EQ(file_error(link), "");  // a symlink to a regular file is fine
}

// JsonReader caps strings in characters (not bytes), and its messages stay short for huge values
// and keys.
TEST(JsonReader, StringCapsAndShortMessages) {
  const std::string file = "x.json";
  const nlohmann::json document = {{"d", std::string(20000, 'x')},
                                   {"u", "\xc3\xa9\xc3\xa9\xc3\xa9"}};
  const JsonReader root(document, "$", file);
  try {
    root.member("d").string(10000);
    FAIL() << "no InputError";
  } catch (const InputError& error) {
    EXPECT_EQ(std::string(error.what()),
              "x.json: $.d: expected a string of at most 10000 characters, got 20000 characters");
  }
  EXPECT_EQ(root.member("u").string(3), "\xc3\xa9\xc3\xa9\xc3\xa9");  // 3 characters, 6 bytes
  EXPECT_THROW(root.member("u").non_empty_string(2), InputError);
  try {
    root.member("d").duration_ms(0, 10);
    FAIL() << "no InputError";
  } catch (const InputError& error) {
    EXPECT_LT(std::string(error.what()).size(), 200u);
    EXPECT_NE(std::string(error.what()).find("(a string of 20000 characters)"), std::string::npos);
  }
  const nlohmann::json keyed = {{std::string(100000, 'k'), 1}};
  try {
    JsonReader(keyed, "$", file).expect_object({"key"});
    FAIL() << "no InputError";
  } catch (const InputError& error) {
    EXPECT_LT(std::string(error.what()).size(), 300u);
    EXPECT_NE(std::string(error.what()).find("...\"]: unknown key"), std::string::npos);
  }
}

// Integers beyond int64 are refused by every integer reader, also by at_least, which has no upper
// bound of its own (it used to take 2^64 - 1 as 2^63 - 1).
TEST(JsonReader, IntegersBeyondInt64AreRefused) {
  const std::string file = "x.json";
  const nlohmann::json document =
      nlohmann::json::parse(R"({"n": 18446744073709551615, "m": 9223372036854775807})");
  const JsonReader root(document, "$", file);
  EXPECT_THROW(root.member("n").at_least(0, "a count"), InputError);
  EXPECT_THROW(root.member("n").count(0, 10, "a count"), InputError);
  EXPECT_THROW(root.member("n").duration_ms(0, 10), InputError);
  EXPECT_EQ(root.member("m").at_least(0, "a count"), 9223372036854775807);
}

// Did-you-mean finds close names, and stays fast against a huge word.
TEST(Messages, ClosestMatch) {
  EXPECT_EQ(closest_match("ttll_ms", {"ttl_ms", "key"}), "ttl_ms");
  EXPECT_EQ(closest_match("TTL_MS", {"ttl_ms"}), "ttl_ms");
  EXPECT_EQ(closest_match("x", {"id"}), std::nullopt);
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(closest_match(std::string(1 << 20, 'a'), {"ttl_ms", "key", "wait"}), std::nullopt);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));
}

// A pointer names its value and its JSON path; escapes follow RFC 6901 ("~1" is '/', "~0" '~').
TEST(JsonPointer, NamesTheValueAndItsPath) {
  nlohmann::json document = nlohmann::json::parse(
      R"({"steps": [{"do": "acquire"}, {"pause_ms": 300}], "a/b": {"~x": 7}, "": {"": 1}})");
  PointerTarget target = resolve_pointer(document, "/steps/1/pause_ms");
  EXPECT_EQ(target.error, "");
  ASSERT_NE(target.value, nullptr);
  EXPECT_EQ(*target.value, 300);
  EXPECT_EQ(target.path, "$.steps[1].pause_ms");
  EXPECT_EQ(target.tokens, (std::vector<std::string>{"steps", "1", "pause_ms"}));
  target = resolve_pointer(document, "/a~1b/~0x");
  ASSERT_NE(target.value, nullptr);
  EXPECT_EQ(*target.value, 7);
  EXPECT_EQ(target.path, "$[\"a/b\"][\"~x\"]");
  target = resolve_pointer(document, "//");  // the key "" inside the key ""
  ASSERT_NE(target.value, nullptr);
  EXPECT_EQ(*target.value, 1);
  target = resolve_pointer(document, "");  // the whole document
  EXPECT_EQ(target.value, &document);
  EXPECT_EQ(target.path, "$");
  // pointed_value reaches the same value in a copy, for writing.
  nlohmann::json copy = document;
  pointed_value(copy, resolve_pointer(document, "/steps/1/pause_ms").tokens) = 900;
  EXPECT_EQ(copy["steps"][1]["pause_ms"], 900);
  EXPECT_EQ(document["steps"][1]["pause_ms"], 300);
}

// A pointer that names nothing says where it stopped and why; none of them throws.
TEST(JsonPointer, NamesNothingWithAReason) {
  const nlohmann::json document =
      nlohmann::json::parse(R"({"steps": [{"pause_ms": 300}, {}], "lock": {"ttl_ms": 5}})");
  const auto error = [&](std::string_view pointer) {
    const PointerTarget target = resolve_pointer(document, pointer);
    EXPECT_EQ(target.value, nullptr) << pointer;
    return target.error;
  };
  EXPECT_EQ(error("steps/0"),
            "expected a JSON Pointer (RFC 6901) starting with '/', e.g. \"/lock/ttl_ms\"");
  EXPECT_EQ(error("/steps/0/pause~2ms"),
            "'~' must be followed by 0 or 1 in a JSON Pointer (\"~0\" is '~', \"~1\" is '/')");
  EXPECT_EQ(error("/steps/0/pause~"),
            "'~' must be followed by 0 or 1 in a JSON Pointer (\"~0\" is '~', \"~1\" is '/')");
  EXPECT_EQ(error("/steps/0/pause_m"),
            "$.steps[0] has no key \"pause_m\" (did you mean \"pause_ms\"?)");
  EXPECT_EQ(error("/steps/2/pause_ms"),
            "$.steps has 2 elements; expected an index from 0 to 1, got \"2\"");
  EXPECT_EQ(error("/steps/01"),
            "$.steps has 2 elements; expected an index from 0 to 1, got \"01\"");
  EXPECT_EQ(error("/steps/-"), "$.steps has 2 elements; expected an index from 0 to 1, got \"-\"");
  EXPECT_EQ(error("/steps/99999999999999999999"),
            "$.steps has 2 elements; expected an index from 0 to 1, got \"99999999999999999999\"");
  EXPECT_EQ(error("/lock/ttl_ms/x"),
            "$.lock.ttl_ms is a number, not an object or array; \"x\" cannot be inside it");
  EXPECT_EQ(error("/nothing"), "$ has no key \"nothing\"");
}

}  // namespace
}  // namespace locksim::json
