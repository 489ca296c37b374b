#include "sim/report/html_text.h"

#include <cstdio>

namespace locksim::html {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string url_path(std::string_view path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    const bool plain = (byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z') ||
                       (byte >= '0' && byte <= '9') || c == '-' || c == '.' || c == '_' ||
                       c == '~' || c == '/';
    if (plain) {
      out += c;
    } else {
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 0xF];
    }
  }
  return out;
}

std::string anchor(std::string_view prefix, std::string_view name) {
  std::string out(prefix);
  out += '-';
  for (const char c : name) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '-' || c == '_';
    out += plain ? c : '_';
  }
  return out;
}

namespace {

// kStyle: one style sheet for every page. Outcome colours: green as expected, red a mismatch,
// grey interrupted, amber the harness could not finish. Timeline colours: holds blue, the part
// of a hold past its lease orange, violations red, faults hatched purple, waits light grey.
constexpr std::string_view kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1200px;
padding:12px 20px 40px;color:#1d2330;background:#fff}
h1{font-size:22px;margin:8px 0 4px}h2{font-size:18px;margin:28px 0 6px}h3{font-size:15px;margin:16px 0 4px}
a{color:#1f5fbf}p.meta{color:#5a6272;margin:2px 0 10px}
table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #d5d9e0;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f3f5f8;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums}
.outcome-ok{background:#e3f4e6}.outcome-mismatch{background:#fbe0e0}.outcome-interrupted{background:#eceef1}
.outcome-error{background:#fdf0d2}td.cell a{display:block;text-decoration:none;color:#1d2330}
td.cell a:hover{text-decoration:underline}td.empty{background:#fafbfc}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;margin-left:6px;vertical-align:middle}
.badge.outcome-ok{color:#1e6b2e}.badge.outcome-mismatch{color:#a11d1d}.badge.outcome-error{color:#7a5300}
section.variant{border-top:2px solid #e1e5eb;margin-top:24px;padding-top:4px}
section.variant:target{background:#fffbe6}
ul.findings{padding-left:18px}li.finding{margin:3px 0}li.finding b{margin-right:4px}
li.finding.verdict{color:#8c1414}nav.files a{margin-right:12px}
svg.timeline{width:100%;height:auto;display:block;border:1px solid #e1e5eb;background:#fcfcfd}
svg text{font:11px system-ui,sans-serif;fill:#1d2330}svg .axis{stroke:#9aa1ad;stroke-width:1}
svg .grid{stroke:#eceef2;stroke-width:1}svg .hold{fill:#4a7bd0}svg .overrun{fill:#f08c2e}
svg .wait{fill:#d9dde4}svg .violation{fill:#d62828;fill-opacity:.9}svg .violation-band{fill:#d62828;fill-opacity:.10}
svg .lease-end{stroke:#1d2330;stroke-width:1.5}svg .renewal{fill:#fff;stroke:#2a8a3e;stroke-width:1.5}
svg .renewal-failed{fill:#fff;stroke:#d62828;stroke-width:1.5}svg .crash{stroke:#000;stroke-width:2}
svg .fault{stroke:#7b3fb5;stroke-width:1}svg .fault-instant{stroke:#7b3fb5;stroke-width:2}
svg text.fencing{font-size:10px;fill:#fff;font-weight:600}svg text.fault-label{fill:#5b2a8c;font-size:10px}
.legend span{display:inline-block;margin-right:14px;font-size:12px}.legend i{display:inline-block;width:14px;height:10px;margin-right:4px;vertical-align:middle}
.note{color:#5a6272;font-size:13px}div.wide{overflow-x:auto}table.matrix th{white-space:nowrap}
span.point{display:inline-block;padding:0 6px;margin-right:2px;border-radius:3px}details{margin:6px 0}img.plot{max-width:100%;border:1px solid #e1e5eb;margin:6px 0}
)";

}  // namespace

void open_page(std::string& out, std::string_view title) {
  out += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<title>" + escape(title) + "</title>\n<style>";
  out += kStyle;
  out += "</style></head>\n<body>\n";
}

void close_page(std::string& out) { out += "</body></html>\n"; }

std::string_view outcome_word(bool matches, bool interrupted, bool harness_error) {
  if (interrupted) return "interrupted";
  if (harness_error) return "error";
  return matches ? "ok" : "mismatch";
}

std::string format_ms(double ms) {
  char text[48];
  if (ms >= 1000 || ms <= -1000) {
    std::snprintf(text, sizeof text, "%.2f s", ms / 1000);
  } else {
    std::snprintf(text, sizeof text, "%.1f ms", ms);
  }
  return text;
}

}  // namespace locksim::html
