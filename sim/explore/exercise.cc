#include "sim/explore/exercise.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <utility>

#include "sim/core/error.h"
#include "sim/explore/schedule.h"
#include "sim/fault/server_fault.h"
#include "sim/json/json_reader.h"
#include "sim/scenario/scenario_parts.h"

namespace locksim {
namespace {

using Json = nlohmann::json;

constexpr std::array<std::string_view, 15> kFaultWords = {
    "crash",       "checkpoint", "pause",        "overrun",    "lost_reply",
    "delay",       "partition",  "restart",      "clock_jump", "node_down",
    "dead_waiter", "cut_waiter", "client_clock", "failover",   "slot_move"};
// kFirstClusterFault: the cluster's kinds come last, out of the default menu.
constexpr std::size_t kFirstClusterFault = static_cast<std::size_t>(ExerciseFault::kFailover);

constexpr int kNodes = 5;     // a multi-server lock runs on Redlock's five servers
// The cluster's lock primary and its replica, as the cluster topology names them.
const std::string kClusterLockPrimary = "p1";
const std::string kClusterLockReplica = "r1";
// kClusterCutId: the id of the step that cuts r1's link (at most one a schedule), which the
// holder's acquire waits for.
const std::string kClusterCutId = "cut-r1";
// kClusterNodeTimeoutMs: a cluster schedule's cluster-node-timeout, the least a cluster topology
// takes: an election then comes 800 to 1900 ms after a primary dies.
constexpr std::int64_t kClusterNodeTimeoutMs = 100;
constexpr int kMajority = 3;  // of them
// Room for the steps drawn for one cycle: the acquire, work and release, and at most 16 more
// (a tried acquire and its finally release, a nested acquire's three steps, a server fault on a
// majority: a kill and a restart on each of three nodes, a crash). Most cycles use 3 to 6.
constexpr std::size_t kStepsPerCycle = 20;

// set_numbered: `out` = prefix, the number n, suffix ("step-3", "$.steps[2]"), written in place:
// every drawn step is named so, and the temporary strings of a concatenation cost more.
void set_numbered(std::string& out, std::string_view prefix, std::size_t n,
                  std::string_view suffix) {
  // Put together on the stack and assigned at once (each assign or append is a call).
  std::array<char, 64> text;
  LOCKSIM_ASSERT(prefix.size() + suffix.size() + 20 <= text.size());
  char* at = std::copy(prefix.begin(), prefix.end(), text.data());
  at = std::to_chars(at, text.data() + text.size(), n).ptr;
  at = std::copy(suffix.begin(), suffix.end(), at);
  out.assign(text.data(), static_cast<std::size_t>(at - text.data()));
}

std::string exercise_client_name(int index) {
  return std::string(1, static_cast<char>('A' + index));
}

// ExerciseCycle: one client's acquire -> work -> release, and the fault drawn for it (if any).
struct ExerciseCycle {
  std::optional<ExerciseFault> fault;
  bool several = false;       // the fault is aimed at several nodes (a majority)
  bool queue_behind = false;  // a lock with a queue: the acquire waits until another is inside
  // A reentrant lock's: the holder acquires again inside and releases that hold before its work
  // (nested); before the cycle, the client tries once while the lock is held and then releases
  // all the same, as a `finally` after a failed tryLock does (finally_try).
  bool nested = false;
  bool finally_try = false;
  bool read = false;  // a read-write lock's: the cycle takes a read hold (else a write hold)
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

std::set<ExerciseFault> all_exercise_faults() {
  std::set<ExerciseFault> all;
  for (std::size_t i = 0; i < kFirstClusterFault; ++i) all.insert(static_cast<ExerciseFault>(i));
  return all;
}

std::uint64_t Choices::raw() {
  const std::uint64_t value = drawn_.size() < prefix_.size() ? prefix_[drawn_.size()] : rng_.next();
  drawn_.push_back(value);
  return value;
}

std::int64_t Choices::uniform(std::int64_t low, std::int64_t high) {
  LOCKSIM_ASSERT(low <= high);
  const auto span = static_cast<std::uint64_t>(high - low) + 1;
  return low + static_cast<std::int64_t>(raw() % span);
}

bool Choices::chance(double probability) {
  return static_cast<double>(raw() >> 11) * 0x1.0p-53 < probability;
}

struct ExerciseDrawer::State {
  const LockVariant& variant;
  ExerciseOptions options;
  std::vector<LockVariant::CheckpointSite> sites;
  std::vector<ExerciseFault> menu;
  bool nodes = false;    // a multi-server lock: on "redlock_5"
  bool replica = false;  // its grant waits for a replica: on "primary_replica"
  bool queues = false;   // it keeps a queue of waiters
  bool semaphore = false;  // a semaphore: permits and client clocks are drawn
  bool client_clock = false;  // the lock reads its clients' clocks: client clocks are drawn
  bool reentrant = false;  // a reentrant lock: nested acquires and finally releases are drawn
  bool read_write = false;  // a read-write lock: each cycle's hold is drawn read or write
  std::string one_server;
  // The scenario around the steps, parsed once: without a topology, with the one a server fault
  // needs, and on a cluster (a cluster fault).
  Exercise plain;
  Exercise with_servers;
  Exercise on_cluster;
  std::shared_ptr<const ServerFault> kill;
  std::shared_ptr<const ServerFault> restart;
  std::shared_ptr<const ServerFault> cut_link;
  std::shared_ptr<const ServerFault> elected;  // the cluster's election (the step "failover")
  std::shared_ptr<const ServerFault> takeover;
  std::shared_ptr<const ServerFault> force;
  std::shared_ptr<const ServerFault> migrate;
  std::map<std::int64_t, std::shared_ptr<const ServerFault>> jumps;  // by jump_ms
  // The drawing's room, kept from one schedule to the next: every step of the clients' cycles,
  // drawn in place, and each client's queue of them in its order (draw).
  struct QueuedStep {
    std::size_t step = 0;  // in `drawn`
    bool behind = false;   // waits until the lock is held (queue_behind)
  };
  std::vector<Step> drawn;
  std::vector<std::vector<QueuedStep>> client_queues;

