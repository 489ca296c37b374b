// html_report.h: report.html, one self-contained page per scenario run (no script, nothing from
// the network; the pictures are inline SVG), the page a person opens first.
//
// Per variant, a section `#v-<variant>` with its outcome, a timeline (one row per client: acquire
// waits, holds, the part of a hold past its lease, lease ends, renewals, fencing numbers,
// crashes, fault windows of clients and links on their client's row and of servers on a row per
// server, and every mutual-exclusion violation's
// overlap in red across the rows), the findings in words beside it, the driver's notes and links
// to the raw files. A run with more than kMaxTimelineRows clients or kMaxTimelineMarks marks of a
// kind draws the clients and marks that matter first and says what it left out.
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
