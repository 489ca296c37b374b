#include "sim/report/html_timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "sim/fault/fault.h"
#include "sim/report/html_report.h"
#include "sim/report/html_text.h"

namespace locksim::html {
namespace {

// The timeline's geometry, in SVG user units (the picture scales to the page's width). The
// script reads the same numbers from the SVG's data-left and data-right.
constexpr double kWidth = 1000;
constexpr double kLeft = 96;  // row names
constexpr double kRight = 16;
constexpr double kTop = 10;
constexpr double kRowHeight = 32;
constexpr double kBarHeight = 14;  // a hold, at the top of its row
constexpr double kBarOffset = 4;
constexpr double kCallOffset = 21;  // the calls' lane under the holds
constexpr double kCallHeight = 8;
constexpr double kAxisHeight = 28;
// The narrowest marks before the script knows the page's width (about 1.15 px a unit at 1200 px).
constexpr double kMinViolationUnits = 5;
constexpr double kMinCallUnits = 2;
constexpr double kMinCallPx = 3;

double timeline_ms(Nanos ns) { return static_cast<double>(ns) / 1e6; }

// unit_text: a coordinate with one decimal.
std::string unit_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

// ms_attr: a time for the script, in ms with microsecond precision.
std::string ms_attr(Nanos ns) {
  char text[40];
  std::snprintf(text, sizeof text, "%.3f", timeline_ms(ns));
  return text;
}

// tick_step: the tick spacing, 1, 2 or 5 times a power of ten, for about `ticks` ticks over
// `span` ms (the script's niceStep).
double tick_step(double span, int ticks) {
  const double raw = std::max(span / ticks, 1e-3);
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double factor : {1.0, 2.0, 5.0}) {
    if (raw <= factor * power) return factor * power;
  }
  return 10 * power;
}

// short_name: a row name that fits the names' margin; the whole name is in the row's tooltip.
std::string short_name(const std::string& name) {
  constexpr std::size_t kMaxChars = 15;
  if (name.size() <= kMaxChars) return name;
  std::size_t cut = kMaxChars - 1;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;
  return name.substr(0, cut) + "\u2026";
}

// Call: one call of a client, from invoke to completion (or a single-moment event).
struct Call {
  int client = -1;
  Op op = Op::kAcquire;
  Nanos from_ns = 0;
  Nanos to_ns = 0;
  bool instant = false;
  std::string result;        // "ok", "refused", "failed", "unknown", "no answer", "work"
  std::string result_class;  // res-ok, res-fail, res-info, res-work
  std::string token;
  std::string reply;
  std::string server;
  std::string key;
  std::int32_t ttl_ms = -1;
};

// OwnerSpan: a stretch of time in which one client's grant of a key stood on the server.
struct OwnerSpan {
  int client = -1;
  std::string token;
  std::int32_t ttl_ms = -1;
  Nanos from_ns = 0;
  Nanos to_ns = 0;
  Nanos key_end_ns = -1;  // when its TTL runs out (renewals counted); -1: no TTL
  int renewals = 0;
  std::string end;  // how it ended, in words
};

class Timeline {
 public:
  Timeline(const VariantRun& run, int index) : run_(run), h_(run.history), index_(index) {
    for (const Event& e : h_.events) end_ns_ = std::max(end_ns_, e.time_ns);
    for (const HoldWindow& w : run.result.holds) end_ns_ = std::max(end_ns_, w.end_ns);
    for (const FaultWindow& f : run.result.faults) end_ns_ = std::max(end_ns_, f.to_ns);
    end_ns_ = std::max<Nanos>(end_ns_, 1'000'000);
    choose_rows();
  }

  std::string figure() {
    const double height = kTop + static_cast<double>(rows_.size()) * kRowHeight + kAxisHeight;
    const std::string id = "tl-" + std::to_string(index_);
    std::string out = "<figure class=\"timeline\" id=\"" + id + "\">\n";
    out +=
        "<div class=\"zoom\" role=\"toolbar\" aria-label=\"zoom the timeline\">"
        "<button type=\"button\" data-zoom=\"in\" title=\"zoom in (+)\">+</button>"
        "<button type=\"button\" data-zoom=\"out\" title=\"zoom out (-)\">&#8722;</button>"
        "<button type=\"button\" data-zoom=\"left\" title=\"pan left (&#8592;)\">&#9664;</button>"
        "<button type=\"button\" data-zoom=\"right\" title=\"pan right (&#8594;)\">&#9654;"
        "</button><button type=\"button\" data-zoom=\"reset\" title=\"the whole run (0)\">whole "
        "run</button><output class=\"view-span\">0.0 ms to " +
        escape(format_ms(timeline_ms(end_ns_))) +
        " (the whole run)</output><span class=\"note\">Ctrl+wheel zooms at the pointer, drag or "
        "Shift+wheel pans; hover a mark for details; click a finding to zoom to it.</span>"
        "</div>\n";
    out += "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " +
           unit_text(kWidth) + " " + unit_text(height) + "\" data-end-ms=\"" + ms_attr(end_ns_) +
           "\" data-from-ms=\"0.000\" data-to-ms=\"" + ms_attr(end_ns_) + "\" data-span-ms=\"" +
           ms_attr(end_ns_) + "\" data-left=\"" + unit_text(kLeft) + "\" data-right=\"" +
           unit_text(kWidth - kRight) + "\" data-top=\"" + unit_text(kTop) + "\" data-bottom=\"" +
           unit_text(height - kAxisHeight) +
           "\" tabindex=\"0\" role=\"img\" aria-label=\"timeline of " + escape(run_.variant) +
           "\">\n";
    const std::string hatch = "hatch-" + std::to_string(index_);
    const std::string clip = "clip-" + std::to_string(index_);
    out += "<defs><pattern id=\"" + hatch +
           "\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
           "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#efe6f8\"/>"
           "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#7b3fb5\" stroke-width=\"2\"/>"
           "</pattern><clipPath id=\"" +
           clip + "\"><rect x=\"" + unit_text(kLeft) + "\" y=\"0\" width=\"" +
           unit_text(kWidth - kLeft - kRight) + "\" height=\"" + unit_text(height) +
           "\"/></clipPath></defs>\n";
    out_ = std::move(out);
    labels();
    axis(height);
    out_ += "<g class=\"plot\" clip-path=\"url(#" + clip + ")\">\n";
    owners();
    waits();
    holds();
    calls();
    marks();
    faults(hatch);
    violations(height);
    out_ += "</g>\n</svg>\n</figure>\n";
    return std::move(out_);
  }

  const std::vector<std::string>& left_out() const { return left_out_; }