  State(const LockVariant& lock, const ExerciseOptions& chosen) : variant(lock), options(chosen) {}

  std::string topology_name() const {
    return nodes ? "redlock_5" : replica ? "primary_replica" : "single";
  }

  // header: the document of an exercise without its name, description, clients and steps.
  Json header(bool servers, bool cluster = false) const {
    const std::int64_t ttl = options.ttl_ms;
    const std::string name(variant.name());
    Json lock = {{"ttl_ms", ttl},
                 {"acquire_timeout_ms", 10 * ttl},
                 // A lost reply costs the caller this long (it may have acquired meanwhile).
                 {"reply_timeout_ms", 2 * ttl},
                 {"wait", {{"strategy", "poll"}, {"interval_ms", 5}}}};
    Json document = {{"source", {{"doc", "none"}, {"claim", "explored"}}},
                     {"variants", {name}},
                     {"lock", std::move(lock)},
                     {"expect", {{name, "any"}}}};
    if (queues) {
      // A waiter keeps its place for 5 TTLs without trying again: longer than a lost reply
      // (2 TTLs) or a pause inside the acquire (3 TTLs) costs a live waiter, so only a dead or
      // cut-off one loses it. A lock held by nobody alive for 7 TTLs is stuck: past the queue's
      // timeout, so a queue that never drops a dead waiter is a deadlock, and one that does is not.
      document["lock"]["queue_timeout_ms"] = 5 * ttl;
      document["check"] = {{"barging", true}, {"stuck_ms", 7 * ttl}};
    }
    if (read_write) {
      // A writer kept out longer than a TTL while readers got in after it asked is starved: a
      // reader stream lasts longer (see draw), a writer waiting behind a few holds does not.
      document["check"]["writer_wait_ms"] = ttl;
    }
    if (servers) document["topology"] = topology_name();
    if (cluster) {
      // A hash tag keeps a lock's own keys ("{lock}:queue", a fence) in its key's slot, as a
      // user of a cluster names them.
      document["lock"]["key"] = "{lock}";
      document["topology"] = {{"cluster",
                               {{"primaries", 3},
                                {"replicas_per_primary", 1},
                                {"node_timeout_ms", kClusterNodeTimeoutMs}}}};
    }
    return document;
  }

  void prepare(Exercise& exercise, bool servers, bool cluster = false) {
    Json document = header(servers, cluster);
    document["name"] = "explore";
    document["clients"] = {"A", "B"};
    document["steps"] = Json::array({{{"client", "A"}, {"do", "acquire"}}});
    exercise.scenario = parse_schedule(document, variant);
    exercise.scenario.steps.clear();
  }

  std::shared_ptr<const ServerFault> server_fault(std::string_view word, const Json& step) const {
    const ServerFaultType* type = server_fault_type(word);
    LOCKSIM_ASSERT(type != nullptr);
    const std::string file = "explore";
    return type->parse(json::JsonReader(step, "$.steps[0]", file));
  }

