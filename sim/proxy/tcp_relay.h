// tcp_relay.h: TcpRelay, a byte-for-byte loopback TCP relay in front of one server, that can cut
// every connection through it and refuse new ones until healed.
//
// The replication link of a primary_replica topology goes through one: the replica is started
// with --replicaof pointing at the relay, so the nemesis can cut replication (a write the
// primary acknowledged then never reaches the replica) without touching either server. Unlike
// LinkProxy it does not parse RESP: a replication stream carries an RDB payload that is not a
// RESP frame. One thread accepts, one thread per connection moves bytes both ways (a replica
// opens one or two connections); each looks at the cut at least every 50 ms.
//
//   std::unique_ptr<TcpRelay> relay = TcpRelay::start(primary.endpoint());  // EnvironmentError
//   replica started with --replicaof 127.0.0.1 relay->port()
//   relay->cut();   // every connection closed; new ones closed at once
//   relay->heal();
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "sim/redis/endpoint.h"

namespace locksim {

class TcpRelay {
 public:
  static std::unique_ptr<TcpRelay> start(const Endpoint& upstream);
  ~TcpRelay();
  TcpRelay(const TcpRelay&) = delete;
  TcpRelay& operator=(const TcpRelay&) = delete;

  int port() const { return port_; }
  // cut: closes every connection through the relay and returns when they are closed; until
  // heal(), a new connection is accepted and closed at once.
  void cut();
  void heal();
  bool is_cut() const { return cut_.load(); }

 private:
  TcpRelay() = default;
  void accept_loop();
  void pump(int client, int server, std::uint64_t generation);

  Endpoint upstream_;
  int port_ = 0;
  int listen_fd_ = -1;
  std::atomic<bool> cut_{false};
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::condition_variable pumps_changed_;
  int live_pumps_ = 0;                 // guarded by mutex_
  std::uint64_t generation_ = 0;       // guarded by mutex_: bumped by cut(); pumps of older end
  std::vector<std::thread> threads_;   // guarded by mutex_
  std::thread acceptor_;
};

}  // namespace locksim
