#include "sim/scenario/loader.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "sim/core/error.h"
#include "sim/scenario/json_reader.h"
#include "sim/scenario/scenario_parts.h"

namespace locksim {
namespace {

using scenario_internal::describe;
using scenario_internal::join;
using scenario_internal::JsonReader;
using scenario_internal::kMaxDurationMs;

const std::vector<std::string> kVerdictWords = {"ok", "mutex_violation", "deadlock",
                                                "resource_corrupted", "unknown"};
const std::vector<std::string> kCauses = {"lease_expired", "stale_release", "racy_acquire",
                                          "lock_lost"};

Source parse_source(const JsonReader& node) {
  node.expect_object({"doc", "claim"});
  Source source;
  source.doc = node.member("doc").one_of({"A", "B", "C", "D", "E", "none"}, "doc", "allowed");
  source.claim = node.member("claim").non_empty_string();
  return source;
}

std::vector<std::string> parse_variants(const JsonReader& node,
                                        const std::vector<std::string>& known_variants) {
  std::vector<std::string> variants;
  std::map<std::string, std::string> path_of;
  for (const JsonReader& element : node.elements(/*non_empty=*/true)) {
    std::string variant = element.one_of(known_variants, "variant", "known");
    const auto [previous, inserted] = path_of.emplace(variant, element.path());
    if (!inserted) {
      element.fail("duplicate variant \"" + variant + "\" (also at " + previous->second + ")");
    }
    variants.push_back(std::move(variant));
  }
  return variants;
}

LockConfig parse_lock(const JsonReader& node) {
  static const std::regex kKeyPattern("[A-Za-z0-9_:.-]{1,64}");
  node.expect_object({"key", "ttl_ms", "acquire_timeout_ms", "wait"});
  LockConfig lock;
  if (const auto key = node.optional_member("key")) {
    lock.key = key->matching(kKeyPattern, "a key of 1 to 64 letters, digits or _ : . -");
  }
  if (const auto ttl = node.optional_member("ttl_ms"))
    lock.ttl_ms = ttl->duration_ms(1, kMaxDurationMs);
  if (const auto timeout = node.optional_member("acquire_timeout_ms")) {
    lock.acquire_timeout_ms = timeout->duration_ms(0, kMaxDurationMs);
  }
  if (const auto wait = node.optional_member("wait")) {
    wait->expect_object({"strategy", "interval_ms"});
    if (const auto strategy = wait->optional_member("strategy")) {
      lock.wait.strategy = strategy->one_of({"poll"}, "strategy", "allowed");
    }
    if (const auto interval = wait->optional_member("interval_ms")) {
      lock.wait.interval_ms = interval->duration_ms(1, 60000);
    }
  }
  return lock;
}

Expectation parse_expectation(const JsonReader& node) {
  Expectation expectation;
  if (node.value().is_string()) {
    expectation.verdict = *verdict_from_string(node.one_of(kVerdictWords, "verdict", "allowed"));
    return expectation;
  }
  if (!node.value().is_object()) {
    node.fail("expected a verdict (" + join(kVerdictWords) +
              ") or {\"verdict\": ..., \"causes\": [...]}, got " + describe(node.value()));
  }
  node.expect_object({"verdict", "causes"});
  expectation.verdict =
      *verdict_from_string(node.member("verdict").one_of(kVerdictWords, "verdict", "allowed"));
  if (const auto causes_node = node.optional_member("causes")) {
    std::set<std::string> causes;
    std::map<std::string, std::string> path_of;
    for (const JsonReader& element : causes_node->elements(/*non_empty=*/false)) {
      std::string cause = element.one_of(kCauses, "cause", "allowed");
      const auto [previous, inserted] = path_of.emplace(cause, element.path());
      if (!inserted) {
        element.fail("duplicate cause \"" + cause + "\" (also at " + previous->second + ")");
      }
      causes.insert(std::move(cause));
    }
    // Causes explain a mutual-exclusion violation, and a violation outweighs every other
    // verdict, so causes with another verdict could never be observed.
    if (!causes.empty() && expectation.verdict != Verdict::kMutexViolation) {
      causes_node->fail(
          "causes describe a mutual-exclusion violation; they need \"verdict\": "
          "\"mutex_violation\"");
    }
    expectation.causes = std::move(causes);
  }
  return expectation;
}

std::map<std::string, Expectation> parse_expect(const JsonReader& node,
                                                const std::vector<std::string>& variants) {
  if (!node.value().is_object()) node.fail("expected an object, got " + describe(node.value()));
  std::map<std::string, Expectation> expect;
  for (const auto& [variant, unused] : node.value().items()) {
    if (std::find(variants.begin(), variants.end(), variant) == variants.end()) {
      const auto hint = scenario_internal::closest_match(variant, variants);
      node.member(variant).fail("\"" + variant + "\" is not in $.variants" +
                                (hint ? " (did you mean \"" + *hint + "\"?)" : "") +
                                "; variants: " + join(variants));
    }
    expect[variant] = parse_expectation(node.member(variant));
  }
  for (const std::string& variant : variants) {
    if (!expect.contains(variant)) {
      node.fail("missing an entry for variant \"" + variant +
                "\"; every variant in $.variants needs an expected verdict");
    }
  }
  return expect;
}

nlohmann::json resolved_document(const Scenario& scenario) {
  nlohmann::json document = {
      {"name", scenario.name},
      {"description", scenario.description},
      {"source", {{"doc", scenario.source.doc}, {"claim", scenario.source.claim}}},
      {"variants", scenario.variants},
      {"lock",
       {{"key", scenario.lock.key},
        {"ttl_ms", scenario.lock.ttl_ms},
        {"acquire_timeout_ms", scenario.lock.acquire_timeout_ms},
        {"wait",
         {{"strategy", scenario.lock.wait.strategy},
          {"interval_ms", scenario.lock.wait.interval_ms}}}}},
      {"check", {{"stuck_ms", scenario.check.stuck_ms}}},
      {"time_limit_ms", scenario.time_limit_ms},
  };
  if (scenario.scripted()) {
    document["clients"] = scenario.clients;
    document["steps"] = scenario_internal::resolved_steps(scenario.steps);
  } else {
    document["workload"] = scenario_internal::resolved_workload(*scenario.workload);
  }
  nlohmann::json expect = nlohmann::json::object();
  for (const auto& [variant, expectation] : scenario.expect) {
    nlohmann::json entry = {{"verdict", to_string(expectation.verdict)}};
    if (expectation.causes) entry["causes"] = *expectation.causes;
    expect[variant] = std::move(entry);
  }
  document["expect"] = std::move(expect);
  return document;
}

// line_and_column: 1-based position of the byte nlohmann reports (the last one it read).
std::string line_and_column(const std::string& text, std::size_t byte) {
  const std::size_t offset = std::min(byte == 0 ? 0 : byte - 1, text.size());
  const std::size_t line =
      1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + offset, '\n'));
  const std::size_t line_start = text.rfind('\n', offset == 0 ? 0 : offset - 1);
  const std::size_t column =
      (line_start == std::string::npos || offset == 0) ? offset + 1 : offset - line_start;
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// parse_json_text: parses `text`, rejecting duplicate keys, which nlohmann would otherwise
// silently resolve to the last one, hiding a typo'd copy-paste.
nlohmann::json parse_json_text(const std::string& text, const std::string& file) {
  struct Frame {
    bool array;
    std::size_t index;
    std::string path;
    std::string key;
    std::set<std::string> keys;
  };
  std::vector<Frame> stack;
  auto child_path = [&]() -> std::string {
    if (stack.empty()) return "$";
    const Frame& frame = stack.back();
    return frame.array ? scenario_internal::index_path(frame.path, frame.index)
                       : scenario_internal::member_path(frame.path, frame.key);
  };
  auto element_done = [&]() {
    if (!stack.empty() && stack.back().array) ++stack.back().index;
  };
  const nlohmann::json::parser_callback_t callback =
      [&](int /*depth*/, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        using Event = nlohmann::json::parse_event_t;
        switch (event) {
          case Event::object_start:
          case Event::array_start:
            stack.push_back(Frame{event == Event::array_start, 0, child_path(), "", {}});
            break;
          case Event::key: {
            Frame& frame = stack.back();
            frame.key = parsed.get<std::string>();
            if (!frame.keys.insert(frame.key).second) {
              throw InputError(file + ": " + child_path() +
                               ": duplicate key (each key may appear once in an object)");
            }
            break;
          }
          case Event::object_end:
          case Event::array_end:
            stack.pop_back();
            element_done();
            break;
          case Event::value:
            element_done();
            break;
        }
        return true;
      };
  try {
    return nlohmann::json::parse(text, callback);
  } catch (const nlohmann::json::parse_error& error) {
    // nlohmann's message starts "[json.exception.parse_error.101] parse error at line 1, column
    // 2: "; keep only the explanation after it and give the position in our own format.
    std::string detail = error.what();
    const std::size_t colon = detail.find(": ");
    if (colon != std::string::npos) detail = detail.substr(colon + 2);
    throw InputError(file + ": " + line_and_column(text, error.byte) + ": invalid JSON: " + detail);
  }
}

}  // namespace

