#include "sim/report/run_record.h"

namespace locksim {
namespace {

std::string with_causes(Verdict verdict, const std::vector<std::string>& causes) {
  std::string text(to_string(verdict));
  if (causes.empty()) return text;
  text += " (";
  for (std::size_t i = 0; i < causes.size(); ++i) text += (i ? ", " : "") + causes[i];
  return text + ")";
}

}  // namespace

bool matches_expectation(const Expectation& expected, const CheckResult& result) {
  if (expected.verdict != result.verdict) return false;
  if (!expected.causes) return true;
  const std::vector<std::string> observed = result.causes();
  return std::set<std::string>(observed.begin(), observed.end()) == *expected.causes;
}

std::string describe_expectation(const Expectation& expected) {
  if (!expected.causes) return std::string(to_string(expected.verdict));
  return with_causes(expected.verdict,
                     std::vector<std::string>(expected.causes->begin(), expected.causes->end()));
}

std::string describe_observation(const CheckResult& result) {
  return with_causes(result.verdict, result.causes());
}

}  // namespace locksim
