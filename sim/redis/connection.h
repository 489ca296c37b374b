// connection.h: Connection, a connection to Redis as locksim uses it; HiredisConnection, the
// RAII one over hiredis; and the Reply type.
//
// Every connection has a connect timeout and a command timeout. Errors are classified into a small
// set of kinds and returned as data (never thrown), because a Redis error is an outcome the driver
// records in the history. After an I/O error (timeout, closed, refused, protocol) the hiredis
// context is never reused: the connection is `broken()` until reconnect(). One connection per
// thread; not thread-safe. Commands are binary-safe argv vectors.
//
//   HiredisConnection conn(endpoint, ConnectionOptions{});
//   RedisResult r = conn.command({"SET", key, token, "NX", "PX", "200"});
//   if (r.ok() && r.reply.is_status("OK")) { ... }
//   else if (r.error == RedisErrorKind::kTimeout) { ... /* indeterminate */ }
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/redis/endpoint.h"

struct redisContext;
struct redisReply;

namespace locksim {

// RedisErrorKind: what went wrong with a command, if anything.
enum class RedisErrorKind {
  kNone,        // the command got a non-error reply
  kTimeout,     // no reply within the command timeout: the command may or may not have run
  kClosed,      // the server closed the connection (EOF): may or may not have run
  kRefused,     // could not connect: the command did not run
  kProtocol,    // malformed reply, or another I/O error
  kReplyError,  // the server answered with an error reply (e.g. NOSCRIPT, WRONGTYPE)
  // A reply of a type or value the caller's contract does not allow (set by callers, e.g. a lock
  // variant whose script answered "yes"): what the command did is unknown.
  kUnexpectedReply,
};

std::string_view to_string(RedisErrorKind kind);

struct Reply;

// ReplyArray: an array reply's elements, behind one pointer. Few replies are arrays, and a reply
// is moved through several layers on its way to the caller: held this way an empty one costs one
// pointer to move and nothing to destroy. Reads like a vector.
class ReplyArray {
 public:
  ReplyArray() = default;
  ReplyArray(std::vector<Reply> elements);  // NOLINT: an array reply is built from a vector
  ReplyArray(const ReplyArray& other);
  ReplyArray& operator=(const ReplyArray& other);
  ReplyArray(ReplyArray&& other) noexcept : items_(std::exchange(other.items_, nullptr)) {}
  ReplyArray& operator=(ReplyArray&& other) noexcept {
    if (this != &other) {
      if (items_ != nullptr) free_items();
      items_ = std::exchange(other.items_, nullptr);
    }
    return *this;
  }
  ~ReplyArray() {
    if (items_ != nullptr) free_items();  // inline: most replies are not arrays
  }

  std::size_t size() const { return items_ ? items_->size() : 0; }
  bool empty() const { return size() == 0; }
  Reply* begin();
  Reply* end();
  const Reply* begin() const;
  const Reply* end() const;
  Reply& operator[](std::size_t i);
  const Reply& operator[](std::size_t i) const;
  const Reply& at(std::size_t i) const;
  const Reply& back() const;
  void reserve(std::size_t n);
  void push_back(Reply reply);

 private:
  std::vector<Reply>& items();
  void free_items();
  std::vector<Reply>* items_ = nullptr;  // owned; null while empty
};

// Reply: a copied hiredis reply.
struct Reply {
  enum class Type { kNil, kString, kStatus, kInteger, kArray, kError };
  Type type = Type::kNil;
  std::string str;           // kString, kStatus, kError
  std::int64_t integer = 0;  // kInteger
  ReplyArray elements;       // kArray

  bool is_nil() const { return type == Type::kNil; }
  bool is_status(std::string_view s) const { return type == Type::kStatus && str == s; }
  bool is_integer(std::int64_t v) const { return type == Type::kInteger && integer == v; }
};

inline ReplyArray::ReplyArray(std::vector<Reply> elements) {
  if (!elements.empty()) items_ = new std::vector<Reply>(std::move(elements));
}
inline ReplyArray::ReplyArray(const ReplyArray& other)
    : items_(other.items_ != nullptr ? new std::vector<Reply>(*other.items_) : nullptr) {}
inline ReplyArray& ReplyArray::operator=(const ReplyArray& other) {
  if (this != &other) *this = ReplyArray(other);
  return *this;
}
inline Reply* ReplyArray::begin() { return items_ ? items_->data() : nullptr; }
inline const Reply* ReplyArray::begin() const { return items_ ? items_->data() : nullptr; }
inline Reply* ReplyArray::end() { return begin() + size(); }
inline const Reply* ReplyArray::end() const { return begin() + size(); }
inline const Reply& ReplyArray::back() const { return (*items_).back(); }
inline Reply& ReplyArray::operator[](std::size_t i) { return (*items_)[i]; }
inline const Reply& ReplyArray::operator[](std::size_t i) const { return (*items_)[i]; }
inline const Reply& ReplyArray::at(std::size_t i) const {
  if (i >= size()) throw std::out_of_range("ReplyArray::at: no element " + std::to_string(i));
  return (*items_)[i];
}
inline std::vector<Reply>& ReplyArray::items() {
  if (items_ == nullptr) items_ = new std::vector<Reply>();
  return *items_;
}
inline void ReplyArray::reserve(std::size_t n) {
  if (n > 0) items().reserve(n);
}
inline void ReplyArray::push_back(Reply reply) { items().push_back(std::move(reply)); }

// RedisResult: a reply or an error kind with a message.
struct RedisResult {
  RedisErrorKind error = RedisErrorKind::kNone;
  std::string message;  // hiredis errstr or the server's error reply
  Reply reply;

