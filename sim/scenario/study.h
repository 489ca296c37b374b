// study.h: contention studies, the input of `locksim contend`.
//
// A study file (scenarios/contention/*.json) names lock variants, wait strategies and client
// counts (and, for semaphores, permit counts); every combination is a *point*, run as a
// time-bounded workload (warm-up, then a measured window) and repeated `repetitions` times.
// load_studies validates the file as strictly as a scenario (every error names the file, the JSON
// path and what was expected) and expands it into one Scenario per point, which the driver runs
// like any other and the checker judges like any other (a correct lock must get `ok`).
//
//   std::vector<Study> studies = load_studies({"scenarios/contention"}, variant_names());
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sim/scenario/scenario.h"

namespace locksim {

struct StudyPoint {
  std::string variant;
  std::string strategy;  // the strategy's label ("poll-1ms", "notify")
  int clients = 1;
  int keys = 1;
  int permits = 1;    // lock.permits of a semaphore's point; 1 for a mutex
  double read_share = 0;  // a read-write lock's share of read holds (Workload::read_share)
  Scenario scenario;  // the workload that runs this point
};

struct Study {
  std::string name;
  std::string description;
  std::string file;
  std::vector<std::string> variants;
  std::vector<std::string> strategies;  // labels, in the listed order
  std::vector<int> clients;
  // permits: the permit counts to sweep ("permits": [1, 2, 4]); {1} when not given. More than
  // one, or one above 1, is for semaphore variants only (`locksim contend` refuses a mutex).
  std::vector<int> permits = {1};
  // read_shares: the shares of read holds to sweep ("read_share": [0, 0.5, 0.9]); {0} when not
  // given. Anything else is for read-write variants only (`locksim contend` refuses the others).
  std::vector<double> read_shares = {0};
  std::string keys;  // "1", "per_client" or a number, as given
  std::int64_t warmup_ms = 200;
  std::int64_t duration_ms = 1000;
  int repetitions = 1;
  double arrival_per_s = 0;  // 0: closed loop
  RangeMs work_ms{0, 0};
  RangeMs rest_ms{0, 0};
  // executor ("clients_run_as"): what runs every point's clients; a library needs kProcesses.
  Executor executor = Executor::kThreads;
  // topology ("topology": "cluster" or {"cluster": {...}}, as a scenario writes it): the points
  // run on a private Redis Cluster started for the study, their keys hash-tagged ("{lock-0}")
  // so that they spread over its primaries; unset ("single", the default): on the session's one
  // server (or --redis). Every point's scenario carries it too.
  std::optional<TopologySpec> topology;
  std::vector<StudyPoint>
      points;  // variant x strategy x permits x read share x clients, in that nesting
  nlohmann::json resolved;         // the study with every default filled in
  std::vector<std::string> notes;  // as Scenario::notes: a deprecated spelling, by file and field
};

// parse_study: one study document; `file` names it in messages.
Study parse_study(const nlohmann::json& document, const std::string& file,
                  const std::vector<std::string>& known_variants);
// load_studies: files, or directories whose *.json files are studies (in name order). Study
// names must be unique.
std::vector<Study> load_studies(const std::vector<std::filesystem::path>& paths,
                                const std::vector<std::string>& known_variants);

}  // namespace locksim
