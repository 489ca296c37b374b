#include "sim/proxy/proxy_link.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sched.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "sim/core/assert.h"

namespace locksim::proxy_internal {
namespace {

// kMaxQueuedBytes: complete frames a link queues in one direction before it stops reading that
// side, so a held or slow link cannot grow without bound (an incomplete frame is bounded by
// RespLimits).
constexpr std::size_t kMaxQueuedBytes = std::size_t{64} << 20;

// kReplySpinNs, kCommandSpinNs, kMaxPollNs, kMaxSpinSkips: how long a link polls the server
// for the reply of a command it has just forwarded, and the client for its next command after a
// reply went out, before it sleeps on the loop (poll_briefly); the most one link polls in a row
// before the other links get the loop back; and the most polls a side skips after polls missed.
// A loopback server answers a lock's command in about 10 us, and a client that sends its next
// command at once (a resource read after an acquire, a retry, a benchmark) is woken and sends it
// in 20-40 us on this VM; a miss (a paused server, a client at work) costs at most the spin,
// yielding all the while, and then polls of that side back off.
constexpr Nanos kReplySpinNs = 100'000;
constexpr Nanos kCommandSpinNs = 60'000;
constexpr Nanos kMaxPollNs = 1'000'000;
constexpr int kMaxSpinSkips = 64;

// starts_pushes: after these commands the server sends messages nobody asked for.
bool starts_pushes(const std::string& command) {
  return command == "SUBSCRIBE" || command == "PSUBSCRIBE" || command == "SSUBSCRIBE" ||
         command == "MONITOR";
}

// set_no_delay: commands and replies are small and go out at once; Nagle's algorithm, waiting
// for the peer's delayed ACK, would add up to 40 ms to a round trip.
void set_no_delay(evutil_socket_t fd) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

// scan_new_bytes: feeds `scanner` the bytes of `buffer` after its first `scanned` ones, which it
// has seen before, and returns the frames they complete.
std::vector<RespFrame> scan_new_bytes(evbuffer* buffer, std::size_t scanned, RespScanner& scanner) {
  std::vector<RespFrame> frames;
  if (evbuffer_get_length(buffer) <= scanned) return frames;
  evbuffer_ptr start;
  const int set = evbuffer_ptr_set(buffer, &start, scanned, EVBUFFER_PTR_SET);
  LOCKSIM_ASSERT(set == 0);
  const int count = evbuffer_peek(buffer, -1, &start, nullptr, 0);
  std::vector<evbuffer_iovec> chunks(static_cast<std::size_t>(std::max(count, 0)));
  evbuffer_peek(buffer, -1, &start, chunks.data(), count);
  for (const evbuffer_iovec& chunk : chunks) {
    scanner.feed({static_cast<const char*>(chunk.iov_base), chunk.iov_len}, frames);
  }
  return frames;
}

void drain(evbuffer* buffer) { evbuffer_drain(buffer, evbuffer_get_length(buffer)); }

// send_now: moves `size` bytes of `from` to `side`: while nothing waits in its output buffer,
// straight to its socket (a send now, rather than an EV_WRITE registered, waited for on the
// loop's next turn and removed again: four system calls fewer per hop); what the socket does not
// take (a full buffer, a connect still in progress or failed) goes through the bufferevent as
// before, which writes it when it can and reports the error. MSG_NOSIGNAL: a peer that closed is
// an error here, never a SIGPIPE.
void send_now(bufferevent* side, evbuffer* from, std::size_t size) {
  evbuffer* output = bufferevent_get_output(side);
  if (evbuffer_get_length(output) == 0) {
    evbuffer_iovec chunk{};
    while (size > 0 && evbuffer_peek(from, static_cast<ev_ssize_t>(size), nullptr, &chunk, 1) > 0) {
      const std::size_t want = std::min(size, chunk.iov_len);
      const ssize_t sent =
          ::send(bufferevent_getfd(side), chunk.iov_base, want, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (sent <= 0) break;
      evbuffer_drain(from, static_cast<std::size_t>(sent));
      size -= static_cast<std::size_t>(sent);
      if (static_cast<std::size_t>(sent) < want) break;
    }
  }
  if (size > 0) evbuffer_remove_buffer(from, output, size);
}

bool output_empty(bufferevent* side) {
  return evbuffer_get_length(bufferevent_get_output(side)) == 0;
}

// resume_reading: reads `side` again once its queue has room (reading stops at kMaxQueuedBytes).
void resume_reading(bufferevent* side, evbuffer* queue) {
  if (side != nullptr && !(bufferevent_get_enabled(side) & EV_READ) &&
      evbuffer_get_length(queue) <= kMaxQueuedBytes) {
    bufferevent_enable(side, EV_READ);
  }
}

void pause_reading_if_full(bufferevent* side, evbuffer* queue) {
  if (evbuffer_get_length(queue) > kMaxQueuedBytes) bufferevent_disable(side, EV_READ);
}

}  // namespace

ProxyLink::ProxyLink(LinkShared& shared, evutil_socket_t client_fd) : shared_(shared) {
  set_no_delay(client_fd);
  client_ = bufferevent_socket_new(shared_.base, client_fd, BEV_OPT_CLOSE_ON_FREE);
  command_bytes_ = evbuffer_new();
  reply_bytes_ = evbuffer_new();
  // Relative timeouts only: the timer's clock is never read here (real_clock() is the time).
  timer_fd_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  LOCKSIM_ASSERT(timer_fd_ >= 0);
  timer_ = event_new(shared_.base, timer_fd_, EV_READ | EV_PERSIST, &ProxyLink::on_timer, this);
  LOCKSIM_ASSERT(client_ != nullptr && command_bytes_ != nullptr && reply_bytes_ != nullptr &&
                 timer_ != nullptr);
  event_add(timer_, nullptr);
  ++shared_.counters.connections_open;
}

ProxyLink::~ProxyLink() {
  free_client();
  free_server();
  event_free(timer_);
  ::close(timer_fd_);
  evbuffer_free(command_bytes_);
  evbuffer_free(reply_bytes_);
  --shared_.counters.connections_open;
}

void ProxyLink::start() {
  bufferevent_setcb(client_, &ProxyLink::on_client_readable, &ProxyLink::on_client_drained,
                    &ProxyLink::on_client_event, this);
  bufferevent_enable(client_, EV_READ);
  const evutil_socket_t fd =
      ::socket(shared_.upstream.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return reset();
  set_no_delay(fd);
  server_ = bufferevent_socket_new(shared_.base, fd, BEV_OPT_CLOSE_ON_FREE);
  LOCKSIM_ASSERT(server_ != nullptr);
  bufferevent_setcb(server_, &ProxyLink::on_server_readable, &ProxyLink::on_server_drained,
                    &ProxyLink::on_server_event, this);
  bufferevent_enable(server_, EV_READ);
  // Bytes the client sends meanwhile wait in the output buffer until the connect completes.
  if (bufferevent_socket_connect(server_, reinterpret_cast<sockaddr*>(&shared_.upstream),
                                 static_cast<int>(shared_.upstream_length)) != 0) {
    reset();
  }
}

void ProxyLink::reset() {
  free_client();
  free_server();
  finish_if_closed();
}

void ProxyLink::release_held() {
  for (QueuedCommand& command : commands_) command.fate.held = false;
  forward_commands();
}

void ProxyLink::release_replies() {
  const Nanos now = real_clock().now_ns();
  for (QueuedReply& reply : replies_) reply.due = std::min(reply.due, now);
  forward_replies();
}

void ProxyLink::heal() {
  const Nanos now = real_clock().now_ns();
  for (QueuedCommand& command : commands_) {
    command.fate.held = false;
    command.fate.due = std::min(command.fate.due, now);
  }
  forward_commands();
  forward_replies();
}

void ProxyLink::read_from_client() {
  evbuffer* input = bufferevent_get_input(client_);
  if (server_ == nullptr) return drain(input);  // closing: nothing can reach the server any more
  const Nanos now = real_clock().now_ns();
  for (const RespFrame& frame : scan_new_bytes(input, client_scanned_bytes_, request_scanner_)) {
    if (frame.command.empty()) {
      // Redis ignores an empty command without a reply; so does the proxy, so it is no command
      // to count, hold or drop a reply of.
      evbuffer_drain(input, frame.size_bytes);
      continue;
    }
    evbuffer_remove_buffer(input, command_bytes_, frame.size_bytes);
    commands_.push_back(
        {frame.size_bytes, shared_.faults.next_command(now), starts_pushes(frame.command)});
    ++shared_.counters.commands_received;
  }
  client_scanned_bytes_ = evbuffer_get_length(input);
  // Past a malformed byte no command boundary can be found: nothing more can be forwarded.
  if (request_scanner_.broken()) return reset();
  pause_reading_if_full(client_, command_bytes_);
  forward_commands();
}

void ProxyLink::read_from_server() {
  evbuffer* input = bufferevent_get_input(server_);
  const Nanos now = real_clock().now_ns();
  for (const RespFrame& frame : scan_new_bytes(input, server_scanned_bytes_, reply_scanner_)) {
    bool drop = false;
    if (!reply_drops_.empty()) {  // otherwise a push, which no command asked for
      drop = reply_drops_.front();
      reply_drops_.pop_front();
    }
    if (drop) ++shared_.counters.replies_dropped;
    if (drop || client_ == nullptr) {
      evbuffer_drain(input, frame.size_bytes);
      continue;
    }
    evbuffer_remove_buffer(input, reply_bytes_, frame.size_bytes);
    replies_.push_back({frame.size_bytes, shared_.faults.reply_due(now)});
  }
  server_scanned_bytes_ = evbuffer_get_length(input);
  if (reply_scanner_.broken()) return reset();
  pause_reading_if_full(server_, reply_bytes_);
  forward_replies();
}

void ProxyLink::forward_commands() {
  if (server_ == nullptr) return;
  const Nanos now = real_clock().now_ns();
  bool sent = false;
  while (!commands_.empty() && !shared_.faults.holding()) {
    const QueuedCommand& next = commands_.front();
    if (next.fate.held) break;
    if (next.fate.due > now) {
      wake_at(next.fate.due, now);
      break;
    }
    if (next.fate.drop_command) {
      // A lost request: the server never sees it, so no reply will come for it, and nothing is
      // queued in reply_drops_ (the replies of the commands around it keep their pairing).
      evbuffer_drain(command_bytes_, next.size_bytes);
      ++shared_.counters.commands_dropped;
      commands_.pop_front();
      continue;
    }
    pushes_ = pushes_ || next.starts_pushes;
    if (!pushes_) reply_drops_.push_back(next.fate.drop_reply);
    // Counted before it is sent: whoever sees its effect on the server sees it counted.
    ++shared_.counters.commands_forwarded;
    if (server_connected_) {
      send_now(server_, command_bytes_, next.size_bytes);
    } else {
      evbuffer_remove_buffer(command_bytes_, bufferevent_get_output(server_), next.size_bytes);
    }
    commands_.pop_front();
    sent = true;
  }
  resume_reading(client_, command_bytes_);
  close_server_if_done();
  if (sent) poll_briefly();
}

void ProxyLink::poll_briefly() {
  if (polling_) return;  // read_from_* below forward, and forwarding comes back here
  polling_ = true;
  const Nanos start = real_clock().now_ns();
  while (server_ != nullptr && client_ != nullptr && server_connected_ && !pushes_ &&
         real_clock().now_ns() - start < kMaxPollNs) {
    if (!reply_drops_.empty()) {  // a forwarded command waits for its reply
      if (!output_empty(server_) || !poll_side(server_, kReplySpinNs, reply_polls_)) break;
      read_from_server();
    } else {
      // Commands still queued are held or delayed by a fault: the timer forwards them.
      if (!commands_.empty() || !output_empty(client_) ||
          !poll_side(client_, kCommandSpinNs, command_polls_)) {
        break;
      }
      read_from_client();
    }
  }
  polling_ = false;
}

bool ProxyLink::poll_side(bufferevent* side, Nanos spin, SpinBackoff& backoff) {
  if (!(bufferevent_get_enabled(side) & EV_READ)) return false;  // its queue is full
  if (backoff.skips_left > 0) {
    --backoff.skips_left;
    return false;
  }
  const evutil_socket_t fd = bufferevent_getfd(side);
  evbuffer* input = bufferevent_get_input(side);
  const Nanos start = real_clock().now_ns();
  for (;;) {
    // A socket bufferevent keeps its input's end frozen except while it reads itself.
    evbuffer_unfreeze(input, 0);
    const int got = evbuffer_read(input, fd, -1);  // the socket is non-blocking
    const int read_errno = errno;
    evbuffer_freeze(input, 0);
    errno = read_errno;
    if (got > 0) {
      backoff.skips = 0;
      return true;
    }
    // The end of the stream or an error stays readable: the loop's bufferevent reports it.
    if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return false;
    if (real_clock().now_ns() - start >= spin) break;
    // Yield, never just spin: the peer, woken by what was just sent, is often queued on this
    // very core (the kernel wakes a task near its waker), and a spin that did not yield would
    // keep it from answering for the whole spin.
    ::sched_yield();
  }
  // Missed: the peer is slow, paused, far or busy elsewhere. Poll it less often until a poll hits.
  backoff.skips = std::min(std::max(1, backoff.skips * 2), kMaxSpinSkips);
  backoff.skips_left = backoff.skips;
  return false;
}

void ProxyLink::forward_replies() {
  if (client_ == nullptr) return;
  const Nanos now = real_clock().now_ns();
  bool sent = false;
  while (!replies_.empty() && !shared_.faults.holding()) {
    const QueuedReply& next = replies_.front();
    if (next.due > now) {
      wake_at(next.due, now);
      break;
    }
    ++shared_.counters.replies_forwarded;  // before the client can have it
    send_now(client_, reply_bytes_, next.size_bytes);
    replies_.pop_front();
    sent = true;
  }
  resume_reading(server_, reply_bytes_);
  close_client_if_done();
  if (sent) poll_briefly();
}

void ProxyLink::client_left() {
  free_client();
  // Replies have nowhere to go any more; the server is still read, to see it close.
  drain(reply_bytes_);
  replies_.clear();
  resume_reading(server_, reply_bytes_);
  close_server_if_done();
  finish_if_closed();
}

void ProxyLink::server_left() {
  free_server();
  // Commands can never run now; the client still gets the replies already on their way.
  drain(command_bytes_);
  commands_.clear();
  reply_drops_.clear();
  resume_reading(client_, command_bytes_);
  close_client_if_done();
  finish_if_closed();
}

void ProxyLink::close_server_if_done() {
  if (client_ != nullptr || server_ == nullptr || server_write_shut_ || !commands_.empty()) return;
  if (!output_empty(server_)) return;  // on_server_drained comes back here
  // The server has every command the client sent. A half-close lets it read them all before the
  // end of the stream; closing outright, with replies unread, would reset the connection and
  // could take commands the server has not read yet with it. Redis closes its side on the end of
  // the stream, which ends the link (server_left).
  if (::shutdown(bufferevent_getfd(server_), SHUT_WR) != 0) {
    free_server();  // not connected yet: nothing was sent, nothing is lost
    return finish_if_closed();
  }
  server_write_shut_ = true;
}

void ProxyLink::close_client_if_done() {
  if (server_ != nullptr || client_ == nullptr || !replies_.empty()) return;
  if (!output_empty(client_)) return;  // on_client_drained comes back here
  free_client();
  finish_if_closed();
}

void ProxyLink::finish_if_closed() {
  if (finished_ || client_ != nullptr || server_ != nullptr) return;
  finished_ = true;
  event_active(shared_.reap, EV_TIMEOUT, 1);
}

void ProxyLink::free_client() {
  if (client_ == nullptr) return;
  bufferevent_free(client_);
  client_ = nullptr;
}

void ProxyLink::free_server() {
  if (server_ == nullptr) return;
  bufferevent_free(server_);
  server_ = nullptr;
}

void ProxyLink::on_client_readable(bufferevent* /*side*/, void* self) {
  static_cast<ProxyLink*>(self)->read_from_client();
}

void ProxyLink::on_client_drained(bufferevent* /*side*/, void* self) {
  static_cast<ProxyLink*>(self)->close_client_if_done();
}

void ProxyLink::on_client_event(bufferevent* /*side*/, short what, void* self) {
  if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) static_cast<ProxyLink*>(self)->client_left();
}

void ProxyLink::on_server_readable(bufferevent* /*side*/, void* self) {
  static_cast<ProxyLink*>(self)->read_from_server();
}

void ProxyLink::on_server_drained(bufferevent* /*side*/, void* self) {
  static_cast<ProxyLink*>(self)->close_server_if_done();
}

void ProxyLink::on_server_event(bufferevent* /*side*/, short what, void* self) {
  // A refused or failed connect is an error event too: the client is closed at once.
  if (what & BEV_EVENT_CONNECTED) static_cast<ProxyLink*>(self)->server_connected_ = true;
  if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) static_cast<ProxyLink*>(self)->server_left();
}

void ProxyLink::wake_at(Nanos due, Nanos now) {
  if (timer_armed_ && timer_due_ <= due) return;
  timer_armed_ = true;
  timer_due_ = due;
  const Nanos wait = std::max<Nanos>(due - now, 1);  // an all-zero it_value would disarm it
  itimerspec spec{};
  spec.it_value.tv_sec = static_cast<time_t>(wait / 1'000'000'000);
  spec.it_value.tv_nsec = static_cast<long>(wait % 1'000'000'000);
  const int set = ::timerfd_settime(timer_fd_, 0, &spec, nullptr);
  LOCKSIM_ASSERT(set == 0);
}

// on_timer: the timer fired. Whatever fell due goes out; what is due later arms it again. A
// timer that outlived what it was armed for (a heal forwarded it early, a side closed) finds
// nothing due, which costs nothing.
void ProxyLink::on_timer(evutil_socket_t fd, short /*what*/, void* self) {
  std::uint64_t expirations = 0;
  while (::read(fd, &expirations, sizeof(expirations)) < 0 && errno == EINTR) {
  }
  auto* link = static_cast<ProxyLink*>(self);
  link->timer_armed_ = false;
  link->forward_commands();
  link->forward_replies();
}

}  // namespace locksim::proxy_internal
