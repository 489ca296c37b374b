// `locksim export RUN --format knossos|porcupine`: one variant's history in the form Jepsen's
// checkers (Knossos, elle-cli) or Porcupine read (sim/report/export.h says how it maps).
#include <algorithm>
#include <filesystem>
#include <iostream>

#include "sim/app/commands.h"
#include "sim/app/did_you_mean.h"
#include "sim/core/error.h"
#include "sim/history/jsonl.h"
#include "sim/json/file.h"
#include "sim/report/export.h"
#include "sim/report/files.h"

namespace locksim {

namespace fs = std::filesystem;

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
    const std::string text = export_history(history, key, format);
    if (options.out.empty()) {
      std::cout << text;
    } else {
      write_file_atomically(options.out, text);
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
