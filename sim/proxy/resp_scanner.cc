#include "sim/proxy/resp_scanner.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <utility>

namespace locksim {
namespace {

// kMaxLengthLineBytes: "-9223372036854775808\r", the longest length line a valid stream has.
constexpr std::size_t kMaxLengthLineBytes = 21;

char upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

// printable: `bytes` for an error message, control and non-ASCII bytes as \xNN.
std::string printable(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text;
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) {
      text += c;
    } else {
      text += "\\x";
      text += kHex[byte >> 4];
      text += kHex[byte & 0xf];
    }
  }
  return text;
}

}  // namespace

RespScanner::RespScanner(Stream stream, RespLimits limits) : stream_(stream), limits_(limits) {}

void RespScanner::feed(std::string_view bytes, std::vector<RespFrame>& frames) {
  frames_ = &frames;
  while (!bytes.empty() && !broken()) {
    std::size_t used = 0;
    switch (state_) {
      case State::kValueStart:
        used = start_value(bytes.front());
        break;
      case State::kLine:
        used = scan_line(bytes);
        break;
      case State::kBulk:
        used = scan_bulk(bytes);
        break;
    }
    bytes.remove_prefix(used);
  }
  frames_ = nullptr;
}

bool RespScanner::consume(std::size_t bytes) {
  frame_bytes_ += bytes;
  stream_bytes_ += bytes;
  if (frame_bytes_ > limits_.max_frame_bytes) {
    fail("a value longer than " + std::to_string(limits_.max_frame_bytes) + " bytes");
    return false;
  }
  return true;
}

std::size_t RespScanner::start_value(char type) {
  if (stream_ == Stream::kRequests) {
    if (open_arrays_.empty() && type != '*') {
      // Anything else starts an inline command; its first byte belongs to the line.
      begin_line(LineKind::kInline);
      return 0;
    }
    if (!open_arrays_.empty() && type != '$') {
      fail("expected '$' (a bulk string) in a command, got '" + printable({&type, 1}) + "'");
      return 0;
    }
  }
  if (!consume(1)) return 1;
  switch (type) {
    case '+':
    case '-':
    case ':':
      begin_line(LineKind::kSimple);
      break;
    case '$':
      begin_line(LineKind::kBulkLength);
      break;
    case '*':
      begin_line(LineKind::kArrayLength);
      break;
    default:
      fail("'" + printable({&type, 1}) + "' is not a RESP2 type byte");
      break;
  }
  return 1;
}

void RespScanner::begin_line(LineKind kind) {
  line_kind_ = kind;
  line_.clear();
  line_bytes_ = 0;
  line_last_byte_ = '\0';
  state_ = State::kLine;
}

std::size_t RespScanner::scan_line(std::string_view bytes) {
  const auto* newline = static_cast<const char*>(std::memchr(bytes.data(), '\n', bytes.size()));
  const std::size_t content = newline != nullptr ? newline - bytes.data() : bytes.size();
  const std::size_t used = newline != nullptr ? content + 1 : content;
  if (!consume(used)) return used;
  line_bytes_ += content;
  const bool length_line =
      line_kind_ == LineKind::kBulkLength || line_kind_ == LineKind::kArrayLength;
  if (line_bytes_ > (length_line ? kMaxLengthLineBytes : limits_.max_line_bytes)) {
    fail(length_line ? "a length line longer than a 64-bit number"
                     : "a line longer than " + std::to_string(limits_.max_line_bytes) + " bytes");
    return used;
  }
  // Only lengths and inline commands are read; a simple line is only looked through.
  if (line_kind_ != LineKind::kSimple) line_.append(bytes.data(), content);
  if (content > 0) line_last_byte_ = bytes[content - 1];
  if (newline != nullptr) end_line();
  return used;
}

