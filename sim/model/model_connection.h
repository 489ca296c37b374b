// model_connection.h: ModelConnection, a Connection (sim/redis/connection.h) answered by a
// ModelServer, synchronously, at the time of a Clock: lock variants, wait strategies and tests
// run against the model exactly as against a real server.
//
// Every command runs at clock.now_ns() as this connection's own client, so SUBSCRIBE works and
// next_message() reads what PUBLISH pushed. A server restart() closes the connection: the next
// command fails with kClosed and the connection stays broken until reconnect(), as a hiredis
// connection does. Not thread-safe (nor is the server): one host thread drives both.
//
//   ModelServer server;
//   ManualClock clock;  // any Clock; virtual time
//   ModelConnection conn(server, clock);
//   RedisResult r = conn.command({"SET", "k", "v", "NX", "PX", "100"});
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "sim/core/clock.h"
#include "sim/model/model_server.h"
#include "sim/redis/connection.h"

namespace locksim {

class ModelConnection final : public Connection {
 public:
  // Connects at once. `server` and `clock` must outlive the connection. `endpoint` only names
  // it (for messages and reports).
  ModelConnection(ModelServer& server, const Clock& clock, Endpoint endpoint = model_endpoint());
  ~ModelConnection() override;
  ModelConnection(const ModelConnection&) = delete;
  ModelConnection& operator=(const ModelConnection&) = delete;

  using Connection::command;
  RedisResult command(std::span<const std::string_view> args) override;
  // next_message: a message pushed to this connection, else waits `timeout_ns` on the clock
  // (nothing else can publish meanwhile: the model is driven by one thread) and looks again.
  std::optional<RedisResult> next_message(std::int64_t timeout_ns) override;
  bool broken() const override { return broken_; }
  const RedisResult& last_error() const override { return last_error_; }
  RedisResult reconnect() override;
  void close() override;
  const Endpoint& endpoint() const override { return endpoint_; }
  std::uint64_t round_trips() const override { return round_trips_; }

  // model_endpoint: the name a model connection carries by default: host "model", port 0.
  static Endpoint model_endpoint();

 private:
  bool check_open();
  RedisResult result_of(Reply reply) const;

  ModelServer* server_;
  const Clock* clock_;
  Endpoint endpoint_;
  ModelClientId client_ = 0;
  std::uint64_t generation_ = 0;
  bool broken_ = false;
  RedisResult last_error_;
  std::uint64_t round_trips_ = 0;
};

}  // namespace locksim