  std::shared_ptr<const ServerFault> jump(std::int64_t jump_ms) {
    auto& cached = jumps[jump_ms];
    if (!cached) cached = server_fault("clock_jump", Json{{"jump_ms", jump_ms}});
    return cached;
  }

  const Exercise& draw(Choices& choices, std::uint64_t seed);
};

ExerciseDrawer::ExerciseDrawer(const LockVariant& variant, const ExerciseOptions& options)
    : state_(std::make_unique<State>(variant, options)) {
  State& s = *state_;
  s.sites = variant.checkpoints();
  s.nodes = variant.multi_server();
  s.replica = variant.needs_replica();
  s.queues = variant.queues();
  s.semaphore = variant.semaphore();
  s.client_clock = variant.reads_client_clock();
  s.reentrant = variant.reentrant();
  s.read_write = variant.read_write();
  s.one_server = s.replica ? "primary" : "n1";
  // The menu: what this variant can be given (a checkpoint fault needs a checkpoint, a node down
  // several nodes, a waiter's fault a queue).
  for (const ExerciseFault fault : options.faults) {
    if (fault == ExerciseFault::kCheckpoint && s.sites.empty()) continue;
    if (fault == ExerciseFault::kNodeDown && !s.nodes) continue;
    if ((fault == ExerciseFault::kDeadWaiter || fault == ExerciseFault::kCutWaiter) && !s.queues) {
      continue;
    }
    // A client's own clock: for a semaphore (one timed by the server shows it changes nothing)
    // and for any lock that reads it.
    if (fault == ExerciseFault::kClientClock && !s.semaphore && !s.client_clock) continue;
    // A lock over several servers is not put on one cluster (its nodes would not be independent).
    if ((fault == ExerciseFault::kFailover || fault == ExerciseFault::kSlotMove) && s.nodes) {
      continue;
    }
    s.menu.push_back(fault);
  }
  if (!s.nodes && !s.replica) s.prepare(s.plain, false);
  s.prepare(s.with_servers, true);
  s.kill = s.server_fault("kill_server", Json::object());
  s.restart = s.server_fault("restart_server", Json::object());
  if (std::find(s.menu.begin(), s.menu.end(), ExerciseFault::kFailover) != s.menu.end() ||
      std::find(s.menu.begin(), s.menu.end(), ExerciseFault::kSlotMove) != s.menu.end()) {
    s.prepare(s.on_cluster, true, true);
    s.cut_link = s.server_fault("cut_replication", Json::object());
    s.elected = s.server_fault("failover", Json{{"max_ms", 10'000}});
    s.takeover = s.server_fault("cluster_failover", Json{{"mode", "takeover"}});
    s.force = s.server_fault("cluster_failover", Json{{"mode", "force"}});
    s.migrate = s.server_fault("migrate_slot", Json{{"to", "p2"}});
  }
}

ExerciseDrawer::~ExerciseDrawer() = default;

const Exercise& ExerciseDrawer::draw(std::uint64_t seed) {
  Choices choices(seed);
  return draw(choices, seed);
}

const Exercise& ExerciseDrawer::draw(Choices& choices, std::uint64_t seed) {
  return state_->draw(choices, seed);
}

const Exercise& ExerciseDrawer::State::draw(Choices& rng, std::uint64_t seed) {
  const std::int64_t ttl = options.ttl_ms;
  int clients = static_cast<int>(rng.uniform(2, std::max(2, options.max_clients)));
  // A read-write lock's reader stream, in one schedule of two: A and B take read holds in turns,
  // each entering while the other is inside, and C asks for the write lock while A reads. A lock
  // that lets readers in past a waiting writer keeps C out for as long as the stream lasts (past
  // the bound, check.writer_wait_ms: a TTL); one with writer preference lets C in once A leaves.
  const bool reader_stream = read_write && rng.chance(0.5);
  if (reader_stream) clients = std::max(clients, 3);
  std::vector<std::vector<ExerciseCycle>> cycles(static_cast<std::size_t>(clients));
  for (auto& mine : cycles) {
    mine.resize(static_cast<std::size_t>(rng.uniform(1, std::max(1, options.max_cycles))));
    if (queues || semaphore || read_write) {
      for (ExerciseCycle& cycle : mine) cycle.queue_behind = rng.chance(0.5);
    }
    if (read_write) {
      for (ExerciseCycle& cycle : mine) cycle.read = rng.chance(0.5);
    }
    if (reentrant) {
      for (ExerciseCycle& cycle : mine) {
        cycle.nested = rng.chance(0.5);
        cycle.finally_try = rng.chance(0.25);
      }
    }
  }
  // A semaphore of 1 to (clients - 1) permits, so that a holder too many can be there.
  const std::int64_t permits = semaphore ? rng.uniform(1, std::max(1, clients - 1)) : 1;
  std::map<std::string, std::int64_t> clock_offsets;
  // The swarm: which kinds are on in this schedule, and how hard each is.
  std::vector<ExerciseFault> on;
  std::vector<bool> several;
  for (const ExerciseFault fault : menu) {
    if (!rng.chance(0.5)) continue;
    on.push_back(fault);
    several.push_back(rng.chance(0.5));
  }
  std::set<std::string> words;
  bool any_fault = false;
  const auto note = [&](std::string word) {
    words.insert(std::move(word));
    any_fault = true;
  };
  // A cluster has no proxy in front of each node a redirection may name: with a cluster kind on,
  // the kinds that act on a client's link are off (drawn all the same, so the draws that follow
  // are those of the same seed).
  if (std::find(on.begin(), on.end(), ExerciseFault::kFailover) != on.end() ||
      std::find(on.begin(), on.end(), ExerciseFault::kSlotMove) != on.end()) {
    for (std::size_t k = on.size(); k-- > 0;) {
      const ExerciseFault kind = on[k];
      if (kind == ExerciseFault::kPartition || kind == ExerciseFault::kLostReply ||
          kind == ExerciseFault::kDelay || kind == ExerciseFault::kCutWaiter) {
        on.erase(on.begin() + static_cast<std::ptrdiff_t>(k));
        several.erase(several.begin() + static_cast<std::ptrdiff_t>(k));
      }
    }
  }
  words.insert("swarm: " + std::to_string(on.size()) + " kind" + (on.size() == 1 ? "" : "s") +
               " on");
  const int fault_count =
      on.empty() ? 0 : static_cast<int>(rng.uniform(0, std::max(0, options.max_faults)));
  for (int f = 0; f < fault_count; ++f) {
    auto& mine = cycles[static_cast<std::size_t>(rng.uniform(0, clients - 1))];
    ExerciseCycle& cycle =
        mine[static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(mine.size()) - 1))];
    const auto kind =
        static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(on.size()) - 1));
    cycle.fault = on[kind];
    cycle.several = several[kind];
  }