Scenario parse_scenario(const nlohmann::json& document, const std::string& file,
                        const std::vector<std::string>& known_variants) {
  static const std::regex kNamePattern("[a-z0-9][a-z0-9-]{0,63}");
  const JsonReader root(document, "$", file);
  root.expect_object({"name", "description", "source", "variants", "lock", "clients", "steps",
                      "workload", "expect", "check", "time_limit_ms"});
  Scenario scenario;
  scenario.file = file;
  scenario.name = root.member("name").matching(
      kNamePattern, "a name of 1 to 64 lowercase letters, digits or '-', not starting with '-'");
  if (const auto description = root.optional_member("description")) {
    scenario.description = description->string();
  }
  scenario.source = parse_source(root.member("source"));
  scenario.variants = parse_variants(root.member("variants"), known_variants);
  if (const auto lock = root.optional_member("lock")) scenario.lock = parse_lock(*lock);

  const bool has_steps = root.has("steps");
  const bool has_workload = root.has("workload");
  if (has_steps && has_workload) {
    root.fail("give either \"steps\" (a scripted scenario) or \"workload\", not both");
  }
  if (!has_steps && !has_workload) {
    root.fail("missing \"steps\" (a scripted scenario) or \"workload\"; give exactly one");
  }
  if (has_workload) {
    if (root.has("clients")) {
      root.member("clients").fail(
          "not allowed in a workload scenario; \"workload.clients\" sets the number of clients");
    }
    scenario.workload = scenario_internal::parse_workload(root.member("workload"));
    for (int i = 0; i < scenario.workload->clients; ++i) {
      scenario.clients.push_back("c" + std::to_string(i));
    }
  } else {
    scenario_internal::parse_script(root, scenario);
  }

  scenario.expect = parse_expect(root.member("expect"), scenario.variants);
  // A stuck lock is only noticed between polls, so the threshold must cover several intervals.
  scenario.check.stuck_ms = std::max<std::int64_t>(500, 5 * scenario.lock.wait.interval_ms);
  if (const auto check = root.optional_member("check")) {
    check->expect_object({"stuck_ms"});
    if (const auto stuck = check->optional_member("stuck_ms")) {
      scenario.check.stuck_ms = stuck->duration_ms(1, kMaxDurationMs);
    }
  }
  if (const auto limit = root.optional_member("time_limit_ms")) {
    scenario.time_limit_ms = limit->duration_ms(1000, kMaxDurationMs);
  }
  scenario.resolved = resolved_document(scenario);
  return scenario;
}