 private:
  double x(Nanos t) const {
    const double share =
        std::clamp(static_cast<double>(t) / static_cast<double>(end_ns_), 0.0, 1.0);
    return kLeft + share * (kWidth - kLeft - kRight);
  }
  double row_top(int row) const { return kTop + row * kRowHeight; }
  // row_y: the top of the hold bar of `client`'s row, or -1 if its row is not drawn.
  double row_y(int client) const {
    const auto found = row_of_.find(client);
    if (found == row_of_.end()) return -1;
    return row_top(found->second) + kBarOffset;
  }

  // choose_rows: a row per lock key's owner (at most kMaxOwnerRows); every client with something
  // to draw, or the first kMaxTimelineRows of: the clients named by a verdict-bearing finding,
  // then the others in order; then a row per server that a server fault hit.
  void choose_rows() {
    for (const Event& e : h_.events) {
      if (e.f != Op::kAcquire || e.key == 0) continue;
      if (std::find(owner_keys_.begin(), owner_keys_.end(), e.key) != owner_keys_.end()) continue;
      owner_keys_.push_back(e.key);
    }
    if (owner_keys_.size() > kMaxOwnerRows) {
      left_out_.push_back("the owners of " + std::to_string(owner_keys_.size() - kMaxOwnerRows) +
                          " more lock keys");
      owner_keys_.resize(kMaxOwnerRows);
    }
    for (const KeyId key : owner_keys_) rows_.push_back("owner of " + h_.keys[key]);
    std::vector<int> order;
    std::vector<bool> taken(h_.clients.size(), false);
    for (const Finding& f : run_.result.findings) {
      if (verdict_of(f.kind) == Verdict::kOk) continue;
      for (const int c : f.clients) {
        if (c >= 0 && static_cast<std::size_t>(c) < taken.size() && !taken[c]) {
          taken[c] = true;
          order.push_back(c);
        }
      }
    }
    // A client with nothing to draw (the harness's and the nemesis's own names) gets no row.
    std::vector<bool> drawn(h_.clients.size(), false);
    for (const Event& e : h_.events) {
      if (e.client >= 0 && static_cast<std::size_t>(e.client) < drawn.size() &&
          (e.f == Op::kAcquire || e.f == Op::kRelease || e.f == Op::kExtend || e.f == Op::kCrash ||
           e.f == Op::kEnter || e.f == Op::kRead || e.f == Op::kWrite)) {
        drawn[static_cast<std::size_t>(e.client)] = true;
      }
    }
    for (const FaultWindow& f : run_.result.faults) {
      if (f.server == 0 && f.client >= 0 && static_cast<std::size_t>(f.client) < drawn.size()) {
        drawn[static_cast<std::size_t>(f.client)] = true;
      }
    }
    for (std::size_t c = 0; c < h_.clients.size(); ++c) {
      if (!taken[c] && drawn[c]) order.push_back(static_cast<int>(c));
    }
    if (order.size() > kMaxTimelineRows) {
      left_out_.push_back(std::to_string(order.size() - kMaxTimelineRows) + " of " +
                          std::to_string(order.size()) +
                          " clients (those named by a finding are drawn first)");
      order.resize(kMaxTimelineRows);
    }
    std::sort(order.begin(), order.end());
    for (const int c : order) {
      row_of_[c] = static_cast<int>(rows_.size());
      rows_.push_back(h_.clients[static_cast<std::size_t>(c)]);
    }
    // A row per server a server fault hit, under the clients ("server n1").
    for (const FaultWindow& f : run_.result.faults) {
      if (f.server == 0 || server_row_.contains(f.server)) continue;
      const int key = -1 - static_cast<int>(server_row_.size());
      server_row_[f.server] = key;
      row_of_[key] = static_cast<int>(rows_.size());
      rows_.push_back("server " + std::string(h_.str(f.server)));
    }
  }

  // counted: whether another mark of `what` may be drawn; counts those that may not.
  bool counted(const char* what) {
    std::size_t& n = marks_[what];
    ++n;
    if (n == kMaxTimelineMarks + 1) {
      left_out_.push_back(std::string(what) + " after the first " +
                          std::to_string(kMaxTimelineMarks));
    }
    return n <= kMaxTimelineMarks;
  }

  // times: the data attributes the script lays a mark out by.
  static std::string times(Nanos from, Nanos to) {
    return " data-t0=\"" + ms_attr(from) + "\" data-t1=\"" + ms_attr(to) + "\"";
  }

  // rect: a mark over [from, to] at least `min_units` wide (widened about its middle, as the
  // script does with data-min, in pixels).
  void rect(std::string_view cls, Nanos from, Nanos to, double y, double height,
            const std::string& tip, std::string_view extra = {}, double min_units = 1,
            double min_px = 0) {
    double x0 = x(from);
    double width = x(to) - x0;
    if (width < min_units) {
      // Widened about its middle, but kept inside the plot.
      x0 = std::clamp(x0 - (min_units - std::max(width, 0.0)) / 2, kLeft,
                      kWidth - kRight - min_units);
      width = min_units;
    }
    out_ += "<rect class=\"";
    out_ += cls;
    out_ += "\" x=\"" + unit_text(x0) + "\" y=\"" + unit_text(y) + "\" width=\"" +
            unit_text(width) + "\" height=\"" + unit_text(height) + "\"" + times(from, to);
    if (min_px > 0) out_ += " data-min=\"" + unit_text(min_px) + "\"";
    if (!tip.empty()) out_ += " data-tip=\"" + escape(tip) + "\"";
    out_ += extra;
    out_ += "/>\n";
  }

  // tick: a vertical line at `at` from y0 to y1.
  void tick(std::string_view cls, Nanos at, double y0, double y1, const std::string& tip) {
    const double ax = x(at);
    out_ += "<line class=\"";
    out_ += cls;
    out_ += "\" x1=\"" + unit_text(ax) + "\" y1=\"" + unit_text(y0) + "\" x2=\"" + unit_text(ax) +
            "\" y2=\"" + unit_text(y1) + "\"" + times(at, at) + " data-tip=\"" + escape(tip) +
            "\"/>\n";
  }

  // label: text at `from` (plus dx), shown only while [from, to] is at least `need` units wide.
  void label(std::string_view cls, Nanos from, Nanos to, double dx, double y, double need,
             const std::string& text) {
    out_ += "<text class=\"";
    out_ += cls;
    out_ += "\" x=\"" + unit_text(x(from) + dx) + "\" y=\"" + unit_text(y) + "\"" +
            times(from, to) + " data-dx=\"" + unit_text(dx) + "\"";
    if (need > 0) {
      out_ += " data-need=\"" + unit_text(need) + "\"";
      if (x(to) - x(from) < need) out_ += " display=\"none\"";
    }
    out_ += ">" + escape(text) + "</text>\n";
  }

