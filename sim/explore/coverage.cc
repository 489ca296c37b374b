// coverage.cc: a schedule's coverage, read from its history in one pass, and the words of its
// items.
#include "sim/explore/coverage.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <limits>

#include "sim/core/assert.h"
#include "sim/explore/schedule.h"

namespace locksim {
namespace {

constexpr Nanos kCoverageNever = std::numeric_limits<Nanos>::max();
constexpr std::size_t kCoverageInlineClients = 8;
static_assert(static_cast<std::size_t>(FaultKind::kServerPartition) + 2 <= kCoverageKinds,
              "every FaultKind, and crash, needs a kind slot of its own");

constexpr std::array<std::string_view, 4> kCoveragePlaceWords = {"waiting", "inside", "releasing",
                                                                 "outside"};
constexpr std::array<std::string_view, 4> kCoverageRaceWords = {
    "acquire/acquire", "release/acquire", "extend/acquire", "release/expiry"};

// CoverageOp: an operation whose interval (invoke to completion) can race another client's.
enum class CoverageOp : std::uint8_t { kAcquire, kRelease, kExtend };

// CoverageClient: where one client of the history stands while it is read.
struct CoverageClient {
  CoveragePlace place = CoveragePlace::kOutside;
  // The operations in flight, each on its key.
  bool acquiring = false;
  bool releasing = false;
  bool extending = false;
  KeyId acquire_key = 0;
  KeyId release_key = 0;
  KeyId extend_key = 0;
  Nanos acquire_invoke_ns = 0;
  Nanos release_invoke_ns = 0;
  Nanos extend_invoke_ns = 0;
  std::int32_t acquire_ttl_ms = -1;
  std::int32_t extend_ttl_ms = -1;
  // The lease of the last grant: it ran out after lease_lower_ns and by lease_upper_ns.
  Nanos lease_lower_ns = kCoverageNever;
  Nanos lease_upper_ns = kCoverageNever;
  // The scenario step of the acquire or release in flight (-1: none, or not found), and where the
  // search for the next one starts: a client's calls run its steps in order.
  int call_step = -1;
  std::size_t step_cursor = 0;
  // A lost reply or a delay armed outside a call: it strikes the client's next call.
  bool armed = false;
  FaultKind armed_kind = FaultKind::kLoseReply;
};

// CoverageReader: the one pass over a history.
class CoverageReader {
 public:
  CoverageReader(const Scenario& scenario, const History& history,
                 std::span<const LockVariant::CheckpointSite> checkpoints,
                 std::span<CoverageClient> clients)
      : scenario_(scenario), history_(history), checkpoints_(checkpoints), clients_(clients) {}

  Coverage read() {
    for (const Event& event : history_.events) {
      if (event.client < 0 || static_cast<std::size_t>(event.client) >= clients_.size()) continue;
      switch (event.f) {
        case Op::kAcquire:
          on_acquire(event);
          break;
        case Op::kRelease:
          on_release(event);
          break;
        case Op::kExtend:
          on_extend(event);
          break;
        case Op::kCrash:
          on_crash(event);
          break;
        case Op::kFault:
          on_fault(event);
          break;
        default:
          break;
      }
    }
    // A release the history ends in ran until its last event.
    const Nanos last_ns = history_.events.empty() ? 0 : history_.events.back().time_ns;
    for (CoverageClient& c : clients_) {
      if (c.releasing) release_ended(c, last_ns);
      disarm(c);
    }
    return covered_;
  }

 private:
  CoverageClient& client(int index) { return clients_[static_cast<std::size_t>(index)]; }

  // raced: an operation `op` of `self` on `key` was invoked: every other client's operation in
  // flight on that key overlaps it.
  void raced(int self, CoverageOp op, KeyId key) {
    for (std::size_t i = 0; i < clients_.size(); ++i) {
      if (static_cast<int>(i) == self) continue;
      const CoverageClient& other = clients_[i];
      if (other.acquiring && other.acquire_key == key) pair(op, CoverageOp::kAcquire);
      if (other.releasing && other.release_key == key) pair(op, CoverageOp::kRelease);
      if (other.extending && other.extend_key == key) pair(op, CoverageOp::kExtend);
    }
  }
  void pair(CoverageOp a, CoverageOp b) {
    if (a == CoverageOp::kAcquire && b == CoverageOp::kAcquire) {
      covered_.add(kAcquireAcquire);
    } else if (a == CoverageOp::kAcquire || b == CoverageOp::kAcquire) {
      const CoverageOp other = a == CoverageOp::kAcquire ? b : a;
      covered_.add(other == CoverageOp::kRelease ? kReleaseAcquire : kExtendAcquire);
    }
  }

