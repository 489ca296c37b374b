#include "sim/report/html_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string_view>
#include <utility>

#include "sim/fault/fault.h"
#include "sim/report/findings.h"
#include "sim/report/html_text.h"

namespace locksim {
namespace {

// The timeline's geometry, in SVG user units (the picture scales to the page's width).
constexpr double kWidth = 1000;
constexpr double kLeft = 96;  // client names
constexpr double kRight = 16;
constexpr double kTop = 10;
constexpr double kRowHeight = 24;
constexpr double kBarHeight = 14;
constexpr double kAxisHeight = 28;

double ms(Nanos ns) { return static_cast<double>(ns) / 1e6; }

std::string num(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

bool harness_error(const VariantRun& run) {
  return !run.matches && !run.interrupted &&
         (run.result.count(FindingKind::kServerLost) > 0 ||
          run.result.count(FindingKind::kServerDied) > 0);
}

std::string_view outcome_of(const VariantRun& run) {
  return html::outcome_word(run.matches, run.interrupted, harness_error(run));
}

// nice_step: the tick spacing, 1, 2 or 5 times a power of ten, for about `ticks` ticks over
// `span` ms.
double nice_step(double span, int ticks) {
  const double raw = std::max(span / ticks, 1e-3);
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double factor : {1.0, 2.0, 5.0}) {
    if (raw <= factor * power) return factor * power;
  }
  return 10 * power;
}

// Timeline: one variant's SVG, built up mark by mark.
class Timeline {
 public:
  Timeline(const VariantRun& run, int index) : run_(run), h_(run.history), index_(index) {
    for (const Event& e : h_.events) end_ns_ = std::max(end_ns_, e.time_ns);
    for (const HoldWindow& w : run.result.holds) end_ns_ = std::max(end_ns_, w.end_ns);
    for (const FaultWindow& f : run.result.faults) end_ns_ = std::max(end_ns_, f.to_ns);
    end_ns_ = std::max<Nanos>(end_ns_, 1'000'000);
    choose_rows();
  }

  std::string svg() {
    const double height = kTop + static_cast<double>(rows_.size()) * kRowHeight + kAxisHeight;
    out_ += "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " +
            num(kWidth) + " " + num(height) + "\" role=\"img\" aria-label=\"timeline of " +
            html::escape(run_.variant) + "\">\n";
    const std::string hatch = "hatch-" + std::to_string(index_);
    out_ += "<defs><pattern id=\"" + hatch +
            "\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
            "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#efe6f8\"/>"
            "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#7b3fb5\" stroke-width=\"2\"/>"
            "</pattern></defs>\n";
    axis(height);
    waits();
    holds();
    marks();
    faults(hatch);
    violations(height);
    out_ += "</svg>\n";
    return std::move(out_);
  }

  // left_out: what the picture does not show, in words (empty: everything).
  const std::vector<std::string>& left_out() const { return left_out_; }

 private:
  double x(Nanos t) const {
    const double share =
        std::clamp(static_cast<double>(t) / static_cast<double>(end_ns_), 0.0, 1.0);
    return kLeft + share * (kWidth - kLeft - kRight);
  }
  // row_y: the top of the bar of `client`'s row, or -1 if its row is not drawn.
  double row_y(int client) const {
    const auto found = row_of_.find(client);
    if (found == row_of_.end()) return -1;
    return kTop + found->second * kRowHeight + (kRowHeight - kBarHeight) / 2;
  }

  // choose_rows: every client with something to draw, or the first kMaxTimelineRows of: the
  // clients named by a verdict-bearing finding, then the others in order; then a row per server
  // that a server fault hit.
  void choose_rows() {
    std::vector<int> order;
    std::vector<bool> taken(h_.clients.size(), false);
    for (const Finding& f : run_.result.findings) {
      if (verdict_of(f.kind) == Verdict::kOk) continue;
      for (const int c : f.clients) {
        if (c >= 0 && static_cast<std::size_t>(c) < taken.size() && !taken[c]) {
          taken[c] = true;
          order.push_back(c);
        }
      }
    }
    // A client with nothing to draw (the harness's and the nemesis's own names) gets no row.
    std::vector<bool> drawn(h_.clients.size(), false);
    for (const Event& e : h_.events) {
      if (e.client >= 0 && static_cast<std::size_t>(e.client) < drawn.size() &&
          (e.f == Op::kAcquire || e.f == Op::kExtend || e.f == Op::kCrash || e.f == Op::kEnter)) {
        drawn[static_cast<std::size_t>(e.client)] = true;
      }
    }
    for (const FaultWindow& f : run_.result.faults) {
      if (f.server == 0 && f.client >= 0 && static_cast<std::size_t>(f.client) < drawn.size()) {
        drawn[static_cast<std::size_t>(f.client)] = true;
      }
    }
    for (std::size_t c = 0; c < h_.clients.size(); ++c) {
      if (!taken[c] && drawn[c]) order.push_back(static_cast<int>(c));
    }
    if (order.size() > kMaxTimelineRows) {
      left_out_.push_back(std::to_string(order.size() - kMaxTimelineRows) + " of " +
                          std::to_string(order.size()) +
                          " clients (those named by a finding are drawn first)");
      order.resize(kMaxTimelineRows);
    }
    std::sort(order.begin(), order.end());
    for (const int c : order) {
      row_of_[c] = static_cast<int>(rows_.size());
      rows_.push_back(h_.clients[static_cast<std::size_t>(c)]);
    }
    // A row per server a server fault hit, under the clients ("server n1").
    for (const FaultWindow& f : run_.result.faults) {
      if (f.server == 0 || server_row_.contains(f.server)) continue;
      const int key = -1 - static_cast<int>(server_row_.size());
      server_row_[f.server] = key;
      row_of_[key] = static_cast<int>(rows_.size());
      rows_.push_back("server " + std::string(h_.str(f.server)));
    }
  }

