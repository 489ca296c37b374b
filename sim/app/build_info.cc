#include <sys/utsname.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "sim/app/commands.h"

#ifndef LOCKSIM_COMMIT
#define LOCKSIM_COMMIT "unknown"
#endif
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

}  // namespace locksim
