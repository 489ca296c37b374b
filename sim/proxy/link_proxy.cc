// LinkProxy (link_proxy.h): the Loop owns the libevent base, the listener and the links, and runs
// them on its thread. A control is a task posted to that thread: the caller queues it under a
// mutex, writes a byte to a wake-up pipe the loop watches, and waits until the loop has run it.
// The loop never waits for a caller, so a control is answered within one loop turn.
#include "sim/proxy/link_proxy.h"

#include <event2/event.h>
#include <event2/listener.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sim/core/assert.h"
#include "sim/core/error.h"
#include "sim/proxy/proxy_link.h"

namespace locksim {

using proxy_internal::LinkShared;
using proxy_internal::ProxyLink;

namespace {

// kMaxLinks: connections a proxy keeps at once; more are accepted and closed at once (a client
// link needs one, or a few while it reconnects).
constexpr std::size_t kMaxLinks = 1024;

// resolve: the upstream's address, looked up once, so connecting never blocks the loop.
void resolve(const Endpoint& upstream, LinkShared& shared) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(upstream.port);
  const int status = ::getaddrinfo(upstream.host.c_str(), port.c_str(), &hints, &found);
  if (status != 0 || found == nullptr) {
    throw EnvironmentError("link proxy: cannot resolve the upstream host " + upstream.host + ": " +
                           ::gai_strerror(status));
  }
  std::memcpy(&shared.upstream, found->ai_addr, found->ai_addrlen);
  shared.upstream_length = found->ai_addrlen;
  ::freeaddrinfo(found);
}

// new_base: a plain base. Its own timers would fire up to a millisecond late (epoll waits in
// whole milliseconds, rounded up), so the links time their delays with a timerfd each
// (proxy_link.h), to the nanosecond, and the base keeps no precise timer of its own, which it
// would re-arm at every turn of the loop.
event_base* new_base() {
  event_base* base = event_base_new();
  LOCKSIM_ASSERT(base != nullptr);
  return base;
}

}  // namespace

class LinkProxy::Loop {
 public:
  Loop() = default;
  ~Loop();
  Loop(const Loop&) = delete;
  Loop& operator=(const Loop&) = delete;

  // open: resolves the upstream, listens, starts the thread. Throws EnvironmentError; the
  // destructor frees whatever was made before.
  void open(const Endpoint& upstream);
  int port() const { return port_; }

  // run: runs `task` on the loop thread; returns when it has run. Not from the loop thread.
  void run(const std::function<void()>& task);
  // Loop thread only (inside run):
  FaultState& faults() { return shared_.faults; }
  void for_each_link(void (ProxyLink::*action)()) {
    for (const auto& link : links_) (link.get()->*action)();
  }

  const proxy_internal::LinkCounters& counters() const { return shared_.counters; }

 private:
  void listen();
  void wake();
  static void on_accept(evconnlistener*, evutil_socket_t fd, sockaddr*, int, void* self);
  static void on_wake(evutil_socket_t fd, short, void* self);
  static void on_reap(evutil_socket_t, short, void* self);

  LinkShared shared_;
  evconnlistener* listener_ = nullptr;
  int port_ = 0;
  int wake_fds_[2] = {-1, -1};  // a pipe: read end watched by the loop, write end for callers
  event* wake_ = nullptr;
  std::vector<std::unique_ptr<ProxyLink>> links_;
  std::thread thread_;

  std::mutex mutex_;
  std::condition_variable ran_;
  std::deque<std::function<void()>> tasks_;  // guarded by mutex_
  std::uint64_t tasks_posted_ = 0;           // guarded by mutex_
  std::uint64_t tasks_run_ = 0;              // guarded by mutex_
};

LinkProxy::Loop::~Loop() {
  if (thread_.joinable()) {
    run([this] { event_base_loopbreak(shared_.base); });
    thread_.join();
  }
  links_.clear();  // closes their sockets while the base is alive
  if (wake_ != nullptr) event_free(wake_);
  if (shared_.reap != nullptr) event_free(shared_.reap);
  if (listener_ != nullptr) evconnlistener_free(listener_);
  for (const int fd : wake_fds_) {
    if (fd >= 0) ::close(fd);
  }
  if (shared_.base != nullptr) event_base_free(shared_.base);
}

void LinkProxy::Loop::open(const Endpoint& upstream) {
  resolve(upstream, shared_);
  shared_.base = new_base();
  listen();
  if (::pipe2(wake_fds_, O_NONBLOCK | O_CLOEXEC) != 0) {
    throw EnvironmentError(std::string("link proxy: cannot create a pipe: ") +
                           std::strerror(errno));
  }
  wake_ = event_new(shared_.base, wake_fds_[0], EV_READ | EV_PERSIST, &Loop::on_wake, this);
  shared_.reap = event_new(shared_.base, -1, 0, &Loop::on_reap, this);
  LOCKSIM_ASSERT(wake_ != nullptr && shared_.reap != nullptr);
  event_add(wake_, nullptr);
  // The wake-up event is always pending, so the loop runs until the destructor breaks it.
  thread_ = std::thread([base = shared_.base] { event_base_dispatch(base); });
}

