#include "sim/proxy/tcp_relay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <vector>

#include "sim/core/clock.h"
#include "sim/core/error.h"

namespace locksim {
namespace {

constexpr int kPollMs = 50;  // how soon a pump or the acceptor sees a cut or the shutdown

std::string errno_text(int error_number) { return std::strerror(error_number); }

int connect_upstream(const Endpoint& upstream) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(upstream.port));
  if (::inet_pton(AF_INET, upstream.host.c_str(), &address.sin_addr) != 1 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return -1;
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

// forward: moves what is readable on `from` to `to`; false when the connection is over.
bool forward(int from, int to) {
  std::array<char, 16384> buffer{};
  const ssize_t got = ::read(from, buffer.data(), buffer.size());
  if (got <= 0) return got < 0 && (errno == EINTR || errno == EAGAIN);
  for (ssize_t sent = 0; sent < got;) {
    const ssize_t n = ::write(to, buffer.data() + sent, static_cast<std::size_t>(got - sent));
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    sent += n;
  }
  return true;
}

// read_exactly: the first `bytes.size()` bytes of `fd`, waiting at most a second in all; false
// if the connection ended or was too slow.
bool read_exactly(int fd, std::span<unsigned char> bytes) {
  const Clock& clock = real_clock();
  const Nanos deadline = clock.now_ns() + ms_to_ns(1000);
  std::size_t got = 0;
  while (got < bytes.size()) {
    const Nanos left = deadline - clock.now_ns();
    if (left <= 0) return false;
    pollfd fds{fd, POLLIN, 0};
    if (::poll(&fds, 1, static_cast<int>(ns_to_ms(left)) + 1) < 0 && errno != EINTR) return false;
    if ((fds.revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n <= 0) {
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      return false;
    }
    got += static_cast<std::size_t>(n);
  }
  return true;
}

bool write_all(int fd, std::span<const unsigned char> bytes) {
  for (std::size_t sent = 0; sent < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + sent, bytes.size() - sent);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

void TcpRelay::set_upstream(const Endpoint& upstream) {
  std::lock_guard<std::mutex> lock(mutex_);
  upstream_ = upstream;
}

bool TcpRelay::blocked(int sender) const {
  return std::find(blocked_.begin(), blocked_.end(), sender) != blocked_.end();
}

void TcpRelay::block(int sender) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!blocked(sender)) blocked_.push_back(sender);
  // Bounded: every pump of the sender looks at the list at least every kPollMs.
  real_clock().wait_for(pumps_changed_, lock, ms_to_ns(2000), [this, sender] {
    return std::find(live_senders_.begin(), live_senders_.end(), sender) == live_senders_.end();
  });
}

void TcpRelay::unblock(int sender) {
  std::lock_guard<std::mutex> lock(mutex_);
  blocked_.erase(std::remove(blocked_.begin(), blocked_.end(), sender), blocked_.end());
}

std::unique_ptr<TcpRelay> TcpRelay::start(const Endpoint& upstream) {
  return start_identifying(upstream, 0, nullptr);
}

std::unique_ptr<TcpRelay> TcpRelay::start_identifying(const Endpoint& upstream, std::size_t peek,
                                                      Identify identify) {
  std::unique_ptr<TcpRelay> relay(new TcpRelay());
  relay->upstream_ = upstream;
  // Set before the acceptor starts, which reads them without the lock.
  relay->peek_ = peek;
  relay->identify_ = std::move(identify);
  relay->listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (relay->listen_fd_ < 0) throw EnvironmentError("cannot create a socket: " + errno_text(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (::bind(relay->listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::listen(relay->listen_fd_, 16) != 0 ||
      ::getsockname(relay->listen_fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    throw EnvironmentError("cannot listen on 127.0.0.1: " + errno_text(errno));
  }
  relay->port_ = ntohs(address.sin_port);
  relay->acceptor_ = std::thread([r = relay.get()] { r->accept_loop(); });
  return relay;
}

TcpRelay::~TcpRelay() {
  stopping_ = true;
  if (acceptor_.joinable()) acceptor_.join();
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    threads.swap(threads_);
  }
  for (std::thread& t : threads) t.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

void TcpRelay::cut() {
  std::unique_lock<std::mutex> lock(mutex_);
  cut_ = true;
  ++generation_;
  // Bounded: every pump looks at the generation at least every kPollMs.
  real_clock().wait_for(pumps_changed_, lock, ms_to_ns(2000), [this] { return live_pumps_ == 0; });
}

void TcpRelay::heal() { cut_ = false; }

void TcpRelay::accept_loop() {
  while (!stopping_) {
    pollfd fds{listen_fd_, POLLIN, 0};
    if (::poll(&fds, 1, kPollMs) < 0 && errno != EINTR) return;
    if (stopping_) return;
    if ((fds.revents & POLLIN) == 0) continue;
    const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    if (cut_) {
      ::close(client);
      continue;
    }
    // An identifying relay reads who is connecting before it connects on.
    std::vector<unsigned char> first(peek_);
    int sender = -1;
    if (identify_) {
      if (!read_exactly(client, first)) {
        ::close(client);
        continue;
      }
      sender = identify_(first);
    }
    Endpoint upstream;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      upstream = upstream_;
      if (blocked(sender)) {
        ::close(client);
        continue;
      }
    }
    const int server = connect_upstream(upstream);
    if (server < 0 || !write_all(server, first)) {
      if (server >= 0) ::close(server);
      ::close(client);
      continue;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    ++live_pumps_;
    live_senders_.push_back(sender);
    threads_.emplace_back([this, client, server, generation = generation_, sender] {
      pump(client, server, generation, sender);
    });
  }
}

void TcpRelay::pump(int client, int server, std::uint64_t generation, int sender) {
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_ || generation != generation_ || blocked(sender)) break;
    }
    std::array<pollfd, 2> fds{{{client, POLLIN, 0}, {server, POLLIN, 0}}};
    if (::poll(fds.data(), fds.size(), kPollMs) < 0 && errno != EINTR) break;
    if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0 && !forward(client, server)) break;
    if ((fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0 && !forward(server, client)) break;
  }
  ::shutdown(client, SHUT_RDWR);
  ::shutdown(server, SHUT_RDWR);
  ::close(client);
  ::close(server);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    --live_pumps_;
    live_senders_.erase(std::find(live_senders_.begin(), live_senders_.end(), sender));
  }
  pumps_changed_.notify_all();
}

}  // namespace locksim
