// fiber_unwind.h: FiberUnwind, what a simulated thread's wait throws when its Simulation ends
// before the thread did (a run cut short by its bounds, a stall, a fiber's failure): the fiber is
// resumed one last time, its wait throws, and the destructors on its stack run on the way up to
// the fiber's entry, which catches it (sim/simulate/fiber.h, simulation.h).
//
// It is not a std::exception, so `catch (const std::exception&)` lets it through. Code that runs
// on a fiber must not swallow it: a `catch (...)` there rethrows it.
//
//   try { step(); } catch (const FiberUnwind&) { throw; } catch (...) { note_failure(); }
#pragma once

namespace locksim {

struct FiberUnwind final {};

}  // namespace locksim
