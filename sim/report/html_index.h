// html_index.h: index.html over an output directory (reports/ by default), the one page to open
// after a run: the scenario x variant matrix of the latest run of every scenario (a cell per
// outcome, coloured by safety with a mark for "as expected" or not, html_text.h; linked to the
// variant's section of that run's report.html; as wide as the window, scrolling sideways only
// when it does not fit), the same matrix for each result set one level down (reports/threads,
// reports/libraries), the sweep maps (*.map.json, with their plots when scripts/plot_sweep.py drew
// them) and the latest contention studies (contention/latest/contention.json, with their plots). It
// reads only locksim's JSON outputs, so it can be written again at any time (`locksim report DIR`).
//
// Reading is bounded: a results.json or contention.json larger than kMaxIndexedFileBytes, a
// file that is not a regular file, one that does not parse, or one with a field of the wrong type
// is listed as unreadable and left out (a run's whole row, a sweep map, a contention file);
// at most kMaxIndexedScenarios scenarios per result set are shown.
//
//   write_file_atomically(out / "index.html", index_html(out));
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace locksim {

inline constexpr std::uintmax_t kMaxIndexedFileBytes = std::uintmax_t{64} << 20;
inline constexpr std::size_t kMaxIndexedScenarios = 2000;
// kMaxNamedMalformed: how many skipped files IndexSummary::malformed names (the rest are counted).
inline constexpr std::size_t kMaxNamedMalformed = 20;

// IndexSummary: what index_html found, for the command that wrote it to say.
struct IndexSummary {
  std::size_t result_sets = 0;
  std::size_t runs = 0;        // scenario x variant cells
  std::size_t mismatches = 0;  // cells whose outcome differs from the expectation
  std::size_t sweeps = 0;
  std::size_t studies = 0;
  std::size_t unreadable = 0;  // files skipped (too large, special, malformed)
  // malformed: the first kMaxNamedMalformed files that parsed but had a field of the wrong type
  // ("context": [], "matches": "yes"), each "<path>: <what>"; they are left out of the page.
  std::vector<std::string> malformed;
};

// index_html: the page for `out_dir`; links are relative to it. Throws EnvironmentError if
// `out_dir` is not a readable directory.
std::string index_html(const std::filesystem::path& out_dir, IndexSummary* summary = nullptr);

}  // namespace locksim
