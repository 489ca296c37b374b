#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <thread>

#include "sim/app/commands.h"

#include "locksim_commit.h"  // generated at every build (cmake/LocksimCommit.cmake)
#ifndef LOCKSIM_VERSION
#define LOCKSIM_VERSION "unknown"
#endif

namespace locksim {

std::string build_commit() { return LOCKSIM_COMMIT; }

std::string build_version() { return LOCKSIM_VERSION; }

std::string machine_description() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  struct utsname name {};
  uname(&name);
  return std::string(host) + ", " + std::to_string(std::thread::hardware_concurrency()) +
         " cores, " + name.sysname + " " + name.release;
}

double peak_rss_mb() {
  struct rusage usage {};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports kilobytes
}

std::uint64_t available_memory_bytes() {
  // MemAvailable: what the kernel can give without swapping (page cache it can drop included).
  std::ifstream meminfo("/proc/meminfo");
  std::string name;
  std::uint64_t kilobytes = 0;
  std::string unit;
  while (meminfo >> name >> kilobytes >> unit) {
    if (name == "MemAvailable:") return kilobytes * 1024;
  }
  return 0;  // unknown: no limit is applied
}

}  // namespace locksim
