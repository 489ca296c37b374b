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

// kStyle: one style sheet for every page. Safety colours (the cell's or row's background): red a
// violation, orange a liveness failure (deadlock), green no violation observed, grey undecided;
// whether the outcome is the expected one is a mark beside it (expect-*), and a cell not as
// expected has a dark frame too. Timeline colours: holds blue, the part of a hold past its lease
// orange, violations red, faults hatched purple, calls green (ok), magenta (refused or failed) or
// grey (unknown), the key's owners in a colour per client.
constexpr std::string_view kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;
padding:12px 20px 40px;color:#1d2330;background:#fff}
p,ul{max-width:1200px}
h1{font-size:22px;margin:8px 0 4px}h2{font-size:18px;margin:28px 0 6px}h3{font-size:15px;margin:16px 0 4px}
a{color:#1f5fbf}p.meta{color:#5a6272;margin:2px 0 10px}
table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #d5d9e0;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f3f5f8;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums}
.safety-violation{background:#f6c4c4}.safety-liveness{background:#fbd9a8}.safety-ok{background:#d6efdb}
.safety-unknown{background:#e4e6ea}.judged{font-size:11px;margin-left:4px;padding:0 3px;border-radius:3px;white-space:nowrap}
.judged-own{background:#8c1414;color:#fff}.judged-limit{border:1px dashed #8c1414;color:#8c1414}td.cell a{display:block;text-decoration:none;color:#1d2330}
td.cell a:hover{text-decoration:underline}td.empty{background:#fafbfc}
td.cell.outcome-mismatch,tr.outcome-mismatch td{box-shadow:inset 0 0 0 2px #1d2330}
.expect{display:inline-block;min-width:1.2em;text-align:center;font-weight:700;margin-left:6px;border-radius:3px}
.expect-ok{color:#1e6b2e}.expect-mismatch{color:#fff;background:#1d2330;padding:0 3px}
.expect-interrupted,.expect-error{color:#1d2330;border:1px solid #5a6272;padding:0 3px}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;margin-left:6px;vertical-align:middle}
.badge.safety-violation{color:#8c1414}.badge.safety-liveness{color:#7a4300}.badge.safety-ok{color:#1e6b2e}.badge.safety-unknown{color:#3d4452}
section.variant{border-top:2px solid #e1e5eb;margin-top:24px;padding-top:4px}
section.variant:target{background:#fffbe6}
ul.findings{padding-left:18px}li.finding{margin:3px 0}li.finding b{margin-right:4px}
li.finding.verdict{color:#8c1414}nav.files a{margin-right:12px}
li.finding.zoomable{cursor:pointer}li.finding.zoomable:hover,li.finding.zoomable:focus{text-decoration:underline dotted}
li.finding.selected{background:#fff1a8;outline:2px solid #e0b400}
figure.timeline{margin:8px 0}
.zoom{display:flex;gap:4px;align-items:center;flex-wrap:wrap;margin:4px 0;font-size:12px}
.zoom button{font:inherit;min-width:28px;padding:1px 8px;border:1px solid #b8bec8;background:#f6f7f9;border-radius:4px;cursor:pointer}
.zoom button:focus-visible{outline:2px solid #1f5fbf}.zoom output{margin:0 8px;min-width:25em;font-variant-numeric:tabular-nums}
svg.timeline{width:100%;height:auto;display:block;border:1px solid #e1e5eb;background:#fcfcfd;cursor:grab;touch-action:pan-y}
svg.timeline.dragging{cursor:grabbing}svg.timeline:focus-visible{outline:2px solid #1f5fbf}
svg text{font:11px system-ui,sans-serif;fill:#1d2330;pointer-events:none}svg .axis{stroke:#9aa1ad;stroke-width:1}
svg .grid{stroke:#eceef2;stroke-width:1}svg .hold{fill:#4a7bd0}svg .overrun{fill:#f08c2e}
svg .wait{fill:#d9dde4}svg .violation{fill:#d62828;fill-opacity:.9}svg .violation-band{fill:#d62828;fill-opacity:.10;pointer-events:none}
svg .lease-end{stroke:#1d2330;stroke-width:1.5}svg .renewal{fill:#fff;stroke:#2a8a3e;stroke-width:1.5}
svg .renewal-failed{fill:#fff;stroke:#d62828;stroke-width:1.5}svg .crash{stroke:#000;stroke-width:2;fill:none}
svg .fault{stroke:#7b3fb5;stroke-width:1}svg .fault-instant{stroke:#7b3fb5;stroke-width:2}
svg text.fencing{font-size:10px;fill:#fff;font-weight:600}svg text.fault-label{fill:#5b2a8c;font-size:10px}
svg .op{stroke:#fff;stroke-width:.5}svg .res-ok{fill:#3c9d5a}svg .res-fail{fill:#c2418f}svg .res-info{fill:#a0a6b1}
svg .res-work{fill:#bccbe8}svg .owner{stroke:#fff;stroke-width:.5}svg text.owner-label{font-size:10px;fill:#fff;font-weight:600}
svg .owner-0{fill:#3d6fb6}svg .owner-1{fill:#2f8f83}svg .owner-2{fill:#8a5cc2}svg .owner-3{fill:#b5651d}
svg .owner-4{fill:#5b7f2a}svg .owner-5{fill:#b8407a}svg .owner-6{fill:#4b5563}svg .owner-7{fill:#1f7a9c}
svg .key-end{stroke:#8c1414;stroke-width:1.5}svg .row-owner{fill:#f1f3f7}
svg .highlight{stroke:#111;stroke-width:2;stroke-opacity:1}
svg.focused .op:not(.highlight),svg.focused .hold:not(.highlight),svg.focused .owner:not(.highlight){opacity:.35}
.timeline-tip{position:fixed;z-index:10;max-width:440px;padding:6px 8px;background:#1d2330;color:#fff;font-size:12px;
line-height:1.4;border-radius:4px;white-space:pre-line;pointer-events:none;box-shadow:0 2px 6px rgba(0,0,0,.25)}
.timeline-tip[hidden]{display:none}
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

std::string_view safety_of(std::string_view verdict_word) {
  if (verdict_word == "mutex_violation" || verdict_word == "resource_corrupted") return "violation";
  if (verdict_word == "deadlock") return "liveness";
  if (verdict_word == "ok") return "ok";
  return "unknown";
}

std::string_view safety_words(std::string_view safety) {
  if (safety == "violation") return "violation: mutual exclusion or the protected resource broken";
  if (safety == "liveness") return "liveness: the lock got stuck (deadlock)";
  if (safety == "ok") return "ok: no violation observed (evidence, not proof)";
  return "unknown: the run could not decide, or the lock or the server did not work";
}

std::string expectation_mark(std::string_view outcome) {
  std::string_view symbol = "&#10003;";
  std::string_view meaning = "as the scenario expects";
  if (outcome == "mismatch") {
    symbol = "&#10007;";
    meaning = "not as the scenario expects";
  } else if (outcome == "interrupted") {
    symbol = "?";
    meaning = "interrupted: the run did not finish";
  } else if (outcome == "error") {
    symbol = "!";
    meaning = "the harness could not finish (a server was lost or died)";
  }
  return "<span class=\"expect expect-" + escape(outcome) + "\" title=\"" + std::string(meaning) +
         "\">" + std::string(symbol) + "</span>";
}

std::string judged_mark(std::string_view judged, std::string_view why) {
  if (judged != "own" && judged != "limit") return "";
  return "<span class=\"judged judged-" + std::string(judged) + "\" title=\"" + escape(why) +
         "\">" + (judged == "own" ? "own bug" : "lease limit") + "</span>";
}

void safety_legend(std::string& out) {
  out += "<p class=\"legend safety-legend\">";
  for (const std::string_view safety : {"violation", "liveness", "ok", "unknown"}) {
    out += "<span><i class=\"safety-" + std::string(safety) + "\"></i>" +
           escape(safety_words(safety)) + "</span>";
  }
  out +=
      "<span>" + expectation_mark("ok") + " as the scenario expects</span><span>" +
      expectation_mark("mismatch") + " not as expected (framed)</span><span>" +
      expectation_mark("interrupted") + " interrupted</span><span>" + expectation_mark("error") +
      " harness error</span><span>" + judged_mark("own", "") +
      " a violation the reference lock of its kind does not show here</span><span>" +
      judged_mark("limit", "") +
      " a limit every lease has: the reference shows it too (lease ends, lost keys)</span></p>\n";
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