  // next_step: the first step of the client's from its cursor on that does `action` (-1: none).
  int next_step(int index, Step::Action action) {
    CoverageClient& c = client(index);
    const std::string& name = history_.clients[static_cast<std::size_t>(index)];
    const std::vector<Step>& steps = scenario_.steps;
    for (std::size_t j = c.step_cursor; j < steps.size(); ++j) {
      if (steps[j].action == action && steps[j].client == name) {
        c.step_cursor = j + 1;
        return static_cast<int>(j);
      }
    }
    return -1;
  }

  void on_acquire(const Event& event) {
    CoverageClient& c = client(event.client);
    if (event.type == EventType::kInvoke) {
      raced(event.client, CoverageOp::kAcquire, event.key);
      c.acquiring = true;
      c.acquire_key = event.key;
      c.acquire_invoke_ns = event.time_ns;
      c.acquire_ttl_ms = event.ttl_ms;
      c.place = CoveragePlace::kWaiting;
      c.call_step = next_step(event.client, Step::Action::kAcquire);
      disarm(c);
      return;
    }
    c.acquiring = false;
    if (event.type == EventType::kFail && event.error == ErrorKind::kCrashed) {
      return;  // it dies waiting, at a checkpoint: its crash comes next
    }
    c.call_step = -1;
    if (event.type != EventType::kOk) {
      c.place = CoveragePlace::kOutside;
      return;
    }
    c.place = CoveragePlace::kInside;
    const std::int32_t ttl_ms = event.ttl_ms >= 0 ? event.ttl_ms : c.acquire_ttl_ms;
    const AcquireFacts& facts = event.acquire();
    if (facts.validity_ms >= 0) {
      // A lock that promises less than its TTL (Redlock) is held to its promise, from the reply,
      // as the checker holds it.
      c.lease_lower_ns = c.lease_upper_ns = event.time_ns + ms_to_ns(facts.validity_ms);
    } else if (ttl_ms >= 0) {
      const Nanos sent_ns = facts.sent_ns >= 0 ? facts.sent_ns : c.acquire_invoke_ns;
      c.lease_lower_ns = sent_ns + ms_to_ns(ttl_ms);
      c.lease_upper_ns = event.time_ns + ms_to_ns(ttl_ms);
    } else {
      c.lease_lower_ns = c.lease_upper_ns = kCoverageNever;
    }
  }

  void on_release(const Event& event) {
    CoverageClient& c = client(event.client);
    if (event.type == EventType::kInvoke) {
      raced(event.client, CoverageOp::kRelease, event.key);
      c.releasing = true;
      c.release_key = event.key;
      c.release_invoke_ns = event.time_ns;
      c.place = CoveragePlace::kReleasing;
      c.call_step = next_step(event.client, Step::Action::kRelease);
      disarm(c);
      return;
    }
    if (c.releasing) release_ended(c, event.time_ns);
    c.call_step = -1;
    c.place = CoveragePlace::kOutside;
  }

  // release_ended: a release invoked before its lease could have run out, and ended after it
  // certainly had, held the expiry.
  void release_ended(CoverageClient& c, Nanos end_ns) {
    c.releasing = false;
    if (c.lease_lower_ns != kCoverageNever && c.release_invoke_ns < c.lease_lower_ns &&
        c.lease_upper_ns <= end_ns) {
      covered_.add(kReleaseExpiry);
    }
  }

