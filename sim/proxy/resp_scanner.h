// resp_scanner.h: RespScanner, an incremental framer of a RESP2 byte stream. It says where each
// complete command (client to server) or reply (server to client) ends, so that the proxy can
// move whole values between sockets without parsing them into objects or copying the stream.
//
// The scanner looks at every byte once and keeps only the open arrays' counts and at most one
// line, so hostile input costs bounded time and memory: a length, a count, a nesting depth or a
// line beyond RespLimits, or a byte RESP2 does not allow where it stands, marks the stream broken
// for good (there is no way to find the next value boundary after that).
//
//   RespScanner requests(RespScanner::Stream::kRequests);
//   std::vector<RespFrame> frames;
//   requests.feed("*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET", frames);
//   // frames: one frame of 14 bytes, command "PING"; the GET waits for the rest of its bytes
//   if (requests.broken()) { ... requests.error() ... }
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace locksim {

// RespLimits: the largest values a scanner accepts; anything larger marks the stream broken.
struct RespLimits {
  std::int64_t max_bulk_bytes = std::int64_t{512} << 20;    // Redis' proto-max-bulk-len default
  std::int64_t max_array_elements = std::int64_t{1} << 20;  // per array, as older Redis required
  std::size_t max_depth = 64;  // arrays nested in arrays (replies only: requests are flat)
  // A simple string, error or integer line, or an inline command (Redis refuses inline commands
  // over 64 KiB too).
  std::size_t max_line_bytes = std::size_t{64} << 10;
  std::uint64_t max_frame_bytes = std::uint64_t{1} << 30;  // one whole command or reply
};

// RespFrame: one complete top-level value.
struct RespFrame {
  std::size_t size_bytes = 0;  // its length on the wire, type bytes and CRLFs included
  // command: for requests, the first element upper-cased (at most kMaxCommandNameBytes of it);
  // empty for replies, and for a request without elements (an empty inline line, "*0" or "*-1"),
  // which Redis ignores without a reply.
  std::string command;
};

class RespScanner {
 public:
  // kRequests: what a client sends: arrays of bulk strings, or inline commands ended by "\n"
  // (with an optional "\r" before it). kReplies: any RESP2 value (+ - : $ *), nested arrays and
  // null bulk strings and arrays included.
  enum class Stream { kRequests, kReplies };

  // kMaxCommandNameBytes: longer first elements are reported cut to this length (no Redis
  // command name comes close).
  static constexpr std::size_t kMaxCommandNameBytes = 32;

  explicit RespScanner(Stream stream, RespLimits limits = {});

  // feed: scans the next `bytes` of the stream (any split: one byte at a time works) and appends a
  // frame to `frames` for each value they complete, in stream order. Bytes after a complete frame
  // start the next one. Once broken() a scanner ignores everything it is fed.
  void feed(std::string_view bytes, std::vector<RespFrame>& frames);

  // broken: the stream is not RESP2 (or exceeds the limits); error() says why and at which byte.
  bool broken() const { return !error_.empty(); }
  const std::string& error() const { return error_; }

 private:
  enum class State { kValueStart, kLine, kBulk };
  enum class LineKind { kSimple, kBulkLength, kArrayLength, kInline };

  // consume: counts `bytes` into the current frame; false (and broken) past max_frame_bytes.
  bool consume(std::size_t bytes);
  std::size_t start_value(char type);
  std::size_t scan_line(std::string_view bytes);
  std::size_t scan_bulk(std::string_view bytes);
  void end_line();
  void begin_line(LineKind kind);
  void on_bulk_length(std::int64_t length);
  void on_array_length(std::int64_t count);
  void end_inline();
  void end_value();
  void end_frame();
  void fail(std::string what);

  Stream stream_;
  RespLimits limits_;
  std::vector<RespFrame>* frames_ = nullptr;  // the caller's, during feed()

  State state_ = State::kValueStart;
  LineKind line_kind_ = LineKind::kSimple;
  std::string line_;            // a length line's or an inline command's bytes so far
  std::size_t line_bytes_ = 0;  // the current line's length so far, "\n" not included
  char line_last_byte_ = '\0';  // the byte before the "\n" (it must be "\r" in RESP lines)
  std::int64_t bulk_left_ = 0;  // payload bytes plus the closing CRLF still to come
  bool bulk_is_name_ = false;   // the bulk string being read is a request's first element
  bool next_bulk_is_name_ = false;
  std::vector<std::int64_t> open_arrays_;  // elements still missing, outermost first
  std::uint64_t frame_bytes_ = 0;
  std::uint64_t stream_bytes_ = 0;  // for error messages
  std::string command_;
  std::string error_;
};

}  // namespace locksim
