// link.h: Link, one client's link to one server as the nemesis faults it (PartitionMode is in
// sim/fault/link_fault.h).
//
// A client connects to its link's endpoint() instead of the server's; the nemesis arms faults on
// the link. LinkProxy (link_proxy.h) is the real one, a loopback TCP proxy; the simulator's
// SimLink (sim/simulate) is another, on virtual time. Every call takes effect for every command
// not yet forwarded when it returns, so "the next command" means the next one sent after it.
//
//   std::unique_ptr<Link> link = runtime.open_link(server_endpoint);
//   connection = runtime.connect(link->endpoint(), options);
//   link->drop_reply_of_next();   // the next command runs; its reply never comes
#pragma once

#include <memory>

#include "sim/fault/link_fault.h"
#include "sim/redis/endpoint.h"

namespace locksim {

class Link {
 public:
  virtual ~Link() = default;
  // endpoint: where a client connects to go through this link.
  virtual const Endpoint& endpoint() const = 0;
  // hold_next_command: the next command is held before the server sees it, until
  // release_held() or heal() (a delayed packet); the commands after it on its connection queue
  // behind it.
  virtual void hold_next_command() = 0;
  virtual void release_held() = 0;
  // drop_reply_of_next: the reply of the (skip + 1)-th command from now on is lost: the server
  // ran it, the client never hears (it times out). One drop is armed at a time.
  virtual void drop_reply_of_next(int skip = 0) = 0;
  // partition: starts a partition (a second call changes its mode); heal: ends it (what was held
  // goes on, in order), releases held commands and disarms a hold not used yet. An armed drop and
  // an installed policy stay.
  virtual void partition(PartitionMode mode) = 0;
  virtual void heal() = 0;
  // set_command_policy: from the next command on, `policy` decides every command's fate too
  // (sim/fault/link_fault.h); null removes it.
  virtual void set_command_policy(std::shared_ptr<CommandPolicy> policy) = 0;
};

}  // namespace locksim
