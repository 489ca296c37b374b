#include "sim/report/summary.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "sim/report/findings.h"

namespace locksim {
namespace {

std::string ms_text(Nanos ns) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f ms", ns_to_ms(ns));
  return buffer;
}

std::string findings_cell(const CheckResult& r) {
  std::string cell;
  auto add = [&cell](const std::string& text) { cell += (cell.empty() ? "" : ", ") + text; };
  for (const FindingKind kind : all_finding_kinds()) {
    const std::vector<const Finding*> found = r.of(kind);
    if (found.empty()) continue;
    switch (kind) {
      case FindingKind::kRecovery:
        for (const Finding* f : found) {
          add(f->to_ns >= 0 ? "recovered after " + ms_text(f->to_ns - f->from_ns)
                            : "never recovered");
        }
        break;
      case FindingKind::kIdleHold:
        for (const Finding* f : found) add("idle " + ms_text(f->to_ns - f->from_ns));
        break;
      case FindingKind::kServerOutage:
        for (const Finding* f : found) {
          add(f->to_ns >= 0
                  ? "granted again " + ms_text(f->to_ns - f->from_ns) + " after " + f->cause
                  : "not granted after " + f->cause);
        }
        break;
      case FindingKind::kResourceCorrupted:
        for (const Finding* f : found) {
          add(f->cause + (f->amount > 0 ? " " + std::to_string(f->amount) : std::string()));
        }
        break;
      case FindingKind::kLeaseOverrun: {
        Nanos longest = 0;
        for (const Finding* f : found) longest = std::max(longest, f->to_ns - f->from_ns);
        add(std::to_string(found.size()) + " lease overrun(s), longest " + ms_text(longest));
        break;
      }
      case FindingKind::kMutexViolation:
        add(std::to_string(found.size()) + " overlap(s)");
        break;
      case FindingKind::kStaleWrite:
        add("stale writes " + std::to_string(r.stats.stale_writes_accepted) + " accepted / " +
            std::to_string(r.stats.stale_writes_rejected) + " rejected");
        break;
      default:
        add(std::to_string(found.size()) + " " + std::string(to_string(kind)));
        break;
    }
  }
  return cell.empty() ? "none" : cell;
}

// latency_text: "p50 1.2 ms, p99 3.4 ms, max 9.1 ms over 412 acquisitions", stating a percentile
// only when there are enough samples for it.
std::string latency_text(const CheckStats& s) {
  if (s.latency_samples == 0) return "no successful acquisition";
  std::string text;
  if (s.acquire_latency_p50_ns >= 0) text += "p50 " + ms_text(s.acquire_latency_p50_ns) + ", ";
  if (s.acquire_latency_p99_ns >= 0) text += "p99 " + ms_text(s.acquire_latency_p99_ns) + ", ";
  return text + "max " + ms_text(s.acquire_latency_max_ns) + " over " +
         std::to_string(s.latency_samples) + " acquisition(s)";
}

}  // namespace

