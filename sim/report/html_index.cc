#include "sim/report/html_index.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <system_error>
#include <utility>
#include <vector>

#include "sim/core/error.h"
#include "sim/report/html_text.h"

namespace locksim {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;  // as the other report files (one unity batch)

// read_json: the document at `path` if it is a regular file of at most kMaxIndexedFileBytes
// that parses; nullopt otherwise (counted in `summary.unreadable` when it exists).
std::optional<Json> read_json(const fs::path& path, IndexSummary& summary) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (error || !fs::exists(status)) return std::nullopt;
  if (!fs::is_regular_file(status) || fs::file_size(path, error) > kMaxIndexedFileBytes || error) {
    ++summary.unreadable;
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  Json document = Json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded() || !document.is_object()) {
    ++summary.unreadable;
    return std::nullopt;
  }
  return document;
}

// skip_malformed: a file that parsed but whose fields have the wrong types ("context": [],
// "matches": "yes") is left out and counted, and the first few are named for the command to say.
void skip_malformed(IndexSummary& summary, const fs::path& path, const Json::exception& error) {
  ++summary.unreadable;
  if (summary.malformed.size() < kMaxNamedMalformed) {
    summary.malformed.push_back(path.string() + ": " + error.what());
  }
}

std::string text_of(const Json& object, const char* key) {
  const auto found = object.find(key);
  if (found == object.end() || !found->is_string()) return "";
  return found->get<std::string>();
}

// verdict_text: {"verdict": "mutex_violation", "causes": [...]} as "mutex_violation (a, b)".
std::string verdict_text(const Json& outcome) {
  if (!outcome.is_object()) return "?";
  std::string text = text_of(outcome, "verdict");
  const auto causes = outcome.find("causes");
  if (causes != outcome.end() && causes->is_array() && !causes->empty()) {
    text += " (";
    for (std::size_t i = 0; i < causes->size(); ++i) {
      if (i > 0) text += ", ";
      if ((*causes)[i].is_string()) text += (*causes)[i].get<std::string>();
    }
    text += ")";
  }
  return text;
}

struct Cell {
  std::string outcome;  // ok, mismatch, interrupted, error: the expectation mark
  std::string safety;   // violation, liveness, ok, unknown: the colour
  std::string observed;
  std::string expected;
  std::string href;
  std::string judged;  // own, limit or "" (VariantRun::judged)
  std::string judged_why;
};

struct ScenarioRow {
  std::string name;
  std::string doc;
  std::string claim;
  std::string run_id;
  std::map<std::string, Cell> cells;  // by variant
};

struct ResultSet {
  fs::path dir;  // relative to the output directory ("" for itself)
  std::vector<ScenarioRow> rows;
  std::vector<std::string> variants;  // in order of first appearance
  std::size_t omitted = 0;
};