  void labels() {
    for (std::size_t r = 0; r < rows_.size(); ++r) {
      const double top = row_top(static_cast<int>(r));
      if (r < owner_keys_.size()) {
        out_ += "<rect class=\"row-owner\" x=\"0\" y=\"" + unit_text(top) + "\" width=\"" +
                unit_text(kWidth) + "\" height=\"" + unit_text(kRowHeight) + "\"/>\n";
      }
      out_ += "<text class=\"row-name\" x=\"" + unit_text(kLeft - 8) + "\" y=\"" +
              unit_text(top + kBarOffset + kBarHeight / 2 + 4) + "\" text-anchor=\"end\">" +
              escape(short_name(rows_[r])) + "</text>\n";
    }
  }

  // axis: the ticks for the whole run (the script draws them again for the span in view).
  void axis(double height) {
    const double bottom = height - kAxisHeight;
    const double span = timeline_ms(end_ns_);
    const double step = tick_step(span, 8);
    out_ += "<g class=\"ticks\">";
    for (double t = 0; t <= span + 1e-9; t += step) {
      const double at = x(static_cast<Nanos>(t * 1e6));
      out_ += "<line class=\"grid\" x1=\"" + unit_text(at) + "\" y1=\"" + unit_text(kTop) +
              "\" x2=\"" + unit_text(at) + "\" y2=\"" + unit_text(bottom) + "\"/>";
      out_ += "<text x=\"" + unit_text(at) + "\" y=\"" + unit_text(bottom + 16) +
              "\" text-anchor=\"middle\">" + escape(format_ms(t)) + "</text>\n";
    }
    out_ += "</g>\n<line class=\"axis\" x1=\"" + unit_text(kLeft) + "\" y1=\"" + unit_text(bottom) +
            "\" x2=\"" + unit_text(kWidth - kRight) + "\" y2=\"" + unit_text(bottom) + "\"/>\n";
  }

  // owner_spans: who held `key` on the server, as the replies tell it: from a grant (an acquire's
  // ok) until its TTL ran out (renewals counted), a release deleted it, another grant replaced
  // it, or a server fault that forgets keys hit the only server.
  std::vector<OwnerSpan> owner_spans(KeyId key) const {
    std::vector<OwnerSpan> spans;
    std::optional<OwnerSpan> open;
    const auto close = [&](Nanos at, std::string end) {
      open->to_ns = std::max(at, open->from_ns);
      open->end = std::move(end);
      spans.push_back(std::move(*open));
      open.reset();
    };
    const auto expire_before = [&](Nanos t) {
      if (open && open->key_end_ns >= 0 && open->key_end_ns <= t) {
        close(open->key_end_ns, "its TTL ran out at " + format_ms(timeline_ms(open->key_end_ns)));
      }
    };
    for (const Event& e : h_.events) {
      expire_before(e.time_ns);
      if (e.f == Op::kFault && e.type != EventType::kInvoke) {
        const FaultFacts& fault = e.fault();
        if (open && fault.server != 0 && fault.phase != FaultPhase::kEnd &&
            traits(fault.kind).forgets_key && h_.servers.size() <= 1) {
          close(e.time_ns, std::string(traits(fault.kind).word) + " of " +
                               std::string(h_.str(fault.server)) + " may have lost it at " +
                               format_ms(timeline_ms(e.time_ns)));
        }
        continue;
      }
      if (e.key != key || e.client < 0 || static_cast<std::size_t>(e.client) >= h_.clients.size()) {
        continue;
      }
      const std::string& who = h_.clients[static_cast<std::size_t>(e.client)];
      if (e.f == Op::kAcquire && e.type == EventType::kOk && open && open->client == e.client) {
        // A grant again to the same client (a reentrant lock, a retry): the key stands on.
        open->key_end_ns = e.ttl_ms >= 0 ? e.time_ns + Nanos{e.ttl_ms} * kNanosPerMilli : -1;
      } else if (e.f == Op::kAcquire && e.type == EventType::kOk) {
        if (open) {
          close(e.time_ns, who + " was granted it at " + format_ms(timeline_ms(e.time_ns)) +
                               " while it stood");
        }
        OwnerSpan span;
        span.client = e.client;
        span.token = std::string(h_.token(e));
        span.ttl_ms = e.ttl_ms;
        span.from_ns = e.time_ns;
        span.key_end_ns = e.ttl_ms >= 0 ? e.time_ns + Nanos{e.ttl_ms} * kNanosPerMilli : -1;
        open = std::move(span);
      } else if (e.f == Op::kExtend && e.type == EventType::kOk && e.extend().extended >= 1 &&
                 open && open->client == e.client && e.ttl_ms >= 0) {
        open->key_end_ns = e.time_ns + Nanos{e.ttl_ms} * kNanosPerMilli;
        ++open->renewals;
      } else if (e.f == Op::kRelease && e.type == EventType::kOk && e.release().deleted >= 1 &&
                 open) {
        close(e.time_ns, open->client == e.client
                             ? "released at " + format_ms(timeline_ms(e.time_ns))
                             : "deleted by " + who + "'s release at " +
                                   format_ms(timeline_ms(e.time_ns)) +
                                   " (not its own: a stale release)");
      }
    }
    expire_before(end_ns_);
    if (open) close(end_ns_, "still standing when the run ended");
    return spans;
  }

  void owners() {
    for (std::size_t r = 0; r < owner_keys_.size(); ++r) {
      const KeyId key = owner_keys_[r];
      const double y = row_top(static_cast<int>(r)) + kBarOffset;
      for (const OwnerSpan& span : owner_spans(key)) {
        if (!counted("key owner spans")) break;
        const std::string& who = h_.clients[static_cast<std::size_t>(span.client)];
        std::string tip = who + " owned " + h_.keys[key] + " on the server from " +
                          format_ms(timeline_ms(span.from_ns)) + " to " +
                          format_ms(timeline_ms(span.to_ns)) + ": " + span.end;
        if (!span.token.empty()) tip += "\ntoken " + span.token;
        if (span.ttl_ms >= 0) {
          tip += "\nTTL " + std::to_string(span.ttl_ms) + " ms";
          if (span.renewals > 0) tip += ", renewed " + std::to_string(span.renewals) + " times";
          tip += "; the key ends at " + format_ms(timeline_ms(span.key_end_ns));
        } else {
          tip += "\nno TTL: the key never ends by itself";
        }
        tip += "\n(from the replies the clients read, not read from the server)";
        rect("owner owner-" + std::to_string(span.client % 8), span.from_ns, span.to_ns, y,
             kBarHeight, tip, " data-c=\"" + std::to_string(span.client) + "\"");
        label("owner-label", span.from_ns, span.to_ns, 3, y + kBarHeight - 3, 24, who);
        if (span.key_end_ns >= 0 && span.key_end_ns <= end_ns_) {
          tick("key-end", span.key_end_ns, y - 3, y + kBarHeight + 3,
               who + "'s key on the server ends at " + format_ms(timeline_ms(span.key_end_ns)) +
                   " (TTL)");
        }
      }
    }
  }