Scenario load_scenario(const std::filesystem::path& path,
                       const std::vector<std::string>& known_variants) {
  const std::string file = path.string();
  std::error_code status_error;
  if (std::filesystem::is_directory(path, status_error)) {
    throw InputError(file + ": cannot open (is a directory; use load_scenarios for directories)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(file + ": cannot open (" + std::strerror(errno) + ")");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(file + ": cannot read (" + std::strerror(errno) + ")");
  return parse_scenario(parse_json_text(text.str(), file), file, known_variants);
}

std::vector<Scenario> load_scenarios(const std::vector<std::filesystem::path>& paths,
                                     const std::vector<std::string>& known_variants) {
  std::vector<std::filesystem::path> files;
  for (const std::filesystem::path& path : paths) {
    std::error_code error;
    const std::filesystem::file_status status = std::filesystem::status(path, error);
    if (!std::filesystem::exists(status)) {
      throw InputError(path.string() + ": cannot open (no such file or directory)");
    }
    if (!std::filesystem::is_directory(status)) {
      files.push_back(path);
      continue;
    }
    std::vector<std::filesystem::path> in_directory;
    for (const auto& entry : std::filesystem::directory_iterator(path)) {
      if (entry.path().extension() == ".json" && !entry.is_directory()) {
        in_directory.push_back(entry.path());
      }
    }
    if (in_directory.empty()) throw InputError(path.string() + ": no *.json scenario files");
    std::sort(in_directory.begin(), in_directory.end(),
              [](const auto& a, const auto& b) { return a.filename() < b.filename(); });
    files.insert(files.end(), in_directory.begin(), in_directory.end());
  }

  std::vector<Scenario> scenarios;
  std::map<std::string, std::string> file_of;  // scenario name -> file that defined it
  for (const std::filesystem::path& file : files) {
    Scenario scenario = load_scenario(file, known_variants);
    const auto [previous, inserted] = file_of.emplace(scenario.name, scenario.file);
    if (!inserted) {
      throw InputError(scenario.file + ": $.name: scenario name \"" + scenario.name +
                       "\" is already used by " + previous->second +
                       "; names must be unique (they name the report directories)");
    }
    scenarios.push_back(std::move(scenario));
  }
  return scenarios;
}

}  // namespace locksim
