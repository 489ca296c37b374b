// proxy_link.h (internal to proxy/): ProxyLink, one client connection a LinkProxy accepted and
// its own connection to the upstream server, and LinkShared, what the links of one proxy share.
// Everything here runs on the proxy's loop thread, except reading LinkCounters.
//
// Bytes move in whole frames (RespScanner): a command is queued once it is complete and
// forwarded when its fate allows (or swallowed, if its fate is drop_command: it is never
// forwarded, so no reply is expected for it); a reply is matched to the oldest forwarded command,
// then dropped or queued until it is due. When one side closes, what the other side is still owed
// is delivered first, the way a network delivers packets already sent: commands a client sent
// before it gave up still reach the server, late if they were held.
//
//   auto link = std::make_unique<ProxyLink>(shared, accepted_fd);
//   link->start();  // reads the client, connects to the upstream
//   link->heal();   // after the partition ended
//   if (link->finished()) ...;  // both sides closed: free it
#pragma once

#include <event2/util.h>
#include <sys/socket.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>

#include "sim/fault/link_state.h"
#include "sim/proxy/resp_scanner.h"

struct bufferevent;
struct event;
struct event_base;
struct evbuffer;

namespace locksim::proxy_internal {

// LinkCounters: LinkProxyCounters as the loop thread updates them.
struct LinkCounters {
  std::atomic<std::uint64_t> connections_accepted{0};
  std::atomic<std::uint64_t> connections_open{0};
  std::atomic<std::uint64_t> commands_received{0};
  std::atomic<std::uint64_t> commands_forwarded{0};
  std::atomic<std::uint64_t> replies_forwarded{0};
  std::atomic<std::uint64_t> replies_dropped{0};
  std::atomic<std::uint64_t> commands_dropped{0};
};

struct LinkShared {
  event_base* base = nullptr;
  sockaddr_storage upstream{};
  socklen_t upstream_length = 0;
  FaultState faults;
  LinkCounters counters;
  event* reap = nullptr;  // made active when a link finishes; the proxy then frees it
};

class ProxyLink {
 public:
  // Takes ownership of the accepted, non-blocking `client_fd`.
  ProxyLink(LinkShared& shared, evutil_socket_t client_fd);
  // Closes whatever is still open and discards whatever is held.
  ~ProxyLink();
  ProxyLink(const ProxyLink&) = delete;
  ProxyLink& operator=(const ProxyLink&) = delete;

  // start: starts reading the client and connecting to the upstream. If the connect cannot even
  // begin, the client is closed and the link finished.
  void start();
  // finished: both sides are closed; the proxy may free the link (reap is activated once).
  bool finished() const { return finished_; }

  // reset: closes both sides at once (a partition in reset mode).
  void reset();
  // release_held: forwards the commands held until release.
  void release_held();
  // release_replies: replies held by a reply delay are due now (the delay ended).
  void release_replies();
  // heal: forwards what a partition held and every held or delayed command.
  void heal();

 private:
  struct QueuedCommand {
    std::size_t size_bytes;
    CommandFate fate;
    bool starts_pushes;  // SUBSCRIBE and the like: replies no longer match commands
  };
  struct QueuedReply {
    std::size_t size_bytes;
    Nanos due;
  };

  void read_from_client();
  void read_from_server();
  void forward_commands();
  void forward_replies();
  // poll_briefly: after a command or a reply went out, polls the side expected to speak next
  // (the server for the reply, the client for its next command), yielding the core between
  // polls, and handles what comes at once, for up to kMaxPollNs in all. Without it the loop
  // thread sleeps and must be woken: a proxied round trip cost 2.2-2.4 direct ones with neither
  // poll (budget: 2, "one extra round trip"), about 2.0 polling only the server, and about 1.7
  // polling both (bench/proxy_bench; docs/testing.md). Polls that miss back off (SpinBackoff).
  void poll_briefly();
  // poll_side: reads `side`'s socket until bytes come (true) or `spin` passes (false).
  struct SpinBackoff {
    int skips = 0;       // polls to skip after the last miss
    int skips_left = 0;  // of those, still to skip
  };
  bool poll_side(bufferevent* side, Nanos spin, SpinBackoff& backoff);
  void client_left();
  void server_left();
  void close_server_if_done();
  void close_client_if_done();
  void finish_if_closed();
  void free_client();
  void free_server();

  static void on_client_readable(bufferevent*, void* self);
  static void on_client_drained(bufferevent*, void* self);
  static void on_client_event(bufferevent*, short what, void* self);
  static void on_server_readable(bufferevent*, void* self);
  static void on_server_drained(bufferevent*, void* self);
  static void on_server_event(bufferevent*, short what, void* self);
  // wake_at: forward_commands and forward_replies run again at `due` (or earlier, if the timer
  // is armed for an earlier time already).
  void wake_at(Nanos due, Nanos now);
  static void on_timer(evutil_socket_t fd, short, void* self);

  LinkShared& shared_;
  bufferevent* client_ = nullptr;
  bufferevent* server_ = nullptr;
  bool server_write_shut_ = false;  // the client left and the server got all it sent
  // server_connected_: the connect to the server completed; before, a send would take its error
  // away from the bufferevent that reports it.
  bool server_connected_ = false;
  RespScanner request_scanner_{RespScanner::Stream::kRequests};
  RespScanner reply_scanner_{RespScanner::Stream::kReplies};
  std::size_t client_scanned_bytes_ = 0;  // of the client's input buffer, already scanned
  std::size_t server_scanned_bytes_ = 0;
  evbuffer* command_bytes_ = nullptr;  // the bytes of commands_, in order
  std::deque<QueuedCommand> commands_;
  evbuffer* reply_bytes_ = nullptr;  // the bytes of replies_, in order
  std::deque<QueuedReply> replies_;
  std::deque<bool> reply_drops_;  // per forwarded command still unanswered: drop its reply?
  bool pushes_ = false;
  // The link's one timer, for a held command or a delayed reply that falls due: a timerfd of its
  // own, armed to the nanosecond only when something is due later, rather than a libevent timer
  // on a base with EVENT_BASE_FLAG_PRECISE_TIMER, whose timerfd is re-armed at every turn of the
  // loop (two system calls per proxied round trip with no fault at all).
  int timer_fd_ = -1;
  event* timer_ = nullptr;
  Nanos timer_due_ = 0;  // when the armed timer fires; meaningful while timer_armed_
  bool timer_armed_ = false;
  bool finished_ = false;
  bool polling_ = false;  // inside poll_briefly
  SpinBackoff reply_polls_;
  SpinBackoff command_polls_;
};

}  // namespace locksim::proxy_internal
