// `locksim worker` and how run starts it. See sim/host/worker_protocol.h for the protocol.
#include <unistd.h>

#include <climits>
#include <iostream>

#include "sim/app/commands.h"
#include "sim/core/error.h"
#include "sim/host/worker_protocol.h"

namespace locksim {

std::vector<std::string> worker_command(const std::vector<std::string>& variant_files) {
  char path[PATH_MAX];
  const ssize_t length = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (length <= 0) return {};
  std::vector<std::string> command = {std::string(path, static_cast<std::size_t>(length)),
                                      "worker"};
  for (const std::string& file : variant_files) {
    command.push_back("--variant-file");
    command.push_back(file);
  }
  return command;
}

int worker_subcommand(const std::vector<std::string>& variant_files) {
  try {
    register_variant_files(variant_files);
  } catch (const InputError& e) {
    std::cerr << "locksim worker: " << e.what() << "\n";
    return kExitUsage;
  }
  return run_worker();
}

}  // namespace locksim