  // waits: each acquire from its invoke to its answer, in light grey under the holds.
  void waits() {
    std::map<int, Nanos> invoked;
    for (const Event& e : h_.events) {
      if (e.f != Op::kAcquire) continue;
      if (e.type == EventType::kInvoke) {
        invoked[e.client] = e.time_ns;
        continue;
      }
      const auto found = invoked.find(e.client);
      if (found == invoked.end()) continue;
      const Nanos from = found->second;
      invoked.erase(found);
      const double y = row_y(e.client);
      if (y < 0 || e.time_ns - from < 1000 || !counted("acquire waits")) continue;
      rect("wait", from, e.time_ns, y + 3, kBarHeight - 6,
           h_.clients[e.client] + " waited for " + h_.key_name(e) + " from " +
               format_ms(timeline_ms(from)) + " to " + format_ms(timeline_ms(e.time_ns)) + " (" +
               std::string(to_string(e.type)) + ")");
    }
  }

  // fencing_at: the fencing number of `client`'s last granted acquire at or before `t`; -1.
  std::int64_t fencing_at(int client, Nanos t) const {
    const auto found = fencing_.find(client);
    if (found == fencing_.end()) return -1;
    std::int64_t number = -1;
    for (const auto& [at, fencing] : found->second) {
      if (at > t) break;
      number = fencing;
    }
    return number;
  }

  void holds() {
    for (const Event& e : h_.events) {
      if (e.f == Op::kAcquire && e.type == EventType::kOk && e.acquire().fencing >= 0) {
        fencing_[e.client].emplace_back(e.time_ns, e.acquire().fencing);
      }
    }
    for (const HoldWindow& w : run_.result.holds) {
      const double y = row_y(w.client);
      if (y < 0 || !counted("holds")) continue;
      const std::string& who = h_.clients[static_cast<std::size_t>(w.client)];
      const std::string c = " data-c=\"" + std::to_string(w.client) + "\"";
      const std::int64_t fencing = fencing_at(w.client, w.start_ns);
      std::string tip = who + " held " + h_.keys[w.key] + " from " +
                        format_ms(timeline_ms(w.start_ns)) + " to " +
                        format_ms(timeline_ms(w.end_ns));
      if (w.end == HoldWindow::End::kCrash) tip += " (crashed)";
      if (w.end == HoldWindow::End::kEndOfHistory) tip += " (still inside when the run ended)";
      if (w.lease_end_ns >= 0) tip += "; lease until " + format_ms(timeline_ms(w.lease_end_ns));
      if (fencing >= 0) tip += "; fencing number " + std::to_string(fencing);
      if (w.token != 0) tip += "\ntoken " + std::string(h_.str(w.token));
      const bool overran = w.lease_end_ns >= 0 && w.lease_end_ns < w.end_ns;
      const Nanos inside_lease = overran ? std::max(w.lease_end_ns, w.start_ns) : w.end_ns;
      rect("hold", w.start_ns, inside_lease, y, kBarHeight, tip, c);
      if (overran) {
        rect("overrun", inside_lease, w.end_ns, y, kBarHeight,
             who + " was still inside after its lease ran out at " +
                 format_ms(timeline_ms(w.lease_end_ns)),
             c);
      }
      if (w.lease_end_ns >= 0 && w.lease_end_ns <= end_ns_) {
        tick("lease-end", w.lease_end_ns, y - 3, y + kBarHeight + 3,
             who + "'s lease ends at " + format_ms(timeline_ms(w.lease_end_ns)));
      }
      if (fencing >= 0) {
        label("fencing", w.start_ns, w.end_ns, 3, y + kBarHeight - 3, 18,
              "#" + std::to_string(fencing));
      }
    }
  }

  // reply_of: what a completion says, in words.
  std::string reply_of(const Event& e) const {
    std::string reply;
    if (e.type == EventType::kOk) {
      if (e.f == Op::kAcquire) {
        const AcquireFacts& a = e.acquire();
        reply = "granted";
        if (a.fencing >= 0) reply += ", fencing number " + std::to_string(a.fencing);
        if (a.attempts > 1) reply += ", after " + std::to_string(a.attempts) + " attempts";
        if (a.validity_ms >= 0) reply += ", valid " + std::to_string(a.validity_ms) + " ms";
      } else if (e.f == Op::kRelease) {
        const std::int32_t deleted = e.release().deleted;
        reply = deleted >= 1
                    ? "deleted " + std::to_string(deleted) + (deleted == 1 ? " key" : " keys")
                    : "deleted nothing (refused)";
      } else if (e.f == Op::kExtend) {
        reply = e.extend().extended >= 1 ? "extended" : "not extended (refused)";
      } else if (e.f == Op::kRead || e.f == Op::kWrite) {
        reply = (e.f == Op::kRead ? "read " : "wrote ") + std::to_string(e.resource().value);
      }
    } else if (e.type == EventType::kFail || e.type == EventType::kInfo) {
      reply = std::string(to_string(e.error));
      if (e.f == Op::kWork) reply = "planned " + std::to_string(e.work().planned_ms) + " ms";
    }
    const std::string_view message = h_.message(e);
    if (!message.empty()) reply += (reply.empty() ? "" : ": ") + std::string(message);
    return reply;
  }

  // result_of: the result word and its colour class.
  static std::pair<std::string, std::string> result_of(const Event& e) {
    if (e.type == EventType::kInfo) return {"unknown", "res-info"};
    if (e.type == EventType::kFail) return {"failed", "res-fail"};
    if (e.f == Op::kRelease && e.release().deleted == 0) return {"refused", "res-fail"};
    if (e.f == Op::kExtend && e.extend().extended == 0) return {"refused", "res-fail"};
    return {"ok", "res-ok"};
  }

