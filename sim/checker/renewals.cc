// Stolen renewals: an extension is for the extender's own lease. One that succeeds while another
// client, which acquired after the extender, is inside has prolonged that client's lock: a renewal
// that does not check the owner (or a renewal racing the release, redisson#7272). It harms nobody
// by itself (the overlap, if any, is a violation of its own), so it is a finding without a
// verdict; scenarios assert it with "stolen_renewal" in their expectation.
#include <string>

#include "sim/checker/checkers.h"
#include "sim/checker/explain.h"

namespace locksim::checker_internal {

void check_renewals(const History& history, const KeyTimeline& timeline, CheckResult& result) {
  for (const StolenExtend& stolen : timeline.stolen_extends) {
    const std::string who = client_name(history, stolen.client);
    const std::string holder = client_name(history, stolen.holder);
    result.findings.push_back(Finding{
        .kind = FindingKind::kStolenRenewal,
        .cause = "",
        .key = timeline.key,
        .clients = {stolen.client, stolen.holder},
        .from_ns = stolen.invoke_ns,
        .to_ns = stolen.ok_ns,
        .amount = 0,
        .record = "",
        .words = who + "'s renewal of " + timeline.key + " at " + format_ms(stolen.invoke_ns) +
                 " succeeded while " + holder + " held it (since " +
                 format_ms(stolen.holder_since_ns) + ", after " + who +
                 "'s own lease had ended): it extended " + holder + "'s lock, not " + who + "'s.",
    });
  }
}

}  // namespace locksim::checker_internal
