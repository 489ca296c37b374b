#include "sim/explore/exercise.h"

#include <algorithm>
#include <array>
#include <utility>

#include "sim/core/random.h"

namespace locksim {
namespace {

using Json = nlohmann::json;

constexpr std::array<std::string_view, 10> kFaultWords = {
    "crash", "checkpoint", "pause",   "overrun",    "lost_reply",
    "delay", "partition",  "restart", "clock_jump", "node_down"};

std::string client_name(int index) { return std::string(1, static_cast<char>('A' + index)); }

// Cycle: one client's acquire -> work -> release, and the fault drawn for it (if any).
struct Cycle {
  std::optional<ExerciseFault> fault;
};

}  // namespace

std::string_view to_string(ExerciseFault fault) {
  return kFaultWords[static_cast<std::size_t>(fault)];
}

std::optional<ExerciseFault> exercise_fault_from(std::string_view word) {
  for (std::size_t i = 0; i < kFaultWords.size(); ++i) {
    if (kFaultWords[i] == word) return static_cast<ExerciseFault>(i);
  }
  return std::nullopt;
}

Json draw_exercise(const LockVariant& variant, const ExerciseOptions& options, std::uint64_t seed) {
  Rng rng(seed);
  const std::int64_t ttl = options.ttl_ms;
  const int clients = static_cast<int>(rng.uniform(2, std::max(2, options.max_clients)));
  std::vector<std::vector<Cycle>> cycles(static_cast<std::size_t>(clients));
  for (auto& mine : cycles) {
    mine.resize(static_cast<std::size_t>(rng.uniform(1, std::max(1, options.max_cycles))));
  }
  // The menu: what this variant can be given (a checkpoint fault needs a checkpoint).
  const std::vector<LockVariant::CheckpointSite> sites = variant.checkpoints();
  std::vector<ExerciseFault> menu;
  const bool nodes = variant.multi_server();
  for (const ExerciseFault fault : options.faults) {
    if (fault == ExerciseFault::kCheckpoint && sites.empty()) continue;
    if (fault == ExerciseFault::kNodeDown && !nodes) continue;
    menu.push_back(fault);
  }
  // A multi-server lock runs on Redlock's five servers; a lock whose grant waits for a replica
  // (WAIT) on a primary with one ("primary_replica": server faults hit "primary"), where alone
  // every acquire is refused; a one-server lock on a topology of its own ("single", its server
  // "n1") only when a server fault is drawn.
  const bool replica = variant.needs_replica();
  const std::string one_server = replica ? "primary" : "n1";
  bool server_faults = nodes || replica;
  // A node is killed (or restarted) once per schedule: the first one not taken yet, from a drawn
  // start; "" when all five were.
  std::set<std::string> killed;
  const auto server_name = [&](bool kills) {
    if (!nodes) return std::string(kills && !killed.insert(one_server).second ? "" : one_server);
    const std::int64_t first = rng.uniform(1, 5);
    for (std::int64_t i = 0; i < 5; ++i) {
      const std::string name = "n" + std::to_string((first - 1 + i) % 5 + 1);
      if (!kills || killed.insert(name).second) return name;
    }
    return std::string();
  };
  const int fault_count =
      menu.empty() ? 0 : static_cast<int>(rng.uniform(0, std::max(0, options.max_faults)));
  for (int f = 0; f < fault_count; ++f) {
    auto& mine = cycles[static_cast<std::size_t>(rng.uniform(0, clients - 1))];
    Cycle& cycle =
        mine[static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(mine.size()) - 1))];
    cycle.fault =
        menu[static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(menu.size()) - 1))];
  }

  // Each client's steps, in its own order; a client that dies does nothing after.
  std::vector<std::vector<Json>> queues(static_cast<std::size_t>(clients));
  for (int c = 0; c < clients; ++c) {
    const std::string name = client_name(c);
    const std::string other = client_name((c + 1) % clients);
    for (const Cycle& cycle : cycles[static_cast<std::size_t>(c)]) {
      Json acquire = {{"client", name}, {"do", "acquire"}};
      Json release = {{"client", name}, {"do", "release"}};
      Json middle = {{"client", name}, {"do", "work"}, {"work_ms", rng.uniform(0, ttl / 2)}};
      bool dies = false;
      if (cycle.fault == ExerciseFault::kCheckpoint) {
        const auto& site = sites[static_cast<std::size_t>(
            rng.uniform(0, static_cast<std::int64_t>(sites.size()) - 1))];
        Json& call = site.in_acquire ? acquire : release;
        if (rng.chance(0.5)) {
          call["crash_at"] = std::string(site.point);
          dies = true;
        } else {
          call["pause_at"] = {{"point", std::string(site.point)},
                              {"until", {{"inside", other}}},
                              {"max_ms", rng.uniform(ttl, 3 * ttl)}};
        }
      } else if (cycle.fault == ExerciseFault::kPause) {
        middle = {{"client", name}, {"do", "pause"}, {"pause_ms", rng.uniform(ttl, 3 * ttl)}};
      } else if (cycle.fault == ExerciseFault::kOverrun) {
        middle["work_ms"] = rng.uniform(ttl, 3 * ttl);
      } else if (cycle.fault == ExerciseFault::kLostReply) {
        (rng.chance(0.5) ? acquire : release)["lose_reply"] = true;
      } else if (cycle.fault == ExerciseFault::kDelay) {
        release["delay"] = {{"until", {{"inside", other}}}, {"max_ms", rng.uniform(ttl, 3 * ttl)}};
      } else if (cycle.fault == ExerciseFault::kPartition) {
        middle = {{"client", name},
                  {"do", "partition"},
                  {"partition_ms", rng.uniform(ttl, 3 * ttl)},
                  {"mode", rng.chance(0.5) ? "hold" : "reset"}};
      }
      // Moved, not copied (a Json object copy is a tree of allocations; explore draws thousands
      // of these a second).
      auto& queue = queues[static_cast<std::size_t>(c)];
      const bool dies_in_acquire = dies && acquire.contains("crash_at");
      queue.push_back(std::move(acquire));
      if (dies_in_acquire) break;
      // A server fault comes after the acquire, before the work: while the holder is inside.
      if (cycle.fault == ExerciseFault::kRestart) {
        if (const std::string server = server_name(true); !server.empty()) {
          queue.push_back({{"do", "kill_server"}, {"server", server}});
          queue.push_back({{"do", "restart_server"}, {"server", server}});
          server_faults = true;
        }
      } else if (cycle.fault == ExerciseFault::kClockJump) {
        queue.push_back({{"do", "clock_jump"},
                         {"server", server_name(false)},
                         {"jump_ms", rng.uniform(ttl, 3 * ttl)}});
        server_faults = true;
      } else if (cycle.fault == ExerciseFault::kNodeDown) {
        if (const std::string server = server_name(true); !server.empty()) {
          queue.push_back({{"do", "kill_server"}, {"server", server}});
        }
      }
      queue.push_back(std::move(middle));
      if (cycle.fault == ExerciseFault::kCrash) {
        queue.push_back({{"client", name}, {"do", "crash"}});
        break;
      }
      queue.push_back(std::move(release));
      if (dies) break;
    }
  }
  // Interleaved in a drawn order, each client's steps in its own.
  Json steps = Json::array();
  std::vector<std::size_t> next(queues.size(), 0);
  while (true) {
    std::vector<std::size_t> ready;
    for (std::size_t c = 0; c < queues.size(); ++c) {
      if (next[c] < queues[c].size()) ready.push_back(c);
    }
    if (ready.empty()) break;
    const std::size_t c = ready[static_cast<std::size_t>(
        rng.uniform(0, static_cast<std::int64_t>(ready.size()) - 1))];
    steps.push_back(std::move(queues[c][next[c]++]));
  }

  Json names = Json::array();
  for (int c = 0; c < clients; ++c) names.push_back(client_name(c));
  const std::string variant_name(variant.name());
  Json document =
      Json{{"name", "explore-" + std::to_string(seed)},
           {"description", "A schedule drawn by locksim explore from seed " + std::to_string(seed) +
                               ": " + std::to_string(clients) +
                               " clients, their cycles interleaved, at most " +
                               std::to_string(options.max_faults) + " fault(s) from the menu."},
           {"source", {{"doc", "none"}, {"claim", "explored"}}},
           {"variants", {variant_name}},
           {"lock",
            {{"ttl_ms", ttl},
             {"acquire_timeout_ms", 10 * ttl},
             // A lost reply costs the caller this long (it may have acquired meanwhile).
             {"reply_timeout_ms", 2 * ttl},
             {"wait", {{"strategy", "poll"}, {"interval_ms", 5}}}}},
           {"clients", std::move(names)},
           {"steps", std::move(steps)},
           {"expect", {{variant_name, "any"}}}};
  if (server_faults) {
    document["topology"] = nodes ? "redlock_5" : replica ? "primary_replica" : "single";
  }
  return document;
}

