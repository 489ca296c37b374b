// junit_test: JUnit XML's escaping and counts. The whole document is validated against
// tests/junit/junit.xsd by tests/cli/junit_test.sh, on a real run.
#include "sim/report/junit.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace locksim {
namespace {

// Proves markup, quotes, newlines and tabs are escaped (an attribute keeps its newlines), and
// that what XML 1.0 cannot carry (control characters, invalid or overlong UTF-8, surrogates)
// becomes U+FFFD while valid UTF-8 passes through.
TEST(Junit, EscapesWhatXmlCannotCarry) {
  EXPECT_EQ(xml_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(xml_escape("one\ntwo\tthree\r"), "one&#10;two&#9;three&#13;");
  EXPECT_EQ(xml_escape(std::string("x\x01y\x1b", 4)), "x\xEF\xBF\xBDy\xEF\xBF\xBD");
  EXPECT_EQ(xml_escape(std::string("\0", 1)), "\xEF\xBF\xBD");
  EXPECT_EQ(xml_escape("caf\xC3\xA9 \xE2\x80\x94 \xF0\x9F\x94\x92"),
            "caf\xC3\xA9 \xE2\x80\x94 \xF0\x9F\x94\x92");
  EXPECT_EQ(xml_escape("\xC3"), "\xEF\xBF\xBD");                  // truncated sequence
  EXPECT_EQ(xml_escape("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '/'
  EXPECT_EQ(xml_escape("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(xml_escape("\xEF\xBF\xBE"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // U+FFFE
}

// Proves each level counts its own cases by status and sums their times, and that a failure
// carries its message and text, an error its own element, a skip no text.
TEST(Junit, CountsAndOutcomes) {
  const auto make = [](std::string classname, std::string name, double seconds,
                       JunitCase::Status status, std::string message, std::string text) {
    JunitCase c;
    c.classname = std::move(classname);
    c.name = std::move(name);
    c.seconds = seconds;
    c.status = status;
    c.message = std::move(message);
    c.text = std::move(text);
    return c;
  };
  using Status = JunitCase::Status;
  JunitSuite first{.name = "s1", .cases = {}};
  first.cases.push_back(make("locksim.s1", "ok", 0.25, Status::kPassed, "", ""));
  first.cases.push_back(make("locksim.s1", "bad", 0.5, Status::kFailed,
                             "expected ok, observed deadlock", "A waited <forever>"));
  JunitSuite second{.name = "s2", .cases = {}};
  second.cases.push_back(make("locksim.s2", "lost", 0, Status::kError, "server lost", ""));
  second.cases.push_back(make("locksim.s2", "cut", 0, Status::kSkipped, "interrupted", ""));
  const std::string xml = junit_xml({first, second}, "locksim run");
  EXPECT_NE(xml.find("<testsuites name=\"locksim run\" tests=\"4\" failures=\"1\" errors=\"1\" "
                     "skipped=\"1\" time=\"0.750\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<testsuite name=\"s1\" tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"0\" "
                     "time=\"0.750\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<failure message=\"expected ok, observed deadlock\" type=\"mismatch\">A "
                     "waited &lt;forever&gt;</failure>"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<error message=\"server lost\" type=\"harness\"></error>"), std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<skipped message=\"interrupted\"/>"), std::string::npos) << xml;
  EXPECT_EQ(xml.rfind("</testsuites>\n"), xml.size() - 14);
}

}  // namespace
}  // namespace locksim
