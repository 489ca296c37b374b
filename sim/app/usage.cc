#include "sim/app/usage.h"

#include <algorithm>
#include <cctype>
#include <iostream>
#include <string_view>
#include <vector>

#include "sim/app/commands.h"
#include "sim/app/did_you_mean.h"

namespace locksim {
namespace {

// spellings_of: every way `command`'s options are written on the command line ("--variant",
// "-j", "--no-progress"), --help included.
std::vector<std::string> spellings_of(const CLI::App& command) {
  std::vector<std::string> spellings;
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) spellings.push_back("--" + name);
    for (const std::string& name : option->get_snames()) spellings.push_back("-" + name);
  }
  return spellings;
}

// public_commands: the commands a user may type (`worker` is run's own).
std::vector<const CLI::App*> public_commands(const CLI::App& app) {
  std::vector<const CLI::App*> commands;
  for (const CLI::App* command : app.get_subcommands({})) {
    if (command->get_name() != "worker") commands.push_back(command);
  }
  return commands;
}

// first_line_lowercase: the first line of an option's description, starting lower case unless
// it starts with an acronym ("TTL ..."), for a parenthesis after its name.
std::string first_line_lowercase(const std::string& description) {
  std::string line = description.substr(0, description.find('\n'));
  if (line.size() > 1 && std::isupper(static_cast<unsigned char>(line[0])) &&
      !std::isupper(static_cast<unsigned char>(line[1]))) {
    line[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(line[0])));
  }
  return line;
}

// unknown_argument: what is wrong with the first argument `scope` did not take, or "" if it took
// every one: an unknown flag (with the nearest flag of the command, or the commands that have
// it), or an argument too many.
std::string unknown_argument(const CLI::App& app, const CLI::App& scope) {
  const std::vector<std::string> left = scope.remaining(false);
  if (left.empty()) return "";
  for (const std::string& argument : left) {
    if (argument.size() < 2 || argument[0] != '-') continue;
    const std::string flag = argument.substr(0, argument.find('='));
    std::string hint = did_you_mean(flag, spellings_of(scope));
    if (hint.empty()) {
      // A flag of another command ("explore --repeat"): say whose it is.
      std::string owners;
      for (const CLI::App* command : public_commands(app)) {
        if (command == &scope) continue;
        const std::vector<std::string> spellings = spellings_of(*command);
        if (std::find(spellings.begin(), spellings.end(), flag) != spellings.end()) {
          owners += (owners.empty() ? "" : ", ") + command->get_name();
        }
      }
      if (!owners.empty()) hint = " (a flag of " + owners + ", not of this command)";
    }
    return "unknown flag " + flag + hint;
  }
  return "unexpected argument \"" + left.front() + "\"" +
         (left.size() > 1 ? " (and " + std::to_string(left.size() - 1) + " more)" : "");
}

// missing_argument: the first required argument or flag of `scope` not given, with what it is:
// "missing FILE (your lock's variant file(s))"; for locksim itself, its command.
std::string missing_argument(const CLI::App& app, const CLI::App& scope) {
  if (&scope == &app) {
    std::string names;
    for (const CLI::App* command : public_commands(app)) {
      names += (names.empty() ? "" : ", ") + command->get_name();
    }
    return "missing command; the commands are " + names;
  }
  for (const CLI::Option* option : scope.get_options()) {
    if (!option->get_required() || option->count() > 0) continue;
    return "missing " + option->get_name() + " (" +
           first_line_lowercase(option->get_description()) + ")";
  }
  return "";
}

// begins_with: whether `text` starts with `prefix`.
bool begins_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// reworded: CLI11's own phrasing of a bad value, in locksim's ("--repeat: expected a number
// from 1 to 100000, got 0"); anything else as CLI11 said it.
std::string reworded(const std::string& message) {
  // "--repeat: Value 0 not in range 1 to 100000" (CLI::Range)
  if (const std::size_t at = message.find(": Value "); at != std::string::npos) {
    const std::size_t range = message.find(" not in range ", at);
    const std::size_t to = message.find(" to ", range == std::string::npos ? at : range + 14);
    if (range != std::string::npos && to != std::string::npos) {
      const std::string flag = message.substr(0, at);
      const std::string value = message.substr(at + 8, range - at - 8);
      const std::string low = message.substr(range + 14, to - range - 14);
      const std::string high = message.substr(to + 4);
      return flag + ": expected a whole number from " + low + " to " + high + ", got \"" + value +
             "\"";
    }
  }
  // "--clients: thread not in {threads,processes,event_loop}" (CLI::IsMember)
  if (const std::size_t open = message.rfind(" not in {");
      open != std::string::npos && message.back() == '}') {
    const std::size_t colon = message.find(": ");
    if (colon != std::string::npos && colon < open) {
      const std::string flag = message.substr(0, colon);
      const std::string value = message.substr(colon + 2, open - colon - 2);
      std::vector<std::string> members;
      std::string words;
      const std::string list = message.substr(open + 9, message.size() - open - 10);
      for (std::size_t from = 0; from <= list.size();) {
        const std::size_t comma = std::min(list.find(',', from), list.size());
        members.push_back(list.substr(from, comma - from));
        words += (words.empty() ? "" : ", ") + members.back();
        from = comma + 1;
      }
      return flag + ": expected one of " + words + ", got \"" + value + "\"" +
             did_you_mean(value, members);
    }
  }
  // "Could not convert: --repeat = abc" (a number that is none)
  if (begins_with(message, "Could not convert: ")) {
    const std::string rest = message.substr(19);
    const std::size_t equals = rest.find(" = ");
    if (equals != std::string::npos) {
      return rest.substr(0, equals) + ": expected a whole number, got \"" +
             rest.substr(equals + 3) + "\"";
    }
  }
  // "--variant: 1 required TEXT missing" (a flag given without its value)
  if (const std::size_t colon = message.find(": ");
      colon != std::string::npos && message.find(" required ") != std::string::npos &&
      message.size() > 8 && message.compare(message.size() - 8, 8, " missing") == 0) {
    return message.substr(0, colon) + ": needs a value";
  }
  // "--progress excludes --no-progress"
  if (const std::size_t excludes = message.find(" excludes "); excludes != std::string::npos) {
    return "give " + message.substr(0, excludes) + " or " + message.substr(excludes + 10) +
           ", not both";
  }
  return message;
}

}  // namespace

int usage_error(CLI::App& app, const CLI::ParseError& error) {
  if (error.get_exit_code() == 0) return app.exit(error);  // --help, --version
  const std::vector<CLI::App*> parsed = app.get_subcommands();
  const CLI::App& scope = parsed.empty() ? app : *parsed.front();
  const std::string command = &scope == &app ? "" : scope.get_name();
  // An argument the command did not take explains the rest (a value that went to the wrong
  // place, a required argument that seems missing), so it is said first.
  std::string message = unknown_argument(app, app);
  if (message.empty() && &scope != &app) message = unknown_argument(app, scope);
  if (message.empty() && dynamic_cast<const CLI::RequiredError*>(&error) != nullptr) {
    message = missing_argument(app, scope);
  }
  if (message.empty()) message = reworded(error.what());
  // "locksim: audit: missing FILE (...); see locksim audit --help": every error of locksim starts
  // "locksim: ", and the command's name says whose flags these are.
  std::cerr << "locksim: " << (command.empty() ? "" : command + ": ") << message << "; see locksim "
            << (command.empty() ? "" : command + " ") << "--help\n";
  return kExitUsage;
}

}  // namespace locksim