// read_result_set: every <scenario>/latest/results.json directly under `dir`.
ResultSet read_result_set(const fs::path& out_dir, const fs::path& relative,
                          IndexSummary& summary) {
  ResultSet set;
  set.dir = relative;
  std::vector<fs::path> scenario_dirs;
  std::error_code error;
  for (fs::directory_iterator it(out_dir / relative, error), end; !error && it != end;
       it.increment(error)) {
    if (it->is_directory(error) && fs::exists(it->path() / "latest" / "results.json", error)) {
      scenario_dirs.push_back(it->path());
    }
  }
  std::sort(scenario_dirs.begin(), scenario_dirs.end());
  for (const fs::path& scenario_dir : scenario_dirs) {
    if (set.rows.size() >= kMaxIndexedScenarios) {
      ++set.omitted;
      continue;
    }
    const fs::path results_path = scenario_dir / "latest" / "results.json";
    const std::optional<Json> results = read_json(results_path, summary);
    if (!results) continue;
    // The row is built apart and kept only whole: a field of the wrong type skips the run.
    try {
      std::vector<std::string> row_variants;
      std::size_t row_runs = 0;
      std::size_t row_mismatches = 0;
      const Json context = results->value("context", Json::object());
      ScenarioRow row;
      row.name = text_of(context, "scenario");
      if (row.name.empty()) row.name = scenario_dir.filename().string();
      const Json source = context.value("source", Json::object());
      row.doc = text_of(source, "doc");
      row.claim = text_of(source, "claim");
      // The run the `latest` link names, so the page's links stay put when a newer run comes.
      const fs::path target = fs::read_symlink(scenario_dir / "latest", error);
      row.run_id = error ? "latest" : target.filename().string();
      const fs::path run_dir = relative / scenario_dir.filename() / row.run_id;
      const bool has_report = fs::exists(out_dir / run_dir / "report.html", error);
      const Json variants = results->value("variants", Json::array());
      if (!variants.is_array()) continue;
      for (const Json& v : variants) {
        if (!v.is_object()) continue;
        const std::string variant = text_of(v.value("context", Json::object()), "variant");
        if (variant.empty()) continue;
        Cell cell;
        const Json observed = v.value("observed", Json::object());
        cell.observed = verdict_text(observed);
        cell.safety = html::safety_of(observed.is_object() ? text_of(observed, "verdict") : "");
        cell.expected = verdict_text(v.value("expected", Json::object()));
        const Json judged = v.value("judged", Json::object());
        if (judged.is_object()) {
          cell.judged = text_of(judged, "as");
          cell.judged_why = text_of(judged, "why");
        }
        const bool matches = v.value("matches", false);
        const bool interrupted = v.value("interrupted", false);
        bool harness = false;
        for (const Json& f : v.value("findings", Json::array())) {
          const std::string kind = f.is_object() ? text_of(f, "kind") : "";
          harness = harness || kind == "server_lost" || kind == "server_died";
        }
        cell.outcome = html::outcome_word(matches, interrupted, harness && !matches);
        cell.href = has_report ? html::url_path((run_dir / "report.html").string()) + "#" +
                                     html::anchor("v", variant)
                               : html::url_path((run_dir / "summary.md").string());
        row_variants.push_back(variant);
        ++row_runs;
        if (cell.outcome != "ok") ++row_mismatches;
        row.cells[variant] = std::move(cell);
      }
      for (const std::string& variant : row_variants) {
        if (std::find(set.variants.begin(), set.variants.end(), variant) == set.variants.end()) {
          set.variants.push_back(variant);
        }
      }
      summary.runs += row_runs;
      summary.mismatches += row_mismatches;
      set.rows.push_back(std::move(row));
    } catch (const Json::exception& malformed) {
      skip_malformed(summary, results_path, malformed);
    }
  }
  // Document failures first (Doc A..E), then the scenarios beyond the documents, by name.
  std::stable_sort(set.rows.begin(), set.rows.end(),
                   [](const ScenarioRow& a, const ScenarioRow& b) {
                     const bool a_doc = !a.doc.empty() && a.doc != "none";
                     const bool b_doc = !b.doc.empty() && b.doc != "none";
                     if (a_doc != b_doc) return a_doc;
                     if (a_doc && a.doc != b.doc) return a.doc < b.doc;
                     return a.name < b.name;
                   });
  return set;
}

