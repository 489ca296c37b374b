// drop_commands: the link fault that swallows every Nth command on a client's link while its
// window is open, as a network that loses requests does: the server never runs them and the
// client's call times out ("info": it may or may not have happened, as far as the client knows).
//
//   {"client": "A", "do": "drop_commands", "every": 3, "until": {"done": "a-release"},
//    "max_ms": 3000}
//
// The whole kind is this file, its enumerator in fault.h and its row in fault.cc.
#include <cstdint>
#include <memory>

#include "sim/fault/fault.h"
#include "sim/fault/link_fault.h"

namespace locksim {
namespace {

// kMaxEvery: a bound on "every", so the word means something within one run.
constexpr std::int64_t kMaxEvery = 1000000;

class DropEveryNthCommand final : public CommandPolicy {
 public:
  explicit DropEveryNthCommand(std::uint64_t every) : every_(every) {}
  CommandFate next(std::uint64_t command_index, Nanos /*now*/) override {
    return {.drop_command = command_index % every_ == 0};
  }

 private:
  std::uint64_t every_;
};

class DropCommandsSettings final : public LinkFaultSettings {
 public:
  explicit DropCommandsSettings(std::int64_t every) : every_(every) {}
  std::shared_ptr<CommandPolicy> make_policy() const override {
    return std::make_shared<DropEveryNthCommand>(static_cast<std::uint64_t>(every_));
  }
  void write(nlohmann::json& step) const override { step["every"] = every_; }

 private:
  std::int64_t every_;
};

std::shared_ptr<const LinkFaultSettings> parse_drop_commands(const json::JsonReader& step) {
  const std::int64_t every =
      step.member("every").count(1, kMaxEvery, "a number of commands (1 drops every command)");
  return std::make_shared<DropCommandsSettings>(every);
}

}  // namespace

// fault.cc's row for FaultKind::kDropCommands points here.
extern const LinkFaultType kDropCommandsLinkFault;
const LinkFaultType kDropCommandsLinkFault = {
    .duration_key = "drop_ms", .keys = {"every"}, .parse = &parse_drop_commands};

}  // namespace locksim