  // counted: whether another mark of `what` may be drawn; counts those that may not.
  bool counted(const char* what) {
    std::size_t& n = marks_[what];
    ++n;
    if (n == kMaxTimelineMarks + 1) {
      left_out_.push_back(std::string(what) + " after the first " +
                          std::to_string(kMaxTimelineMarks));
    }
    return n <= kMaxTimelineMarks;
  }

  void rect(std::string_view cls, double x0, double y, double x1, double height,
            const std::string& title, std::string_view extra = {}) {
    const double width = std::max(x1 - x0, 1.0);
    out_ += "<rect class=\"";
    out_ += cls;
    out_ += "\" x=\"" + num(x0) + "\" y=\"" + num(y) + "\" width=\"" + num(width) + "\" height=\"" +
            num(height) + "\"";
    out_ += extra;
    out_ += "><title>" + html::escape(title) + "</title></rect>\n";
  }

  void axis(double height) {
    const double bottom = height - kAxisHeight;
    const double span = ms(end_ns_);
    const double step = nice_step(span, 8);
    for (double t = 0; t <= span + 1e-9; t += step) {
      const double at = x(static_cast<Nanos>(t * 1e6));
      out_ += "<line class=\"grid\" x1=\"" + num(at) + "\" y1=\"" + num(kTop) + "\" x2=\"" +
              num(at) + "\" y2=\"" + num(bottom) + "\"/>";
      out_ += "<text x=\"" + num(at) + "\" y=\"" + num(bottom + 16) + "\" text-anchor=\"middle\">" +
              html::escape(html::format_ms(t)) + "</text>\n";
    }
    out_ += "<line class=\"axis\" x1=\"" + num(kLeft) + "\" y1=\"" + num(bottom) + "\" x2=\"" +
            num(kWidth - kRight) + "\" y2=\"" + num(bottom) + "\"/>\n";
    for (std::size_t r = 0; r < rows_.size(); ++r) {
      const double y = kTop + static_cast<double>(r) * kRowHeight + kRowHeight / 2 + 4;
      out_ += "<text x=\"" + num(kLeft - 8) + "\" y=\"" + num(y) + "\" text-anchor=\"end\">" +
              html::escape(rows_[r]) + "</text>\n";
    }
  }

  // waits: each acquire from its invoke to its answer, in light grey under the holds.
  void waits() {
    std::map<int, Nanos> invoked;
    for (const Event& e : h_.events) {
      if (e.f != Op::kAcquire) continue;
      if (e.type == EventType::kInvoke) {
        invoked[e.client] = e.time_ns;
        continue;
      }
      const auto found = invoked.find(e.client);
      if (found == invoked.end()) continue;
      const Nanos from = found->second;
      invoked.erase(found);
      const double y = row_y(e.client);
      if (y < 0 || e.time_ns - from < 1000 || !counted("acquire waits")) continue;
      rect("wait", x(from), y + 3, x(e.time_ns), kBarHeight - 6,
           h_.clients[e.client] + " waited for " + h_.key_name(e) + " from " +
               html::format_ms(ms(from)) + " to " + html::format_ms(ms(e.time_ns)) + " (" +
               std::string(to_string(e.type)) + ")");
    }
  }

  // fencing_at: the fencing number of `client`'s last granted acquire at or before `t`; -1.
  std::int64_t fencing_at(int client, Nanos t) const {
    const auto found = fencing_.find(client);
    if (found == fencing_.end()) return -1;
    std::int64_t number = -1;
    for (const auto& [at, fencing] : found->second) {
      if (at > t) break;
      number = fencing;
    }
    return number;
  }