void matrix(std::string& out, const ResultSet& set, const std::string& id) {
  out += "<div class=\"wide\"><table id=\"" + html::escape(id) +
         "\" class=\"matrix\"><tr><th>scenario</th><th>doc</th>";
  for (const std::string& variant : set.variants) out += "<th>" + html::escape(variant) + "</th>";
  out += "</tr>\n";
  for (const ScenarioRow& row : set.rows) {
    out += "<tr><th title=\"" + html::escape(row.claim) + "\">" + html::escape(row.name) +
           "</th><td>" + html::escape(row.doc) + "</td>";
    for (const std::string& variant : set.variants) {
      const auto found = row.cells.find(variant);
      if (found == row.cells.end()) {
        out += "<td class=\"empty\"></td>";
        continue;
      }
      const Cell& cell = found->second;
      std::string title = "expected " + cell.expected + ", observed " + cell.observed;
      if (!cell.judged_why.empty()) {
        title +=
            std::string(cell.judged == "own" ? "; the lock's own bug: " : "; a lease limit: ") +
            cell.judged_why;
      }
      out += "<td class=\"cell safety-" + cell.safety + " outcome-" + cell.outcome +
             "\" data-scenario=\"" + html::escape(row.name) + "\" data-variant=\"" +
             html::escape(variant) + "\" title=\"" + html::escape(title) + "\"><a href=\"" +
             html::escape(cell.href) + "\">" + html::escape(cell.observed) +
             html::judged_mark(cell.judged, cell.judged_why) +
             html::expectation_mark(cell.outcome) + "</a></td>";
    }
    out += "</tr>\n";
  }
  out += "</table></div>\n";
  if (set.omitted > 0) {
    out += "<p class=\"note\">" + std::to_string(set.omitted) + " more scenarios not shown.</p>\n";
  }
}

std::string number_text(const Json& value, const char* format, double scale = 1) {
  if (!value.is_number()) return "";
  char text[48];
  std::snprintf(text, sizeof text, format, value.get<double>() * scale);
  return text;
}

void sweeps(std::string& out, const fs::path& out_dir, IndexSummary& summary) {
  std::vector<fs::path> maps;
  std::error_code error;
  for (fs::directory_iterator it(out_dir, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.size() > 9 && name.ends_with(".map.json")) maps.push_back(it->path());
  }
  if (maps.empty()) return;
  std::sort(maps.begin(), maps.end());
  out +=
      "<section id=\"sweeps\"><h2>Sweeps</h2>\n<p class=\"note\">Where each variant starts "
      "to break as one parameter moves (docs/scenarios.md, Sweeps).</p>\n";
  for (const fs::path& path : maps) {
    const std::optional<Json> map = read_json(path, summary);
    if (!map) continue;
    std::string section;  // appended only whole: a field of the wrong type skips the map
    try {
      const std::string group = text_of(*map, "group");
      const std::string unit = text_of(*map, "unit");
      section +=
          "<h3>" + html::escape(group) + ": " + html::escape(text_of(*map, "parameter")) +
          "</h3>\n<table><tr><th>variant</th><th>swept values (red: broke)</th><th>safe edge</th>"
          "<th>breaking edge</th></tr>\n";
      const Json variants = map->value("variants", Json::array());
      for (const Json& v : variants.is_array() ? variants : Json::array()) {
        if (!v.is_object()) continue;
        const auto edge = [&](const char* key) {
          const auto found = v.find(key);
          if (found == v.end() || !found->is_number()) return std::string("-");
          return number_text(*found, "%g") + (unit.empty() ? "" : " " + unit);
        };
        // The points as the map draws them: each swept value, red where a run broke.
        std::string points;
        for (const Json& p : v.value("points", Json::array())) {
          if (!p.is_object()) continue;
          const bool broke = p.value("violations", 0) > 0;
          points += std::string("<span class=\"point ") +
                    (broke ? "safety-violation" : "safety-ok") + "\" title=\"" +
                    std::to_string(p.value("violations", 0)) + " of " +
                    std::to_string(p.value("decided", 0)) + " decided runs broke\">" +
                    html::escape(number_text(p.value("value", Json()), "%g")) + "</span>";
        }
        section += "<tr><td>" + html::escape(text_of(v, "variant")) + "</td><td>" + points +
                   "</td><td>" + html::escape(edge("safe_edge")) + "</td><td>" +
                   html::escape(edge("breaking_edge")) + "</td></tr>\n";
      }
      section += "</table>\n";
      const std::string plot = group + "-sweep.png";
      if (fs::is_regular_file(out_dir / plot, error)) {
        section += "<img class=\"plot\" src=\"" + html::url_path(plot) + "\" alt=\"sweep " +
                   html::escape(group) + "\">\n";
      }
      section += "<p><a href=\"" + html::url_path(group + ".map.md") + "\">" + html::escape(group) +
                 ".map.md</a></p>\n";
      ++summary.sweeps;
      out += section;
    } catch (const Json::exception& malformed) {
      skip_malformed(summary, path, malformed);
    }
  }
  out += "</section>\n";
}

