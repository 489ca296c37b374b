#include "sim/redis/benchmark.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace locksim {

namespace {

// set_nx_px_per_s: redis-benchmark's SET NX PX requests per second against `endpoint`, with
// `options` before the command ("--cluster"); `key` holds __rand_int__.
double set_nx_px_per_s(const Endpoint& endpoint, const std::string& options, const std::string& key,
                       int clients, int requests) {
  const char* benchmark = "/usr/bin/redis-benchmark";
  if (access(benchmark, X_OK) != 0 || !endpoint.password.empty()) return 0;
  const std::string command = std::string(benchmark) + " -h 127.0.0.1 -p " +
                              std::to_string(endpoint.port) + options + " -c " +
                              std::to_string(clients) + " -n " + std::to_string(requests) +
                              " -r 1000000 --csv SET " + key + " 1 NX PX 10000 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return 0;
  std::string output;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  if (pclose(pipe) != 0) return 0;
  // "test","rps",...: the data line's second field.
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("\"SET", 0) != 0) continue;
    const std::size_t comma = line.find(",\"");
    if (comma == std::string::npos) continue;
    return std::atof(line.c_str() + comma + 2);
  }
  return 0;
}

}  // namespace

double server_capacity(const Endpoint& endpoint, const std::string& prefix, int clients,
                       int requests) {
  return set_nx_px_per_s(endpoint, "", prefix + "bench:__rand_int__", clients, requests);
}

double cluster_capacity(const Endpoint& endpoint, const std::string& prefix, int clients,
                        int requests) {
  // redis-benchmark --cluster replaces "{tag}" with a tag of a slot of each client's primary; a
  // key without one would be sent to a node that does not serve it and answered MOVED.
  return set_nx_px_per_s(endpoint, " --cluster", prefix + "{tag}:bench:__rand_int__", clients,
                         requests);
}

}  // namespace locksim
