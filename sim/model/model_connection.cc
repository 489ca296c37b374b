#include "sim/model/model_connection.h"

#include <utility>

namespace locksim {

Endpoint ModelConnection::model_endpoint() {
  Endpoint endpoint;
  endpoint.host = "model";
  endpoint.port = 0;
  return endpoint;
}

ModelConnection::ModelConnection(ModelServer& server, const Clock& clock, Endpoint endpoint)
    : server_(&server), clock_(&clock), endpoint_(std::move(endpoint)) {
  reconnect();
}

ModelConnection::~ModelConnection() { close(); }

RedisResult ModelConnection::reconnect() {
  if (!broken_ && client_ != 0 && server_->connected(client_)) server_->disconnect(client_);
  client_ = server_->connect();
  generation_ = server_->generation();
  broken_ = false;
  last_error_ = RedisResult{};
  return RedisResult{};
}

void ModelConnection::close() {
  if (!broken_ && server_->connected(client_)) server_->disconnect(client_);
  broken_ = true;
  last_error_ = RedisResult{RedisErrorKind::kClosed, "connection closed by the client", {}};
}

bool ModelConnection::check_open() {
  if (broken_) return false;
  if (server_->generation() != generation_ || !server_->connected(client_)) {
    // The server restarted: what a hiredis connection sees as EOF.
    broken_ = true;
    last_error_ = RedisResult{RedisErrorKind::kClosed, "Server closed the connection", {}};
    return false;
  }
  return true;
}

RedisResult ModelConnection::result_of(Reply reply) const {
  RedisResult result;
  if (reply.type == Reply::Type::kError) {
    result.error = RedisErrorKind::kReplyError;
    result.message = reply.str;
  }
  result.reply = std::move(reply);
  return result;
}

RedisResult ModelConnection::command(std::span<const std::string_view> args) {
  if (!check_open()) return last_error_;
  ++round_trips_;
  return result_of(server_->execute(client_, args, clock_->now_ns()));
}

std::optional<RedisResult> ModelConnection::next_message(std::int64_t timeout_ns) {
  if (!check_open()) return last_error_;
  if (std::optional<Reply> message = server_->next_push(client_)) return result_of(*message);
  clock_->sleep_for(timeout_ns);
  if (!check_open()) return last_error_;
  if (std::optional<Reply> message = server_->next_push(client_)) return result_of(*message);
  return std::nullopt;
}

}  // namespace locksim
