// check_read_write: what a read-write lock owes beyond exclusion (mutual_exclusion.cc lets read
// holds overlap each other): a writer is not starved by readers, and the deadlock of an upgrade.
//
// writer_starved: a writer that waited longer than the scenario's bound (check.writer_wait_ms),
// from its first busy answer, while readers got in after it had asked (their successful attempts
// sent after its first busy answer, and no server fault that forgets keys since it asked): the lock
// let readers barge past a waiting writer (reader preference), the lock's own. upgrade_deadlock: a
// holder of a read hold asked for the write lock and was refused until it gave up: the write lock
// waits for every read hold, the asker's own included (two readers that both upgrade wait on each
// other). Every read-write lock that does not upgrade has it: a limit of the kind.
#include <algorithm>
#include <string>
#include <vector>

#include "sim/checker/checkers.h"
#include "sim/checker/explain.h"

namespace locksim::checker_internal {

void check_read_write(const History& history, const KeyTimeline& timeline,
                      const CheckOptions& options, CheckResult& result) {
  if (!history.read_write) return;
  // When servers forgot their keys (server_faults_between's faults), read once: a wait may have
  // many readers after it, and a workload many waits.
  std::vector<Nanos> forgot;
  for (const Event& event : history.events) {
    if (event.f == Op::kFault && event.fault().server != 0 &&
        traits(event.fault().kind).forgets_key) {
      forgot.push_back(event.time_ns);
    }
  }
  // forgotten: a fault in (from, to].
  const auto forgotten = [&](Nanos from, Nanos to) {
    const auto after = std::upper_bound(forgot.begin(), forgot.end(), from);
    return after != forgot.end() && *after <= to;
  };
  for (const WriteWait& wait : timeline.write_waits) {
    if (wait.end_ns - wait.asked_ns <= options.writer_wait_ns) continue;
    std::vector<const WindowRecord*> barged;
    for (const WindowRecord& window : timeline.windows) {
      if (window.start_ns >= wait.end_ns) break;
      // A reader got in past the writer only if its successful attempt was sent after the
      // writer's first busy answer: one sent before may have been granted before the writer
      // asked, its reply coming later (rw_lock_fair seed 1670 of explore's reader streams).
      if (!window.read || window.client == wait.client || window.start_ns <= wait.asked_ns ||
          window.acquire_sent_ns <= wait.asked_ns) {
        continue;
      }
      // A server that forgot its keys after the writer asked (a restart without persistence, a
      // clock jump) forgot the writer's place with them: a reader let in after that was let in
      // by the fault, not past a waiting writer (the lock_lost limit, not the lock's own). From
      // the writer's invoke: an old primary still answers for a while after a failover, and the
      // place it kept is lost when it learns (rw_lock_fair seed 381466 of explore with three
      // faults on a Redis Cluster: C's first busy answer came from p1 just after r1 took over,
      // and A's read got in on r1, which never had C's place).
      if (forgotten(std::min(wait.invoke_ns, wait.asked_ns), window.start_ns)) continue;
      barged.push_back(&window);
    }
    if (barged.empty()) continue;
    const std::string who = client_name(history, wait.client);
    std::string readers;
    for (std::size_t i = 0; i < barged.size() && i < 4; ++i) {
      readers += (i == 0 ? "" : ", ") + client_name(history, barged[i]->client) + " at " +
                 format_ms(barged[i]->start_ns);
    }
    if (barged.size() > 4) readers += ", ...";
    result.findings.push_back(Finding{
        .kind = FindingKind::kDeadlock,
        .cause = "writer_starved",
        .key = timeline.key,
        .clients = {wait.client},
        .from_ns = wait.asked_ns,
        .to_ns = wait.end_ns,
        .amount = static_cast<std::int64_t>(barged.size()),
        .record = "",
        .words =
            who + " waited for the write lock of " + timeline.key + " from " +
            format_ms(wait.asked_ns) + " (its first busy answer) and " +
            (wait.granted ? "got it only at " : "gave up at ") + format_ms(wait.end_ns) + ", " +
            format_ms(wait.end_ns - wait.asked_ns) + ", longer than the scenario's " +
            format_ms(options.writer_wait_ns) + ", while readers got in " +
            std::to_string(barged.size()) + (barged.size() == 1 ? " time" : " times") +
            " after it had asked (" + readers + ")" +
            (barged.size() == 1 ? ": a reader was let in past the waiting writer, which waited on."
                                : ": a stream of readers starved the writer."),
    });
  }
  for (const UpgradeRefusal& refusal : timeline.upgrade_refusals) {
    const std::string who = client_name(history, refusal.client);
    result.findings.push_back(Finding{
        .kind = FindingKind::kDeadlock,
        .cause = "upgrade_deadlock",
        .key = timeline.key,
        .clients = {refusal.client},
        .from_ns = refusal.invoke_ns,
        .to_ns = refusal.fail_ns,
        .amount = 0,
        .record = "",
        .words = who + " asked for the write lock of " + timeline.key + " at " +
                 format_ms(refusal.invoke_ns) + " while holding a read hold (since " +
                 format_ms(refusal.held_since_ns) + ") and was refused until it gave up at " +
                 format_ms(refusal.fail_ns) + ": the write lock waits for every read hold, " + who +
                 "'s own included (an upgrade deadlock; a read hold is released before the "
                 "write lock is asked for).",
    });
  }
}

}  // namespace locksim::checker_internal
