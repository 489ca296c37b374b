// Liveness: the union of one key's possible-hold intervals, and for every failed acquire the
// longest stretch of its wait outside that union. A sparse table over the gaps of the union
// answers each failed acquire in O(1) after an O(n log n) build, however many holds its wait
// spans.
#include <algorithm>
#include <bit>
#include <optional>
#include <string>
#include <vector>

#include "sim/checker/checkers.h"
#include "sim/checker/explain.h"

namespace locksim::checker_internal {
namespace {

struct Interval {
  Nanos start_ns = 0;
  Nanos end_ns = 0;
};

// Stretch: an uncovered part of a wait.
struct Stretch {
  Nanos from_ns = 0;
  Nanos to_ns = 0;
  Nanos length() const { return to_ns - from_ns; }
};

// CoverIndex: the union of possible holds, and the longest uncovered stretch of any interval.
// For a semaphore of `permits` permits, a moment is covered while at least that many holds
// possibly stood: a waiter kept out while fewer held it was stuck.
class CoverIndex {
 public:
  CoverIndex(const std::vector<PossibleHold>& holds, int permits) {
    if (permits > 1) {
      cover_by_depth(holds, permits);
      build_gap_table();
      return;
    }
    std::vector<Interval> sorted;
    sorted.reserve(holds.size());
    for (const PossibleHold& hold : holds) sorted.push_back({hold.start_ns, hold.end_ns});
    std::sort(sorted.begin(), sorted.end(),
              [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; });
    for (const Interval& interval : sorted) {
      if (!union_.empty() && interval.start_ns <= union_.back().end_ns) {
        union_.back().end_ns = std::max(union_.back().end_ns, interval.end_ns);
      } else {
        union_.push_back(interval);
      }
    }
    build_gap_table();
  }

  // longest_uncovered: the longest part of [from_ns, to_ns] outside every possible hold (the
  // earliest one on a tie); zero length if it is covered throughout.
  Stretch longest_uncovered(Nanos from_ns, Nanos to_ns) const {
    // k: the first union interval that ends after from_ns.
    auto k_it = std::upper_bound(union_.begin(), union_.end(), from_ns,
                                 [](Nanos t, const Interval& i) { return t < i.end_ns; });
    if (k_it == union_.end() || k_it->start_ns >= to_ns) return {from_ns, to_ns};
    // j: the last union interval that starts before to_ns (j >= k).
    auto j_it = std::lower_bound(k_it, union_.end(), to_ns,
                                 [](const Interval& i, Nanos t) { return i.start_ns < t; }) -
                1;
    Stretch best{from_ns, std::max(from_ns, k_it->start_ns)};
    const auto k = static_cast<std::size_t>(k_it - union_.begin());
    const auto j = static_cast<std::size_t>(j_it - union_.begin());
    if (k < j) {
      // Gap g lies between union_[g] and union_[g + 1]: the full gaps here are k .. j - 1.
      const std::size_t g = longest_gap(k, j - 1);
      const Stretch inner{union_[g].end_ns, union_[g + 1].start_ns};
      if (inner.length() > best.length()) best = inner;
    }
    if (j_it->end_ns < to_ns && to_ns - j_it->end_ns > best.length()) {
      best = {j_it->end_ns, to_ns};
    }
    return best;
  }

 private:
  // cover_by_depth: the stretches in which at least `permits` holds stood (a start counts before
  // an end at the same instant, so holds that touch keep the stretch whole).
  void cover_by_depth(const std::vector<PossibleHold>& holds, int permits) {
    std::vector<std::pair<Nanos, int>> edges;
    edges.reserve(2 * holds.size());
    for (const PossibleHold& hold : holds) {
      edges.emplace_back(hold.start_ns, -1);  // -1 sorts first: a start
      edges.emplace_back(hold.end_ns, 1);
    }
    std::sort(edges.begin(), edges.end());
    int depth = 0;
    for (const auto& [t, edge] : edges) {
      const bool covered = depth >= permits;
      depth -= edge;
      if (!covered && depth >= permits) {
        if (!union_.empty() && t <= union_.back().end_ns) continue;  // it touches the last one
        union_.push_back({t, t});
      } else if (covered && depth < permits) {
        union_.back().end_ns = t;
      }
    }
  }

  Nanos gap_length(std::size_t g) const { return union_[g + 1].start_ns - union_[g].end_ns; }

  void build_gap_table() {
    if (union_.size() < 2) return;
    const std::size_t gaps = union_.size() - 1;
    table_.emplace_back(gaps);
    for (std::size_t g = 0; g < gaps; ++g) table_[0][g] = g;
    for (std::size_t level = 1; (std::size_t{1} << level) <= gaps; ++level) {
      const std::size_t half = std::size_t{1} << (level - 1);
      const std::size_t count = gaps - (std::size_t{1} << level) + 1;
      std::vector<std::size_t> row(count);
      for (std::size_t g = 0; g < count; ++g) {
        row[g] = better(table_[level - 1][g], table_[level - 1][g + half]);
      }
      table_.push_back(std::move(row));
    }
  }