void RespScanner::end_line() {
  if (line_kind_ == LineKind::kInline) return end_inline();
  if (line_bytes_ == 0 || line_last_byte_ != '\r') return fail("a RESP line must end with \\r\\n");
  if (line_kind_ == LineKind::kSimple) return end_value();
  const std::string_view digits(line_.data(), line_.size() - 1);
  std::int64_t length = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), length);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size()) {
    return fail("expected a length, got \"" + printable(digits) + "\"");
  }
  if (line_kind_ == LineKind::kBulkLength) return on_bulk_length(length);
  on_array_length(length);
}

void RespScanner::on_bulk_length(std::int64_t length) {
  if (length == -1 && stream_ == Stream::kReplies) return end_value();  // the null bulk string
  if (length < 0) return fail("bulk length " + std::to_string(length));
  if (length > limits_.max_bulk_bytes) {
    return fail("bulk length " + std::to_string(length) + " over the limit of " +
                std::to_string(limits_.max_bulk_bytes));
  }
  bulk_left_ = length + 2;
  bulk_is_name_ = std::exchange(next_bulk_is_name_, false);
  state_ = State::kBulk;
}

void RespScanner::on_array_length(std::int64_t count) {
  if (count < -1) return fail("array length " + std::to_string(count));
  // Redis ignores "*0" and "*-1" from a client without a reply: an empty command.
  if (stream_ == Stream::kRequests && count <= 0) return end_frame();
  if (count <= 0) return end_value();  // the null array, or an empty one
  if (count > limits_.max_array_elements) {
    return fail("array length " + std::to_string(count) + " over the limit of " +
                std::to_string(limits_.max_array_elements));
  }
  if (open_arrays_.size() >= limits_.max_depth) {
    return fail("arrays nested deeper than " + std::to_string(limits_.max_depth));
  }
  open_arrays_.push_back(count);
  next_bulk_is_name_ = stream_ == Stream::kRequests;
  state_ = State::kValueStart;
}

std::size_t RespScanner::scan_bulk(std::string_view bytes) {
  const std::size_t used = static_cast<std::size_t>(
      std::min<std::int64_t>(bulk_left_, static_cast<std::int64_t>(bytes.size())));
  if (!consume(used)) return used;
  // The last two bytes of a bulk string are its CRLF; everything before them is payload.
  const std::size_t payload = static_cast<std::size_t>(
      std::clamp<std::int64_t>(bulk_left_ - 2, 0, static_cast<std::int64_t>(used)));
  if (bulk_is_name_) {
    const std::size_t room = kMaxCommandNameBytes - std::min(kMaxCommandNameBytes, command_.size());
    for (const char c : bytes.substr(0, std::min(payload, room))) command_ += upper(c);
  }
  for (std::size_t i = payload; i < used; ++i) {
    const bool carriage_return = bulk_left_ - static_cast<std::int64_t>(i) == 2;
    if (bytes[i] != (carriage_return ? '\r' : '\n')) {
      fail("a bulk string not followed by \\r\\n");
      return used;
    }
  }
  bulk_left_ -= static_cast<std::int64_t>(used);
  if (bulk_left_ == 0) end_value();
  return used;
}

void RespScanner::end_inline() {
  std::string_view line(line_);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const std::size_t start = std::min(line.find_first_not_of(" \t"), line.size());
  const std::size_t end = std::min(line.find_first_of(" \t", start), line.size());
  const std::string_view name = line.substr(start, std::min(end - start, kMaxCommandNameBytes));
  for (const char c : name) command_ += upper(c);
  end_frame();
}

void RespScanner::end_value() {
  state_ = State::kValueStart;
  while (!open_arrays_.empty()) {
    if (--open_arrays_.back() > 0) return;
    open_arrays_.pop_back();
  }
  end_frame();
}

void RespScanner::end_frame() {
  frames_->push_back(RespFrame{static_cast<std::size_t>(frame_bytes_), std::move(command_)});
  command_.clear();
  frame_bytes_ = 0;
  state_ = State::kValueStart;
}

void RespScanner::fail(std::string what) {
  error_ = std::move(what) + " (byte " + std::to_string(stream_bytes_) + " of the stream)";
}

}  // namespace locksim
