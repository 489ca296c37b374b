// jsonl.h: history.jsonl, one JSON object per event, and back.
//
// Line format (fields with default values are omitted):
//   {"index":3,"time_ns":1520431,"client":"A","type":"ok","f":"acquire","key":"lock",
//    "value":{"token":"9f...","ttl_ms":200,"count":1},"error":"timeout: ..."}
// The reader accepts exactly what the writer produces and reports the first bad line by number.
//
//   write_history_jsonl(dir / "history.jsonl", history);
//   History h = read_history_jsonl(dir / "history.jsonl");  // throws InputError
#pragma once

#include <filesystem>
#include <string>

#include "sim/history/event.h"

namespace locksim {

// event_to_json_line: one event as a single JSON line without the trailing newline.
std::string event_to_json_line(const History& history, const Event& event);
// write_history_jsonl: writes to `path` via a temporary file renamed into place.
// Throws EnvironmentError if the file cannot be written.
void write_history_jsonl(const std::filesystem::path& path, const History& history);
// read_history_jsonl: throws InputError naming the file and line on malformed input.
History read_history_jsonl(const std::filesystem::path& path);

}  // namespace locksim