std::string summary_markdown(const Scenario& scenario, const std::vector<VariantRun>& runs,
                             const RunInfo& info) {
  std::ostringstream out;
  out << "# " << scenario.name << "\n\n";
  if (!scenario.description.empty()) out << scenario.description << "\n\n";
  out << "Source: "
      << (scenario.source.doc == "none" ? "no source document" : "Doc " + scenario.source.doc)
      << ". Claim: " << scenario.source.claim << "\n\n";
  out << "Run `" << info.run_id << "`, seed " << info.seed << ", redis " << info.redis_version
      << ", commit " << info.commit << ", " << info.started_at << ".\n\n";

  out << "| variant | expected | observed | as expected | findings |\n";
  out << "|---|---|---|---|---|\n";
  for (const VariantRun& run : runs) {
    std::string matches = run.matches ? "yes" : "**NO**";
    if (run.interrupted) matches = "interrupted";
    out << "| " << run.variant << " | " << describe_expectation(run.expected) << " | "
        << describe_observation(run.result) << " | " << matches << " | "
        << findings_cell(run.result) << " |\n";
  }

  for (const VariantRun& run : runs) {
    const CheckResult& r = run.result;
    out << "\n## " << run.variant << ": " << to_string(r.verdict) << "\n\n";
    if (run.interrupted) out << "The run was interrupted (Ctrl-C); the history is partial.\n\n";
    if (run.timed_out) out << "The run hit its time limit; the history is partial.\n\n";
    if (r.verdict == Verdict::kOk) {
      out << "No violation observed in this run (" << r.stats.acquires_ok
          << " successful acquisitions). That is evidence, not proof of safety.\n\n";
    } else if (r.verdict == Verdict::kError) {
      out << "The lock or the server did not work, so this run is not evidence either way.\n\n";
    } else if (r.verdict == Verdict::kUnknown) {
      out << "The run could not decide: see why below.\n\n";
    }
    if (!run.judged_why.empty()) {
      out << "Judged " << (run.judged == "own" ? "the lock's own bug" : "a limit every lease has")
          << ": " << run.judged_why << ".\n\n";
    }
    for (const FindingKind kind : all_finding_kinds()) {
      const std::vector<const Finding*> found = r.of(kind);
      for (std::size_t i = 0; i < found.size() && i < kMaxSummaryFindingsPerKind; ++i) {
        out << "- " << finding_line(*found[i]) << "\n";
      }
      if (found.size() > kMaxSummaryFindingsPerKind) {
        out << "- ... and " << found.size() - kMaxSummaryFindingsPerKind << " more "
            << to_string(kind) << " finding(s) (results.json lists up to " << kMaxFindingsPerKind
            << ")\n";
      }
    }
    if (scenario.resource.kind != ResourceConfig::Kind::kNone && r.resource_intact()) {
      out << "- Resource `" << scenario.resource.name
          << "` intact: no lost update, oversell or duplicate.\n";
    }
    const std::size_t violations = r.count(FindingKind::kMutexViolation);
    const bool loses_locks =
        scenario.workload && scenario.workload->draws(&DrawnFaultType::loses_lock);
    if (loses_locks && violations > 0) {
      out << "- " << r.violations_outside_faults << " of " << violations
          << " violation(s) began outside a faulted window (a window where the holder was made to"
             " lose its lock).\n";
    }
    // Only worth a line when naive log timestamps would tell a different story.
    if (r.naive_timestamp_overlaps > static_cast<std::int64_t>(violations)) {
      out << "- Log-timestamp check (Doc D): judged from naive timestamps (before sending the "
             "acquire, after the release returned) this run would show "
          << r.naive_timestamp_overlaps << " overlap(s); the conservative history shows "
          << violations << ".\n";
    }
    const CheckStats& s = r.stats;
    out << "- Numbers: " << s.acquires_ok << " acquires ok, " << s.acquires_failed << " failed, "
        << s.acquires_indeterminate << " indeterminate; " << s.releases_ok
        << " releases deleted a key, " << s.releases_refused << " deleted nothing; " << s.crashes
        << " crash(es); acquire latency " << latency_text(s) << "; " << s.holds_in_violation
        << " of " << s.holds << " holds in a violation";
    if (s.extends_ok + s.extends_failed > 0) {
      out << "; " << s.extends_ok << " renewals ok, " << s.extends_failed << " failed";
    }
    out << "; run " << ms_text(s.duration_ns) << ".\n";
    if (!run.notes.empty()) {
      out << "\nDriver notes:\n\n";
      for (const std::string& note : run.notes) out << "- " << note << "\n";
    }
    // Only files that exist are linked: the timeline is drawn later, by scripts/plot_timeline.py,
    // which then rewrites the end of this line into a link (keep the two in step).
    out << "\nFiles: [`" << run.variant << "/history.jsonl`](" << run.variant
        << "/history.jsonl), [`results.json`](" << run.variant << "/results.json), [`trace.json`]("
        << run.variant << "/trace.json) (open in ui.perfetto.dev), timeline: not drawn yet "
        << "(`/usr/bin/python3 scripts/plot_timeline.py` on this run directory draws `"
        << run.variant << "/timeline.png` and links it here)\n";
  }
  return out.str();
}

}  // namespace locksim
