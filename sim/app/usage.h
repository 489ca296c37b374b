// usage.h: the command line's errors in locksim's voice. CLI11 finds what is wrong with argv;
// usage_error says it as every other locksim message does: the command, the flag or argument as
// the user types it (never an internal name), a "did you mean" for a misspelt flag, and where the
// help is. Every such error is a usage error: exit 2.
//
//   try {
//     app.parse(argc, argv);
//   } catch (const CLI::ParseError& e) {
//     return usage_error(app, e);  // --help and --version: printed, 0
//   }
//   // locksim: audit: missing FILE (your lock's variant file(s)); see locksim audit --help
//   // locksim: explore: unknown flag --varient (did you mean "--variant"?); see locksim explore
//   // --help
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace locksim {

// usage_error: prints `error` (thrown by app.parse) on stderr in locksim's words and returns the
// exit code: 0 after --help or --version (printed by CLI11), 2 otherwise.
int usage_error(CLI::App& app, const CLI::ParseError& error);

}  // namespace locksim
