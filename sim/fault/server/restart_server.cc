// restart_server: the nemesis starts a killed server again on its port, with its directory (an
// append-only file is loaded), and the step ends once it answers PING. A former primary restarted
// after a failover rejoins as a replica of the new primary, as Sentinel makes it, and the step
// ends once a WAIT is acknowledged. Without persistence it comes back empty: a lock it granted is
// gone.
//
//   {"id": "restart", "do": "restart_server", "server": "n1"}
//
// Recorded as the instant "restart_server" when it begins (a client retrying a refused connection
// may reach the new process before the step sees it answer), then the end of the window "down"
// once it answers. The kind's own code is this file and its row in sim/fault/server_fault.cc. It
// acts through ServerFaultHost::restart (sim/fault/server_fault.h), which the scripted runner
// implements through the nemesis and each topology (the real servers' and the simulator's), and
// its events are the fault kinds restart_server and down (sim/fault/fault.h and fault.cc).
#include <memory>
#include <string>

#include "sim/fault/server_fault.h"

namespace locksim {

extern const ServerFaultType kServerFaultRestartServer;

namespace {

class RestartServer final : public ServerFault {
 public:
  RestartServer() : ServerFault(kServerFaultRestartServer) {}
  std::string run(ServerFaultHost& host, std::size_t server) const override {
    return host.restart(server);
  }
};

std::shared_ptr<const ServerFault> parse_restart_server(const json::JsonReader& /*step*/) {
  return std::make_shared<RestartServer>();
}

}  // namespace

// server_fault.cc's table points here.
const ServerFaultType kServerFaultRestartServer = {
    .word = "restart_server", .aim = ServerFaultAim::kServer, .parse = &parse_restart_server};

}  // namespace locksim
