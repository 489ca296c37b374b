// link_fault.h: what a link fault of one kind is, written once for every kind: CommandPolicy,
// the decision a client link (the proxy's LinkProxy, or the simulator's SimLink) asks for each
// command (forward it, delay it, hold it, drop it, drop its reply), and LinkFaultType, how a
// window step of that kind is read from a scenario and turned into policies.
//
// A link fault kind is one file (sim/fault/drop_commands.cc is the model): its CommandPolicy,
// its LinkFaultSettings and its LinkFaultType, plus its FaultKind enumerator in fault.h and its
// row in fault.cc, whose `link_fault` points at the type. The scenario parser accepts
// {"client": "A", "do": "<word>", ...} for every kind whose row has a type, the driver opens and
// closes its window, the nemesis installs a policy on each chosen link of the client's
// LinkProxy and records the kind's window; none of them names the kind.
//
// The policies are sans-I/O: they see a command's index and an instant, never a socket, so a
// unit test can drive one without a proxy.
//
//   const LinkFaultType* type = traits(FaultKind::kDropCommands).link_fault;
//   std::shared_ptr<const LinkFaultSettings> settings = type->parse(step_reader);
//   std::shared_ptr<CommandPolicy> policy = settings->make_policy();
//   CommandFate fate = policy->next(3, now);  // fate.drop_command for every == 3
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/clock.h"
#include "sim/json/json_reader.h"

namespace locksim {

// PartitionMode: what a partition does to the connections through a link (the proxy's or the simulator's).
enum class PartitionMode {
  // kHold: nothing is forwarded in either direction until heal(), which forwards what was held
  // in order. New connections are accepted and held the same way.
  kHold,
  // kReset: every connection is closed at once (the client sees it closed, the server too), and
  // new connections are accepted and closed at once until heal().
  kReset,
};

// CommandFate: what the link does with one command a client sent. Instants are nanoseconds of
// the link's clock: real_clock() for a LinkProxy, the simulation's virtual clock for a SimLink
// (sim/simulate/sim_link.h).
struct CommandFate {
  bool held = false;  // forwarded only after LinkProxy::release_held() or heal()
  Nanos due = 0;      // not forwarded before this instant
  // drop_reply: forwarded; the server runs it, and its reply is discarded (a lost reply).
  bool drop_reply = false;
  // drop_command: never forwarded and never answered (a lost request): the server does not run
  // it, and the reply pairing of the link skips it, so the client's call times out.
  bool drop_command = false;
};

// merge: the fate of a command that two sources decided on: held or dropped if either says so,
// due at the later of the two instants.
inline CommandFate merge(const CommandFate& first, const CommandFate& second) {
  return {.held = first.held || second.held,
          .due = first.due > second.due ? first.due : second.due,
          .drop_reply = first.drop_reply || second.drop_reply,
          .drop_command = first.drop_command || second.drop_command};
}

// CommandPolicy: decides the fate of every command on one client link (one LinkProxy or SimLink)
// while it is installed. Called once per complete command, in the order the link receives them
// from its connections (its renewal and wait connections count too), by one thread at a time (a
// LinkProxy's loop thread; in the simulator, the fiber that sends the command), so it needs no
// lock. It must not block, sleep or touch a socket: it returns at once.
class CommandPolicy {
 public:
  virtual ~CommandPolicy() = default;
  // next: the fate of the command_index-th command (1-based) since the policy was installed,
  // received in full at `now`.
  virtual CommandFate next(std::uint64_t command_index, Nanos now) = 0;
};

// LinkFaultSettings: one step's parameters of one kind ("every": 3), validated.
class LinkFaultSettings {
 public:
  virtual ~LinkFaultSettings() = default;
  // make_policy: a fresh policy for one link (each chosen link gets its own, so a policy may
  // keep state of its own link).
  virtual std::shared_ptr<CommandPolicy> make_policy() const = 0;
  // write: adds the kind's own keys to the step's entry in the resolved scenario.json, in a form
  // LinkFaultType::parse accepts again.
  virtual void write(nlohmann::json& step) const = 0;
};

// LinkFaultType: how a step of one kind is read. The window keys ("until", "max_ms", the
// duration key, "servers") and the common step keys are read by the scenario parser; `parse`
// reads only the kind's own `keys`.
struct LinkFaultType {
  // duration_key: the key of the window's exact duration in ms ("drop_ms").
  std::string_view duration_key;
  // keys: the kind's own keys beyond the window's.
  std::vector<std::string> keys;
  // parse: validates the kind's own keys of `step` (an object whose keys are all allowed);
  // throws InputError naming the file, the JSON path and what was expected.
  std::shared_ptr<const LinkFaultSettings> (*parse)(const json::JsonReader& step) = nullptr;
};

}  // namespace locksim
