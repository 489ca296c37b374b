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
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "sim/redis/endpoint.h"

namespace locksim {

// A relay can also tell its connections' senders apart, for a Redis Cluster's bus (the
// topology's partition of a node): start_identifying's `identify` reads who is connecting from
// the first `peek` bytes a connection sends (a bus message's header names its sender's port), and
// block() then closes and refuses that sender's connections only; the bytes read are passed on.
// Its upstream may be set after it starts (a node announces the relay's port, so the relay
// exists before the node does).
class TcpRelay {
 public:
  // Identify: the sender of a connection whose first bytes are these, or -1 for none known.
  using Identify = std::function<int(std::span<const unsigned char>)>;

  static std::unique_ptr<TcpRelay> start(const Endpoint& upstream);
  static std::unique_ptr<TcpRelay> start_identifying(const Endpoint& upstream, std::size_t peek,
                                                     Identify identify);
  ~TcpRelay();
  TcpRelay(const TcpRelay&) = delete;
  TcpRelay& operator=(const TcpRelay&) = delete;

  int port() const { return port_; }
  // cut: closes every connection through the relay and returns when they are closed; until
  // heal(), a new connection is accepted and closed at once.
  void cut();
  void heal();
  bool is_cut() const { return cut_.load(); }
  // block: closes every connection from `sender` and refuses its new ones until unblock().
  void block(int sender);
  void unblock(int sender);
  // set_upstream: where connections go from now on.
  void set_upstream(const Endpoint& upstream);

 private:
  TcpRelay() = default;
  void accept_loop();
  void pump(int client, int server, std::uint64_t generation, int sender);
  bool blocked(int sender) const;  // requires mutex_

  Endpoint upstream_;  // guarded by mutex_
  std::size_t peek_ = 0;
  Identify identify_;
  std::vector<int> blocked_;       // guarded by mutex_: senders refused
  std::vector<int> live_senders_;  // guarded by mutex_: the sender of each live pump (-1: none)
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