void contention(std::string& out, const fs::path& out_dir, IndexSummary& summary) {
  std::error_code error;
  const fs::path latest = fs::path("contention") / "latest";
  const fs::path target = fs::read_symlink(out_dir / latest, error);
  const fs::path run = error ? latest : fs::path("contention") / target.filename();
  const std::optional<Json> report = read_json(out_dir / run / "contention.json", summary);
  if (!report) return;
  // Appended only whole: a field of the wrong type skips the file, counted and named.
  std::string section;
  std::size_t studies = 0;
  try {
    section +=
        "<section id=\"contention\"><h2>Contention</h2>\n<p class=\"note\">What each lock costs "
        "under contention, run " +
        html::escape(run.filename().string()) + ": <a href=\"" +
        html::url_path((run / "contention.md").string()) +
        "\">contention.md</a> has every metric (docs/contention.md).</p>\n";
    for (const Json& study : report->value("studies", Json::array())) {
      if (!study.is_object()) continue;
      ++studies;
      const std::string name = text_of(study, "name");
      section += "<h3>" + html::escape(name) + "</h3>\n";
      const std::string description = text_of(study, "description");
      if (!description.empty()) section += "<p>" + html::escape(description) + "</p>\n";
      for (const char* plot : {"throughput", "latency", "fairness"}) {
        const fs::path image = run / (name + "-" + plot + ".png");
        if (fs::is_regular_file(out_dir / image, error)) {
          section += "<img class=\"plot\" src=\"" + html::url_path(image.string()) + "\" alt=\"" +
                     html::escape(name + " " + plot) + "\">\n";
        }
      }
      const Json points = study.value("points", Json::array());
      const std::size_t total = points.is_array() ? points.size() : 0;
      section +=
          "<details><summary>the " + std::to_string(total) +
          " points: throughput, latency, fairness, verdict</summary>\n<table><tr>"
          "<th>variant</th><th>strategy</th><th>clients</th><th>acquisitions/s</th><th>p50</th>"
          "<th>p99</th><th>Jain</th><th>verdict</th></tr>\n";
      std::size_t shown = 0;
      for (const Json& p : points.is_array() ? points : Json::array()) {
        if (!p.is_object() || ++shown > 500) continue;
        const Json latency = p.value("latency", Json::object());
        const std::string verdict = text_of(p, "verdict");
        section += "<tr class=\"safety-" + std::string(html::safety_of(verdict)) + "\"><td>" +
                   html::escape(text_of(p, "variant")) + "</td><td>" +
                   html::escape(text_of(p, "strategy")) + "</td><td class=\"num\">" +
                   number_text(p.value("clients", Json()), "%.0f") + "</td><td class=\"num\">" +
                   number_text(p.value("throughput_per_s", Json()), "%.0f") +
                   "</td><td class=\"num\">" +
                   number_text(latency.value("p50_ns", Json()), "%.2f ms", 1e-6) +
                   "</td><td class=\"num\">" +
                   number_text(latency.value("p99_ns", Json()), "%.2f ms", 1e-6) +
                   "</td><td class=\"num\">" + number_text(p.value("jain", Json()), "%.2f") +
                   "</td><td>" + html::escape(verdict) + "</td></tr>\n";
      }
      section += "</table>";
      if (shown > 500) section += "<p class=\"note\">The first 500 of them.</p>";
      section += "</details>\n";
    }
    section += "</section>\n";
  } catch (const Json::exception& malformed) {
    skip_malformed(summary, out_dir / run / "contention.json", malformed);
    return;
  }
  summary.studies += studies;
  out += section;
}

