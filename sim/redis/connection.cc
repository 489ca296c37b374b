#include "sim/redis/connection.h"

#include <hiredis/hiredis.h>
#include <poll.h>
#include <sys/time.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

#include "sim/core/clock.h"

namespace locksim {

void ReplyArray::free_items() {
  delete items_;
  items_ = nullptr;
}
namespace {

timeval to_timeval(std::chrono::milliseconds duration) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(duration.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((duration.count() % 1000) * 1000);
  return tv;
}

bool is_errno_text(const char* text, int error_number) {
  return std::strcmp(text, std::strerror(error_number)) == 0;
}

bool is_timeout_errno(int error_number, const char* text) {
  return error_number == EAGAIN || error_number == EWOULDBLOCK || error_number == ETIMEDOUT ||
         is_errno_text(text, EAGAIN) || is_errno_text(text, ETIMEDOUT);
}

// classify: maps a failed hiredis context to an error kind. `saved_errno` is errno right after the
// failing call; hiredis also puts strerror() into errstr, which is the fallback when errno was
// overwritten by cleanup. While connecting, everything but a timeout means "could not connect".
RedisResult classify(const redisContext& context, int saved_errno, bool connecting) {
  RedisResult result;
  result.message = context.errstr;
  switch (context.err) {
    case REDIS_ERR_IO:
      if (is_timeout_errno(saved_errno, context.errstr)) {
        result.error = RedisErrorKind::kTimeout;
      } else if (connecting || saved_errno == ECONNREFUSED ||
                 is_errno_text(context.errstr, ECONNREFUSED)) {
        result.error = RedisErrorKind::kRefused;
      } else if (saved_errno == ECONNRESET || saved_errno == EPIPE ||
                 is_errno_text(context.errstr, ECONNRESET) ||
                 is_errno_text(context.errstr, EPIPE)) {
        result.error = RedisErrorKind::kClosed;
      } else {
        result.error = RedisErrorKind::kProtocol;
      }
      break;
    case REDIS_ERR_EOF:
      result.error = connecting ? RedisErrorKind::kRefused : RedisErrorKind::kClosed;
      break;
    case REDIS_ERR_OTHER:  // e.g. "Can't resolve: host"
      result.error = connecting ? RedisErrorKind::kRefused : RedisErrorKind::kProtocol;
      break;
    default:  // REDIS_ERR_PROTOCOL, REDIS_ERR_OOM
      result.error = RedisErrorKind::kProtocol;
      break;
  }
  if (result.message.empty()) result.message = "unknown hiredis error";
  return result;
}

Reply copy_reply(const redisReply& reply) {
  Reply copy;
  switch (reply.type) {
    case REDIS_REPLY_STRING:
      copy.type = Reply::Type::kString;
      copy.str.assign(reply.str, reply.len);
      break;
    case REDIS_REPLY_STATUS:
      copy.type = Reply::Type::kStatus;
      copy.str.assign(reply.str, reply.len);
      break;
    case REDIS_REPLY_ERROR:
      copy.type = Reply::Type::kError;
      copy.str.assign(reply.str, reply.len);
      break;
    case REDIS_REPLY_INTEGER:
      copy.type = Reply::Type::kInteger;
      copy.integer = reply.integer;
      break;
    case REDIS_REPLY_ARRAY:
      copy.type = Reply::Type::kArray;
      copy.elements.reserve(reply.elements);
      for (std::size_t i = 0; i < reply.elements; ++i) {
        copy.elements.push_back(copy_reply(*reply.element[i]));
      }
      break;
    default:
      copy.type = Reply::Type::kNil;
      break;
  }
  return copy;
}

struct ReplyDeleter {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};

RedisResult closed_by_client() {
  RedisResult result;
  result.error = RedisErrorKind::kClosed;
  result.message = "connection closed by the client";
  return result;
}

}  // namespace

std::string_view to_string(RedisErrorKind kind) {
  switch (kind) {
    case RedisErrorKind::kNone:
      return "none";
    case RedisErrorKind::kTimeout:
      return "timeout";
    case RedisErrorKind::kClosed:
      return "closed";
    case RedisErrorKind::kRefused:
      return "refused";
    case RedisErrorKind::kProtocol:
      return "protocol";
    case RedisErrorKind::kReplyError:
      return "reply_error";
    case RedisErrorKind::kUnexpectedReply:
      return "unexpected_reply";
  }
  return "unknown";
}

std::string RedisResult::describe() const { return std::string(to_string(error)) + ": " + message; }

void HiredisConnection::ContextDeleter::operator()(redisContext* context) const {
  redisFree(context);
}

HiredisConnection::HiredisConnection(Endpoint endpoint, ConnectionOptions options)
    : endpoint_(std::move(endpoint)), options_(options) {
  connect();
}

HiredisConnection::~HiredisConnection() = default;
HiredisConnection::HiredisConnection(HiredisConnection&&) noexcept = default;
HiredisConnection& HiredisConnection::operator=(HiredisConnection&&) noexcept = default;

bool HiredisConnection::broken() const { return context_ == nullptr; }

void HiredisConnection::close() {
  if (context_ == nullptr) return;
  context_.reset();
  last_error_ = closed_by_client();
}

RedisResult HiredisConnection::reconnect() {
  context_.reset();
  return connect();
}

RedisResult HiredisConnection::connect() {
  context_.reset();
  errno = 0;
  std::unique_ptr<redisContext, ContextDeleter> context(redisConnectWithTimeout(
      endpoint_.host.c_str(), endpoint_.port, to_timeval(options_.connect_timeout)));
  const int saved_errno = errno;
  if (context == nullptr) {
    last_error_ = RedisResult{RedisErrorKind::kProtocol, "cannot allocate a hiredis context", {}};
    return last_error_;
  }
  if (context->err != 0) {
    last_error_ = classify(*context, saved_errno, /*connecting=*/true);
    return last_error_;
  }
  if (redisSetTimeout(context.get(), to_timeval(options_.command_timeout)) != REDIS_OK) {
    last_error_ = classify(*context, errno, /*connecting=*/true);
    return last_error_;
  }
  context_ = std::move(context);

  // AUTH and SELECT go through command() so their failures are classified like any command. A
  // rejected AUTH or SELECT leaves the connection broken: it is not the connection asked for.
  // With a user name it is Redis 6's `AUTH <user> <password>` (an ACL user); hiredis 0.14 has no
  // notion of users, so this is an ordinary command.
  if (!endpoint_.password.empty()) {
    std::vector<std::string> auth_args = {"AUTH"};
    if (!endpoint_.username.empty()) auth_args.push_back(endpoint_.username);
    auth_args.push_back(endpoint_.password);
    RedisResult auth = command(auth_args);
    if (!auth.ok()) {
      // The server's message ("WRONGPASS ...") never contains the password; say which step failed.
      auth.message = (endpoint_.username.empty() ? std::string("AUTH")
                                                 : "AUTH as user " + endpoint_.username) +
                     " failed: " + auth.message;
      context_.reset();
      last_error_ = auth;
      return last_error_;
    }
  }
  if (endpoint_.db != 0) {
    const std::string db = std::to_string(endpoint_.db);
    RedisResult select = command({"SELECT", db});
    if (!select.ok()) {
      select.message = "SELECT " + db + " failed: " + select.message;
      context_.reset();
      last_error_ = select;
      return last_error_;
    }
  }
  last_error_ = RedisResult{};
  return last_error_;
}

Dial dial_hiredis(Endpoint endpoint) {
  return [endpoint = std::move(endpoint)](const ConnectionOptions& options) {
    return std::make_unique<HiredisConnection>(endpoint, options);
  };
}

RedisResult Connection::command(const std::vector<std::string>& args) {
  // Views of a short command stay on the stack (the simulator sends thousands a second).
  std::array<std::string_view, 16> small;
  if (args.size() <= small.size()) {
    std::copy(args.begin(), args.end(), small.begin());
    return command(std::span<const std::string_view>(small.data(), args.size()));
  }
  std::vector<std::string_view> views(args.begin(), args.end());
  return command(std::span<const std::string_view>(views));
}

RedisResult HiredisConnection::command(std::span<const std::string_view> args) {
  if (context_ == nullptr) return last_error_;
  std::vector<const char*> argv;
  std::vector<std::size_t> lengths;
  argv.reserve(args.size());
  lengths.reserve(args.size());
  for (std::string_view arg : args) {
    argv.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  ++round_trips_;
  errno = 0;
  void* reply =
      redisCommandArgv(context_.get(), static_cast<int>(argv.size()), argv.data(), lengths.data());
  const int saved_errno = errno;
  if (reply == nullptr) return fail(saved_errno);
  return result_of(reply);
}

// fail: hiredis leaves the context in an undefined state after an error: drop it for good.
RedisResult HiredisConnection::fail(int saved_errno) {
  last_error_ = classify(*context_, saved_errno, /*connecting=*/false);
  // A timeout says which deadline ran out: the scenario's reply_timeout_ms, visible in the history.
  if (last_error_.error == RedisErrorKind::kTimeout) {
    last_error_.message = "no reply within " + std::to_string(options_.command_timeout.count()) +
                          " ms (" + last_error_.message + ")";
  }
  context_.reset();
  return last_error_;
}

RedisResult result_of(const redisReply& reply) {
  RedisResult result;
  result.reply = copy_reply(reply);
  if (result.reply.type == Reply::Type::kError) {
    result.error = RedisErrorKind::kReplyError;
    result.message = result.reply.str;
  }
  return result;
}

RedisResult HiredisConnection::result_of(void* raw_reply) {
  std::unique_ptr<redisReply, ReplyDeleter> reply(static_cast<redisReply*>(raw_reply));
  return locksim::result_of(*reply);
}

std::optional<RedisResult> HiredisConnection::next_message(std::int64_t timeout_ns) {
  if (context_ == nullptr) return last_error_;
  const Clock& clock = real_clock();
  const Nanos deadline = clock.now_ns() + timeout_ns;
  while (true) {
    // A message already read into hiredis' buffer comes first.
    void* reply = nullptr;
    errno = 0;
    if (redisGetReplyFromReader(context_.get(), &reply) != REDIS_OK) return fail(errno);
    if (reply != nullptr) return result_of(reply);
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(
        std::chrono::nanoseconds(deadline - clock.now_ns()));
    if (left.count() <= 0) return std::nullopt;
    pollfd ready{context_->fd, POLLIN, 0};
    const int polled = ::poll(&ready, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 60000)));
    if (polled < 0 && errno != EINTR) return fail(errno);
    if (polled <= 0) continue;
    errno = 0;
    if (redisBufferRead(context_.get()) != REDIS_OK) return fail(errno);
  }
}

}  // namespace locksim
