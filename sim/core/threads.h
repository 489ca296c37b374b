// threads.h: Threads, where a run's threads come from, and Thread, a handle that joins.
//
// The driver starts its client threads, renewal threads and fault watchers through a Threads:
// os_threads() gives real threads; the simulator (sim/simulate) gives fibers that its seeded
// scheduler runs one at a time on virtual time. Code that starts a thread this way waits only
// through a Clock (sim/core/clock.h) and talks to Redis only through a Connection, so it runs the
// same on either.
//
//   Thread renewer = Thread(os_threads(), [&] { renew(); });
//   ...
//   renewer.join();  // also in the destructor
#pragma once

#include <functional>
#include <memory>
#include <utility>

namespace locksim {

// Started: one started thread, as its Threads keeps it.
class Started {
 public:
  virtual ~Started() = default;
  // join: waits for the thread's body to return (once).
  virtual void join() = 0;
};

class Threads {
 public:
  virtual ~Threads() = default;
  // start: runs `body` on a new thread; the handle joins it.
  virtual std::unique_ptr<Started> start(std::function<void()> body) = 0;
};

// os_threads: real threads (std::thread). Lives for the program.
Threads& os_threads();

// Thread: a started thread that is joined at the latest when the handle is destroyed (unlike
// std::thread, which terminates the program then). Movable.
class Thread {
 public:
  Thread() = default;
  Thread(Threads& threads, std::function<void()> body) : started_(threads.start(std::move(body))) {}
  Thread(Thread&&) noexcept = default;
  Thread& operator=(Thread&& other) noexcept {
    if (this != &other) {
      join();
      started_ = std::move(other.started_);
    }
    return *this;
  }
  ~Thread() { join(); }

  bool joinable() const { return started_ != nullptr; }
  void join() {
    if (started_) {
      started_->join();
      started_.reset();
    }
  }

 private:
  std::unique_ptr<Started> started_;
};

}  // namespace locksim
