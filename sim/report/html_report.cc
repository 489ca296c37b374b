#include "sim/report/html_report.h"

#include <cstdio>
#include <string_view>

#include "sim/report/findings.h"
#include "sim/report/html_text.h"
#include "sim/report/html_timeline.h"

namespace locksim {
namespace {

double ms(Nanos ns) { return static_cast<double>(ns) / 1e6; }

bool harness_error(const VariantRun& run) {
  return !run.matches && !run.interrupted &&
         (run.result.count(FindingKind::kServerLost) > 0 ||
          run.result.count(FindingKind::kServerDied) > 0);
}

std::string_view outcome_of(const VariantRun& run) {
  return html::outcome_word(run.matches, run.interrupted, harness_error(run));
}

std::string_view safety_of(const VariantRun& run) {
  return html::safety_of(to_string(run.result.verdict));
}

constexpr std::string_view kLegend =
    "<p class=\"legend\"><span><i class=\"owner-swatch\" style=\"background:#3d6fb6\"></i>"
    "owner of the key on the server (a colour per client; tick: its TTL ends)</span>"
    "<span><i style=\"background:#d9dde4\"></i>waiting to acquire</span>"
    "<span><i style=\"background:#4a7bd0\"></i>holding, inside the lease</span>"
    "<span><i style=\"background:#f08c2e\"></i>holding after the lease ran out</span>"
    "<span><i style=\"background:#d62828\"></i>two holders at once</span>"
    "<span><i style=\"border-left:2px solid #1d2330;width:2px\"></i>lease end</span>"
    "<span>calls (invoked to answered): <i style=\"background:#3c9d5a\"></i>ok "
    "<i style=\"background:#c2418f\"></i>refused or failed <i style=\"background:#a0a6b1\"></i>"
    "unknown</span>"
    "<span>&#9675; renewal (green) or refused (red)</span><span>&#10005; crash</span>"
    "<span><i style=\"background:#efe6f8;border-top:3px solid #7b3fb5\"></i>fault</span>"
    "<span>#n fencing number</span></p>\n";

void findings_list(std::string& out, const VariantRun& run) {
  out += "<ul class=\"findings\">\n";
  bool any = false;
  for (const FindingKind kind : all_finding_kinds()) {
    const std::vector<const Finding*> found = run.result.of(kind);
    for (std::size_t i = 0; i < found.size() && i < kMaxSummaryFindingsPerKind; ++i) {
      const Finding& f = *found[i];
      any = true;
      const bool zoomable = f.from_ns >= 0 && f.to_ns >= f.from_ns;
      out += "<li class=\"finding";
      if (finding_is_bad(kind)) out += " verdict";
      if (zoomable) out += " zoomable";
      out += "\" data-kind=\"" + std::string(to_string(kind)) + "\"";
      if (!f.cause.empty()) out += " data-cause=\"" + html::escape(f.cause) + "\"";
      if (zoomable) {
        // What the page's script highlights and zooms to (html_timeline.h).
        char times[80];
        std::snprintf(times, sizeof times, " data-from-ms=\"%.3f\" data-to-ms=\"%.3f\"",
                      ms(f.from_ns), ms(f.to_ns));
        std::string clients;
        for (const int c : f.clients) clients += (clients.empty() ? "" : " ") + std::to_string(c);
        out += " data-finding=\"" + std::to_string(&f - run.result.findings.data()) + "\"" + times +
               " data-clients=\"" + clients + "\" tabindex=\"0\" title=\"show it on the timeline\"";
      }
      out += "><b>" + html::escape(finding_label(kind)) + "</b>";
      if (!f.cause.empty()) out += "(" + html::escape(f.cause) + ") ";
      out += html::escape(f.words) + "</li>\n";
    }
    if (found.size() > kMaxSummaryFindingsPerKind) {
      out += "<li class=\"note\">... and " +
             std::to_string(found.size() - kMaxSummaryFindingsPerKind) + " more of " +
             html::escape(finding_label(kind)) + " (all of them: results.json)</li>\n";
    }
  }
  if (!any) out += "<li class=\"note\">nothing to report</li>\n";
  out += "</ul>\n";
}

void verdict_words(std::string& out, const VariantRun& run) {
  const CheckResult& r = run.result;
  if (run.interrupted) out += "<p>The run was interrupted; the history is partial.</p>\n";
  if (run.timed_out) out += "<p>The run hit its time limit; the history is partial.</p>\n";
  if (r.verdict == Verdict::kOk) {
    out += "<p>No violation observed in this run (" + std::to_string(r.stats.acquires_ok) +
           " successful acquisitions). That is evidence, not proof of safety.</p>\n";
  } else if (r.verdict == Verdict::kError) {
    out += "<p>The lock or the server did not work, so this run is not evidence either way.</p>\n";
  } else if (r.verdict == Verdict::kUnknown) {
    out += "<p>The run could not decide: see why below.</p>\n";
  }
  if (!run.judged_why.empty()) {
    out += "<p class=\"judged-why\">Judged " +
           std::string(run.judged == "own" ? "the lock's own bug" : "a limit every lease has") +
           ": " + html::escape(run.judged_why) + ".</p>\n";
  }
}

void stats_line(std::string& out, const CheckStats& s) {
  out += "<p class=\"note\">" + std::to_string(s.acquires_ok) + " acquisitions, " +
         std::to_string(s.acquires_failed) + " failed, " + std::to_string(s.holds) + " holds (" +
         std::to_string(s.holds_in_violation) + " in a violation), " +
         std::to_string(s.extends_ok) + " renewals, " + std::to_string(s.crashes) +
         " crashes over " + html::format_ms(ms(s.duration_ns));
  if (s.acquire_latency_max_ns >= 0) {
    out += "; acquire latency";
    if (s.acquire_latency_p50_ns >= 0)
      out += " p50 " + html::format_ms(ms(s.acquire_latency_p50_ns));
    if (s.acquire_latency_p99_ns >= 0)
      out += " p99 " + html::format_ms(ms(s.acquire_latency_p99_ns));
    out += " max " + html::format_ms(ms(s.acquire_latency_max_ns));
  }
  out += ".</p>\n";
}

}  // namespace

std::string run_report_html(const Scenario& scenario, const std::vector<VariantRun>& runs,
                            const RunInfo& info) {
  std::string out;
  html::open_page(out, scenario.name + " - locksim");
  out += "<p class=\"meta\"><a href=\"../../index.html\">all runs</a></p>\n";
  out += "<h1>" + html::escape(scenario.name) + "</h1>\n";
  if (!scenario.description.empty()) out += "<p>" + html::escape(scenario.description) + "</p>\n";
  out += "<p>" +
         html::escape(scenario.source.doc == "none" ? std::string("No source document")
                                                    : "Doc " + scenario.source.doc) +
         ". Claim: " + html::escape(scenario.source.claim) + "</p>\n";
  out += "<p class=\"meta\">Run " + html::escape(info.run_id) + ", seed " +
         std::to_string(info.seed) + ", redis " + html::escape(info.redis_version) + ", commit " +
         html::escape(info.commit) + ", " + html::escape(info.started_at) + ".</p>\n";

  out +=
      "<table class=\"outcomes\"><tr><th>variant</th><th>expected</th><th>observed</th>"
      "<th>as expected</th></tr>\n";
  for (const VariantRun& run : runs) {
    const std::string_view outcome = outcome_of(run);
    out += "<tr class=\"safety-" + std::string(safety_of(run)) + " outcome-" +
           std::string(outcome) + "\"><td><a href=\"#" + html::anchor("v", run.variant) + "\">" +
           html::escape(run.variant) + "</a></td><td>" +
           html::escape(describe_expectation(run.expected)) + "</td><td>" +
           html::escape(describe_observation(run.result)) +
           html::judged_mark(run.judged, run.judged_why) + "</td><td>" +
           html::expectation_mark(outcome) + " " +
           (outcome == "ok"         ? "yes"
            : outcome == "mismatch" ? "<b>NO</b>"
                                    : std::string(outcome)) +
           "</td></tr>\n";
  }
  out += "</table>\n";
  html::safety_legend(out);

  int index = 0;
  for (const VariantRun& run : runs) {
    const std::string_view outcome = outcome_of(run);
    const std::string_view safety = safety_of(run);
    out += "<section class=\"variant\" id=\"" + html::anchor("v", run.variant) +
           "\" data-variant=\"" + html::escape(run.variant) + "\" data-outcome=\"" +
           std::string(outcome) + "\" data-safety=\"" + std::string(safety) + "\">\n";
    out += "<h2>" + html::escape(run.variant) + ": " +
           html::escape(describe_observation(run.result)) + "<span class=\"badge safety-" +
           std::string(safety) + "\">" + std::string(safety) + "</span>" +
           html::judged_mark(run.judged, run.judged_why) + "<span class=\"badge\">" +
           html::expectation_mark(outcome) + " " +
           (outcome == "ok"         ? "as expected"
            : outcome == "mismatch" ? "expected " + html::escape(describe_expectation(run.expected))
                                    : std::string(outcome)) +
           "</span></h2>\n";
    verdict_words(out, run);
    const html::TimelineFigure timeline = html::timeline_figure(run, index++);
    out += timeline.html;
    out += kLegend;
    if (!timeline.left_out.empty()) {
      out += "<p class=\"note\">Not drawn:";
      for (std::size_t i = 0; i < timeline.left_out.size(); ++i) {
        out += (i == 0 ? " " : "; ") + html::escape(timeline.left_out[i]);
      }
      out += ".</p>\n";
    }
    out += "<h3>Findings</h3>\n";
    findings_list(out, run);
    if (!run.notes.empty()) {
      out += "<h3>Notes</h3>\n<ul>\n";
      for (const std::string& note : run.notes) out += "<li>" + html::escape(note) + "</li>\n";
      out += "</ul>\n";
    }
    stats_line(out, run.result.stats);
    const std::string dir = html::url_path(run.variant);
    out += "<nav class=\"files\">Files: <a href=\"" + dir + "/history.jsonl\">history.jsonl</a>" +
           "<a href=\"" + dir + "/results.json\">results.json</a><a href=\"" + dir +
           "/trace.json\">trace.json</a> (open in ui.perfetto.dev)<a href=\"summary.md\">"
           "summary.md</a><a href=\"scenario.json\">scenario.json</a></nav>\n";
    out += "</section>\n";
  }
  // The timelines' script, last: it finds every figure above.
  out += "<script>";
  out += html::kTimelineScript;
  out += "</script>\n";
  html::close_page(out);
  return out;
}

}  // namespace locksim
