// `locksim report [DIR]`: writes DIR/index.html over the reports in DIR (sim/report/html_index.h);
// `run` and `contend` call write_index at their end, so the page is always there after a run.
#include <filesystem>
#include <iostream>

#include "sim/app/commands.h"
#include "sim/core/error.h"
#include "sim/report/files.h"
#include "sim/report/html_index.h"

namespace locksim {

namespace fs = std::filesystem;

void write_index(const fs::path& out_dir, IndexSummary* summary) {
  write_file_atomically(out_dir / "index.html", index_html(out_dir, summary));
}

void refresh_index(const fs::path& out_dir) {
  try {
    write_index(out_dir, nullptr);
    std::cout << "Index: " << (out_dir / "index.html").string() << "\n";
  } catch (const std::exception& e) {
    // The runs and their reports are written; a page over them that could not be is worth a
    // word, not a different exit code.
    std::cerr << "locksim: could not write the index: " << e.what() << "\n";
  }
}

int report_command(const ReportOptions& options) {
  std::error_code error;
  if (!fs::is_directory(options.dir, error)) {
    std::cerr << "locksim report: " << options.dir
              << ": not a directory (expected the --out directory of locksim run, e.g. reports)\n";
    return kExitUsage;
  }
  try {
    IndexSummary summary;
    write_index(options.dir, &summary);
    std::cout << "wrote " << (fs::path(options.dir) / "index.html").string() << ": " << summary.runs
              << " scenario x variant outcomes in " << summary.result_sets << " result set"
              << (summary.result_sets == 1 ? "" : "s") << " (" << summary.mismatches
              << " not as expected), " << summary.sweeps << " sweep"
              << (summary.sweeps == 1 ? "" : "s") << ", " << summary.studies << " contention stud"
              << (summary.studies == 1 ? "y" : "ies");
    if (summary.unreadable > 0) std::cout << "; " << summary.unreadable << " files unreadable";
    std::cout << "\n";
    // A skipped run is said by name: a row missing from the page is otherwise easy to miss.
    for (const std::string& skipped : summary.malformed) {
      std::cerr << "locksim report: skipped " << skipped << "\n";
    }
    if (summary.unreadable > summary.malformed.size() && !summary.malformed.empty()) {
      std::cerr << "locksim report: (and " << summary.unreadable - summary.malformed.size()
                << " more unreadable files)\n";
    }
    return kExitOk;
  } catch (const EnvironmentError& e) {
    std::cerr << "locksim report: " << e.what() << "\n";
    return kExitEnvironment;
  }
}

}  // namespace locksim