  void holds() {
    for (const Event& e : h_.events) {
      if (e.f == Op::kAcquire && e.type == EventType::kOk && e.acquire().fencing >= 0) {
        fencing_[e.client].emplace_back(e.time_ns, e.acquire().fencing);
      }
    }
    for (const HoldWindow& w : run_.result.holds) {
      const double y = row_y(w.client);
      if (y < 0 || !counted("holds")) continue;
      const std::string& who = h_.clients[static_cast<std::size_t>(w.client)];
      const std::int64_t fencing = fencing_at(w.client, w.start_ns);
      std::string title = who + " held " + h_.keys[w.key] + " from " +
                          html::format_ms(ms(w.start_ns)) + " to " + html::format_ms(ms(w.end_ns));
      if (w.end == HoldWindow::End::kCrash) title += " (crashed)";
      if (w.end == HoldWindow::End::kEndOfHistory) title += " (still inside when the run ended)";
      if (w.lease_end_ns >= 0) title += "; lease until " + html::format_ms(ms(w.lease_end_ns));
      if (fencing >= 0) title += "; fencing number " + std::to_string(fencing);
      const bool overran = w.lease_end_ns >= 0 && w.lease_end_ns < w.end_ns;
      const Nanos inside_lease = overran ? std::max(w.lease_end_ns, w.start_ns) : w.end_ns;
      rect("hold", x(w.start_ns), y, x(inside_lease), kBarHeight, title);
      if (overran) {
        rect("overrun", x(inside_lease), y, x(w.end_ns), kBarHeight,
             who + " was still inside after its lease ran out at " +
                 html::format_ms(ms(w.lease_end_ns)));
      }
      if (w.lease_end_ns >= 0 && w.lease_end_ns <= end_ns_) {
        const double at = x(w.lease_end_ns);
        out_ += "<line class=\"lease-end\" x1=\"" + num(at) + "\" y1=\"" + num(y - 3) + "\" x2=\"" +
                num(at) + "\" y2=\"" + num(y + kBarHeight + 3) + "\"><title>" +
                html::escape(who + "'s lease ends at " + html::format_ms(ms(w.lease_end_ns))) +
                "</title></line>\n";
      }
      if (fencing >= 0 && x(w.end_ns) - x(w.start_ns) >= 18) {
        out_ += "<text class=\"fencing\" x=\"" + num(x(w.start_ns) + 3) + "\" y=\"" +
                num(y + kBarHeight - 3) + "\">#" + std::to_string(fencing) + "</text>\n";
      }
    }
  }

  // marks: renewals (green circles; red when refused or unanswered) and crashes (crosses).
  void marks() {
    for (const Event& e : h_.events) {
      const double y = row_y(e.client);
      if (y < 0) continue;
      const std::string& who = h_.clients[static_cast<std::size_t>(e.client)];
      if (e.f == Op::kExtend && e.type != EventType::kInvoke) {
        if (!counted("renewals")) continue;
        const bool renewed = e.type == EventType::kOk && e.extend().extended >= 1;
        out_ += std::string("<circle class=\"") + (renewed ? "renewal" : "renewal-failed") +
                "\" cx=\"" + num(x(e.time_ns)) + "\" cy=\"" + num(y + kBarHeight / 2) +
                "\" r=\"3.5\"><title>" +
                html::escape(who + (renewed ? " renewed " : " failed to renew ") + h_.key_name(e) +
                             " at " + html::format_ms(ms(e.time_ns))) +
                "</title></circle>\n";
      } else if (e.f == Op::kCrash) {
        if (!counted("crashes")) continue;
        const double cx = x(e.time_ns);
        const double cy = y + kBarHeight / 2;
        out_ += "<path class=\"crash\" d=\"M" + num(cx - 5) + " " + num(cy - 5) + "L" +
                num(cx + 5) + " " + num(cy + 5) + "M" + num(cx - 5) + " " + num(cy + 5) + "L" +
                num(cx + 5) + " " + num(cy - 5) + "\"><title>" +
                html::escape(who + " crashed at " + html::format_ms(ms(e.time_ns))) +
                "</title></path>\n";
      }
    }
  }