  bool ok() const { return error == RedisErrorKind::kNone; }
  // indeterminate: the command may have been executed even though no reply was read.
  bool indeterminate() const {
    return error == RedisErrorKind::kTimeout || error == RedisErrorKind::kClosed ||
           error == RedisErrorKind::kProtocol || error == RedisErrorKind::kUnexpectedReply;
  }
  // describe: "timeout: Resource temporarily unavailable", for history `error` fields.
  std::string describe() const;
};

// result_of: a hiredis reply (from the synchronous or the asynchronous API) as a RedisResult: an
// error reply is kReplyError with the server's words.
RedisResult result_of(const redisReply& reply);

struct ConnectionOptions {
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds command_timeout{2000};
};

// Connection: one connection to a Redis server, as the lock variants, the wait strategies and
// the driver use it. HiredisConnection is the one on a real socket; a model of Redis can answer
// through the same interface. One connection per thread; not thread-safe.
class Connection {
 public:
  virtual ~Connection() = default;

  // command: runs one command (binary-safe arguments). On a broken connection returns the last
  // error without sending.
  virtual RedisResult command(std::span<const std::string_view> args) = 0;
  RedisResult command(std::initializer_list<std::string_view> args) {
    return command(std::span<const std::string_view>(args.begin(), args.size()));
  }
  RedisResult command(const std::vector<std::string>& args);

  // next_message: on a subscribed connection (after SUBSCRIBE), the next message the server
  // pushes, waiting at most `timeout_ns`. nullopt if none arrived in time (the connection stays
  // usable); an I/O error breaks the connection and is returned like a command's.
  virtual std::optional<RedisResult> next_message(std::int64_t timeout_ns) = 0;

  virtual bool broken() const = 0;
  virtual const RedisResult& last_error() const = 0;
  // reconnect: drops the old connection and connects again; returns the connect outcome.
  virtual RedisResult reconnect() = 0;
  // close: drops the connection (the server sees it close). broken() afterwards.
  virtual void close() = 0;

  virtual const Endpoint& endpoint() const = 0;
  // round_trips: commands sent on this connection so far (each waits for its reply).
  virtual std::uint64_t round_trips() const = 0;
};

// Dial: opens a new connection to the server a client talks to, with these timeouts. A host
// hands its client a Dial (a thread or a worker process dials hiredis connections to its link's
// endpoint; a simulated host would hand out connections to its model), so that code which needs
// a connection of its own (a waiter blocked in BLPOP, a subscriber) never names a socket.
using Dial = std::function<std::unique_ptr<Connection>(const ConnectionOptions&)>;

// dial_hiredis: a Dial that opens HiredisConnections to `endpoint`.
Dial dial_hiredis(Endpoint endpoint);

// ReplaceableConnection: a Connection that forwards to another, which replace() swaps for a new
// one (a client that follows a new primary), so that a reference to it (a variant's LockContext)
// stays valid across the swap.
class ReplaceableConnection final : public Connection {
 public:
  explicit ReplaceableConnection(std::unique_ptr<Connection> inner) : inner_(std::move(inner)) {}
  void replace(std::unique_ptr<Connection> inner) { inner_ = std::move(inner); }

  using Connection::command;
  RedisResult command(std::span<const std::string_view> args) override {
    return inner_->command(args);
  }
  std::optional<RedisResult> next_message(std::int64_t timeout_ns) override {
    return inner_->next_message(timeout_ns);
  }
  bool broken() const override { return inner_->broken(); }
  const RedisResult& last_error() const override { return inner_->last_error(); }
  RedisResult reconnect() override { return inner_->reconnect(); }
  void close() override { inner_->close(); }
  const Endpoint& endpoint() const override { return inner_->endpoint(); }
  std::uint64_t round_trips() const override { return inner_->round_trips(); }

 private:
  std::unique_ptr<Connection> inner_;
};

// HiredisConnection: a Connection over a hiredis context on a TCP socket.
class HiredisConnection final : public Connection {
 public:
  // Connects immediately (AUTH [user] password and SELECT as the endpoint says). A failed connect
  // or a rejected AUTH or SELECT leaves the connection broken with last_error() set (naming the
  // user, never the password); it does not throw.
  HiredisConnection(Endpoint endpoint, ConnectionOptions options);
  ~HiredisConnection() override;
  HiredisConnection(HiredisConnection&&) noexcept;
  HiredisConnection& operator=(HiredisConnection&&) noexcept;
  HiredisConnection(const HiredisConnection&) = delete;
  HiredisConnection& operator=(const HiredisConnection&) = delete;

  using Connection::command;
  RedisResult command(std::span<const std::string_view> args) override;
  std::optional<RedisResult> next_message(std::int64_t timeout_ns) override;
  bool broken() const override;
  const RedisResult& last_error() const override { return last_error_; }
  RedisResult reconnect() override;
  void close() override;
  const Endpoint& endpoint() const override { return endpoint_; }
  std::uint64_t round_trips() const override { return round_trips_; }

 private:
  RedisResult result_of(void* raw_reply);
  RedisResult fail(int saved_errno);
  RedisResult connect();

  struct ContextDeleter {
    void operator()(redisContext* context) const;
  };
  Endpoint endpoint_;
  ConnectionOptions options_;
  std::unique_ptr<redisContext, ContextDeleter> context_;
  RedisResult last_error_;
  std::uint64_t round_trips_ = 0;
};

}  // namespace locksim