  // A cluster fault puts the whole schedule on a cluster, where the lock is p1's.
  bool cluster = false;
  for (const auto& mine : cycles) {
    for (const ExerciseCycle& cycle : mine) {
      cluster = cluster || cycle.fault == ExerciseFault::kFailover ||
                cycle.fault == ExerciseFault::kSlotMove;
    }
  }
  const std::string& lone = cluster ? kClusterLockPrimary : one_server;
  bool cluster_fault_drawn = false;  // one failover or slot move per schedule: then p1 is no
                                     // longer the lock's primary
  bool server_faults = nodes || replica || cluster;
  bool shifts_clock = false;
  // A node is killed (or restarted) once per schedule: `count` nodes not taken yet, from a drawn
  // start; fewer (or none) when the others were.
  std::set<std::string> killed;
  int nodes_down = 0;  // killed for good (node_down)
  const auto servers_for = [&](bool kills, int count) {
    std::vector<std::string> names;
    if (!nodes) {
      if (!kills || killed.insert(lone).second) names.push_back(lone);
      return names;
    }
    const std::int64_t first = rng.uniform(1, kNodes);
    for (std::int64_t i = 0; i < kNodes && static_cast<int>(names.size()) < count; ++i) {
      std::string name = "n" + std::to_string((first - 1 + i) % kNodes + 1);
      if (!kills || killed.insert(name).second) names.push_back(std::move(name));
    }
    return names;
  };
  const auto client_step = [](Step::Action action, const std::string& name) {
    Step step;
    step.action = action;
    step.client = name;
    return step;
  };
  const auto inside = [](const std::string& name) {
    return std::vector<Condition>{Condition{Condition::Kind::kInside, name, 0}};
  };
  // aimed: the word of a fault aimed at a majority of the nodes.
  const auto aimed = [&](ExerciseFault fault, std::size_t count) {
    std::string word(to_string(fault));
    if (nodes && count >= static_cast<std::size_t>(kMajority)) word += " on a majority";
    return word;
  };