void LinkProxy::Loop::listen() {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;  // the kernel picks a free port
  listener_ =
      evconnlistener_new_bind(shared_.base, &Loop::on_accept, this,
                              LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE, -1,
                              reinterpret_cast<sockaddr*>(&address), sizeof(address));
  if (listener_ == nullptr) {
    throw EnvironmentError(std::string("link proxy: cannot listen on 127.0.0.1: ") +
                           std::strerror(errno));
  }
  socklen_t length = sizeof(address);
  if (::getsockname(evconnlistener_get_fd(listener_), reinterpret_cast<sockaddr*>(&address),
                    &length) != 0) {
    throw EnvironmentError(std::string("link proxy: getsockname: ") + std::strerror(errno));
  }
  port_ = ntohs(address.sin_port);
}

void LinkProxy::Loop::run(const std::function<void()>& task) {
  LOCKSIM_ASSERT(std::this_thread::get_id() != thread_.get_id());
  std::unique_lock lock(mutex_);
  tasks_.push_back(task);
  const std::uint64_t ticket = ++tasks_posted_;
  wake();
  ran_.wait(lock, [&] { return tasks_run_ >= ticket; });
}

void LinkProxy::Loop::wake() {
  const char byte = 0;
  ssize_t written = 0;
  do {
    written = ::write(wake_fds_[1], &byte, 1);
  } while (written < 0 && errno == EINTR);
  // A full pipe means a wake-up is pending already, and it runs every queued task.
  LOCKSIM_ASSERT(written == 1 || errno == EAGAIN);
}

void LinkProxy::Loop::on_wake(evutil_socket_t fd, short /*what*/, void* self) {
  auto* loop = static_cast<Loop*>(self);
  char bytes[64];
  while (::read(fd, bytes, sizeof(bytes)) > 0) {
  }
  std::deque<std::function<void()>> tasks;
  {
    std::lock_guard lock(loop->mutex_);
    tasks.swap(loop->tasks_);
  }
  for (const auto& task : tasks) task();
  {
    std::lock_guard lock(loop->mutex_);
    loop->tasks_run_ += tasks.size();
  }
  loop->ran_.notify_all();
}

void LinkProxy::Loop::on_accept(evconnlistener* /*listener*/, evutil_socket_t fd,
                                sockaddr* /*address*/, int /*length*/, void* self) {
  auto* loop = static_cast<Loop*>(self);
  ++loop->shared_.counters.connections_accepted;
  if (loop->shared_.faults.resetting() || loop->links_.size() >= kMaxLinks) {
    evutil_closesocket(fd);
    return;
  }
  loop->links_.push_back(std::make_unique<ProxyLink>(loop->shared_, fd));
  loop->links_.back()->start();
}

void LinkProxy::Loop::on_reap(evutil_socket_t /*fd*/, short /*what*/, void* self) {
  std::erase_if(static_cast<Loop*>(self)->links_,
                [](const std::unique_ptr<ProxyLink>& link) { return link->finished(); });
}

std::unique_ptr<LinkProxy> LinkProxy::start(const Endpoint& upstream) {
  auto loop = std::make_unique<Loop>();
  loop->open(upstream);
  return std::unique_ptr<LinkProxy>(new LinkProxy(std::move(loop), upstream));
}

LinkProxy::LinkProxy(std::unique_ptr<Loop> loop, const Endpoint& upstream)
    : loop_(std::move(loop)), port_(loop_->port()), endpoint_(upstream) {
  endpoint_.host = "127.0.0.1";
  endpoint_.port = port_;
}

LinkProxy::~LinkProxy() = default;

LinkProxyCounters LinkProxy::counters() const {
  const proxy_internal::LinkCounters& cells = loop_->counters();
  LinkProxyCounters counters;
  counters.connections_accepted = cells.connections_accepted.load();
  counters.connections_open = cells.connections_open.load();
  counters.commands_received = cells.commands_received.load();
  counters.commands_forwarded = cells.commands_forwarded.load();
  counters.replies_forwarded = cells.replies_forwarded.load();
  counters.replies_dropped = cells.replies_dropped.load();
  counters.commands_dropped = cells.commands_dropped.load();
  return counters;
}

void LinkProxy::delay_replies(Nanos fixed_ns, Nanos jitter_ns, std::uint64_t seed) {
  loop_->run([&] {
    if (!loop_->faults().delay_replies(fixed_ns, jitter_ns, seed)) {
      loop_->for_each_link(&ProxyLink::release_replies);
    }
  });
}

void LinkProxy::delay_next_command(Nanos delay_ns) {
  loop_->run([&] { loop_->faults().delay_next_command(delay_ns); });
}

void LinkProxy::hold_next_command() {
  loop_->run([&] { loop_->faults().hold_next_command(); });
}

void LinkProxy::release_held() {
  loop_->run([&] { loop_->for_each_link(&ProxyLink::release_held); });
}

void LinkProxy::drop_reply_of_next(int skip) {
  loop_->run([&] { loop_->faults().drop_reply_of_next(skip); });
}

void LinkProxy::set_command_policy(std::shared_ptr<CommandPolicy> policy) {
  loop_->run([&] { loop_->faults().set_policy(std::move(policy)); });
}

void LinkProxy::partition(PartitionMode mode) {
  loop_->run([&] {
    loop_->faults().partition(mode);
    if (mode == PartitionMode::kReset) loop_->for_each_link(&ProxyLink::reset);
  });
}

void LinkProxy::heal() {
  loop_->run([&] {
    loop_->faults().heal();
    loop_->for_each_link(&ProxyLink::heal);
  });
}

}  // namespace locksim