  void faults(const std::string& hatch) {
    for (const FaultWindow& f : run_.result.faults) {
      const double y = row_y(f.server != 0 ? server_row_.at(f.server) : f.client);
      if (y < 0 || !counted("fault windows")) continue;
      const std::string word(traits(f.kind).word);
      std::string title = word;
      if (f.server != 0) title += " of " + std::string(h_.str(f.server));
      if (f.server == 0 && f.client >= 0) {
        title += " aimed at " + h_.clients[static_cast<std::size_t>(f.client)];
      }
      title += f.from_ns == f.to_ns ? " at " + html::format_ms(ms(f.from_ns))
                                    : " from " + html::format_ms(ms(f.from_ns)) + " to " +
                                          html::format_ms(ms(f.to_ns));
      if (f.from_ns == f.to_ns) {
        const double at = x(f.from_ns);
        out_ += "<line class=\"fault fault-instant\" x1=\"" + num(at) + "\" y1=\"" + num(y - 4) +
                "\" x2=\"" + num(at) + "\" y2=\"" + num(y + kBarHeight + 4) + "\"><title>" +
                html::escape(title) + "</title></line>\n";
      } else {
        rect("fault", x(f.from_ns), y - 4, x(f.to_ns), 4, title, " fill=\"url(#" + hatch + ")\"");
      }
      out_ += "<text class=\"fault-label\" x=\"" + num(x(f.from_ns) + 2) + "\" y=\"" + num(y - 5) +
              "\">" + html::escape(word) + "</text>\n";
    }
  }

  // violations: each overlap as a faint band over every row and a red bar on the rows of the
  // two clients whose windows overlap.
  void violations(double height) {
    for (const Finding* f : run_.result.of(FindingKind::kMutexViolation)) {
      if (f->from_ns < 0 || f->to_ns < f->from_ns || !counted("violations")) continue;
      const double x0 = x(f->from_ns);
      const double x1 = x(f->to_ns);
      rect("violation-band", x0, kTop, x1, height - kAxisHeight - kTop, f->words);
      for (std::size_t i = 0; i < f->clients.size() && i < 2; ++i) {
        const double y = row_y(f->clients[i]);
        if (y >= 0) rect("violation", x0, y, x1, kBarHeight, f->words);
      }
    }
  }

  const VariantRun& run_;
  const History& h_;
  int index_;
  Nanos end_ns_ = 0;
  std::vector<std::string> rows_;
  std::map<int, int> row_of_;           // row key (a client, or a server's key) -> row
  std::map<StringId, int> server_row_;  // a server fault's server -> its row key (negative)
  std::map<int, std::vector<std::pair<Nanos, std::int64_t>>> fencing_;
  std::map<std::string, std::size_t> marks_;
  std::vector<std::string> left_out_;
  std::string out_;
};

constexpr std::string_view kLegend =
    "<p class=\"legend\"><span><i style=\"background:#d9dde4\"></i>waiting to acquire</span>"
    "<span><i style=\"background:#4a7bd0\"></i>holding, inside the lease</span>"
    "<span><i style=\"background:#f08c2e\"></i>holding after the lease ran out</span>"
    "<span><i style=\"background:#d62828\"></i>two holders at once</span>"
    "<span><i style=\"border-left:2px solid #1d2330;width:2px\"></i>lease end</span>"
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
      out += "<li class=\"finding";
      if (finding_is_bad(kind)) out += " verdict";
      out += "\" data-kind=\"" + std::string(to_string(kind)) + "\"><b>" +
             html::escape(finding_label(kind)) + "</b>";
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
    out += "<tr class=\"outcome-" + std::string(outcome) + "\"><td><a href=\"#" +
           html::anchor("v", run.variant) + "\">" + html::escape(run.variant) + "</a></td><td>" +
           html::escape(describe_expectation(run.expected)) + "</td><td>" +
           html::escape(describe_observation(run.result)) + "</td><td>" +
           (outcome == "ok"         ? "yes"
            : outcome == "mismatch" ? "<b>NO</b>"
                                    : std::string(outcome)) +
           "</td></tr>\n";
  }
  out += "</table>\n";

  int index = 0;
  for (const VariantRun& run : runs) {
    const std::string_view outcome = outcome_of(run);
    out += "<section class=\"variant\" id=\"" + html::anchor("v", run.variant) +
           "\" data-variant=\"" + html::escape(run.variant) + "\" data-outcome=\"" +
           std::string(outcome) + "\">\n";
    out += "<h2>" + html::escape(run.variant) + ": " +
           html::escape(describe_observation(run.result)) + "<span class=\"badge outcome-" +
           std::string(outcome) + "\">" +
           (outcome == "ok"         ? "as expected"
            : outcome == "mismatch" ? "expected " + html::escape(describe_expectation(run.expected))
                                    : std::string(outcome)) +
           "</span></h2>\n";
    verdict_words(out, run);
    Timeline timeline(run, index++);
    out += timeline.svg();
    out += kLegend;
    if (!timeline.left_out().empty()) {
      out += "<p class=\"note\">Not drawn:";
      for (std::size_t i = 0; i < timeline.left_out().size(); ++i) {
        out += (i == 0 ? " " : "; ") + html::escape(timeline.left_out()[i]);
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
  html::close_page(out);
  return out;
}

}  // namespace locksim