std::vector<std::string> faults_in(const Json& document) {
  std::set<std::string> found;
  const std::int64_t ttl = document.at("lock").at("ttl_ms").get<std::int64_t>();
  for (const Json& step : document.at("steps")) {
    const std::string action = step.at("do").get<std::string>();
    if (action == "crash") found.insert("crash");
    if (action == "pause") found.insert("pause");
    if (action == "partition") found.insert("partition");
    if (step.contains("lose_reply")) found.insert("lost_reply");
    if (step.contains("delay")) found.insert("delay");
    if (action == "work" && step.contains("work_ms") &&
        step.at("work_ms").get<std::int64_t>() >= ttl) {
      found.insert("overrun");
    }
    if (action == "restart_server") found.insert("restart");
    if (action == "clock_jump") found.insert("clock_jump");
    if (action == "kill_server" && document.value("topology", "") == "redlock_5") {
      // A node killed and not restarted (a restart is its own fault).
      const Json server = step.at("server");
      const auto& all = document.at("steps");
      if (std::none_of(all.begin(), all.end(), [&](const Json& other) {
            return other.at("do") == "restart_server" && other.value("server", Json()) == server;
          })) {
        found.insert("node_down");
      }
    }
    if (step.contains("crash_at"))
      found.insert("crash at " + step.at("crash_at").get<std::string>());
    if (step.contains("pause_at")) {
      found.insert("pause at " + step.at("pause_at").at("point").get<std::string>());
    }
  }
  return {found.begin(), found.end()};
}

std::set<std::string> signatures(const CheckResult& result) {
  std::set<std::string> found;
  for (const Finding& f : result.findings) {
    switch (f.kind) {
      case FindingKind::kMutexViolation:
      case FindingKind::kResourceCorrupted:
      case FindingKind::kDeadlock:
      case FindingKind::kLockError:
      case FindingKind::kNeverGranted:
      case FindingKind::kStaleRelease:
      case FindingKind::kStaleWrite:
      case FindingKind::kStolenRenewal:
      case FindingKind::kIdleHold:
      case FindingKind::kBarging:
        found.insert(std::string(to_string(f.kind)) +
                     (f.cause.empty() ? "" : " (" + f.cause + ")"));
        break;
      default:
        break;
    }
  }
  return found;
}

}  // namespace locksim
