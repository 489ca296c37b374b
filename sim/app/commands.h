// commands.h: the three subcommands of `locksim`. main.cc parses argv with CLI11 and calls these;
// they return the process exit code.
//
// Exit codes: 0 every outcome as expected; 1 some outcome differs; 2 bad input or usage;
// 3 harness or environment failure (redis-server missing, Redis unreachable, unwritable output);
// 130 interrupted (Ctrl-C, SIGTERM) after writing what had been run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/stop.h"
#include "sim/lock/script_variant.h"

namespace locksim {

constexpr int kExitOk = 0;
constexpr int kExitMismatch = 1;
constexpr int kExitUsage = 2;
constexpr int kExitEnvironment = 3;
constexpr int kExitInterrupted = 130;

struct RunOptions {
  std::vector<std::string> paths;     // scenario files or directories
  std::vector<std::string> variants;  // empty: every variant each scenario lists
  std::string redis_url;              // empty: a private redis-server
  std::string out_dir = "reports";
  std::optional<std::uint64_t> seed;
  int repeat = 1;
  bool progress = true;                    // progress line on a terminal
  // max_memory_mb: refuse a run whose history would need more; 0: 80% of the available memory.
  std::int64_t max_memory_mb = 0;
  std::vector<std::string> variant_files;  // user Lua locks (--variant-file)
};

int run_command(const RunOptions& options, StopSignal& stop);

struct CheckCommandOptions {
  std::string run_dir;
  std::vector<std::string> variant_files;  // needed to re-read runs of user variants
};

int check_command(const CheckCommandOptions& options);

struct ListOptions {
  std::vector<std::string> paths;  // default: ./scenarios if it exists
  std::vector<std::string> variant_files;
};

// UserVariant: a variant loaded from a --variant-file.
struct UserVariant {
  std::string name;
  std::string like;  // built-in whose expectations it must meet; empty: reported only
  ScriptVariantSpec spec;
};

// register_variant_files: loads, validates and registers each file's variant (InputError).
std::vector<UserVariant> register_variant_files(const std::vector<std::string>& files);

// add_user_variants: runs each user variant in every scenario that lists its `like` variant,
// expecting what that variant is expected to get (or in every scenario, expecting "any").
struct Scenario;
void add_user_variants(std::vector<Scenario>& scenarios, const std::vector<UserVariant>& users);

int list_command(const ListOptions& options);

// build_commit: the git commit locksim was configured from ("unknown" outside a git checkout).
std::string build_commit();
// build_version: the CMake project version, e.g. "0.1.0".
std::string build_version();
// machine_description: "host, 2 cores, Linux 6.1.0".
std::string machine_description();
// peak_rss_mb: this process's peak resident memory so far, in MB (1 MB = 1024 KB here).
double peak_rss_mb();
// available_memory_bytes: MemAvailable from /proc/meminfo; 0 if unknown.
std::uint64_t available_memory_bytes();

}  // namespace locksim
