// `locksim export RUN --format knossos|porcupine`: one variant's history in the form Jepsen's
// checkers (Knossos, elle-cli) or Porcupine read (sim/report/export.h says how it maps).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>

#include "sim/app/commands.h"
#include "sim/app/did_you_mean.h"
#include "sim/core/atomic_file.h"
#include "sim/core/error.h"
#include "sim/history/jsonl.h"
#include "sim/json/file.h"
#include "sim/json/parse.h"
#include "sim/report/export.h"

namespace locksim {

namespace fs = std::filesystem;

namespace {

// header_client_count: how many clients the header (line 1) of the history at `path` names;
// nullopt for a history without one (schema 1). The reader adds a client no header names as it
// meets it, so only the header tells an event of a stranger from one of the run's clients.
std::optional<std::size_t> header_client_count(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  char c = 0;
  while (line.size() <= json::kHistoryLineLimits.max_bytes && in.get(c) && c != '\n') line += c;
  if (line.empty() || line.size() > json::kHistoryLineLimits.max_bytes) return std::nullopt;
  const nlohmann::json header =
      json::parse_json_line(line, path.string(), 1, json::kHistoryLineLimits);
  if (!header.is_object() || !header.contains("history_schema") || !header.contains("clients") ||
      !header.at("clients").is_array()) {
    return std::nullopt;
  }
  return header.at("clients").size();
}

// check_clients_named: refuses a history with an event of a client its header does not name
// (a hand-edited or spliced file): exported, it would be a process of nobody's run.
void check_clients_named(const fs::path& path, const History& history) {
  const std::optional<std::size_t> named = header_client_count(path);
  if (!named || history.clients.size() <= *named) return;
  std::string header;
  for (std::size_t i = 0; i < *named; ++i) header += (i == 0 ? "" : ", ") + history.clients[i];
  for (std::size_t i = 0; i < history.events.size(); ++i) {
    if (history.events[i].client < 0 ||
        static_cast<std::size_t>(history.events[i].client) < *named) {
      continue;
    }
    throw InputError(path.string() + ": event " + std::to_string(i) + " is of client \"" +
                     history.clients[static_cast<std::size_t>(history.events[i].client)] +
                     "\", which the header's clients (" + header + ") do not name; not exported");
  }
}

}  // namespace

int export_command(const ExportOptions& options) {
  try {
    const ExportFormat format =
        options.format == "porcupine" ? ExportFormat::kPorcupine : ExportFormat::kKnossos;
    const std::vector<fs::path> dirs = variant_dirs_of(options.run_dir);
    fs::path chosen;
    std::vector<std::string> variants;
    for (const fs::path& dir : dirs) variants.push_back(dir.filename().string());
    if (!options.variant.empty()) {
      for (const fs::path& dir : dirs) {
        if (dir.filename() == options.variant) chosen = dir;
      }
      if (chosen.empty()) {
        throw InputError("--variant " + options.variant + ": not in " + options.run_dir +
                         did_you_mean(options.variant, variants) + "; it has " + [&] {
                           std::string list;
                           for (const std::string& v : variants)
                             list += (list.empty() ? "" : ", ") + v;
                           return list;
                         }());
      }
    } else if (dirs.size() == 1) {
      chosen = dirs.front();
    } else {
      std::string list;
      for (const std::string& v : variants) list += (list.empty() ? "" : ", ") + v;
      throw InputError(options.run_dir + ": holds the runs of several variants (" + list +
                       "); choose one with --variant");
    }
    // A FIFO or a device named history.jsonl would block or never end the reader.
    json::require_regular_file(chosen / "history.jsonl", "history file");
    const History history = read_history_jsonl(chosen / "history.jsonl");
    check_clients_named(chosen / "history.jsonl", history);
    const std::vector<std::string> keys = lock_keys(history);
    std::string key = options.key;
    if (key.empty()) {
      if (keys.size() != 1) {
        std::string list;
        for (const std::string& k : keys) list += (list.empty() ? "" : ", ") + k;
        throw InputError((chosen / "history.jsonl").string() +
                         (keys.empty()
                              ? ": no acquire or release to export"
                              : ": locks several keys (" + list + "); choose one with --key"));
      }
      key = keys.front();
    } else if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      throw InputError("--key " + key + ": no acquire or release of it in " +
                       (chosen / "history.jsonl").string() + did_you_mean(key, keys));
    }
    if (options.out.empty()) {
      export_history(history, key, format, [](std::string_view chunk) { std::cout << chunk; });
      std::cout.flush();
    } else {
      AtomicFile file(options.out);
      export_history(history, key, format, [&](std::string_view chunk) { file.write(chunk); });
      file.commit();
      std::cerr << "locksim: " << options.out << ": " << chosen.filename().string() << " / " << key
                << " as " << options.format << "\n";
    }
    return kExitOk;
  } catch (const InputError& e) {
    std::cerr << "locksim: " << e.what() << "\n";
    return kExitUsage;
  } catch (const fs::filesystem_error& e) {
    std::cerr << "locksim: " << e.what() << "\n";
    return kExitUsage;
  } catch (const EnvironmentError& e) {
    std::cerr << "locksim: " << e.what() << "\n";
    return kExitEnvironment;
  }
}

}  // namespace locksim
