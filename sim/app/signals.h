// signals.h: install_signal_handling, how Ctrl-C and SIGTERM stop locksim without losing work.
//
// SIGINT, SIGTERM and SIGHUP are blocked in every thread and received by one sigwait thread. The
// first signal requests a stop: clients stop at their next step or cycle, the current run's partial
// history and reports are written, the private redis-server is stopped, and locksim exits 130.
// A second signal within 2 s of the first is part of the same request (GNU `timeout` sends SIGTERM
// to locksim and then to its process group, so two arrive at once) and is ignored. A second signal
// after that kills the private server at once and exits 130 immediately, losing unwritten reports,
// and so does a stop still not done 10 s after the first signal (something that cannot stop, such
// as a thread blocked for ever, must not leave SIGKILL as the only way out).
//
// Call it first thing in main(), before any other thread exists (threads inherit the mask).
#pragma once

#include <sys/types.h>

#include "sim/core/stop.h"

namespace locksim {

void install_signal_handling(StopSignal& stop);
// set_server_pid_for_signals: the private server to kill on a second signal (-1: none).
void set_server_pid_for_signals(pid_t pid);

}  // namespace locksim