std::string set_title(const fs::path& relative) {
  if (relative.empty()) return "Scenario catalogue";
  if (relative == "threads") return "Fault scenarios again, clients as threads";
  if (relative == "libraries") return "Lock libraries";
  return relative.string();
}

std::string set_id(const fs::path& relative) {
  if (relative.empty()) return "catalogue";
  return html::anchor("set", relative.string()).substr(4);
}

}  // namespace

std::string index_html(const fs::path& out_dir, IndexSummary* summary_out) {
  std::error_code error;
  if (!fs::is_directory(out_dir, error)) {
    throw EnvironmentError(out_dir.string() + ": not a directory of locksim reports");
  }
  IndexSummary summary;
  std::vector<ResultSet> sets;
  ResultSet top = read_result_set(out_dir, "", summary);
  if (!top.rows.empty()) sets.push_back(std::move(top));
  std::vector<fs::path> children;
  for (fs::directory_iterator it(out_dir, error), end; !error && it != end; it.increment(error)) {
    if (it->is_directory(error) && !fs::exists(it->path() / "latest", error)) {
      children.push_back(it->path().filename());
    }
  }
  std::sort(children.begin(), children.end());
  for (const fs::path& child : children) {
    ResultSet set = read_result_set(out_dir, child, summary);
    if (!set.rows.empty()) sets.push_back(std::move(set));
  }
  summary.result_sets = sets.size();

  std::string out;
  html::open_page(out, "locksim reports");
  out += "<h1>locksim reports</h1>\n<p class=\"meta\">" + html::escape(out_dir.string()) +
         ": the latest run of every scenario. A cell is the verdict observed, coloured by what it "
         "says about the lock's safety; its mark says whether the scenario expects it (a "
         "violation the scenario reproduces on purpose is red with &#10003;). Each cell opens that "
         "variant's timeline and findings.</p>\n";
  html::safety_legend(out);
  std::string sweep_part;
  sweeps(sweep_part, out_dir, summary);
  std::string contention_part;
  contention(contention_part, out_dir, summary);
  std::vector<std::pair<std::string, std::string>> parts;  // id, title
  for (const ResultSet& set : sets) parts.emplace_back(set_id(set.dir), set_title(set.dir));
  if (!sweep_part.empty()) parts.emplace_back("sweeps", "Sweeps");
  if (!contention_part.empty()) parts.emplace_back("contention", "Contention");
  if (parts.size() > 1) {
    out += "<p>";
    for (std::size_t i = 0; i < parts.size(); ++i) {
      out += std::string(i == 0 ? "" : " &middot; ") + "<a href=\"#" +
             html::escape(parts[i].first) + "\">" + html::escape(parts[i].second) + "</a>";
    }
    out += "</p>\n";
  }
  for (const ResultSet& set : sets) {
    out += "<h2>" + html::escape(set_title(set.dir)) + "</h2>\n";
    if (!set.dir.empty()) {
      out += "<p class=\"note\">From " + html::escape(set.dir.string()) + "/.</p>\n";
    }
    matrix(out, set, set_id(set.dir));
  }
  if (sets.empty()) {
    out += "<p>No scenario runs here yet: <code>locksim run scenarios/ --out " +
           html::escape(out_dir.string()) + "</code> writes them.</p>\n";
  }
  out += sweep_part;
  out += contention_part;
  if (summary.unreadable > 0) {
    out += "<p class=\"note\">" + std::to_string(summary.unreadable) +
           " result files could not be read (too large, not a regular file, not JSON, or a field "
           "of the wrong type) and are not shown.</p>\n";
  }
  html::close_page(out);
  if (summary_out != nullptr) *summary_out = summary;
  return out;
}

}  // namespace locksim
