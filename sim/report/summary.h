// summary.h: summary.md, the page a person reads first: the variant x outcome table, then every
// anomaly of every variant in words, the driver's notes and the key numbers.
#pragma once

#include <string>
#include <vector>

#include "sim/report/run_record.h"

namespace locksim {

std::string summary_markdown(const Scenario& scenario, const std::vector<VariantRun>& runs,
                             const RunInfo& info);

}  // namespace locksim
