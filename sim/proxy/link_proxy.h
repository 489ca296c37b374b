// link_proxy.h: LinkProxy, a loopback TCP proxy in front of one Redis server that understands
// RESP well enough to match every reply to its command, so it can fail one client link the way a
// network does: a command that reaches the server late (a release arriving after the lease), a
// reply that never comes back although the command ran, slow replies, and partitions that hold
// or cut every connection. It is the nemesis of one client link; a client just connects to
// endpoint() instead of the server's.
//
// One libevent loop on one thread of the proxy's own moves every byte (non-blocking sockets; no
// thread per connection). The controls may be called from any thread but the loop's: each is
// posted to the loop and has taken effect when it returns, for every byte not forwarded yet, so
// "the next command" means the next one the proxy reads in full after the call. The destructor
// closes every connection and discards what is held.
//
// Replies are matched to commands in order (pipelining is fine): Redis answers every command
// once. A connection that sends SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE or MONITOR gets pushes nobody
// asked for, so from then on its replies are forwarded unmatched (delays and partitions still
// apply; a drop aimed at a command there drops nothing).
//
//   std::unique_ptr<LinkProxy> proxy = LinkProxy::start(server.endpoint());  // EnvironmentError
//   HiredisConnection conn(proxy->endpoint(), {.command_timeout = std::chrono::milliseconds(300)});
//   proxy->drop_reply_of_next();
//   conn.command({"SET", key, token});  // kTimeout, though the server did run the SET
//   proxy->partition(PartitionMode::kHold);
//   ...
//   proxy->heal();
#pragma once

#include <cstdint>
#include <memory>

#include "sim/core/clock.h"
#include "sim/fault/link_fault.h"
#include "sim/proxy/link.h"
#include "sim/redis/endpoint.h"

namespace locksim {

// LinkProxyCounters: what the proxy has done so far, for tests and reports.
struct LinkProxyCounters {
  std::uint64_t connections_accepted = 0;
  // connections_open: accepted connections not finished: a connection whose client left stays
  // open while commands it sent are still held, and until the server has read them.
  std::uint64_t connections_open = 0;
  std::uint64_t commands_received = 0;   // complete commands read from clients
  std::uint64_t commands_forwarded = 0;  // written towards the server
  std::uint64_t replies_forwarded = 0;   // written towards a client
  std::uint64_t replies_dropped = 0;     // discarded by drop_reply_of_next or a policy
  std::uint64_t commands_dropped = 0;    // swallowed by a CommandPolicy (never forwarded)
};

class LinkProxy final : public Link {
 public:
  // start: listens on 127.0.0.1 on a free port and starts the loop thread. Throws
  // EnvironmentError if the upstream host does not resolve or the proxy cannot listen. The
  // upstream is only connected to when a client connects; if it cannot be reached then, that
  // client's connection is closed.
  static std::unique_ptr<LinkProxy> start(const Endpoint& upstream);

  // ~LinkProxy: stops and joins the loop thread, closes every connection, discards held bytes.
  ~LinkProxy() override;
  LinkProxy(const LinkProxy&) = delete;
  LinkProxy& operator=(const LinkProxy&) = delete;

  int port() const { return port_; }
  // endpoint: the upstream endpoint (user, password, db) with the proxy's host and port.
  const Endpoint& endpoint() const override { return endpoint_; }
  // counters: a snapshot; each field is read atomically, the set is not one instant.
  LinkProxyCounters counters() const;

  // delay_replies: every reply completed from now on is held fixed_ns plus a uniform draw in
  // [0, jitter_ns] (from a stream seeded with `seed`) before it is forwarded; replies keep their
  // order. delay_replies(0, 0, 0) ends it and forwards the replies it holds. Asserts on negative
  // durations.
  void delay_replies(Nanos fixed_ns, Nanos jitter_ns, std::uint64_t seed);
  // delay_next_command: the next command is held delay_ns in the proxy before it is forwarded;
  // the commands after it on its connection queue behind it. Replaces a hold not yet used.
  // Asserts on a negative delay.
  void delay_next_command(Nanos delay_ns);
  // hold_next_command: the same, until release_held() or heal().
  void hold_next_command() override;
  // release_held: forwards the commands hold_next_command held.
  void release_held() override;
  // drop_reply_of_next: the reply of the (skip + 1)-th command from now on is discarded: the
  // server ran it, the client never hears (it times out). Later replies flow. One drop is armed
  // at a time: a new call replaces one not yet used. Asserts on a negative skip.
  void drop_reply_of_next(int skip = 0) override;
  // partition: starts a partition (see PartitionMode); a second call changes its mode.
  void partition(PartitionMode mode) override;
  // heal: ends a partition (held bytes are forwarded in order), releases every held or delayed
  // command, and disarms a hold or delay not used yet. Reply delays, an armed drop and an
  // installed policy stay.
  void heal() override;
  // set_command_policy: from the next command on, `policy` decides every command's fate too
  // (CommandPolicy, sim/fault/link_fault.h; counted from 1 across the proxy's connections, in
  // the order it reads them), merged with the faults armed above. Null removes it; commands it
  // already decided on keep their fate (one it held waits for release_held() or heal()). Its
  // next() runs on the loop thread, not the caller's.
  void set_command_policy(std::shared_ptr<CommandPolicy> policy) override;

 private:
  class Loop;  // the loop thread and everything it owns (link_proxy.cc)

  LinkProxy(std::unique_ptr<Loop> loop, const Endpoint& upstream);

  std::unique_ptr<Loop> loop_;
  int port_ = 0;
  Endpoint endpoint_;
};

}  // namespace locksim
