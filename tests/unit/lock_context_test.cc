// lock_context_test: LockContext::client_now_ms, the time a client's own clock shows: the run's
// time plus its offset, plus its drift for each second since the drift's origin.
#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <mutex>

#include "sim/core/random.h"
#include "sim/lock/variant.h"
#include "sim/model/model_connection.h"
#include "sim/model/model_server.h"

namespace locksim {
namespace {

// SteppedClock: a clock that stands wherever the test puts it.
class SteppedClock final : public Clock {
 public:
  Nanos now_ns() const override { return now_; }
  bool wait_until(std::condition_variable&, std::unique_lock<std::mutex>&, Nanos,
                  const std::function<bool()>& done) const override {
    return done();
  }
  void sleep_for(Nanos) const override {}
  std::int64_t unix_seconds() const override { return 0; }
  void set_ms(std::int64_t ms) { now_ = ms_to_ns(ms); }

 private:
  Nanos now_ = 0;
};

// Proves an offset shifts the clock by a constant, a drift grows with the time since its origin
// (and is 0 before it), and both add up; a clock that loses time runs behind.
TEST(LockContextTest, ClientNowIsTheRunsTimePlusOffsetPlusDrift) {
  SteppedClock clock;
  Rng rng(1);
  ModelServer server;
  ModelConnection connection(server, clock);  // never used: the clock is all that is read
  LockContext context{.connection = connection, .rng = rng, .clock = clock};

  clock.set_ms(5000);
  EXPECT_EQ(context.client_now_ms(), 5000);
  context.clock_offset_ms = -300;
  EXPECT_EQ(context.client_now_ms(), 4700);

  context.clock_offset_ms = 0;
  context.clock_drift_ms_per_s = 500;
  context.clock_drift_origin_ns = ms_to_ns(4000);
  EXPECT_EQ(context.client_now_ms(), 5500);  // 1 s after the origin: 500 ms ahead
  clock.set_ms(4000);
  EXPECT_EQ(context.client_now_ms(), 4000);  // in sync at the origin
  clock.set_ms(3000);
  EXPECT_EQ(context.client_now_ms(), 3000);  // before it: no drift yet
  clock.set_ms(7000);
  context.clock_offset_ms = 100;
  EXPECT_EQ(context.client_now_ms(), 7000 + 100 + 1500);
  context.clock_drift_ms_per_s = -1000;
  EXPECT_EQ(context.client_now_ms(), 7000 + 100 - 3000);  // a clock that stood still
}

}  // namespace
}  // namespace locksim
