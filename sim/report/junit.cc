#include "sim/report/junit.h"

#include <cstdint>
#include <cstdio>
#include <filesystem>

#include "sim/core/atomic_file.h"

namespace locksim {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

// utf8_sequence_length: the length of the valid UTF-8 sequence at the start of `text`, or 0.
std::size_t utf8_sequence_length(std::string_view text) {
  const auto byte = [&text](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  std::size_t length = 0;
  std::uint32_t code = 0;
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code = lead & 0x1Fu;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code = lead & 0x0Fu;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code = lead & 0x07u;
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0u) != 0x80u) return 0;
    code = (code << 6) | (byte(i) & 0x3Fu);
  }
  // Overlong forms, surrogates, beyond U+10FFFF, and U+FFFE/U+FFFF are not XML characters.
  const bool overlong = (length == 3 && code < 0x800) || (length == 4 && code < 0x10000);
  if (overlong || (code >= 0xD800 && code <= 0xDFFF) || code > 0x10FFFF || code == 0xFFFE ||
      code == 0xFFFF) {
    return 0;
  }
  return length;
}

std::string seconds_text(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f", seconds < 0 ? 0.0 : seconds);
  return buffer;
}

struct Counts {
  int tests = 0;
  int failures = 0;
  int errors = 0;
  int skipped = 0;
  double seconds = 0;
  void add(const JunitCase& c) {
    ++tests;
    failures += c.status == JunitCase::Status::kFailed ? 1 : 0;
    errors += c.status == JunitCase::Status::kError ? 1 : 0;
    skipped += c.status == JunitCase::Status::kSkipped ? 1 : 0;
    seconds += c.seconds;
  }
  std::string attributes() const {
    return " tests=\"" + std::to_string(tests) + "\" failures=\"" + std::to_string(failures) +
           "\" errors=\"" + std::to_string(errors) + "\" skipped=\"" + std::to_string(skipped) +
           "\" time=\"" + seconds_text(seconds) + "\"";
  }
};

void write_case(std::string& out, const JunitCase& c) {
  out += "    <testcase classname=\"" + xml_escape(c.classname) + "\" name=\"" +
         xml_escape(c.name) + "\" time=\"" + seconds_text(c.seconds) + "\">\n";
  switch (c.status) {
    case JunitCase::Status::kPassed:
      break;
    case JunitCase::Status::kFailed:
      out += "      <failure message=\"" + xml_escape(c.message) + "\" type=\"mismatch\">" +
             xml_escape(c.text) + "</failure>\n";
      break;
    case JunitCase::Status::kError:
      out += "      <error message=\"" + xml_escape(c.message) + "\" type=\"harness\">" +
             xml_escape(c.text) + "</error>\n";
      break;
    case JunitCase::Status::kSkipped:
      out += "      <skipped message=\"" + xml_escape(c.message) + "\"/>\n";
      break;
  }
  if (!c.output.empty()) out += "      <system-out>" + xml_escape(c.output) + "</system-out>\n";
  out += "    </testcase>\n";
}

}  // namespace

std::string junit_path_problem(const std::string& path) {
  const std::string problem = output_file_problem(path);
  return problem.empty() ? "" : "--junit: " + problem;
}

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x80) {
      switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&apos;"; break;
        case '\t': out += "&#9;"; break;   // kept as a tab inside attributes too
        case '\n': out += "&#10;"; break;  // an attribute would fold a raw newline to a space
        case '\r': out += "&#13;"; break;
        default:
          if (u < 0x20 || u == 0x7F) {
            out += kReplacement;
          } else {
            out += c;
          }
      }
      ++i;
      continue;
    }
    const std::size_t length = utf8_sequence_length(text.substr(i));
    if (length == 0) {
      out += kReplacement;
      ++i;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

std::string junit_xml(const std::vector<JunitSuite>& suites, std::string_view title) {
  Counts all;
  std::string body;
  for (const JunitSuite& suite : suites) {
    Counts counts;
    for (const JunitCase& c : suite.cases) counts.add(c);
    body += "  <testsuite name=\"" + xml_escape(suite.name) + "\"" + counts.attributes() + ">\n";
    for (const JunitCase& c : suite.cases) {
      write_case(body, c);
      all.add(c);
    }
    body += "  </testsuite>\n";
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"" + xml_escape(title) +
         "\"" + all.attributes() + ">\n" + body + "</testsuites>\n";
}

}  // namespace locksim
