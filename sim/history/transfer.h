// transfer.h: a history handed from locksim's own worker process to the harness that started
// it, as raw events and string tables (both ends are the same locksim build; a file of another
// build, or a damaged one, is refused). JSON lines (jsonl.h) are the history's public form; this
// one costs a copy, which matters for a workload of many cycles run in a worker.
//
//   write_history_transfer(path, std::move(recorder).merge());   // in the worker
//   const History history = read_history_transfer(path);          // in the harness
#pragma once

#include <filesystem>

#include "sim/history/event.h"

namespace locksim {

// write_history_transfer: throws EnvironmentError if the file cannot be written.
void write_history_transfer(const std::filesystem::path& path, const History& history);
// read_history_transfer: throws InputError if the file is not a transfer of this build or is
// cut short; every size is checked against the file's before memory is taken for it.
History read_history_transfer(const std::filesystem::path& path);

}  // namespace locksim