  // collect_calls: every call of a drawn client (the first kMaxTimelineMarks and one more), from
  // its invoke to its completion; a call still
  // open at the end of the history runs to it (no answer); enter, exit, read and write are
  // single moments; work runs until the client's next event, at most as long as it meant to
  // (a step that works "until" something plans its longest).
  std::vector<Call> collect_calls() const {
    std::vector<Call> calls;
    std::map<std::pair<int, Op>, std::size_t> open;  // (client, op) -> its call
    std::map<int, std::size_t> working;              // client -> its work, until its next event
    for (const Event& e : h_.events) {
      if (e.client < 0 || row_y(e.client) < 0) continue;
      if (const auto work = working.find(e.client); work != working.end()) {
        Call& call = calls[work->second];
        call.to_ns = std::clamp(e.time_ns, call.from_ns, call.to_ns);
        working.erase(work);
      }
      const bool paired = e.f == Op::kAcquire || e.f == Op::kRelease || e.f == Op::kExtend;
      const bool single = e.f == Op::kEnter || e.f == Op::kExit || e.f == Op::kRead ||
                          e.f == Op::kWrite || e.f == Op::kWork;
      if (!paired && !single) continue;
      const auto slot = std::make_pair(e.client, e.f);
      // Only the first kMaxTimelineMarks calls are drawn (and one more says that more were left
      // out): once they are collected, a call not yet begun is not collected, so the report needs
      // no memory per call of a long run.
      if (calls.size() > kMaxTimelineMarks) {
        const auto previous = open.find(slot);
        if (previous != open.end() && paired && e.type == EventType::kInvoke) {
          calls[previous->second].reply = "no answer recorded";
          open.erase(previous);
        }
        if (open.empty() && working.empty()) break;
        if (!open.contains(slot)) continue;
      }
      if (paired && e.type == EventType::kInvoke) {
        Call call;
        call.client = e.client;
        call.op = e.f;
        call.from_ns = call.to_ns = e.time_ns;
        call.result = "no answer";
        call.result_class = "res-info";
        call.reply = "no answer before the run ended";
        call.token = std::string(h_.token(e));
        call.key = h_.key_name(e);
        call.ttl_ms = e.ttl_ms;
        const auto previous = open.find(slot);
        if (previous != open.end()) calls[previous->second].reply = "no answer recorded";
        open[slot] = calls.size();
        calls.push_back(std::move(call));
        continue;
      }
      std::size_t at = calls.size();
      const auto found = paired ? open.find(slot) : open.end();
      if (found != open.end()) {
        at = found->second;
        open.erase(found);
      } else {
        Call call;
        call.client = e.client;
        call.op = e.f;
        call.from_ns = e.time_ns;
        call.instant = true;
        call.key = h_.key_name(e);
        call.ttl_ms = e.ttl_ms;
        calls.push_back(std::move(call));
      }
      Call& call = calls[at];
      call.to_ns = e.time_ns;
      if (e.f == Op::kWork) {
        call.to_ns = e.work().planned_ms >= 0
                         ? e.time_ns + Nanos{e.work().planned_ms} * kNanosPerMilli
                         : end_ns_;
        call.instant = false;
        working[e.client] = at;
      }
      std::tie(call.result, call.result_class) = result_of(e);
      if (e.f == Op::kWork) {
        call.result = "working";
        call.result_class = "res-work";
      }
      call.reply = reply_of(e);
      if (e.token != 0) call.token = std::string(h_.token(e));
      if (e.f == Op::kAcquire && e.type == EventType::kOk && e.acquire().granted.of > 0) {
        const std::vector<std::string> servers = h_.granted_servers(e.acquire().granted);
        for (std::size_t i = 0; i < servers.size(); ++i) {
          call.server += (i == 0 ? "" : ", ") + servers[i];
        }
        call.server += " (" + std::to_string(servers.size()) + " of " +
                       std::to_string(e.acquire().granted.of) + ")";
      } else if (h_.servers.size() == 1) {
        call.server = h_.servers[0];
      }
    }
    for (Call& call : calls) {
      if (call.result == "no answer") call.to_ns = std::max(call.to_ns, end_ns_);
      call.to_ns = std::min(call.to_ns, std::max(end_ns_, call.from_ns));
    }
    return calls;
  }

  // calls: each call as a box in the lane under its client's holds, coloured by its result.
  void calls() {
    for (const Call& call : collect_calls()) {
      const double y = row_y(call.client);
      if (!counted("calls")) break;
      std::string data = " data-c=\"" + std::to_string(call.client) + "\" data-op=\"" +
                         std::string(to_string(call.op)) + "\" data-client=\"" +
                         escape(h_.clients[static_cast<std::size_t>(call.client)]) +
                         "\" data-result=\"" + call.result + "\"";
      if (call.instant) data += " data-instant=\"1\"";
      if (!call.key.empty()) data += " data-key=\"" + escape(call.key) + "\"";
      if (!call.token.empty()) data += " data-token=\"" + escape(call.token) + "\"";
      if (!call.reply.empty()) data += " data-reply=\"" + escape(call.reply) + "\"";
      if (!call.server.empty()) data += " data-server=\"" + escape(call.server) + "\"";
      if (call.ttl_ms >= 0) data += " data-ttl=\"" + std::to_string(call.ttl_ms) + "\"";
      rect("op op-" + std::string(to_string(call.op)) + " " + call.result_class, call.from_ns,
           call.to_ns, y + kCallOffset - kBarOffset, kCallHeight, "", data, kMinCallUnits,
           kMinCallPx);
    }
  }

  // marks: renewals (green circles; red when refused or unanswered) and crashes (crosses).
  void marks() {
    for (const Event& e : h_.events) {
      const double y = row_y(e.client);
      if (y < 0) continue;
      const std::string& who = h_.clients[static_cast<std::size_t>(e.client)];
      if (e.f == Op::kExtend && e.type != EventType::kInvoke) {
        if (!counted("renewals")) continue;
        const bool renewed = e.type == EventType::kOk && e.extend().extended >= 1;
        out_ += std::string("<circle class=\"") + (renewed ? "renewal" : "renewal-failed") +
                "\" cx=\"" + unit_text(x(e.time_ns)) + "\" cy=\"" + unit_text(y + kBarHeight / 2) +
                "\" r=\"3.5\"" + times(e.time_ns, e.time_ns) + " data-tip=\"" +
                escape(who + (renewed ? " renewed " : " failed to renew ") + h_.key_name(e) +
                       " at " + format_ms(timeline_ms(e.time_ns))) +
                "\"/>\n";
      } else if (e.f == Op::kCrash) {
        if (!counted("crashes")) continue;
        const double cy = y + kBarHeight / 2;
        out_ += "<path class=\"crash\" d=\"M-5 -5L5 5M-5 5L5 -5\" transform=\"translate(" +
                unit_text(x(e.time_ns)) + " " + unit_text(cy) + ")\" data-y=\"" + unit_text(cy) +
                "\"" + times(e.time_ns, e.time_ns) + " data-tip=\"" +
                escape(who + " crashed at " + format_ms(timeline_ms(e.time_ns))) + "\"/>\n";
      }
    }
  }

