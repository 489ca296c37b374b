// kill_server: the nemesis kills a server of the topology with SIGKILL, as a crashed machine or
// an out-of-memory kill would. It stays down, and its clients' calls fail, until a restart_server
// step; what it remembers then depends on its persistence.
//
//   {"id": "kill", "do": "kill_server", "server": "n1", "wait_for": {"done": "a-acquire"}}
//
// Recorded as the instant "kill_server", with which the window "down" opens. The kind's own code
// is this file and its row in sim/fault/server_fault.cc. It acts through ServerFaultHost::kill
// (sim/fault/server_fault.h), which the scripted runner implements through the nemesis and each
// topology (the real servers' and the simulator's), and its events are the fault kinds
// kill_server and down (sim/fault/fault.h and fault.cc).
#include <memory>
#include <string>

#include "sim/fault/server_fault.h"

namespace locksim {

extern const ServerFaultType kServerFaultKillServer;

namespace {

class KillServer final : public ServerFault {
 public:
  KillServer() : ServerFault(kServerFaultKillServer) {}
  std::string run(ServerFaultHost& host, std::size_t server) const override {
    return host.kill(server);
  }
};

std::shared_ptr<const ServerFault> parse_kill_server(const json::JsonReader& /*step*/) {
  return std::make_shared<KillServer>();
}

}  // namespace

// server_fault.cc's table points here.
const ServerFaultType kServerFaultKillServer = {
    .word = "kill_server", .aim = ServerFaultAim::kServer, .parse = &parse_kill_server};

}  // namespace locksim
