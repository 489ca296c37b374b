// export.h: a history's lock operations in the forms other checkers read, for `locksim export`.
//
//   knossos: Jepsen's history, one EDN map per line, as Knossos and elle-cli read it:
//     {:index 0, :time 1200, :type :invoke, :process 0, :f :acquire, :value nil, :client "A",
//      :key "lock", :ttl-ms 300}
//     :type is :invoke, :ok, :fail or :info; :f :acquire or :release; :value nil (Knossos's mutex
//     model takes no value); :time nanoseconds since the run began. A client whose operation ended
//     :info (its outcome unknown: a lost reply, a crash inside the call) continues as a new
//     process (process + number of clients), as Jepsen requires: a process never has two
//     operations open.
//   porcupine: Porcupine's operations as a JSON array:
//     {"client_id": 0, "input": {"op": "acquire", "key": "lock", "ttl_ms": 300}, "call": 1200,
//      "output": {"ok": true, "token": "...", "fencing": 3}, "return": 5400}
//     An operation whose outcome is unknown has "output": {"unknown": true} and "return"
//     9223372036854775807 (it may take effect at any time after its call). "client_id" is the
//     process as in the Knossos export: after an unknown outcome the client goes on as a new
//     one (client_id + number of clients), since Porcupine also takes one client's operations
//     to be sequential, and an unknown one never returns.
//
// Mapping: acquire ok is :ok (the lock was granted; the token and fencing number ride along);
// a busy answer, a give-up or an error with a definite answer is :fail; an indeterminate error is
// :info. A release that deleted the key is :ok; one that deleted nothing (not the owner, or the
// key had expired) is :fail: it released nothing. A crash ends the client's open operation as
// :info; an operation still open at the end of the history ends :info there. Extends, the
// critical section's events, resource reads and writes and faults are not exported.
//
// What a plain mutex model cannot say: a lease. Knossos's mutex (and any model without time)
// knows no expiry, so a lock granted to B after A's lease ran out while A had not released is, to
// it, a second acquire of a held mutex: a violation, which is what locksim also reports
// (mutex_violation, cause lease_expired). A lease that expired with nobody inside makes A's later
// release a :fail (nothing deleted), which a mutex model reads as a release of a lock not held.
// Fencing numbers are carried as data (:fencing), for a model that checks them.
//
//   const std::string edn = export_history(history, key, ExportFormat::kKnossos);
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/history/event.h"

namespace locksim {

enum class ExportFormat { kKnossos, kPorcupine };

// lock_keys: the keys the history acquires or releases, in order of first use.
std::vector<std::string> lock_keys(const History& history);

// export_history: the acquire and release operations on `key` in `format` (see above), handed
// to `sink` in pieces of about a megabyte as they are written, so a large history is exported
// without its whole text (or a JSON tree of it) in memory.
void export_history(const History& history, std::string_view key, ExportFormat format,
                    const std::function<void(std::string_view)>& sink);
// export_history: the same as one string.
std::string export_history(const History& history, std::string_view key, ExportFormat format);

}  // namespace locksim