  std::size_t better(std::size_t a, std::size_t b) const {
    return gap_length(b) > gap_length(a) ? b : a;
  }

  // longest_gap: the index of the longest gap among first..last (inclusive).
  std::size_t longest_gap(std::size_t first, std::size_t last) const {
    const auto level = static_cast<std::size_t>(std::bit_width(last - first + 1) - 1);
    return better(table_[level][first], table_[level][last + 1 - (std::size_t{1} << level)]);
  }

  std::vector<Interval> union_;
  std::vector<std::vector<std::size_t>> table_;  // table_[l][g]: longest of gaps g .. g + 2^l - 1
};

// why_stuck: the possible hold that ended last before the stretch began, in words.
std::string why_stuck(const History& history, const std::vector<PossibleHold>& by_end,
                      Nanos stuck_from_ns) {
  auto it = std::upper_bound(by_end.begin(), by_end.end(), stuck_from_ns,
                             [](Nanos t, const PossibleHold& h) { return t < h.end_ns; });
  if (it == by_end.begin()) return "nobody had possibly held it before";
  const PossibleHold& hold = *(it - 1);
  const std::string who = client_name(history, hold.client);
  const std::string at = format_ms(hold.completed_ns);
  // Still taken after the lease the history shows had ended: the history cannot tell which of
  // these it was, so it names them all (a blind test's lock set its key's TTL in seconds with the
  // lease's milliseconds, and a waiter was kept out for its whole wait).
  const auto stayed_taken = [&](const std::string& after) {
    return "; its lease (ttl " + std::to_string(hold.ttl_ms) + " ms) ran out by " +
           format_ms(hold.end_ns) +
           " at the latest, yet the lock stayed taken: its TTL was never set, was set longer "
           "than requested, or was refreshed after " +
           after;
  };
  switch (hold.how) {
    case HoldEnd::kCrash: {
      std::string text =
          who + " crashed at " + at + (hold.acquired ? " while holding it" : " during an acquire");
      if (hold.ttl_ms < 0) return text + " and its key has no TTL";
      return text + stayed_taken("the crash");
    }
    case HoldEnd::kReleased:
      return "the last holder, " + who + ", released it at " + at;
    case HoldEnd::kReleaseDidNotDelete:
      return who + "'s release at " + at + " did not delete the key";
    case HoldEnd::kIdle:
      return who + "'s release at " + at + " deleted nothing and its lease ran out at " +
             format_ms(hold.end_ns);
    case HoldEnd::kReleaseUnknown:
      return who + "'s release at " + at + " got no reply" +
             (hold.ttl_ms < 0 ? std::string(" and its key has no TTL") : stayed_taken("it"));
    case HoldEnd::kEndOfHistory:
      break;
  }
  return "the last possible holder was " + who;
}

// Wait: an acquire's wait, failed or granted late.
struct Wait {
  int client = -1;
  Nanos from_ns = 0;  // invoke
  Nanos to_ns = 0;    // gave up, or sent the attempt that succeeded
  bool granted = false;
  Nanos granted_ns = 0;
};

void find_deadlocks(const History& history, const KeyTimeline& timeline,
                    const CheckOptions& options, CheckResult& result) {
  std::vector<Wait> waits;
  for (const FailedAcquire& failed : timeline.failed_acquires) {
    if (failed.waited)
      waits.push_back(Wait{failed.client, failed.invoke_ns, failed.fail_ns, false, 0});
  }
  for (const GrantedAcquire& granted : timeline.granted_acquires) {
    if (granted.sent_ns - granted.invoke_ns < options.stuck_threshold_ns) continue;
    waits.push_back(Wait{granted.client, granted.invoke_ns, granted.sent_ns, true, granted.ok_ns});
  }
  if (waits.empty()) return;
  const CoverIndex cover(timeline.possible_holds, history.holders());
  std::vector<PossibleHold> by_end;  // built only when a deadlock needs explaining
  for (const Wait& wait : waits) {
    const Stretch stuck = cover.longest_uncovered(wait.from_ns, wait.to_ns);
    if (stuck.length() <= 0 || stuck.length() < options.stuck_threshold_ns) continue;
    if (by_end.empty()) {
      by_end = timeline.possible_holds;
      std::sort(by_end.begin(), by_end.end(),
                [](const PossibleHold& a, const PossibleHold& b) { return a.end_ns < b.end_ns; });
    }
    const std::string who = client_name(history, wait.client);
    const std::string outcome =
        wait.granted ? "got it only at " + format_ms(wait.granted_ns) + ", after waiting " +
                           format_ms(wait.granted_ns - wait.from_ns)
                     : "failed after " + format_ms(wait.to_ns - wait.from_ns);
    result.findings.push_back(Finding{
        .kind = FindingKind::kDeadlock,
        .cause = wait.granted ? "recovered_late" : "never_recovered",
        .key = timeline.key,
        .clients = {wait.client},
        .from_ns = stuck.from_ns,
        .to_ns = stuck.to_ns,
        .amount = 0,
        .record = "",
        .words = who + "'s acquire of " + timeline.key + " " + outcome + "; for " +
                 format_ms(stuck.length()) + " (from " + format_ms(stuck.from_ns) +
                 ") no live client held it (" + why_stuck(history, by_end, stuck.from_ns) + ").",
    });
  }
}

// asked_meanwhile: another client asked for the key during [from_ns, to_ns] (a queue's head, a
// writer's turn: a lock may keep a free key for it), or had given up asking, or died asking, no
// longer than `queue_timeout_ns` before it (a queue keeps a waiter's place that long).
bool asked_meanwhile(const KeyTimeline& timeline, int client, Nanos from_ns, Nanos to_ns,
                     Nanos queue_timeout_ns) {
  const auto overlaps = [&](int other, Nanos invoke_ns, Nanos end_ns) {
    return other != client && invoke_ns < to_ns && (end_ns < 0 || end_ns > from_ns);
  };
  for (const WindowRecord& w : timeline.windows) {
    if (overlaps(w.client, w.acquire_invoke_ns, w.acquire_ok_ns)) return true;
  }
  for (const GrantedAcquire& g : timeline.granted_acquires) {
    if (overlaps(g.client, g.invoke_ns, g.ok_ns)) return true;
  }
  for (const FailedAcquire& f : timeline.failed_acquires) {
    if (overlaps(f.client, f.invoke_ns, f.fail_ns + queue_timeout_ns)) return true;
  }
  for (const MaybeAcquire& m : timeline.maybe_acquires) {
    if (overlaps(m.client, m.invoke_ns, m.end_ns < 0 ? -1 : m.end_ns + queue_timeout_ns)) {
      return true;
    }
  }
  return false;
}

// find_refusals_while_free: a waiter answered busy while nobody possibly held the key: a release
// that said it freed the lock but left its key (a reentrant hash left at depth 0, a read-write
// lock's mode left set), held by nobody until its lease ran out. Known only where the attempts of
// one acquire are at least a fixed spacing apart (CheckOptions::attempt_spacing_ns): the attempt
// before the successful one, answered busy (an unreachable server is a fault, below), was sent no
// earlier than invoke + (attempts - 2) x spacing and answered no later than the successful one's
// send less a spacing. If no possible hold (fewer than a semaphore's permits) stood anywhere in
// that span, nobody else asked for the key then (a queue's head, a writer's turn, a waiter's
// place a queue keeps), and nothing happened before it that the possible holds may not account
// for (below), the server refused a free lock. A read-write lock's reader is left out: a
// writer's intent that outlives its wait keeps readers out by design.
constexpr Nanos kExpiryMargin = 2'000'000;

void find_refusals_while_free(const History& history, const KeyTimeline& timeline,
                              const CheckOptions& options, const std::vector<FaultWindow>& faults,
                              CheckResult& result) {
  const Nanos spacing = options.attempt_spacing_ns;
  // Several servers (Redlock, a replica): a holder's possible hold ends with the validity it was
  // promised, its keys live out their TTL, and a minority's key refuses nobody: not judged here.
  if (spacing <= 0 || history.servers.size() > 1) return;
  // Only before the first doubt: a fault, a crash, or a call whose outcome the history does not
  // know (a release lost on a reset link leaves a reentrant lock's count one too high for good; a
  // crash cuts a renewal short whose reply was on its way), any of which may leave a key that
  // nobody's possible hold accounts for.
  // (Found once, and only for a wait that was refused: most schedules have none.)
  const auto first_doubt = [&] {
    Nanos first_ns = kNever;
    for (const FaultWindow& f : faults) first_ns = std::min(first_ns, f.from_ns);
    for (const Event& e : history.events) {
      if (e.time_ns >= first_ns) break;
      const bool unknown_call =
          (e.f == Op::kAcquire || e.f == Op::kRelease || e.f == Op::kExtend) &&
          (e.type == EventType::kInfo || (e.type == EventType::kFail && e.f != Op::kAcquire));
      if (e.f == Op::kCrash || e.f == Op::kServerDied || unknown_call) first_ns = e.time_ns;
    }
    return first_ns;
  };
  std::optional<Nanos> first_doubt_ns;
  std::optional<CoverIndex> cover;
  std::vector<PossibleHold> by_end;
  for (const GrantedAcquire& g : timeline.granted_acquires) {
    if (g.attempts < 2 || g.read) continue;
    if (!first_doubt_ns) first_doubt_ns = first_doubt();
    if (g.sent_ns >= *first_doubt_ns) continue;
    const Nanos from_ns = g.invoke_ns + static_cast<Nanos>(g.attempts - 2) * spacing;
    const Nanos to_ns = g.sent_ns - spacing;
    if (to_ns <= from_ns) continue;
    if (!cover) cover.emplace(timeline.possible_holds, history.holders());
    // A key outlives its lease by up to a millisecond (the server's whole-millisecond expiry): a
    // possible hold must have ended that long before, with a millisecond more to spare.
    const Stretch free = cover->longest_uncovered(from_ns - kExpiryMargin, to_ns);
    if (free.from_ns != from_ns - kExpiryMargin || free.to_ns != to_ns) continue;
    if (asked_meanwhile(timeline, g.client, from_ns, to_ns, options.queue_timeout_ns)) continue;
    // The idle time: from the last possible hold's end, if the wait saw it, to that answer.
    const Stretch idle = cover->longest_uncovered(g.invoke_ns, to_ns);
    const Nanos idle_from_ns =
        idle.to_ns == to_ns && idle.from_ns < from_ns ? idle.from_ns : from_ns;
    Finding finding{
        .kind = FindingKind::kIdleHold,
        .cause = "refused_while_free",
        .key = timeline.key,
        .clients = {g.client},
        .from_ns = idle_from_ns,
        .to_ns = to_ns,
        .amount = g.attempts,
        .record = "",
        .words = "",
    };
    if (options.words) {
      if (by_end.empty()) {
        by_end = timeline.possible_holds;
        std::sort(by_end.begin(), by_end.end(),
                  [](const PossibleHold& a, const PossibleHold& b) { return a.end_ns < b.end_ns; });
      }
      finding.words =
          client_name(history, g.client) + "'s acquire of " + timeline.key + " was answered busy " +
          std::to_string(g.attempts - 1) + " time(s) and got it only at " + format_ms(g.ok_ns) +
          "; its last busy answer came between " + format_ms(from_ns) + " and " + format_ms(to_ns) +
          ", while no client held it (" + why_stuck(history, by_end, from_ns) +
          "): the lock refused a free key, held by nobody who knows it.";
    }
    result.findings.push_back(std::move(finding));
  }
}

void find_recoveries(const History& history, const KeyTimeline& timeline, bool words,
                     CheckResult& result) {
  const std::vector<WindowRecord>& windows = timeline.windows;
  for (const CrashInside& crash : timeline.crashes_inside) {
    auto next = std::upper_bound(windows.begin(), windows.end(), crash.crash_ns,
                                 [](Nanos t, const WindowRecord& w) { return t < w.start_ns; });
    while (next != windows.end() && next->client == crash.client) ++next;
    Finding recovery;
    recovery.kind = FindingKind::kRecovery;
    recovery.key = timeline.key;
    recovery.clients = {crash.client};
    recovery.from_ns = crash.crash_ns;
    if (next != windows.end()) {
      recovery.clients.push_back(next->client);
      recovery.to_ns = next->start_ns;
    }
    if (!words) {
      result.findings.push_back(std::move(recovery));
      continue;
    }
    const std::string who = client_name(history, crash.client);
    std::string text = who + " crashed inside at " + format_ms(crash.crash_ns) + "; ";
    if (next == windows.end()) {
      text += "nobody acquired " + timeline.key + " afterwards";
    } else {
      text += timeline.key + " was obtainable again at " + format_ms(next->start_ns) +
              " (recovery " + format_ms(next->start_ns - crash.crash_ns) + ", " +
              client_name(history, next->client) + " acquired it)";
    }
    if (crash.ttl_ms >= 0 && crash.lease_end_ns != kNever) {
      text += "; " + who + "'s lease (ttl " + std::to_string(crash.ttl_ms) + " ms";
      if (crash.renewed_ns >= 0) text += ", last renewed at " + format_ms(crash.renewed_ns);
      text += ") ran out by " + format_ms(crash.lease_end_ns);
    } else if (crash.ttl_ms < 0) {
      text += "; its key has no TTL";
    }
    recovery.words = std::move(text) + ".";
    result.findings.push_back(std::move(recovery));
  }
}

}  // namespace

void check_liveness(const History& history, const KeyTimeline& timeline,
                    const CheckOptions& options, CheckResult& result) {
  find_deadlocks(history, timeline, options, result);
  find_refusals_while_free(history, timeline, options, result.faults, result);
  find_recoveries(history, timeline, options.words, result);
}

}  // namespace locksim::checker_internal
