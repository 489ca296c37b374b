// pause_server: the nemesis stops a server with SIGSTOP for a window, then lets it go on with
// SIGCONT, as a stalled VM or a long fork would stop it. Its clients' calls wait or time out
// meanwhile, and its keys' TTLs run on by the wall clock, so a lease can end while its holder
// cannot reach the server. Not CLIENT PAUSE: that is the server choosing to hold clients, and it
// holds key expiry back too.
//
//   {"do": "pause_server", "server": "n1", "until": {"inside": "B"}, "max_ms": 5000}
//   {"id": "pause", "do": "pause_server", "server": "n1", "pause_ms": 1500,
//    "wait_for": {"done": "a-acquire"}}
//
// Recorded as the window "pause_server". The kind's own code is this file and its row in
// sim/fault/server_fault.cc; it is the model for a new kind with a window (clock_jump.cc for one
// with a key of its own). It acts through ServerFaultHost::pause, hold_window and resume
// (sim/fault/server_fault.h), which the scripted runner implements through the nemesis and each
// topology (the real servers' and the simulator's), and its window is the fault kind
// pause_server (sim/fault/fault.h and fault.cc): a kind that needs an operation or an event no
// kind has yet adds it there too.
#include <memory>
#include <string>

#include "sim/fault/server_fault.h"

namespace locksim {

extern const ServerFaultType kServerFaultPauseServer;

namespace {

class PauseServer final : public ServerFault {
 public:
  PauseServer() : ServerFault(kServerFaultPauseServer) {}
  // The window ("pause_ms", or "until" at most "max_ms") is the step's, read by the scenario
  // parser and waited out by the host. A server that could not be stopped is not resumed.
  std::string run(ServerFaultHost& host, std::size_t server) const override {
    if (std::string error = host.pause(server); !error.empty()) return error;
    host.hold_window("paused");
    return host.resume(server);
  }
};

std::shared_ptr<const ServerFault> parse_pause_server(const json::JsonReader& /*step*/) {
  return std::make_shared<PauseServer>();
}

}  // namespace

// server_fault.cc's table points here.
const ServerFaultType kServerFaultPauseServer = {.word = "pause_server",
                                                 .aim = ServerFaultAim::kServer,
                                                 .duration_key = "pause_ms",
                                                 .parse = &parse_pause_server};

}  // namespace locksim