  // The reader stream's steps come first, in this order; its readers' acquires are named
  // ("read-<i>": the next waits until the one before is done), the rest "step-<n>".
  std::vector<Step> stream;
  if (reader_stream) {
    const std::int64_t relays = rng.uniform(4, 10);
    // A reader stays at most a quarter TTL for the next to come in, then works; its hold ends
    // within its lease (3/4 of a TTL) however the writer fares.
    const std::int64_t hold_ms = rng.uniform(ttl / 4, ttl / 2);
    const auto done = [&](std::size_t index) {
      return std::vector<Condition>{Condition{Condition::Kind::kDone, stream[index].id, 0}};
    };
    Step first = client_step(Step::Action::kAcquire, "A");
    first.mode = LockMode::kRead;
    first.id = "read-0";
    std::size_t last_in = stream.size();
    stream.push_back(std::move(first));
    Step writer = client_step(Step::Action::kAcquire, "C");
    writer.wait_for = inside("A");
    writer.wait_max_ms = 2 * ttl;
    stream.push_back(std::move(writer));
    Step writes = client_step(Step::Action::kWork, "C");
    writes.work_ms = rng.uniform(0, ttl / 4);
    stream.push_back(std::move(writes));
    stream.push_back(client_step(Step::Action::kRelease, "C"));
    for (std::int64_t i = 1; i <= relays; ++i) {
      const std::string next = i % 2 == 1 ? "B" : "A";
      const std::string prev = i % 2 == 1 ? "A" : "B";
      Step in = client_step(Step::Action::kAcquire, next);
      in.mode = LockMode::kRead;
      in.id = "read-" + std::to_string(i);
      in.wait_for = i == 1 ? inside("A") : done(last_in);
      in.wait_max_ms = 2 * ttl;
      last_in = stream.size();
      stream.push_back(std::move(in));
      Step stays = client_step(Step::Action::kWork, prev);
      stays.until = inside(next);
      stays.max_ms = ttl / 4;
      stream.push_back(std::move(stays));
      Step works = client_step(Step::Action::kWork, prev);
      works.work_ms = hold_ms;
      stream.push_back(std::move(works));
      stream.push_back(client_step(Step::Action::kRelease, prev));
    }
    const std::string final_reader = relays % 2 == 1 ? "B" : "A";
    Step works = client_step(Step::Action::kWork, final_reader);
    works.work_ms = hold_ms;
    stream.push_back(std::move(works));
    stream.push_back(client_step(Step::Action::kRelease, final_reader));
    words.insert("reader stream");
  }

