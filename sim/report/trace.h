// trace.h: trace.json in the Chrome / Perfetto trace-event format (open it in ui.perfetto.dev or
// chrome://tracing).
//
// One process per variant run, one thread (track) per client. Hold windows are async slices
// ("b"/"e", category "hold") so overlapping holds of different clients are drawn side by side;
// acquire and release calls are complete slices ("X") on the client's track; crashes and faults
// are instant events ("i"); every mutual-exclusion violation is an async slice in category
// "violation" spanning the overlap. Timestamps are microseconds since run start.
#pragma once

#include <string>

#include "sim/checker/check.h"
#include "sim/history/event.h"

namespace locksim {

// trace_json: the whole trace document as a string. `title` names the process track.
std::string trace_json(const History& history, const CheckResult& result, const std::string& title);

}  // namespace locksim