  void faults(const std::string& hatch) {
    for (const FaultWindow& f : run_.result.faults) {
      const double y = row_y(f.server != 0 ? server_row_.at(f.server) : f.client);
      if (y < 0 || !counted("fault windows")) continue;
      const std::string word(traits(f.kind).word);
      std::string tip = word;
      if (f.server != 0) tip += " of " + std::string(h_.str(f.server));
      if (f.server == 0 && f.client >= 0) {
        tip += " aimed at " + h_.clients[static_cast<std::size_t>(f.client)];
      }
      tip += f.from_ns == f.to_ns ? " at " + format_ms(timeline_ms(f.from_ns))
                                  : " from " + format_ms(timeline_ms(f.from_ns)) + " to " +
                                        format_ms(timeline_ms(f.to_ns));
      if (f.from_ns == f.to_ns) {
        tick("fault fault-instant", f.from_ns, y - 4, y + kBarHeight + 4, tip);
      } else {
        rect("fault", f.from_ns, f.to_ns, y - 4, 4, tip, " fill=\"url(#" + hatch + ")\"");
      }
      label("fault-label", f.from_ns, f.to_ns, 2, y - 5, 0, word);
    }
  }

  // violations: each overlap as a faint band over every row and a red bar on the rows of the
  // two clients whose windows overlap, at least kMinViolationPx wide.
  void violations(double height) {
    for (std::size_t i = 0; i < run_.result.findings.size(); ++i) {
      const Finding& f = run_.result.findings[i];
      if (f.kind != FindingKind::kMutexViolation) continue;
      if (f.from_ns < 0 || f.to_ns < f.from_ns || !counted("violations")) continue;
      const std::string data = " data-finding=\"" + std::to_string(i) + "\"";
      rect("violation-band", f.from_ns, f.to_ns, kTop, height - kAxisHeight - kTop, "", data,
           kMinViolationUnits, kMinViolationPx);
      for (std::size_t c = 0; c < f.clients.size() && c < 2; ++c) {
        const double y = row_y(f.clients[c]);
        if (y >= 0) {
          rect("violation", f.from_ns, f.to_ns, y, kBarHeight,
               "Mutual exclusion violated for " + format_ms(timeline_ms(f.to_ns - f.from_ns)) +
                   ", " + format_ms(timeline_ms(f.from_ns)) + " to " +
                   format_ms(timeline_ms(f.to_ns)) + ": " + f.words,
               data + " data-c=\"" + std::to_string(f.clients[c]) + "\"", kMinViolationUnits,
               kMinViolationPx);
        }
      }
    }
  }

  const VariantRun& run_;
  const History& h_;
  int index_;
  Nanos end_ns_ = 0;
  std::vector<std::string> rows_;
  std::vector<KeyId> owner_keys_;       // the first rows, in this order
  std::map<int, int> row_of_;           // row key (a client, or a server's key) -> row
  std::map<StringId, int> server_row_;  // a server fault's server -> its row key (negative)
  std::map<int, std::vector<std::pair<Nanos, std::int64_t>>> fencing_;
  std::map<std::string, std::size_t> marks_;
  std::vector<std::string> left_out_;
  std::string out_;
};

}  // namespace

TimelineFigure timeline_figure(const VariantRun& run, int index) {
  Timeline timeline(run, index);
  TimelineFigure figure;
  figure.html = timeline.figure();
  figure.left_out = timeline.left_out();
  return figure;
}

}  // namespace locksim::html