  // on_extend: a renewal (on the client's renewal thread); an extension that took moves the lease:
  // the server set it at receipt, between the invoke and the ok.
  void on_extend(const Event& event) {
    CoverageClient& c = client(event.client);
    if (event.type == EventType::kInvoke) {
      raced(event.client, CoverageOp::kExtend, event.key);
      c.extending = true;
      c.extend_key = event.key;
      c.extend_invoke_ns = event.time_ns;
      c.extend_ttl_ms = event.ttl_ms;
      return;
    }
    const bool was_extending = c.extending;
    c.extending = false;
    const std::int32_t ttl_ms = event.ttl_ms >= 0 ? event.ttl_ms : c.extend_ttl_ms;
    if (event.type == EventType::kOk && was_extending && event.extend().extended >= 1 &&
        ttl_ms >= 0) {
      c.lease_lower_ns = c.extend_invoke_ns + ms_to_ns(ttl_ms);
      c.lease_upper_ns = event.time_ns + ms_to_ns(ttl_ms);
    }
  }

  void on_crash(const Event& event) {
    CoverageClient& c = client(event.client);
    disarm(c);
    strike(std::nullopt, c, &Step::crash_at);
    if (c.releasing) release_ended(c, event.time_ns);
    c.acquiring = c.releasing = c.extending = false;
    c.call_step = -1;
    c.place = CoveragePlace::kOutside;
  }

  void on_fault(const Event& event) {
    const FaultFacts& fault = event.fault();
    if (fault.phase == FaultPhase::kEnd || fault.kind == FaultKind::kDown) return;
    if (fault.target >= 0) {
      if (static_cast<std::size_t>(fault.target) >= clients_.size()) return;
      CoverageClient& victim = client(fault.target);
      const bool next_call = fault.kind == FaultKind::kLoseReply || fault.kind == FaultKind::kDelay;
      if (next_call && victim.place != CoveragePlace::kWaiting &&
          victim.place != CoveragePlace::kReleasing) {
        // Armed just before the call it is for (a renewing client first stops its renewal):
        // it strikes there.
        disarm(victim);
        victim.armed = true;
        victim.armed_kind = fault.kind;
        return;
      }
      strike(fault.kind, victim, nullptr);
      return;
    }
    if (fault.kind < FaultKind::kKillServer) {
      // A fault the client did to itself: a pause inside a call is a pause_at checkpoint's.
      strike(fault.kind, client(event.client),
             fault.kind == FaultKind::kPause ? &Step::pause_at : nullptr);
      return;
    }
    // A server fault strikes every client where it stands.
    bool engaged = false;
    for (const CoverageClient& c : clients_) {
      if (c.place == CoveragePlace::kOutside) continue;
      covered_.add(fault_item(fault.kind, c.place));
      engaged = true;
    }
    if (!engaged) covered_.add(fault_item(fault.kind, CoveragePlace::kOutside));
  }

  // disarm: a lost reply or a delay armed for the client's next call strikes where it now stands
  // (in the call just invoked; or where it was, if no call came).
  void disarm(CoverageClient& c) {
    if (!c.armed) return;
    c.armed = false;
    covered_.add(fault_item(c.armed_kind, c.place));
  }

  // strike: a fault of `kind` (nullopt: a crash) struck `c`: at the checkpoint its call's step
  // names in `point` (crash_at, pause_at), if the call is in flight, else at its place.
  void strike(std::optional<FaultKind> kind, const CoverageClient& c, std::string Step::*point) {
    const bool in_call = c.place == CoveragePlace::kWaiting || c.place == CoveragePlace::kReleasing;
    if (point != nullptr && in_call && c.call_step >= 0) {
      const std::string& name = scenario_.steps[static_cast<std::size_t>(c.call_step)].*point;
      for (std::size_t i = 0; !name.empty() && i < checkpoints_.size(); ++i) {
        if (checkpoints_[i].point == name && i < kCoverageCheckpoints) {
          covered_.add(checkpoint_item(kind, i));
          return;
        }
      }
    }
    covered_.add(fault_item(kind, c.place));
  }

