#include "sim/proxy/tcp_relay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

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

}  // namespace

std::unique_ptr<TcpRelay> TcpRelay::start(const Endpoint& upstream) {
  std::unique_ptr<TcpRelay> relay(new TcpRelay());
  relay->upstream_ = upstream;
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
    const int server = connect_upstream(upstream_);
    if (server < 0) {
      ::close(client);
      continue;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    ++live_pumps_;
    threads_.emplace_back([this, client, server, generation = generation_] {
      pump(client, server, generation);
    });
  }
}

void TcpRelay::pump(int client, int server, std::uint64_t generation) {
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_ || generation != generation_) break;
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
  }
  pumps_changed_.notify_all();
}

}  // namespace locksim
