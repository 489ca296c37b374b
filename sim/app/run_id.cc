#include "sim/app/run_id.h"

#include <cstdio>
#include <ctime>

#include "sim/core/clock.h"
#include "sim/core/random.h"

namespace locksim {

std::string make_run_id(std::uint64_t seed, int repetition) {
  const auto now = static_cast<std::time_t>(real_clock().unix_seconds());
  std::tm parts{};
  gmtime_r(&now, &parts);
  char time_text[32];
  std::strftime(time_text, sizeof time_text, "%Y%m%d-%H%M%S", &parts);
  std::string id = std::string(time_text) + "-s" + std::to_string(seed);
  if (repetition > 0) id += "-r" + std::to_string(repetition);
  char suffix[8];
  std::snprintf(suffix, sizeof suffix, "%06llx",
                static_cast<unsigned long long>(random_seed() & 0xffffffULL));
  return id + "-" + suffix;
}

}  // namespace locksim