  // Each client's steps, in its own order; a client that dies does nothing after. `queue_behind`
  // marks an acquire that waits until another client is inside (set once the order is drawn).
  // Every step is drawn in place in `drawn` (reserved up front, so the references below stay
  // good) and a client's queue holds indices into it: a Step is large, and each move of one (into
  // a queue, then into the scenario) cost about as much as drawing it.
  std::size_t all_cycles = 0;
  for (const auto& mine : cycles) all_cycles += mine.size();
  drawn.clear();
  drawn.reserve(kStepsPerCycle * all_cycles);
  client_queues.resize(static_cast<std::size_t>(clients));
  const auto new_step = [&](Step::Action action, const std::string& name) -> Step& {
    LOCKSIM_ASSERT(drawn.size() < drawn.capacity());  // no step moves while others refer to it
    Step& step = drawn.emplace_back();
    step.action = action;
    step.client = name;
    return step;
  };
  const auto new_server_step = [&](const std::string& server,
                                   std::shared_ptr<const ServerFault> fault) -> Step& {
    Step& step = new_step(Step::Action::kServerFault, "");
    step.server = server;
    step.server_fault = std::move(fault);
    return step;
  };
  for (int c = 0; c < clients; ++c) {
    const std::string name = exercise_client_name(c);
    const std::string other = exercise_client_name((c + 1) % clients);
    auto& queue = client_queues[static_cast<std::size_t>(c)];
    queue.clear();
    const auto push = [&](const Step& step, bool waits_behind = false) {
      queue.push_back(QueuedStep{static_cast<std::size_t>(&step - drawn.data()), waits_behind});
    };
    for (const ExerciseCycle& cycle : cycles[static_cast<std::size_t>(c)]) {
      Step& acquire = new_step(Step::Action::kAcquire, name);
      if (cycle.read) {
        acquire.mode = LockMode::kRead;
        words.insert("read hold");
      }
      Step& release = new_step(Step::Action::kRelease, name);
      Step& middle = new_step(Step::Action::kWork, name);
      middle.work_ms = rng.uniform(0, ttl / 2);
      bool dies = false;
      if (cycle.fault == ExerciseFault::kCheckpoint) {
        const auto& site = sites[static_cast<std::size_t>(
            rng.uniform(0, static_cast<std::int64_t>(sites.size()) - 1))];
        Step& call = site.in_acquire ? acquire : release;
        if (rng.chance(0.5)) {
          call.crash_at = std::string(site.point);
          note("crash at " + call.crash_at);
          dies = true;
        } else {
          call.pause_at = std::string(site.point);
          call.pause_until = inside(other);
          call.pause_max_ms = rng.uniform(ttl, 3 * ttl);
          note("pause at " + call.pause_at);
        }
      } else if (cycle.fault == ExerciseFault::kPause) {
        // The work becomes a pause (nothing else of it was drawn but its length).
        middle.action = Step::Action::kPause;
        middle.work_ms = rng.uniform(ttl, 3 * ttl);
        note("pause");
      } else if (cycle.fault == ExerciseFault::kOverrun) {
        middle.work_ms = rng.uniform(ttl, 3 * ttl);
        note("overrun");
      } else if (cycle.fault == ExerciseFault::kLostReply) {
        (rng.chance(0.5) ? acquire : release).link_fault = LinkFault::kLoseReply;
        note("lost_reply");
      } else if (cycle.fault == ExerciseFault::kDelay) {
        note("delay");
        release.link_fault = LinkFault::kDelay;
        release.delay_until = inside(other);
        release.delay_max_ms = rng.uniform(ttl, 3 * ttl);
      } else if (cycle.fault == ExerciseFault::kPartition) {
        middle.action = Step::Action::kPartition;
        middle.work_ms = rng.uniform(ttl, 3 * ttl);
        middle.partition_reset = rng.chance(0.5);
        if (nodes && cycle.several) {
          // Cut from a majority of the nodes that granted it: it can neither release nor extend
          // there, while the others can still grant a majority once its keys expire.
          middle.link_servers = servers_for(false, kMajority);
        }
        note(aimed(ExerciseFault::kPartition,
                   middle.link_servers.empty() ? 1 : middle.link_servers.size()));
      } else if (cycle.fault == ExerciseFault::kClientClock) {
        // The client's own clock, for the whole run: ahead or behind by one to three leases.
        const bool ahead = rng.chance(0.5);
        clock_offsets[name] = (ahead ? 1 : -1) * rng.uniform(ttl, 3 * ttl);
        note(ahead ? "client_clock ahead" : "client_clock behind");
      } else if (cycle.fault == ExerciseFault::kDeadWaiter ||
                 cycle.fault == ExerciseFault::kCutWaiter) {
        // A waiter that tries once while another holds the lock (so it is queued), then dies or
        // is cut off: a queue must drop it after its timeout.
        Step& tries = new_step(Step::Action::kAcquire, name);
        tries.acquire_timeout_ms = 0;
        push(tries, true);
        note(std::string(to_string(*cycle.fault)));
        if (cycle.fault == ExerciseFault::kDeadWaiter) {
          push(new_step(Step::Action::kCrash, name));
          break;
        }
        Step& cut = new_step(Step::Action::kPartition, name);
        cut.work_ms = rng.uniform(ttl, 6 * ttl);
        cut.partition_reset = rng.chance(0.5);
        push(cut);
      }
      if (cycle.finally_try) {
        // Tried once while the lock is held, then released all the same (a finally block).
        Step& tries = new_step(Step::Action::kAcquire, name);
        tries.acquire_timeout_ms = 0;
        push(tries, true);
        Step& unlock = new_step(Step::Action::kRelease, name);
        unlock.finally_release = true;
        push(unlock);
        words.insert("finally release");
      }
      const bool dies_in_acquire = dies && !acquire.crash_at.empty();
      const bool fails_over = cycle.fault == ExerciseFault::kFailover && !cluster_fault_drawn;
      if (fails_over && cycle.several) {
        // r1 gets nothing of the holder's grant: its failover loses the lock. The acquire waits
        // until the link is cut (on a real cluster the cut takes a few round trips).
        Step& cut = new_server_step(kClusterLockReplica, cut_link);
        cut.id = kClusterCutId;
        push(cut);
        acquire.wait_for.push_back(Condition{Condition::Kind::kDone, kClusterCutId, 0});
        words.insert("replica's link cut");
      }
      push(acquire, cycle.queue_behind);
      if (dies_in_acquire) break;
      if (cycle.nested) {
        // A nested call: the holder takes the lock again, works a little, and releases that hold.
        Step& again = new_step(Step::Action::kAcquire, name);
        again.acquire_timeout_ms = 0;
        push(again);
        Step& inner = new_step(Step::Action::kWork, name);
        inner.work_ms = rng.uniform(0, ttl / 4);
        push(inner);
        push(new_step(Step::Action::kRelease, name));
        words.insert("nested acquire");
      }
      // A server fault comes after the acquire, before the work: while the holder is inside.
      const int spread = nodes && cycle.several ? kMajority : 1;
      if (cycle.fault == ExerciseFault::kRestart) {
        const std::vector<std::string> hit = servers_for(true, spread);
        for (const std::string& server : hit) {
          push(new_server_step(server, kill));
          push(new_server_step(server, restart));
          server_faults = true;
        }
        if (!hit.empty()) note(aimed(ExerciseFault::kRestart, hit.size()));
      } else if (cycle.fault == ExerciseFault::kClockJump) {
        const std::vector<std::string> hit = servers_for(false, spread);
        const std::int64_t jump_ms = rng.uniform(ttl, 3 * ttl);
        for (const std::string& server : hit) push(new_server_step(server, jump(jump_ms)));
        server_faults = true;
        shifts_clock = true;
        note(aimed(ExerciseFault::kClockJump, hit.size()));
      } else if (fails_over) {
        cluster_fault_drawn = true;
        std::int64_t how = rng.uniform(0, 2);
        // p1 is killed once per schedule, as every node is (`killed`): a restart drawn for another
        // cycle may have taken it, and the two kills' steps interleaved failed ("p1 is already
        // down": 38 of 223,353 schedules of hash_reentrant with every fault could not run); a
        // failover then comes by CLUSTER FAILOVER TAKEOVER instead, and a later restart finds p1
        // taken.
        if (how == 0 && !killed.insert(kClusterLockPrimary).second) how = 1;
        if (how == 0) {
          // Killed: the cluster elects r1 (a second or so later), and p1 comes back its replica.
          push(new_server_step(kClusterLockPrimary, kill));
          push(new_server_step("", elected));
          push(new_server_step(kClusterLockPrimary, restart));
          note("failover (p1 killed, r1 elected)");
        } else {
          push(new_server_step(kClusterLockReplica, how == 1 ? takeover : force));
          note(how == 1 ? "failover (CLUSTER FAILOVER TAKEOVER)"
                        : "failover (CLUSTER FAILOVER FORCE)");
        }
      } else if (cycle.fault == ExerciseFault::kSlotMove && !cluster_fault_drawn) {
        cluster_fault_drawn = true;
        Step& move = new_server_step(kClusterLockPrimary, migrate);
        move.work_ms = rng.uniform(1, ttl);  // migrating: ASK for keys p1 no longer has
        push(move);
        note("slot_move");
      } else if (cycle.fault == ExerciseFault::kNodeDown) {
        // Several: two nodes; one: a node; never more than a minority down for good in all (with
        // a majority down nobody can take the lock or free it: a liveness limit, nothing more).
        const int room = kNodes - kMajority - nodes_down;
        const std::vector<std::string> hit =
            room > 0 ? servers_for(true, std::min(room, cycle.several ? 2 : 1))
                     : std::vector<std::string>{};
        nodes_down += static_cast<int>(hit.size());
        for (const std::string& server : hit) push(new_server_step(server, kill));
        if (!hit.empty()) note(hit.size() > 1 ? "node_down on two nodes" : "node_down");
      }
      push(middle);
      if (cycle.fault == ExerciseFault::kCrash) {
        note("crash");
        push(new_step(Step::Action::kCrash, name));
        break;
      }
      push(release);
      if (dies) break;
    }
  }
  // Interleaved in a drawn order, each client's steps in its own; an acquire marked to queue
  // behind waits until the lock is held.
  Exercise& exercise = cluster ? on_cluster : server_faults ? with_servers : plain;
  std::vector<Step>& steps = exercise.scenario.steps;
  steps.clear();
  for (Step& step : stream) {
    const std::size_t n = steps.size();
    if (step.id.empty()) set_numbered(step.id, "step-", n + 1, "");
    set_numbered(step.json_path, "$.steps[", n, "]");
    steps.push_back(std::move(step));
  }
  std::vector<std::size_t> next(client_queues.size(), 0);
  std::vector<std::size_t> ready;
  bool queued_behind = false;
  const auto queued = [&](std::size_t c, std::size_t i) -> Step& {
    return drawn[client_queues[c][i].step];
  };
  while (true) {
    ready.clear();
    for (std::size_t c = 0; c < client_queues.size(); ++c) {
      if (next[c] < client_queues[c].size()) ready.push_back(c);
    }
    if (ready.empty()) break;
    const std::size_t c = ready[static_cast<std::size_t>(
        rng.uniform(0, static_cast<std::int64_t>(ready.size()) - 1))];
    // A server fault follows its holder's acquire at once: it is aimed at that holder's window,
    // which another client's step in between (an acquire that waits for the lock) would delay.
    const bool after_acquire = queued(c, next[c]).action == Step::Action::kAcquire;
    do {
      const std::size_t i = next[c]++;
      Step& step = queued(c, i);
      if (client_queues[c][i].behind) {
        // Asked while the lock is held (by whoever holds it: a wait for one client could wait for
        // a client that waits for the holder, whose release comes later), so a queue queues it.
        step.wait_for.push_back(
            Condition{Condition::Kind::kKeyPresent, exercise.scenario.lock.key, 0});
        step.wait_max_ms = 2 * ttl;
        queued_behind = true;
      }
      const std::size_t n = steps.size();
      if (step.id != kClusterCutId) set_numbered(step.id, "step-", n + 1, "");
      set_numbered(step.json_path, "$.steps[", n, "]");
      steps.push_back(std::move(step));
    } while (after_acquire && next[c] < client_queues[c].size() &&
             queued(c, next[c]).action == Step::Action::kServerFault);
  }
  if (queued_behind) words.insert("waiter queued while held");

