// explain.h: the wording helpers every finding's explanation shares.
//
// Internal to the checker. Explanations are read by people comparing them with a timeline, so
// instants and durations are milliseconds with one decimal, and clients are named.
//
//   std::string s = client_name(history, 0) + " entered at " + format_ms(window.start_ns);
#pragma once

#include <string>

#include "sim/checker/check.h"
#include "sim/core/clock.h"
#include "sim/history/event.h"

namespace locksim::checker_internal {

// format_ms: "215.3 ms" for an instant or a duration in nanoseconds.
std::string format_ms(Nanos ns);

// client_name: History::clients[client], or "client#<n>" when the history has no such name.
std::string client_name(const History& history, int client);

// grant_phrase: the servers that granted a multi-server acquire, in words ("granted by n1, n2, n4
// of 5"), or "" for a grant of one server.
std::string grant_phrase(const History& history, const ServerGrant& grant);

// window_end_phrase: "until 412.1 ms", "until it crashed at ...", "until the end of the history at
// ...".
std::string window_end_phrase(HoldWindow::End end, Nanos end_ns);

}  // namespace locksim::checker_internal
