// resp_scanner_test: RespScanner finds the same command and reply boundaries however the stream is
// split, names commands, and marks malformed or oversized input broken without buffering it.
#include "sim/proxy/resp_scanner.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace locksim {
namespace {

using Stream = RespScanner::Stream;

// A pipeline of commands in both request forms, with payloads that contain CRLF and type bytes.
const std::string kRequests =
    "*3\r\n$3\r\nset\r\n$1\r\nk\r\n$5\r\na\r\n*$\r\n"  // 31 bytes
    "PING\r\n"                                         // 6
    "  get  key\n"                                     // 11
    "*2\r\n$4\r\nEVAL\r\n$0\r\n\r\n";                  // 20

// One reply of every RESP2 type, nested and null ones included.
const std::string kReplies =
    "+OK\r\n"                                 // 5
    "-ERR wrong\r\n"                          // 12
    ":-42\r\n"                                // 6
    "$4\r\n\r\n\r\n\r\n"                      // 10
    "$-1\r\n"                                 // 5
    "*-1\r\n"                                 // 5
    "*0\r\n"                                  // 4
    "*3\r\n*2\r\n:1\r\n$-1\r\n*0\r\n+x\r\n";  // 25

struct Frame {
  std::size_t size_bytes;
  std::string command;
  bool operator==(const Frame&) const = default;
};

std::vector<Frame> plain(const std::vector<RespFrame>& frames) {
  std::vector<Frame> result;
  for (const RespFrame& frame : frames) result.push_back({frame.size_bytes, frame.command});
  return result;
}

// scan: the frames of `bytes` fed in pieces of `piece` bytes (0: all at once).
std::vector<Frame> scan(Stream stream, std::string_view bytes, std::size_t piece = 0,
                        RespLimits limits = {}) {
  RespScanner scanner(stream, limits);
  std::vector<RespFrame> frames;
  if (piece == 0) piece = bytes.size();
  for (std::size_t at = 0; at < bytes.size(); at += piece) {
    scanner.feed(bytes.substr(at, piece), frames);
  }
  EXPECT_FALSE(scanner.broken()) << scanner.error();
  return plain(frames);
}

// error_of: the error a scanner reports after `bytes`, or "" (and a test failure) if none.
std::string error_of(Stream stream, std::string_view bytes, RespLimits limits = {}) {
  RespScanner scanner(stream, limits);
  std::vector<RespFrame> frames;
  scanner.feed(bytes, frames);
  EXPECT_TRUE(scanner.broken()) << "accepted: " << bytes.substr(0, 80);
  return scanner.error();
}

// Array and inline commands are framed with their wire length and their upper-cased name.
TEST(RespScannerTest, FramesRequestsAndNamesThem) {
  const std::vector<Frame> expected = {{31, "SET"}, {6, "PING"}, {11, "GET"}, {20, "EVAL"}};
  EXPECT_EQ(scan(Stream::kRequests, kRequests), expected);
}

// Every reply type is one frame, nested arrays and nulls included, with nothing reported early.
TEST(RespScannerTest, FramesEveryReplyType) {
  const std::vector<Frame> expected = {{5, ""}, {12, ""}, {6, ""}, {10, ""},
                                       {5, ""}, {5, ""},  {4, ""}, {25, ""}};
  EXPECT_EQ(scan(Stream::kReplies, kReplies), expected);
}

// Fed one byte at a time, or in pieces of any size, the frames are the same as fed at once.
TEST(RespScannerTest, SplitAnywhereGivesTheSameFrames) {
  for (const Stream stream : {Stream::kRequests, Stream::kReplies}) {
    const std::string& bytes = stream == Stream::kRequests ? kRequests : kReplies;
    const std::vector<Frame> whole = scan(stream, bytes);
    for (std::size_t piece = 1; piece <= bytes.size(); ++piece) {
      EXPECT_EQ(scan(stream, bytes, piece), whole) << "pieces of " << piece;
    }
  }
}

// A frame is reported on its last byte, not before, and counts the bytes of earlier feeds.
TEST(RespScannerTest, ReportsAFrameOnlyWhenComplete) {
  RespScanner scanner(Stream::kReplies);
  std::vector<RespFrame> frames;
  scanner.feed("*2\r\n$3\r\nabc\r\n:1\r", frames);
  EXPECT_TRUE(frames.empty());
  scanner.feed("\n+", frames);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].size_bytes, 17u);
  scanner.feed("OK\r\n", frames);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[1].size_bytes, 5u);
}

// Commands Redis ignores without a reply (an empty inline line, "*0", "*-1") are frames with
// no name, so the proxy can tell they expect nothing.
TEST(RespScannerTest, EmptyCommandsHaveNoName) {
  const std::vector<Frame> expected = {{2, ""}, {1, ""}, {4, ""}, {5, ""}, {6, "PING"}};
  EXPECT_EQ(scan(Stream::kRequests, "\r\n\n*0\r\n*-1\r\nping\r\n"), expected);
}