  Scenario& scenario = exercise.scenario;
  scenario.name = "explore-" + std::to_string(seed);
  scenario.clients.clear();
  for (int c = 0; c < clients; ++c) scenario.clients.push_back(exercise_client_name(c));
  if (scenario.topology) scenario.topology->clock_shift = shifts_clock;
  scenario.lock.permits = permits;
  scenario.client_clock_offset_ms = std::move(clock_offsets);
  exercise.seed = seed;
  exercise.any_fault = any_fault;
  exercise.faults.assign(words.begin(), words.end());
  return exercise;
}

Json ExerciseDrawer::document(const Exercise& exercise) const {
  const State& s = *state_;
  const Scenario& scenario = exercise.scenario;
  Json document = s.header(scenario.topology.has_value(),
                           scenario.topology && scenario.topology->cluster.has_value());
  document["name"] = scenario.name;
  std::string faults;
  for (const std::string& word : exercise.faults) faults += (faults.empty() ? "" : ", ") + word;
  document["description"] = "A schedule drawn by locksim explore from seed " +
                            std::to_string(exercise.seed) + ": " +
                            std::to_string(scenario.clients.size()) +
                            " clients, their cycles interleaved; " + faults + ".";
  document["clients"] = scenario.clients;
  if (scenario.lock.permits != 1) document["lock"]["permits"] = scenario.lock.permits;
  for (const auto& [name, offset_ms] : scenario.client_clock_offset_ms) {
    document["client_clocks"][name] = {{"offset_ms", offset_ms}};
  }
  Json steps = scenario_internal::resolved_steps(scenario.steps, scenario.resource);
  for (Json& step : steps) {
    // What the parser fills in by itself is left out, so the scenario reads as a person wrote it
    // (only a reader stream's acquires are referred to, by the ids they keep).
    if (step.value("id", std::string()).rfind("step-", 0) == 0) step.erase("id");
    if (step.value("unsaved_token", true) == false) step.erase("unsaved_token");
  }
  document["steps"] = std::move(steps);
  return document;
}

Json draw_exercise(const LockVariant& variant, const ExerciseOptions& options, std::uint64_t seed) {
  ExerciseDrawer drawer(variant, options);
  return drawer.document(drawer.draw(seed));
}

std::vector<std::string> faults_in(const Json& document) {
  std::set<std::string> found;
  const std::int64_t ttl = document.at("lock").at("ttl_ms").get<std::int64_t>();
  if (document.contains("client_clocks")) found.insert("client_clock");
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
    if (action == "cluster_failover" || (action == "failover" && document.contains("topology") &&
                                         document.at("topology").is_object())) {
      found.insert("failover");
    }
    if (action == "migrate_slot") found.insert("slot_move");
    if (action == "clock_jump") found.insert("clock_jump");
    // A topology is a name ("redlock_5") or an object ({"cluster": ...}).
    const auto topology = document.find("topology");
    const bool redlock = topology != document.end() && topology->is_string() &&
                         topology->get<std::string>() == "redlock_5";
    if (action == "kill_server" && redlock) {
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
