// docs_examples_test: the documentation says what the code does.
//
// - Every fenced code block whose info string is exactly `json` in README.md and docs/*.md is a
//   whole document that locksim's own loaders accept, the ones the command line uses: a scenario
//   ("steps" or "workload": load_scenarios, sweeps expanded), a user lock ("acquire" and
//   "release": load_script_variant), a contention study ("strategies": load_studies) or a library
//   manifest ("libraries": load_library_manifest). Fragments and examples of bad input are fenced
//   with another info string (`jsonc`) and are not loaded. A failure names the Markdown file, the
//   line of the block's opening fence and the loader's message.
// - docs/design.md's codemap has a row `sim/<name>/` for every directory under sim/, and none for
//   a directory that does not exist.
// - Every relative link of README.md and docs/*.md names a file that exists, and every #anchor a
//   heading of the page it points into.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/json/file.h"
#include "sim/json/parse.h"
#include "sim/lock/library_variant.h"
#include "sim/lock/registry.h"
#include "sim/lock/script_variant.h"
#include "sim/scenario/loader.h"
#include "sim/scenario/study.h"

namespace locksim {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const fs::path kSourceDir = LOCKSIM_TEST_SOURCE_DIR;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The Markdown files the examples live in: README.md, then docs/*.md in name order; each as a
// path relative to the source tree.
std::vector<fs::path> markdown_files() {
  std::vector<fs::path> files = {"README.md"};
  std::vector<fs::path> docs;
  for (const auto& entry : fs::directory_iterator(kSourceDir / "docs")) {
    if (entry.is_regular_file() && entry.path().extension() == ".md") {
      docs.push_back(fs::path("docs") / entry.path().filename());
    }
  }
  std::sort(docs.begin(), docs.end());
  files.insert(files.end(), docs.begin(), docs.end());
  return files;
}

struct CodeBlock {
  fs::path file;     // relative to the source tree
  int line = 0;      // of the opening fence, from 1
  std::string info;  // the info string, trimmed
  std::string text;  // the lines between the fences
};

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

// fence_of: the fence a line opens or closes (``` or ~~~, three or more, indented at most three
// spaces), or "" for any other line.
std::string fence_of(const std::string& line) {
  std::size_t indent = 0;
  while (indent < line.size() && indent < 4 && line[indent] == ' ') ++indent;
  if (indent > 3 || indent >= line.size()) return "";
  const char c = line[indent];
  if (c != '`' && c != '~') return "";
  std::size_t end = indent;
  while (end < line.size() && line[end] == c) ++end;
  if (end - indent < 3) return "";
  return line.substr(indent, end - indent);
}

// code_blocks: the fenced code blocks of `file` (CommonMark fences).
std::vector<CodeBlock> code_blocks(const fs::path& file) {
  std::vector<CodeBlock> blocks;
  const std::vector<std::string> lines = lines_of(read_text(kSourceDir / file));
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string fence = fence_of(lines[i]);
    if (fence.empty()) continue;
    CodeBlock block;
    block.file = file;
    block.line = static_cast<int>(i) + 1;
    block.info = trim(lines[i].substr(lines[i].find(fence) + fence.size()));
    std::size_t j = i + 1;
    for (; j < lines.size(); ++j) {
      const std::string closing = fence_of(lines[j]);
      if (!closing.empty() && closing[0] == fence[0] && closing.size() >= fence.size() &&
          trim(lines[j]).size() == closing.size()) {
        break;
      }
      block.text += lines[j] + "\n";
    }
    EXPECT_LT(j, lines.size()) << file.string() << ":" << block.line << ": code block never closed";
    blocks.push_back(block);
    i = j;
  }
  return blocks;
}

std::string where(const CodeBlock& block) {
  return block.file.string() + ":" + std::to_string(block.line);
}

class DocsExamples : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ =
        fs::temp_directory_path() / ("locksim-docs-examples-" + std::to_string(::getpid()));
    fs::remove_all(directory_);
    fs::create_directories(directory_);
  }
  void TearDown() override { fs::remove_all(directory_); }

  // write: the block as a file of its own, named after where it is, for the file loaders.
  fs::path write(const CodeBlock& block) {
    std::string name = block.file.string() + "-line" + std::to_string(block.line) + ".json";
    std::replace(name.begin(), name.end(), '/', '_');
    const fs::path path = directory_ / name;
    std::ofstream(path, std::ios::binary) << block.text;
    return path;
  }

  fs::path directory_;
};

// A scenario may name files (a user lock's): every string that looks like a path to a .json file
// is resolved from the repository root and must exist; a user lock file adds its variant.
void collect_json_paths(const Json& value, std::vector<std::string>& paths) {
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    if (text.size() > 5 && text.compare(text.size() - 5, 5, ".json") == 0 &&
        text.find_first_of(" \t\n") == std::string::npos) {
      paths.push_back(text);
    }
  } else if (value.is_structured()) {
    for (const auto& item : value) collect_json_paths(item, paths);
  }
}

TEST_F(DocsExamples, EveryJsonBlockIsAWholeDocumentThatLoads) {
  struct Parsed {
    CodeBlock block;
    Json document;
  };
  std::vector<Parsed> scenarios, user_locks, studies, manifests;
  int json_blocks = 0;
  for (const fs::path& file : markdown_files()) {
    for (const CodeBlock& block : code_blocks(file)) {
      if (block.info != "json") continue;
      ++json_blocks;
      Json document;
      try {
        document = json::parse_json_text(block.text, where(block), json::kScenarioFileLimits);
      } catch (const InputError& error) {
        ADD_FAILURE() << where(block) << ": the `json` block is not valid JSON (fence a fragment "
                      << "as `jsonc`): " << error.what();
        continue;
      }
      const auto has = [&document](const char* key) {
        return document.is_object() && document.contains(key);
      };
      if (has("steps") || has("workload")) {
        scenarios.push_back({block, document});
      } else if (has("acquire") && has("release")) {
        user_locks.push_back({block, document});
      } else if (has("strategies")) {
        studies.push_back({block, document});
      } else if (has("libraries")) {
        manifests.push_back({block, document});
      } else {
        ADD_FAILURE() << where(block) << ": a `json` block that is no document locksim loads (not "
                      << "a scenario, a user lock, a contention study or a library manifest); "
                      << "fence a fragment as `jsonc`";
      }
    }
  }

  // Variants a scenario or a study may name: the built-ins, the libraries of adapters/, and the
  // user locks the documentation defines.
  std::vector<std::string> known = variant_names();
  for (const LibrarySpec& spec :
       load_library_manifest(kSourceDir / "adapters" / "libraries.json", variant_names())) {
    known.push_back(spec.name);
  }
  const auto load = [](const CodeBlock& block, const std::function<void()>& loader) {
    try {
      loader();
      return true;
    } catch (const InputError& error) {
      ADD_FAILURE() << where(block) << ": the `json` block does not load: " << error.what();
    } catch (const std::exception& error) {
      ADD_FAILURE() << where(block) << ": the `json` block does not load: " << error.what();
    }
    return false;
  };

  int loaded_locks = 0;
  for (const Parsed& p : user_locks) {
    const fs::path path = write(p.block);
    if (load(p.block, [&] { known.push_back(load_script_variant(path, variant_names()).name); })) {
      ++loaded_locks;
    }
  }
  int loaded_manifests = 0;
  for (const Parsed& p : manifests) {
    const fs::path path = write(p.block);
    if (load(p.block, [&] { load_library_manifest(path, variant_names()); })) ++loaded_manifests;
  }
  int loaded_scenarios = 0;
  std::size_t expanded = 0;
  for (const Parsed& p : scenarios) {
    std::vector<std::string> with_files = known;
    std::vector<std::string> paths;
    collect_json_paths(p.document, paths);
    bool files_ok = true;
    for (const std::string& named : paths) {
      const fs::path resolved = kSourceDir / named;
      if (!fs::is_regular_file(resolved)) {
        ADD_FAILURE() << where(p.block) << ": names " << named
                      << ", which is no file relative to the repository root";
        files_ok = false;
        continue;
      }
      const bool named_ok = load(p.block, [&] {
        const Json named_document =
            json::read_json_file(resolved, json::kVariantFileLimits, "file named by a scenario");
        if (named_document.contains("acquire") && named_document.contains("release")) {
          with_files.push_back(load_script_variant(resolved, variant_names()).name);
        }
      });
      files_ok = files_ok && named_ok;
    }
    if (!files_ok) continue;
    const fs::path path = write(p.block);
    if (load(p.block, [&] { expanded += load_scenarios({path}, with_files).size(); })) {
      ++loaded_scenarios;
    }
  }
  int loaded_studies = 0;
  std::size_t points = 0;
  for (const Parsed& p : studies) {
    const fs::path path = write(p.block);
    if (load(p.block, [&] {
          for (const Study& study : load_studies({path}, known)) points += study.points.size();
        })) {
      ++loaded_studies;
    }
  }

  std::cout << "json blocks: " << json_blocks << "; loaded " << loaded_scenarios << " scenarios ("
            << expanded << " after sweeps expand), " << loaded_locks << " user locks, "
            << loaded_studies << " contention studies (" << points << " points), "
            << loaded_manifests << " library manifests\n";
  // The extraction itself must keep working: the docs hold at least one of each of these.
  EXPECT_GE(scenarios.size(), 1u);
  EXPECT_GE(user_locks.size(), 1u);
  EXPECT_GE(studies.size(), 1u);
}

// The codemap rows: the `sim/<name>/` of each table row of docs/design.md.
std::vector<std::string> codemap_rows() {
  std::vector<std::string> rows;
  const std::regex row(R"(^\|\s*`sim/([^`/]+)/`\s*\|)");
  for (const std::string& line : lines_of(read_text(kSourceDir / "docs" / "design.md"))) {
    std::smatch match;
    if (std::regex_search(line, match, row)) rows.push_back(match[1]);
  }
  return rows;
}

TEST(DocsCodemap, HasOneRowForEveryDirectoryUnderSim) {
  const std::vector<std::string> rows = codemap_rows();
  const std::set<std::string> named(rows.begin(), rows.end());
  EXPECT_EQ(named.size(), rows.size()) << "a directory has two rows in docs/design.md's codemap";
  std::set<std::string> directories;
  for (const auto& entry : fs::directory_iterator(kSourceDir / "sim")) {
    if (entry.is_directory()) directories.insert(entry.path().filename().string());
  }
  ASSERT_FALSE(directories.empty());
  for (const std::string& directory : directories) {
    EXPECT_TRUE(named.count(directory))
        << "docs/design.md's codemap has no row for `sim/" << directory << "/`";
  }
  for (const std::string& name : named) {
    EXPECT_TRUE(directories.count(name))
        << "docs/design.md's codemap names `sim/" << name << "/`, which does not exist";
  }
}

// GitHub's anchor of a heading: lower case, punctuation other than '-' and '_' dropped, spaces
// become '-'; a repeated anchor gets -1, -2...
std::set<std::string> anchors_of(const fs::path& file) {
  std::set<std::string> anchors;
  std::map<std::string, int> seen;
  bool in_code = false;
  for (const std::string& line : lines_of(read_text(file))) {
    if (!fence_of(line).empty()) in_code = !in_code;
    if (in_code || line.empty() || line[0] != '#') continue;
    std::string heading = trim(line.substr(line.find_first_not_of('#')));
    std::string anchor;
    for (const char c : heading) {
      const auto u = static_cast<unsigned char>(c);
      if (std::isalnum(u) || c == '-' || c == '_' || u >= 0x80) {
        anchor += static_cast<char>(std::tolower(u));
      } else if (c == ' ') {
        anchor += '-';
      }
    }
    const int n = seen[anchor]++;
    anchors.insert(n == 0 ? anchor : anchor + "-" + std::to_string(n));
  }
  return anchors;
}

TEST(DocsLinks, RelativeLinksAndAnchorsResolve) {
  const std::regex link(R"(\]\(([^)\s]+)\))");
  for (const fs::path& file : markdown_files()) {
    bool in_code = false;
    int number = 0;
    for (const std::string& line : lines_of(read_text(kSourceDir / file))) {
      ++number;
      if (!fence_of(line).empty()) in_code = !in_code;
      if (in_code) continue;
      for (auto it = std::sregex_iterator(line.begin(), line.end(), link);
           it != std::sregex_iterator(); ++it) {
        const std::string target = (*it)[1];
        if (target.rfind("http://", 0) == 0 || target.rfind("https://", 0) == 0 ||
            target.rfind("mailto:", 0) == 0) {
          continue;
        }
        const auto hash = target.find('#');
        const std::string path_part = target.substr(0, hash);
        const fs::path resolved =
            path_part.empty() ? kSourceDir / file : (kSourceDir / file).parent_path() / path_part;
        const std::string at = file.string() + ":" + std::to_string(number) + ": " + target;
        if (!fs::exists(resolved)) {
          ADD_FAILURE() << at << ": no such file";
          continue;
        }
        if (hash == std::string::npos) continue;
        EXPECT_TRUE(fs::is_regular_file(resolved)) << at << ": an anchor into a directory";
        if (!fs::is_regular_file(resolved)) continue;
        EXPECT_TRUE(anchors_of(resolved).count(target.substr(hash + 1)))
            << at << ": no heading with that anchor";
      }
    }
  }
}

}  // namespace
}  // namespace locksim
