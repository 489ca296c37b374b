// html_timeline.h (internal to report/): one variant's timeline in report.html, an inline SVG
// figure with its zoom bar, and the page's script that zooms, pans, explains and highlights it.
//
// Rows, top to bottom: the owner of each lock key on the server as the replies tell it (who was
// granted it, until its TTL ran out, a release deleted it, another client was granted it, or a
// server fault made the server forget it; the lease end marked), then a row per client (its hold
// windows: blue inside the lease, orange after; lease ends, renewals, fencing numbers, crashes,
// the fault windows aimed at it; and beneath, every call it made as a box from invoke to
// completion, coloured by its result: ok, refused or failed, unknown), then a row per server that
// a server fault hit; every mutual-exclusion violation's overlap in red on both holders' rows,
// never narrower than a visible mark.
//
// Every mark carries its times in ms (data-t0, data-t1) and what a reader wants on hover
// (data-tip, or a call's data-op, data-client, data-token, data-reply, data-server ...), so the
// script lays the marks out again for any visible time span and fills its tooltip from them. The
// server draws the whole run, so the page reads without the script too.
//
//   TimelineFigure figure = timeline_figure(run, index);
//   out += figure.html;
//   ...
//   out += "<script>" + std::string(kTimelineScript) + "</script>";
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "sim/report/run_record.h"

namespace locksim::html {

// kMaxOwnerRows: lock keys whose owner gets a row (a run usually has one).
inline constexpr std::size_t kMaxOwnerRows = 4;
// kMinViolationPx: the narrowest a violation is drawn, in screen pixels at any zoom.
inline constexpr double kMinViolationPx = 6;

struct TimelineFigure {
  std::string html;                   // <figure class="timeline">: zoom bar and SVG
  std::vector<std::string> left_out;  // what it does not show, in words (empty: everything)
};

// timeline_figure: the figure of `run`; `index` makes its SVG ids unique in the page. Draws at
// most kMaxTimelineRows client rows and kMaxTimelineMarks marks of a kind (html_report.h).
TimelineFigure timeline_figure(const VariantRun& run, int index);

// kTimelineScript: the page's script (plain, inline, nothing loaded): zoom (buttons, Ctrl+wheel
// at the pointer, keys + - 0 and arrows on a focused timeline), pan (drag, Shift+wheel, arrow
// buttons), axis ticks relabelled for the visible span, a tooltip (div.timeline-tip) on hover,
// and a click (or Enter) on a finding with an interval (li.finding.zoomable) that highlights its
// calls, holds and overlap (class "highlight") and zooms and scrolls to them.
extern const std::string_view kTimelineScript;

}  // namespace locksim::html
