// html_text.h (internal to report/): what the HTML pages share: escaping, the page frame and its
// style sheet, the colours of safety and the marks of expectation. The pages are self-contained:
// no font, no image, no script from anywhere else (report.html carries its own script inline); a
// picture is inline SVG.
//
//   std::string page;
//   open_page(page, "stale-release");
//   page += "<p>" + html_escape(words) + "</p>";
//   close_page(page);
#pragma once

#include <string>
#include <string_view>

namespace locksim::html {

// escape: `text` with &, <, >, " and ' replaced, safe in element text and in quoted attributes.
std::string escape(std::string_view text);
// url_path: a relative path as an href: each byte outside [A-Za-z0-9-._~/] percent-encoded.
std::string url_path(std::string_view path);
// anchor: an element id for `name` ("v-" + name with characters outside [A-Za-z0-9-_] as "_").
std::string anchor(std::string_view prefix, std::string_view name);

// open_page: the doctype, head (title, style sheet) and the opening body tag.
void open_page(std::string& out, std::string_view title);
void close_page(std::string& out);

// outcome_word: "ok" (as the scenario expects), "mismatch", "interrupted" or "error" (the harness
// could not finish: a server lost or died): whether the outcome is the expected one, shown as a
// mark (expectation_mark), never as the colour.
std::string_view outcome_word(bool matches, bool interrupted, bool harness_error);

// safety_of: what an observed verdict (its word: "mutex_violation", "deadlock", ...) tells someone
// asking "is my lock safe?", the class suffix (`safety-<word>`) every page colours by:
// "violation" (mutual exclusion or the protected resource broken: red), "liveness" (the lock got
// stuck: a deadlock, orange), "ok" (no violation observed: green) or "unknown" (the run could not
// decide, or the lock or the server did not work; any other word: grey). Whether the scenario
// expected it does not change the colour.
std::string_view safety_of(std::string_view verdict_word);
// safety_words: the legend's words for a safety_of class ("violation: ...").
std::string_view safety_words(std::string_view safety);
// expectation_mark: the mark beside an outcome_word: a check mark (as expected), a cross (not as
// expected), "?" (interrupted) or "!" (the harness could not finish), as a
// <span class="expect expect-<outcome>"> with its meaning as the title.
std::string expectation_mark(std::string_view outcome);
// judged_mark: a violation's judgement beside its verdict ("own" bug, or "limit" every lease has;
// VariantRun::judged) as a small label whose title says why; "" when not judged.
std::string judged_mark(std::string_view judged, std::string_view why);
// safety_legend: a paragraph (class "legend safety-legend") with the four colours and the marks.
void safety_legend(std::string& out);

// format_ms: "552.4 ms", "1.25 s" for 1250 ms and more.
std::string format_ms(double ms);

}  // namespace locksim::html