  const Scenario& scenario_;
  const History& history_;
  std::span<const LockVariant::CheckpointSite> checkpoints_;
  std::span<CoverageClient> clients_;
  Coverage covered_;
};

std::size_t coverage_kind_slot(std::optional<FaultKind> kind) {
  return kind ? static_cast<std::size_t>(*kind) + 1 : 0;
}

}  // namespace

CoverageItem fault_item(std::optional<FaultKind> kind, CoveragePlace place) {
  return static_cast<CoverageItem>(coverage_kind_slot(kind) * kCoveragePlaces +
                                   static_cast<std::size_t>(place));
}

CoverageItem checkpoint_item(std::optional<FaultKind> kind, std::size_t point) {
  LOCKSIM_ASSERT(point < kCoverageCheckpoints);
  return static_cast<CoverageItem>(coverage_kind_slot(kind) * kCoveragePlaces + 4 + point);
}

Coverage schedule_coverage(const Scenario& scenario, const History& history,
                           std::span<const LockVariant::CheckpointSite> checkpoints) {
  std::array<CoverageClient, kCoverageInlineClients> inline_clients{};
  std::vector<CoverageClient> more_clients;
  std::span<CoverageClient> clients(inline_clients.data(), history.clients.size());
  if (history.clients.size() > inline_clients.size()) {
    more_clients.resize(history.clients.size());
    clients = more_clients;
  }
  return CoverageReader(scenario, history, checkpoints, clients).read();
}

Coverage schedule_coverage(const Scenario& scenario, const History& history,
                           const LockVariant& variant) {
  const std::vector<LockVariant::CheckpointSite> checkpoints = variant.checkpoints();
  return schedule_coverage(scenario, history, checkpoints);
}

Coverage coverage_menu(const LockVariant& variant, const std::set<ExerciseFault>& faults) {
  Coverage menu;
  const auto at = [&](std::optional<FaultKind> kind, std::initializer_list<CoveragePlace> places) {
    for (const CoveragePlace place : places) menu.add(fault_item(kind, place));
  };
  constexpr auto kWaiting = CoveragePlace::kWaiting;
  constexpr auto kInside = CoveragePlace::kInside;
  constexpr auto kReleasing = CoveragePlace::kReleasing;
  constexpr auto kOutside = CoveragePlace::kOutside;
  for (const ExerciseFault fault : faults) {
    switch (fault) {
      case ExerciseFault::kCrash:
        at(std::nullopt, {kInside, kOutside});
        break;
      case ExerciseFault::kCheckpoint: {
        const std::size_t points = std::min(variant.checkpoints().size(), kCoverageCheckpoints);
        for (std::size_t i = 0; i < points; ++i) {
          menu.add(checkpoint_item(std::nullopt, i));
          menu.add(checkpoint_item(FaultKind::kPause, i));
        }
        break;
      }
      case ExerciseFault::kPause:
        at(FaultKind::kPause, {kInside, kOutside});
        break;
      case ExerciseFault::kOverrun:
        break;  // long work, not a fault: it shows as the races it leads to
      case ExerciseFault::kLostReply:
        at(FaultKind::kLoseReply, {kWaiting, kReleasing});
        break;
      case ExerciseFault::kDelay:
        at(FaultKind::kDelay, {kWaiting, kReleasing});
        break;
      case ExerciseFault::kPartition:
        at(FaultKind::kPartition, {kInside, kOutside});
        break;
      case ExerciseFault::kRestart:
        at(FaultKind::kKillServer, {kWaiting, kInside, kReleasing, kOutside});
        at(FaultKind::kRestartServer, {kWaiting, kInside, kReleasing, kOutside});
        break;
      case ExerciseFault::kClockJump:
        at(FaultKind::kClockJump, {kWaiting, kInside, kReleasing, kOutside});
        break;
      case ExerciseFault::kNodeDown:
        if (variant.multi_server()) {
          at(FaultKind::kKillServer, {kWaiting, kInside, kReleasing, kOutside});
        }
        break;
      case ExerciseFault::kDeadWaiter:  // it tried once, was queued, and dies between tries
        if (variant.queues()) at(std::nullopt, {kOutside});
        break;
      case ExerciseFault::kCutWaiter:
        if (variant.queues()) at(FaultKind::kPartition, {kOutside});
        break;
      case ExerciseFault::kClientClock:  // recorded as the run starts, before anyone holds
        if (variant.semaphore() || variant.reads_client_clock()) {
          at(FaultKind::kClientClock, {kOutside});
        }
        break;
      case ExerciseFault::kFailover:  // p1 killed (then elected away), or a CLUSTER FAILOVER
        if (!variant.multi_server()) {
          at(FaultKind::kKillServer, {kWaiting, kInside, kReleasing, kOutside});
          at(FaultKind::kClusterFailover, {kWaiting, kInside, kReleasing, kOutside});
        }
        break;
      case ExerciseFault::kSlotMove:
        if (!variant.multi_server()) {
          at(FaultKind::kSlotMigration, {kWaiting, kInside, kReleasing, kOutside});
        }
        break;
    }
  }
  menu.add(kAcquireAcquire);
  menu.add(kReleaseAcquire);
  if (variant.renews()) menu.add(kExtendAcquire);
  if (variant.uses_ttl()) menu.add(kReleaseExpiry);
  return menu;
}

Coverage CoverageCounts::covered() const {
  Coverage covered;
  for (std::size_t i = 0; i < schedules.size() && i < kCoverageItems; ++i) {
    if (schedules[i] > 0) covered.add(static_cast<CoverageItem>(i));
  }
  return covered;
}

CoverageCounts coverage_counts_for(const ExploreTarget& target) {
  CoverageCounts counts;
  for (const LockVariant::CheckpointSite& site : target.variant->checkpoints()) {
    counts.points.emplace_back(site.point);
  }
  std::set<ExerciseFault> faults = target.exercise.faults;
  if (target.scenario) {
    // A given scenario: the menu faults its steps use ("crash at <point>": a checkpoint's).
    faults.clear();
    for (const std::string& word : faults_in(*target.scenario)) {
      const bool at_point = word.find(" at ") != std::string::npos;
      if (const auto fault = exercise_fault_from(word); fault) faults.insert(*fault);
      if (at_point) faults.insert(ExerciseFault::kCheckpoint);
    }
  }
  counts.menu = coverage_menu(*target.variant, faults);
  return counts;
}

std::string coverage_word(CoverageItem item, const std::vector<std::string>& points) {
  if (item >= kAcquireAcquire) {
    LOCKSIM_ASSERT(item < kCoverageItems);
    return std::string(kCoverageRaceWords[item - kAcquireAcquire]);
  }
  const std::size_t kind = item / kCoveragePlaces;
  const std::size_t place = item % kCoveragePlaces;
  std::string word(kind == 0 ? std::string_view("crash")
                             : traits(static_cast<FaultKind>(kind - 1)).word);
  word += " @ ";
  if (place < kCoveragePlaceWords.size()) {
    word += kCoveragePlaceWords[place];
  } else if (place - 4 < points.size()) {
    word += points[place - 4];
  } else {
    word += "checkpoint#" + std::to_string(place - 4);
  }
  return word;
}

std::optional<CoverageItem> coverage_item(std::string_view word, std::vector<std::string>& points) {
  for (std::size_t i = 0; i < kCoverageRaceWords.size(); ++i) {
    if (word == kCoverageRaceWords[i]) return static_cast<CoverageItem>(kAcquireAcquire + i);
  }
  const std::size_t at = word.find(" @ ");
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view kind_word = word.substr(0, at);
  const std::string_view place_word = word.substr(at + 3);
  std::optional<FaultKind> kind;
  if (kind_word != "crash") {
    kind = fault_kind(kind_word);
    if (!kind || *kind == FaultKind::kDown) return std::nullopt;
  }
  for (std::size_t p = 0; p < kCoveragePlaceWords.size(); ++p) {
    if (place_word == kCoveragePlaceWords[p]) {
      return fault_item(kind, static_cast<CoveragePlace>(p));
    }
  }
  if (place_word.empty() || place_word.find(' ') != std::string_view::npos) return std::nullopt;
  std::size_t point = 0;
  while (point < points.size() && points[point] != place_word) ++point;
  if (point >= kCoverageCheckpoints) return std::nullopt;
  if (point == points.size()) points.emplace_back(place_word);
  return checkpoint_item(kind, point);
}

}  // namespace locksim
