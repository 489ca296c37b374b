// trace.h: trace.json in the Chrome / Perfetto trace-event format (open it in ui.perfetto.dev or
// chrome://tracing).
//
// One process per variant run, one thread (track) per client, plus a "violations" track. Hold
// windows are async slices ("b"/"e", category "hold") so overlapping holds of different clients
// are drawn side by side; acquire, release and extend calls are complete slices ("X") on the
// client's track; crashes, faults and the harness's stops are instant events ("i"); every
// mutual-exclusion violation is a red slice (cname "terrible") spanning the overlap, on the later
// holder's track and on the violations track. Timestamps are microseconds since run start.
//
// The document is written as text, not built as a tree, and at most kMaxTraceCalls call slices
// and kMaxTraceHolds hold slices are written (violations always are), so a huge run costs a
// bounded trace; the metadata says when it was cut.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include "sim/checker/check.h"
#include "sim/history/event.h"

namespace locksim {

inline constexpr std::size_t kMaxTraceCalls = 100000;
inline constexpr std::size_t kMaxTraceHolds = 100000;

// trace_json: the whole trace document as a string. `title` names the process track.
std::string trace_json(const History& history, const CheckResult& result, const std::string& title);
// write_trace_json: the same document written to `path` through an AtomicFile in pieces, so a
// large run's trace is never held in memory whole. Throws EnvironmentError.
void write_trace_json(const std::filesystem::path& path, const History& history,
                      const CheckResult& result, const std::string& title);

}  // namespace locksim
