#include "sim/report/summary.h"

#include <cstdio>
#include <sstream>

namespace locksim {
namespace {

std::string ms(Nanos ns) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f ms", ns_to_ms(ns));
  return buffer;
}

std::string findings_cell(const CheckResult& r) {
  std::string cell;
  auto add = [&cell](const std::string& text) { cell += (cell.empty() ? "" : ", ") + text; };
  if (!r.violations.empty()) add(std::to_string(r.violations.size()) + " overlap(s)");
  if (!r.stale_releases.empty()) add(std::to_string(r.stale_releases.size()) + " stale release(s)");
  if (!r.deadlocks.empty()) add(std::to_string(r.deadlocks.size()) + " deadlock(s)");
  for (const Recovery& rec : r.recoveries) {
    add(rec.recovered_ns >= 0 ? "recovered after " + ms(rec.recovered_ns - rec.crash_ns)
                              : "never recovered");
  }
  if (!r.indeterminate.empty()) add(std::to_string(r.indeterminate.size()) + " indeterminate");
  for (const IdleHold& i : r.idle_holds) add("idle " + ms(i.until_ns - i.from_ns));
  for (const ResourceFinding& f : r.resource_findings) {
    add(f.kind + (f.amount > 0 ? " " + std::to_string(f.amount) : std::string()));
  }
  return cell.empty() ? "none" : cell;
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
    }
    for (const MutexViolation& v : r.violations) {
      out << "- **Mutual exclusion violated** (" << v.cause << "): " << v.explanation << "\n";
    }
    for (const StaleRelease& s : r.stale_releases)
      out << "- **Stale release**: " << s.explanation << "\n";
    for (const Deadlock& d : r.deadlocks) out << "- **Deadlock**: " << d.explanation << "\n";
    for (const Recovery& rec : r.recoveries) out << "- Recovery: " << rec.explanation << "\n";
    for (const Indeterminate& i : r.indeterminate) out << "- Unknown: " << i.explanation << "\n";
    for (const IdleHold& i : r.idle_holds) out << "- Idle hold: " << i.explanation << "\n";
    for (const ResourceFinding& f : r.resource_findings) {
      out << "- **Resource corrupted** (" << f.kind << "): " << f.explanation << "\n";
    }
    if (scenario.resource.kind != ResourceConfig::Kind::kNone && r.resource_findings.empty()) {
      out << "- Resource `" << scenario.resource.name
          << "` intact: no lost update, oversell or duplicate.\n";
    }
    const bool loses_locks = scenario.workload && scenario.workload->lose_probability > 0;
    if (loses_locks && !r.violations.empty()) {
      out << "- " << r.violations_outside_faults << " of " << r.violations.size()
          << " violation(s) began outside a faulted window (a window where the holder was made to"
             " lose its lock).\n";
    }
    // Only worth a line when naive log timestamps would tell a different story.
    if (r.naive_timestamp_overlaps > static_cast<std::int64_t>(r.violations.size())) {
      out << "- Log-timestamp check (Doc D): judged from naive timestamps (before sending the "
             "acquire, after the release returned) this run would show "
          << r.naive_timestamp_overlaps << " overlap(s); the conservative history shows "
          << r.violations.size() << ".\n";
    }
    const CheckStats& s = r.stats;
    out << "- Numbers: " << s.acquires_ok << " acquires ok, " << s.acquires_failed << " failed, "
        << s.acquires_indeterminate << " indeterminate; " << s.releases_ok
        << " releases deleted a key, " << s.releases_refused << " deleted nothing; " << s.crashes
        << " crash(es); acquire latency p50 " << ms(s.acquire_latency_p50_ns) << ", p99 "
        << ms(s.acquire_latency_p99_ns) << ", max " << ms(s.acquire_latency_max_ns) << "; "
        << s.holds_in_violation << " of " << s.holds << " holds in a violation";
    if (s.extends_ok + s.extends_failed > 0) {
      out << "; " << s.extends_ok << " renewals ok, " << s.extends_failed << " failed";
    }
    out << "; run " << ms(s.duration_ns) << ".\n";
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
