// html_text.h (internal to report/): what the HTML pages share: escaping, the page frame and its
// style sheet, and the colours of outcomes. The pages are self-contained: no script, no font, no
// image from anywhere else; a picture is inline SVG.
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

// OutcomeClass: "ok" (as expected), "mismatch", "interrupted" or "error" (the harness could not
// finish: a server lost or died), the class suffix every page colours by.
std::string_view outcome_word(bool matches, bool interrupted, bool harness_error);

// format_ms: "552.4 ms", "1.25 s" for 1250 ms and more.
std::string format_ms(double ms);

}  // namespace locksim::html
