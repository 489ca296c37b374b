// html_report.h: report.html, one self-contained page per scenario run (nothing from the network:
// the pictures are inline SVG, its one script is inline), the page a person opens first.
//
// The outcome table (a row per variant, coloured by safety, html_text.h, with a mark for "as the
// scenario expects" or not) and its legend; then per variant a section `#v-<variant>` with its
// outcome, a timeline that zooms and pans (html_timeline.h: the key's owner and TTL, one row per
// client with its holds, lease ends, renewals, fencing numbers, crashes, fault windows and every
// call from invoke to completion coloured by result, a row per server a server fault hit, every
// mutual-exclusion violation's overlap in red, details on hover), the findings in words beside it
// (a click on one with an interval highlights its calls and overlap and zooms to them), the
// driver's notes and links to the raw files. A run with more than kMaxTimelineRows clients or
// kMaxTimelineMarks marks of a kind draws the clients and marks that matter first and says what it
// left out.
//
//   write_file_atomically(run_dir / "report.html", run_report_html(scenario, runs, info));
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sim/report/run_record.h"

namespace locksim {

inline constexpr std::size_t kMaxTimelineRows = 40;
inline constexpr std::size_t kMaxTimelineMarks = 3000;

std::string run_report_html(const Scenario& scenario, const std::vector<VariantRun>& runs,
                            const RunInfo& info);

}  // namespace locksim