// The name is the first element only, cut to kMaxCommandNameBytes, and binary-safe.
TEST(RespScannerTest, NamesAreTheFirstElementCut) {
  const std::string long_name(100, 'x');
  const std::string request =
      "*2\r\n$100\r\n" + long_name + "\r\n$3\r\nget\r\n*1\r\n$3\r\nc" + '\0' + "d\r\n";
  const std::vector<Frame> frames = scan(Stream::kRequests, request);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].command, std::string(RespScanner::kMaxCommandNameBytes, 'X'));
  EXPECT_EQ(frames[1].command, std::string("C\0D", 3));
}

// Bytes that are not RESP2 where they stand break the stream, with a reason.
TEST(RespScannerTest, MalformedInputBreaksTheStream) {
  EXPECT_NE(error_of(Stream::kReplies, "?x\r\n").find("not a RESP2 type byte"), std::string::npos);
  EXPECT_NE(error_of(Stream::kRequests, "*1\r\n:1\r\n").find("expected '$'"), std::string::npos);
  EXPECT_NE(error_of(Stream::kReplies, "$abc\r\n").find("expected a length"), std::string::npos);
  EXPECT_NE(error_of(Stream::kReplies, "*1x\r\n").find("expected a length"), std::string::npos);
  EXPECT_NE(error_of(Stream::kReplies, "$\r\n").find("expected a length"), std::string::npos);
  EXPECT_NE(error_of(Stream::kReplies, "$3\nabc\r\n").find("\\r\\n"), std::string::npos);
  EXPECT_NE(error_of(Stream::kReplies, "+OK\n").find("\\r\\n"), std::string::npos);
  EXPECT_NE(error_of(Stream::kReplies, "$3\r\nabcd\r\n").find("bulk string not followed"),
            std::string::npos);
  EXPECT_NE(error_of(Stream::kRequests, "*1\r\n$-1\r\n").find("bulk length -1"), std::string::npos);
  EXPECT_NE(error_of(Stream::kReplies, "*-2\r\n").find("array length -2"), std::string::npos);
}

// Absurd lengths are refused from their header, before any payload would be buffered.
TEST(RespScannerTest, RefusesAbsurdLengths) {
  EXPECT_NE(error_of(Stream::kReplies, "$536870913\r\n").find("over the limit"), std::string::npos);
  EXPECT_NE(error_of(Stream::kRequests, "*2\r\n$99999999999\r\n").find("over the limit"),
            std::string::npos);
  EXPECT_NE(error_of(Stream::kRequests, "*1048577\r\n").find("over the limit"), std::string::npos);
  EXPECT_NE(error_of(Stream::kReplies, "$" + std::string(30, '9') + "\r\n").find("length line"),
            std::string::npos);
  EXPECT_NE(error_of(Stream::kReplies, "*9223372036854775808\r\n").find("expected a length"),
            std::string::npos);
}

// Nesting, lines and whole frames are bounded too; the limits are the scanner's to choose.
TEST(RespScannerTest, BoundsDepthLinesAndFrames) {
  std::string deep;
  for (int i = 0; i < 65; ++i) deep += "*1\r\n";
  EXPECT_NE(error_of(Stream::kReplies, deep).find("nested deeper than 64"), std::string::npos);
  EXPECT_EQ(scan(Stream::kReplies, deep.substr(4 * 1) + ":1\r\n").size(), 1u);  // 64 deep is fine

  RespLimits small;
  small.max_line_bytes = 16;
  small.max_frame_bytes = 64;
  EXPECT_NE(error_of(Stream::kRequests, std::string(17, 'a') + "\r\n", small).find("line longer"),
            std::string::npos);
  EXPECT_NE(
      error_of(Stream::kReplies, "-" + std::string(17, 'e') + "\r\n", small).find("line longer"),
      std::string::npos);
  EXPECT_NE(error_of(Stream::kRequests, "*1\r\n$60\r\n" + std::string(62, 'v'), small)
                .find("value longer than 64 bytes"),
            std::string::npos);
}

// A line without end is refused at the limit, not buffered: a hostile peer cannot grow memory.
TEST(RespScannerTest, EndlessLineIsRefusedAtTheLimit) {
  RespScanner scanner(Stream::kRequests);
  std::vector<RespFrame> frames;
  const std::string chunk(4096, 'a');
  int fed = 0;
  while (!scanner.broken() && fed < 1000) {
    scanner.feed(chunk, frames);
    ++fed;
  }
  EXPECT_TRUE(scanner.broken());
  EXPECT_EQ(fed, 17);  // 64 KiB of line, then the 17th chunk crosses the limit
}

// Once broken, a scanner stays broken and reports nothing more.
TEST(RespScannerTest, BrokenStaysBroken) {
  RespScanner scanner(Stream::kReplies);
  std::vector<RespFrame> frames;
  scanner.feed("!", frames);
  ASSERT_TRUE(scanner.broken());
  const std::string error = scanner.error();
  scanner.feed("+OK\r\n", frames);
  EXPECT_TRUE(frames.empty());
  EXPECT_EQ(scanner.error(), error);
}

}  // namespace
}  // namespace locksim
