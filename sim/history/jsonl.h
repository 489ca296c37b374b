// jsonl.h: history.jsonl, one JSON object per event, and back.
//
// Schema 5 (kHistorySchemaVersion). The first line is a header (the clients, and the servers of
// the run's topology), then one event per line; fields with default values are omitted, each
// field has one meaning (see event.h):
//   {"history_schema":5,"clients":["A","B"],"servers":["n1","n2","n3"]}
//   {"index":3,"time_ns":1520431,"client":"A","type":"ok","f":"acquire","key":"lock",
//    "token":"9f...","ttl_ms":200,"attempts":1,"sent_ns":1490210,"validity_ms":196,
//    "granted_on":["n1","n3"],"granted_of":3}
//   {"index":9,"time_ns":2520431,"client":"B","type":"info","f":"release","key":"lock",
//    "error":"timeout","message":"Resource temporarily unavailable"}
// The reader accepts schemas 2 to 5 (before 5, a grant's "granted by n1, n3 of 3" message is
// read into its `granted_on` and `granted_of`) and the headerless schema 1 of earlier locksim
// versions (whose `value.count` and `error: "kind: text"` are mapped to the typed fields), and
// reports the first bad line by number (a fault event's `fault` must be a word of sim/fault).
//
//   write_history_jsonl(dir / "history.jsonl", history);
//   History h = read_history_jsonl(dir / "history.jsonl");  // throws InputError
#pragma once

#include <filesystem>
#include <string>

#include "sim/history/event.h"

namespace locksim {

// event_to_json_line: one event as a single JSON line without the trailing newline; `index` is
// its position in the history.
std::string event_to_json_line(const History& history, const Event& event, std::size_t index);
// write_history_jsonl: writes the header and every event to `path` via a temporary file renamed
// into place. Throws EnvironmentError (with the reason) if the file cannot be written; a failed
// write leaves no temporary file behind.
void write_history_jsonl(const std::filesystem::path& path, const History& history);
// read_history_jsonl: throws InputError naming the file and line on malformed input.
History read_history_jsonl(const std::filesystem::path& path);

}  // namespace locksim
