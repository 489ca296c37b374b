// junit.h: JUnit XML, the test report format CI systems read (Jenkins, GitLab, GitHub Actions'
// test reporters), for `locksim run --junit FILE`.
//
// One <testsuite> per scenario, one <testcase> per variant run (classname "locksim.<scenario>",
// name the variant, with "#<n>" for the repetition when there are several). A run whose outcome
// is not its scenario's expectation is a <failure> whose message is "expected X, observed Y" and
// whose text is the findings in words; a run the harness could not finish (the server was lost or
// died) is an <error>; an interrupted one is <skipped>. The report's path goes to <system-out>.
// tests/junit/junit.xsd is the schema the output is checked against (tests/cli/junit_test.sh).
//
//   JunitSuite suite{.name = "stale-release"};
//   suite.cases.push_back({.classname = "locksim.stale-release", .name = "set_nx_ex", ...});
//   write_file_atomically(path, junit_xml({suite}, "locksim run"));
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace locksim {

struct JunitCase {
  enum class Status { kPassed, kFailed, kError, kSkipped };
  std::string classname;
  std::string name;
  double seconds = 0;
  Status status = Status::kPassed;
  std::string message;  // kFailed, kError, kSkipped: one line
  std::string text;     // kFailed, kError: the details (findings in words), any length
  std::string output;   // <system-out>: where the run's reports are
};

struct JunitSuite {
  std::string name;
  std::vector<JunitCase> cases;
};

// junit_xml: the document, <testsuites name="`title`"> with every suite and the counts (tests,
// failures, errors, skipped, time) at both levels. Text and attributes are escaped, and characters
// XML 1.0 cannot carry (control characters, invalid UTF-8) are replaced with U+FFFD, so any
// finding's words give a well-formed document.
std::string junit_xml(const std::vector<JunitSuite>& suites, std::string_view title);

// junit_path_problem: why `path` cannot take the JUnit file ("" if it can), as
// output_file_problem (sim/core/atomic_file.h) says, after "--junit: ". Commands check it before
// they run anything.
std::string junit_path_problem(const std::string& path);

// xml_escape: `text` as XML character data or an attribute value (quotes escaped too).
std::string xml_escape(std::string_view text);

}  // namespace locksim