namespace locksim::html {

// The script works on what the figure carries: the SVG's data-end-ms, data-left, data-right,
// data-top and data-bottom (the plot's geometry), and each mark's data-t0/data-t1 (ms), data-min
// (the narrowest it may be, in pixels), data-dx/data-need (a label's offset, and the width its
// mark must have for it to show), data-y (a crash's centre). It writes the visible span back to
// data-from-ms, data-to-ms and data-span-ms, for a reader and for tests.
const std::string_view kTimelineScript = R"js(
(function () {
  'use strict';
  var tip = document.createElement('div');
  tip.className = 'timeline-tip';
  tip.setAttribute('role', 'tooltip');
  tip.hidden = true;
  document.body.appendChild(tip);
  var SVGNS = 'http://www.w3.org/2000/svg';
  var views = new Map();

  function fmt(ms) {
    if (Math.abs(ms) >= 1000) return (ms / 1000).toFixed(4) + ' s';
    return ms.toFixed(3) + ' ms';
  }
  function fmtTick(t, step) {
    var lg = function (v) { return Math.ceil(Math.round(-Math.log10(v) * 1e6) / 1e6); };
    if (step >= 1000 || (t >= 1000 && step >= 10)) {
      return (t / 1000).toFixed(Math.max(0, lg(step / 1000))) + ' s';
    }
    return t.toFixed(Math.max(0, lg(step))) + ' ms';
  }
  function niceStep(span, ticks) {
    var raw = Math.max(span / ticks, 1e-6);
    var power = Math.pow(10, Math.floor(Math.log10(raw)));
    var factors = [1, 2, 5];
    for (var i = 0; i < factors.length; i++) if (raw <= factors[i] * power) return factors[i] * power;
    return 10 * power;
  }
  function num(d, key, fallback) { return d[key] === undefined ? fallback : +d[key]; }

  function View(fig) {
    var svg = fig.querySelector('svg.timeline');
    var d = svg.dataset;
    this.fig = fig;
    this.svg = svg;
    this.end = +d.endMs;
    this.from = 0;
    this.to = this.end;
    this.left = +d.left;
    this.right = +d.right;
    this.top = +d.top;
    this.bottom = +d.bottom;
    this.width = svg.viewBox.baseVal.width;
    this.ticks = svg.querySelector('g.ticks');
    this.out = fig.querySelector('output.view-span');
    this.marks = Array.prototype.map.call(svg.querySelectorAll('[data-t0]'), function (el) {
      var e = el.dataset;
      return { el: el, tag: el.tagName.toLowerCase(), t0: +e.t0, t1: num(e, 't1', +e.t0),
               min: num(e, 'min', 0), dx: num(e, 'dx', 0), need: num(e, 'need', 0),
               y: num(e, 'y', 0) };
    });
  }
  View.prototype.x = function (t) {
    return this.left + (t - this.from) / (this.to - this.from) * (this.right - this.left);
  };
  View.prototype.unitsPerPx = function () {
    var w = this.svg.getBoundingClientRect().width;
    return w > 0 ? this.width / w : 1;
  };
  View.prototype.timeAt = function (clientX) {
    var r = this.svg.getBoundingClientRect();
    var u = (clientX - r.left) * this.width / (r.width || 1);
    return this.from + (u - this.left) / (this.right - this.left) * (this.to - this.from);
  };
  View.prototype.layout = function () {
    var self = this;
    var upp = this.unitsPerPx();
    var lo = this.left - 40;
    var hi = this.right + 40;
    this.marks.forEach(function (m) {
      var x0 = self.x(m.t0);
      var x1 = self.x(m.t1);
      var el = m.el;
      if (m.tag === 'rect') {
        var w = x1 - x0;
        var min = m.min > 0 ? m.min * upp : 1;
        if (w < min) {
          // Widened about its middle, but kept inside the plot when the interval is, and whole
          // in view wherever some of the interval is (a sliver at the plot's edge, or one that
          // runs past the end of the history, is not clipped to a few pixels).
          var inView = x0 < self.right && x1 > self.left;
          x0 -= (min - Math.max(w, 0)) / 2;
          w = min;
          if (inView || x1 <= self.right) x0 = Math.min(x0, self.right - w);
          if (inView || (m.t0 >= self.from && x0 < self.left)) x0 = Math.max(x0, self.left);
        }
        var l = Math.max(x0, lo);
        var r = Math.min(x0 + w, hi);
        if (r < l) { l = x0; r = x0 + w; }
        el.setAttribute('x', l.toFixed(2));
        el.setAttribute('width', (r - l).toFixed(2));
      } else if (m.tag === 'line') {
        el.setAttribute('x1', x0.toFixed(2));
        el.setAttribute('x2', x0.toFixed(2));
      } else if (m.tag === 'circle') {
        el.setAttribute('cx', x0.toFixed(2));
      } else if (m.tag === 'text') {
        el.setAttribute('x', (Math.max(x0, self.left) + m.dx).toFixed(2));
        if (m.need > 0) {
          if (Math.min(x1, self.right) - Math.max(x0, self.left) < m.need) el.setAttribute('display', 'none');
          else el.removeAttribute('display');
        }
      } else if (m.tag === 'path') {
        el.setAttribute('transform', 'translate(' + x0.toFixed(2) + ' ' + m.y + ')');
      }
    });
    while (this.ticks.firstChild) this.ticks.removeChild(this.ticks.firstChild);
    var span = this.to - this.from;
    var step = niceStep(span, 8);
    for (var i = Math.ceil(this.from / step - 1e-9), n = 0; i * step <= this.to + step * 1e-6 && n < 40; i++, n++) {
      var t = i * step;
      var at = this.x(t).toFixed(2);
      var line = document.createElementNS(SVGNS, 'line');
      line.setAttribute('class', 'grid');
      line.setAttribute('x1', at); line.setAttribute('x2', at);
      line.setAttribute('y1', this.top); line.setAttribute('y2', this.bottom);
      var text = document.createElementNS(SVGNS, 'text');
      text.setAttribute('x', at);
      text.setAttribute('y', this.bottom + 16);
      text.setAttribute('text-anchor', 'middle');
      text.textContent = fmtTick(t, step);
      this.ticks.appendChild(line);
      this.ticks.appendChild(text);
    }
    var d = this.svg.dataset;
    d.fromMs = this.from.toFixed(3);
    d.toMs = this.to.toFixed(3);
    d.spanMs = span.toFixed(3);
    var whole = this.from <= 0 && this.to >= this.end;
    if (this.out) {
      this.out.value = fmt(this.from) + ' to ' + fmt(this.to) +
        (whole ? ' (the whole run)' : ' (' + fmt(span) + ' of ' + fmt(this.end) + ')');
    }
  };
  // set: shows [from, to], kept inside the run and at least a few microseconds wide.
  View.prototype.set = function (from, to) {
    var minSpan = Math.max(this.end * 1e-6, 0.005);
    var span = Math.max(to - from, minSpan);
    if (!(span < this.end)) { from = 0; span = this.end; }
    from = Math.max(0, Math.min(from, this.end - span));
    this.from = from;
    this.to = from + span;
    this.layout();
  };
  // zoom: the span times `factor`, keeping the time `at` (default: the middle) in place.
  View.prototype.zoom = function (factor, at) {
    var span = this.to - this.from;
    if (at === undefined || !isFinite(at)) at = this.from + span / 2;
    var share = (at - this.from) / span;
    var next = Math.max(span * factor, Math.max(this.end * 1e-6, 0.005));
    this.set(at - share * next, at - share * next + next);
  };
  View.prototype.pan = function (dt) { this.set(this.from + dt, this.to + dt); };
  View.prototype.bind = function () {
    var self = this;
    var svg = this.svg;
    var bar = this.fig.querySelector('.zoom');
    if (bar) {
      bar.addEventListener('click', function (e) {
        var b = e.target.closest('button[data-zoom]');
        if (!b) return;
        var span = self.to - self.from;
        var what = b.dataset.zoom;
        if (what === 'in') self.zoom(0.5);
        else if (what === 'out') self.zoom(2);
        else if (what === 'left') self.pan(-span / 4);
        else if (what === 'right') self.pan(span / 4);
        else self.set(0, self.end);
      });
    }
    svg.addEventListener('keydown', function (e) {
      var span = self.to - self.from;
      if (e.key === '+' || e.key === '=') self.zoom(0.5);
      else if (e.key === '-') self.zoom(2);
      else if (e.key === '0') self.set(0, self.end);
      else if (e.key === 'ArrowLeft') self.pan(-span / 4);
      else if (e.key === 'ArrowRight') self.pan(span / 4);
      else return;
      e.preventDefault();
    });
    svg.addEventListener('wheel', function (e) {
      var scale = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? 400 : 1;
      if (e.ctrlKey || e.metaKey) {
        e.preventDefault();
        var factor = Math.min(5, Math.max(0.2, Math.exp(e.deltaY * scale * 0.002)));
        // Over a mark widened to its least width (a sliver at the plot's edge is also moved
        // inside it), the pointer may be beside the mark's own interval: zoom at the nearest
        // time of the interval, then pan so that the whole mark stays in view (a violation at
        // the end of the run would otherwise be cut by the plot's edge as it zooms).
        var at = self.timeAt(e.clientX);
        var d = e.target && e.target.dataset;
        var mark = d && d.t0 !== undefined && d.t1 !== undefined;
        var t0 = mark ? parseFloat(d.t0) : 0;
        var t1 = mark ? parseFloat(d.t1) : 0;
        if (mark) at = Math.min(Math.max(at, t0), t1);
        self.zoom(factor, at);
        if (mark && t1 - t0 <= self.to - self.from) {
          if (t1 > self.to) self.pan(t1 - self.to);
          else if (t0 < self.from) self.pan(t0 - self.from);
        }
      } else if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
        e.preventDefault();
        var px = (e.shiftKey && !e.deltaX ? e.deltaY : e.deltaX) * scale;
        var plotPx = (self.right - self.left) / self.unitsPerPx();
        self.pan(px / plotPx * (self.to - self.from));
      }
    }, { passive: false });
    var drag = null;
    svg.addEventListener('pointerdown', function (e) {
      if (e.button !== 0) return;
      drag = { x: e.clientX, from: self.from, to: self.to, id: e.pointerId, moved: false };
    });
    svg.addEventListener('pointermove', function (e) {
      if (!drag || e.pointerId !== drag.id) return;
      if ((e.buttons & 1) === 0) { drag = null; return; }
      var dx = e.clientX - drag.x;
      if (!drag.moved && Math.abs(dx) < 3) return;
      if (!drag.moved) {
        drag.moved = true;
        svg.classList.add('dragging');
        svg.setPointerCapture(drag.id);
        hideTip();
      }
      var plotPx = (self.right - self.left) / self.unitsPerPx();
      var dt = -dx / plotPx * (drag.to - drag.from);
      self.set(drag.from + dt, drag.to + dt);
    });
    var stop = function () {
      if (drag && drag.moved) svg.classList.remove('dragging');
      drag = null;
    };
    svg.addEventListener('pointerup', stop);
    svg.addEventListener('pointercancel', stop);
    var hover = function (e) {
      if (drag && drag.moved) return;
      var el = e.target && e.target.closest ? e.target.closest('[data-tip],[data-op]') : null;
      if (!el || !svg.contains(el)) { hideTip(); return; }
      showTip(el, e.clientX, e.clientY);
    };
    svg.addEventListener('mousemove', hover);
    svg.addEventListener('mouseover', hover);
    svg.addEventListener('mouseleave', hideTip);
  };

  function tipText(el) {
    var d = el.dataset;
    if (d.op === undefined) return d.tip || '';
    var t0 = +d.t0;
    var t1 = +d.t1;
    var lines = [d.op + ' by ' + d.client + (d.key ? ' on ' + d.key : '')];
    if (d.instant) lines.push('at ' + fmt(t0));
    else if (d.op === 'work') lines.push('from ' + fmt(t0) + ' to ' + fmt(t1) + ' (' + fmt(t1 - t0) + ')');
    else if (d.result === 'no answer') lines.push('invoked ' + fmt(t0) + ', no answer by the end ' + fmt(t1));
    else lines.push('invoked ' + fmt(t0) + ', answered ' + fmt(t1) + ' (took ' + fmt(t1 - t0) + ')');
    lines.push('result: ' + d.result + (d.reply ? ' (' + d.reply + ')' : ''));
    if (d.token) lines.push('token ' + d.token);
    if (d.ttl) lines.push('TTL ' + d.ttl + ' ms');
    if (d.server) lines.push('server ' + d.server);
    return lines.join('\n');
  }
  function showTip(el, x, y) {
    tip.textContent = tipText(el);
    tip.hidden = false;
    var w = tip.offsetWidth;
    var h = tip.offsetHeight;
    var left = Math.max(4, Math.min(x + 14, window.innerWidth - w - 4));
    var top = y + 18 + h > window.innerHeight ? Math.max(4, y - h - 10) : y + 18;
    tip.style.left = left + 'px';
    tip.style.top = top + 'px';
  }
  function hideTip() { tip.hidden = true; }

  // focusFinding: highlights the finding's calls (those of its clients during its interval, and
  // each client's last acquire, release or extend before it: the grant or the stale release that
  // led to it), its holds and its overlap, and zooms to them and scrolls them into view.
  function focusFinding(li) {
    var section = li.closest('section.variant');
    var fig = section ? section.querySelector('figure.timeline') : null;
    var view = fig ? views.get(fig) : null;
    if (!view) return;
    section.querySelectorAll('li.finding.selected').forEach(function (x) { x.classList.remove('selected'); });
    view.svg.querySelectorAll('.highlight').forEach(function (x) { x.classList.remove('highlight'); });
    li.classList.add('selected');
    var from = +li.dataset.fromMs;
    var to = +li.dataset.toMs;
    var clients = (li.dataset.clients || '').split(' ').filter(Boolean).map(Number);
    var lo = from;
    var hi = to;
    var hits = [];
    var last = new Map();
    view.marks.forEach(function (m) {
      var d = m.el.dataset;
      if (d.c === undefined || clients.indexOf(+d.c) < 0) return;
      var inside = m.t1 >= from && m.t0 <= to;
      if (d.op !== undefined) {
        if (inside) hits.push(m);
        else if (m.t1 <= from && (d.op === 'acquire' || d.op === 'release' || d.op === 'extend')) {
          var p = last.get(+d.c);
          if (!p || m.t1 >= p.t1) last.set(+d.c, m);
        }
      } else if (inside && !m.el.classList.contains('violation')) {
        m.el.classList.add('highlight');
      }
    });
    last.forEach(function (m) { hits.push(m); });
    // The zoom: the interval and the calls near it (a long wait that led to it counts with its
    // end only), so that a short overlap is not lost in a long run; the calls around a long one
    // at most a quarter of the run away on each side, so that the zoom still narrows the view.
    var near = Math.max(Math.min(4 * (to - from), view.end * 0.25), view.end * 0.05, 0.05);
    hits.forEach(function (m) {
      m.el.classList.add('highlight');
      lo = Math.min(lo, Math.max(m.t0, from - near));
      hi = Math.max(hi, Math.min(m.t1, to + near));
    });
    if (li.dataset.finding !== undefined) {
      view.svg.querySelectorAll('[data-finding="' + li.dataset.finding + '"]').forEach(function (el) {
        el.classList.add('highlight');
      });
    }
    view.svg.classList.add('focused');
    var pad = Math.max((hi - lo) * 0.1, view.end * 0.002, 0.01);
    view.set(lo - pad, hi + pad);
    fig.scrollIntoView({ block: 'center', behavior: 'instant' });
  }
  document.addEventListener('click', function (e) {
    var li = e.target && e.target.closest ? e.target.closest('li.finding.zoomable') : null;
    if (li) focusFinding(li);
  });
  document.addEventListener('keydown', function (e) {
    if ((e.key === 'Enter' || e.key === ' ') && e.target && e.target.matches &&
        e.target.matches('li.finding.zoomable')) {
      e.preventDefault();
      focusFinding(e.target);
    }
  });

  document.querySelectorAll('figure.timeline').forEach(function (fig) {
    var view = new View(fig);
    views.set(fig, view);
    view.bind();
    view.layout();
  });
  window.addEventListener('resize', function () { views.forEach(function (v) { v.layout(); }); });
})();
)js";

}  // namespace locksim::html
