#include "sim/core/threads.h"

#include <thread>

namespace locksim {
namespace {

class OsStarted final : public Started {
 public:
  explicit OsStarted(std::function<void()> body) : thread_(std::move(body)) {}
  ~OsStarted() override { join(); }
  void join() override {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::thread thread_;
};

class OsThreads final : public Threads {
 public:
  std::unique_ptr<Started> start(std::function<void()> body) override {
    return std::make_unique<OsStarted>(std::move(body));
  }
};

}  // namespace

Threads& os_threads() {
  static OsThreads threads;
  return threads;
}

}  // namespace locksim
