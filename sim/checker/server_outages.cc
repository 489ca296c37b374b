// Server outages: liveness across servers. A server fault opens an outage for the lock's users;
// it ends at the next successful acquire after it. The words say what failed in between.
#include <string>

#include "sim/checker/checkers.h"
#include "sim/checker/explain.h"

namespace locksim::checker_internal {

void check_server_outages(const History& history, CheckResult& result) {
  const std::vector<Event>& events = history.events;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const Event& fault_event = events[i];
    if (fault_event.f != Op::kFault || fault_event.fault().server == 0) continue;
    const FaultKind kind = fault_event.fault().kind;
    // A window opens the outage at its start (its end is not another outage), an instant at once.
    const bool opens = traits(kind).opens_outage &&
                       (!traits(kind).window || fault_event.fault().phase == FaultPhase::kStart);
    if (!opens) continue;
    const std::string server(history.str(fault_event.fault().server));
    const std::string what = kind == FaultKind::kKillServer        ? server + " killed"
                             : kind == FaultKind::kPauseServer     ? server + " paused"
                             : kind == FaultKind::kFailover        ? "the failover to " + server
                             : kind == FaultKind::kClusterFailover ? "CLUSTER FAILOVER to " + server
                             : kind == FaultKind::kServerPartition
                                 ? server + " cut off from its cluster"
                                 : server + " promoted";
    std::int64_t failed = 0;
    const Event* granted = nullptr;
    for (std::size_t j = i + 1; j < events.size() && granted == nullptr; ++j) {
      const Event& e = events[j];
      if (e.f != Op::kAcquire) continue;
      if (e.type == EventType::kOk) granted = &e;
      if (e.type == EventType::kFail || e.type == EventType::kInfo) ++failed;
    }
    std::string words = what + " at " + format_ms(fault_event.time_ns) + "; ";
    if (granted != nullptr) {
      words += "the lock was next granted at " + format_ms(granted->time_ns) + " (to " +
               client_name(history, granted->client) + "), " +
               format_ms(granted->time_ns - fault_event.time_ns) + " later";
    } else {
      words += "the lock was not granted again before the run ended";
    }
    if (failed > 0) {
      words += "; " + std::to_string(failed) + " acquire(s) failed or gave up meanwhile";
    }
    result.findings.push_back(Finding{.kind = FindingKind::kServerOutage,
                                      .cause = what,
                                      .key = "",
                                      .clients = {},
                                      .from_ns = fault_event.time_ns,
                                      .to_ns = granted != nullptr ? granted->time_ns : -1,
                                      .amount = failed,
                                      .record = "",
                                      .words = words + "."});
  }
}

}  // namespace locksim::checker_internal
